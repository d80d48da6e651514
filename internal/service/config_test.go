package service_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestStoreTimeoutDefaultsToTenSecondsAndRejectsValuesOutsideItsRange(t *testing.T) {
	for in, want := range map[string]time.Duration{"": store.DefaultCallTimeout, "5s": 5 * time.Second, "250ms": 250 * time.Millisecond, "25s": 25 * time.Second} {
		if got, err := service.ParseStoreTimeout(in); err != nil || got != want {
			t.Errorf("ParseStoreTimeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if store.DefaultCallTimeout != 10*time.Second {
		t.Errorf("default store timeout %v, want 10s", store.DefaultCallTimeout)
	}
	for _, in := range []string{"ten", "0s", "-1s", "50ms", "26s", "1m"} {
		if _, err := service.ParseStoreTimeout(in); err == nil || !strings.Contains(err.Error(), "STORE_TIMEOUT") {
			t.Errorf("ParseStoreTimeout(%q) = %v, want an error naming STORE_TIMEOUT", in, err)
		}
	}
}

func TestConfigFromEnvReadsStoreTimeout(t *testing.T) {
	t.Setenv("STORE_TIMEOUT", "3s")
	c, err := service.ConfigFromEnv()
	if err != nil || c.StoreTimeout != 3*time.Second {
		t.Fatalf("ConfigFromEnv = %+v, %v; want StoreTimeout 3s", c, err)
	}
	t.Setenv("STORE_TIMEOUT", "forever")
	if _, err := service.ConfigFromEnv(); err == nil {
		t.Fatal("ConfigFromEnv accepted STORE_TIMEOUT=forever")
	}
}

// clearEnv unsets (as empty) every variable the configuration reads.
func clearEnv(t *testing.T) {
	for _, k := range []string{service.EnvTable, service.EnvCacheTTL, service.EnvStateMachineARN, service.EnvWebhookBaseURL, service.EnvStoreTimeout, service.EnvSearchBaseURL,
		service.EnvSearchEngine, service.EnvOpenSearchEndpoint, service.EnvOpenSearchService, service.EnvOpenSearchIndexPrefix,
		service.EnvEmbeddings, service.EnvEmbeddingsModel, service.EnvEmbeddingsModelFile} {
		t.Setenv(k, "")
	}
}

func TestEnvIsReadBackAsTheSameConfig(t *testing.T) {
	for _, c := range []service.Config{
		service.DefaultConfig(),
		{Table: "t1", CacheTTL: 0, StoreTimeout: 3 * time.Second, StateMachineARN: "arn:aws:states:eu-west-1:123456789012:stateMachine:runs", WebhookBaseURL: "https://hooks.example.com",
			SearchEngine: service.SearchOpenSearch, OpenSearchEndpoint: "https://abc123.eu-west-1.aoss.amazonaws.com", OpenSearchService: "aoss", OpenSearchIndexPrefix: "sourcebase",
			Embeddings: service.EmbeddingsBedrock, EmbeddingsModel: "amazon.titan-embed-text-v2:0", EmbeddingsModelFile: "bin/embed/wink-sg-100d.vec"},
		{Table: "t2", CacheTTL: time.Second, StoreTimeout: 5 * time.Second, SearchBaseURL: "https://abc123.execute-api.eu-west-1.amazonaws.com",
			SearchEngine: service.SearchOpenSearch, OpenSearchEndpoint: "https://search-x.eu-west-1.es.amazonaws.com", OpenSearchService: "es", OpenSearchIndexPrefix: "stage-2.sb",
			Embeddings: service.EmbeddingsOff, EmbeddingsModel: "cohere.embed-english-v3", EmbeddingsModelFile: "bin/embed/wink-sg-100d.vec"},
		{Table: "t3", CacheTTL: time.Second, StoreTimeout: 5 * time.Second,
			SearchEngine: service.SearchEmbedded, OpenSearchEndpoint: "https://abc.eu-west-1.aoss.amazonaws.com", OpenSearchService: "aoss", OpenSearchIndexPrefix: "idx",
			Embeddings: service.EmbeddingsLocal, EmbeddingsModel: "amazon.titan-embed-text-v2:0", EmbeddingsModelFile: "/opt/model.vec"},
	} {
		clearEnv(t)
		for k, v := range c.Env() {
			t.Setenv(k, v)
		}
		got, err := service.ConfigFromEnv()
		if err != nil || got != c {
			t.Errorf("ConfigFromEnv after Env() of %+v = %+v, %v", c, got, err)
		}
	}
}

func TestTheDefaultEnvironmentHasNoSearchVariables(t *testing.T) {
	for _, k := range []string{service.EnvSearchEngine, service.EnvOpenSearchEndpoint, service.EnvOpenSearchService, service.EnvOpenSearchIndexPrefix} {
		if v, ok := service.DefaultConfig().Env()[k]; ok {
			t.Errorf("DefaultConfig().Env() sets %s=%q", k, v)
		}
	}
}

func TestSearchSettingsDefaultToTheEmbeddedEngineAndInvalidValuesNameTheirVariable(t *testing.T) {
	clearEnv(t)
	c, err := service.ConfigFromEnv()
	if err != nil || c.SearchEngine != "embedded" || c.OpenSearchService != "aoss" || c.OpenSearchIndexPrefix != "sourcebase" || c.OpenSearchEndpoint != "" {
		t.Fatalf("empty environment: %+v, %v", c, err)
	}
	for _, bad := range []struct{ name, value string }{
		{service.EnvSearchEngine, "elastic"},
		{service.EnvSearchEngine, "OpenSearch"},
		{service.EnvOpenSearchService, "opensearch"},
		{service.EnvOpenSearchService, "AOSS"},
		{service.EnvOpenSearchIndexPrefix, "Upper"},
		{service.EnvOpenSearchIndexPrefix, "_hidden"},
		{service.EnvOpenSearchIndexPrefix, "a b"},
		{service.EnvOpenSearchEndpoint, "abc.aoss.amazonaws.com"},
		{service.EnvOpenSearchEndpoint, "https://abc.aoss.amazonaws.com/some/path"},
		{service.EnvOpenSearchEndpoint, "ftp://abc.aoss.amazonaws.com"},
		{service.EnvSearchBaseURL, "abc123.execute-api.eu-west-1.amazonaws.com"},
		{service.EnvSearchBaseURL, "https://"},
		{service.EnvSearchBaseURL, "https://api.example.com/?stage=prod"},
		{service.EnvSearchBaseURL, "https://user:secret@api.example.com"},
	} {
		clearEnv(t)
		t.Setenv(bad.name, bad.value)
		if _, err := service.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), bad.name) {
			t.Errorf("%s=%q: %v, want an error naming %s", bad.name, bad.value, err, bad.name)
		}
	}
}

func TestTheOpenSearchEngineWithoutAnEndpointFailsAtStartNamingOPENSEARCH_ENDPOINT(t *testing.T) {
	clearEnv(t)
	t.Setenv(service.EnvSearchEngine, "opensearch")
	if _, err := service.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "OPENSEARCH_ENDPOINT") {
		t.Fatalf("ConfigFromEnv: %v, want an error naming OPENSEARCH_ENDPOINT", err)
	}
	// A configuration built in code is checked again where the engine is made.
	cfg := service.DefaultConfig()
	cfg.SearchEngine = service.SearchOpenSearch
	never := func(context.Context, aws.Config, *store.Store, *vectors.Keeper, string, string, string) (search.Engine, error) {
		t.Fatal("the OpenSearch engine was made without an endpoint")
		return nil, nil
	}
	if _, err := service.SearchEngine(context.Background(), aws.Config{}, nil, cfg, nil, never, bedrock.New); err == nil || !strings.Contains(err.Error(), "OPENSEARCH_ENDPOINT") {
		t.Fatalf("SearchEngine: %v, want an error naming OPENSEARCH_ENDPOINT", err)
	}
	if _, err := service.Indexer(context.Background(), nil, service.DefaultConfig(), nil, nil); err == nil || !strings.Contains(err.Error(), "OPENSEARCH_ENDPOINT") {
		t.Fatalf("Indexer: %v, want an error naming OPENSEARCH_ENDPOINT", err)
	}
}

type namedEngine string

func (e namedEngine) Name() string { return string(e) }

func (namedEngine) Search(context.Context, string, *search.Schema, *search.Request) (*search.Result, error) {
	return nil, nil
}

func (namedEngine) Similar(context.Context, string, *search.Schema, string, *search.Request) (*search.Result, error) {
	return nil, nil
}

func TestTheSearchFunctionRunsTheEngineTheConfigurationNames(t *testing.T) {
	var keepers []string
	keeper := func(k *vectors.Keeper) {
		if k == nil {
			keepers = append(keepers, "none")
		} else {
			keepers = append(keepers, k.Model())
		}
	}
	embedded := func(_ *store.Store, k *vectors.Keeper) search.Engine { keeper(k); return namedEngine("embedded") }
	var got []string
	openSearch := func(_ context.Context, _ aws.Config, _ *store.Store, k *vectors.Keeper, endpoint, service, prefix string) (search.Engine, error) {
		keeper(k)
		got = []string{endpoint, service, prefix}
		return namedEngine("opensearch"), nil
	}
	cfg := service.DefaultConfig()
	cfg.Embeddings = service.EmbeddingsOff
	if e, err := service.SearchEngine(context.Background(), aws.Config{}, nil, cfg, embedded, openSearch, bedrock.New); err != nil || e != namedEngine("embedded") {
		t.Errorf("default: %v, %v; want the embedded engine", e, err)
	}
	cfg.SearchEngine, cfg.OpenSearchEndpoint, cfg.OpenSearchService, cfg.OpenSearchIndexPrefix = service.SearchOpenSearch, "https://x.es.amazonaws.com", "es", "p"
	if e, err := service.SearchEngine(context.Background(), aws.Config{}, nil, cfg, embedded, openSearch, bedrock.New); err != nil || e != namedEngine("opensearch") || strings.Join(got, " ") != "https://x.es.amazonaws.com es p" {
		t.Errorf("opensearch: %v, %v, made with %v", e, err, got)
	}
	cfg.Embeddings, cfg.EmbeddingsModel = service.EmbeddingsBedrock, "amazon.titan-embed-text-v2:0"
	if _, err := service.SearchEngine(context.Background(), aws.Config{Region: "eu-west-1"}, nil, cfg, embedded, openSearch, bedrock.New); err != nil {
		t.Fatal(err)
	}
	if want := "none none bedrock:amazon.titan-embed-text-v2:0"; strings.Join(keepers, " ") != want {
		t.Errorf("the engines were given the keepers %v, want %s", keepers, want)
	}
}

func TestTheKeeperIsTheProviderTheConfigurationNames(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.EmbeddingsModelFile = filepath.Join(t.TempDir(), "missing.vec")
	// Unset, a missing local model means none (a deployment names its
	// provider); named, it stops the program at start.
	if k, err := service.Keeper(aws.Config{}, nil, cfg, bedrock.New); err != nil || k != nil {
		t.Errorf("unset, no local model: %+v, %v; want none", k, err)
	}
	cfg.Embeddings = service.EmbeddingsLocal
	if _, err := service.Keeper(aws.Config{}, nil, cfg, bedrock.New); err == nil || !strings.Contains(err.Error(), "EMBEDDINGS=local") || !strings.Contains(err.Error(), "missing.vec") {
		t.Errorf("a missing local model: %v, want an error naming EMBEDDINGS=local and the file", err)
	}
	// A relative file is found under an ancestor of the working directory
	// (a package's tests, a command run from a subdirectory).
	cfg.EmbeddingsModelFile = embed.DefaultLocalModelFile
	if k, err := service.Keeper(aws.Config{}, nil, cfg, bedrock.New); err != nil || k == nil {
		t.Errorf("the default file from internal/service: %+v, %v", k, err)
	}
	if _, err := service.Keeper(aws.Config{}, nil, service.Config{Embeddings: service.EmbeddingsBedrock}, nil); err == nil {
		t.Errorf("bedrock without Bedrock's client linked: no error")
	}
	root, err := embedtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	cfg.EmbeddingsModelFile = filepath.Join(root, embed.DefaultLocalModelFile)
	k, err := service.Keeper(aws.Config{}, nil, cfg, bedrock.New)
	if err != nil || k.Model() != embed.LocalName || k.Persist {
		t.Errorf("local: %+v, %v; want the local model, its vectors not kept in the table", k, err)
	}
	cfg.Embeddings, cfg.EmbeddingsModel = service.EmbeddingsBedrock, "amazon.titan-embed-text-v2:0"
	if k, err := service.Keeper(aws.Config{Region: "us-east-1"}, nil, cfg, bedrock.New); err != nil || k.Model() != "bedrock:amazon.titan-embed-text-v2:0" || !k.Persist {
		t.Errorf("bedrock: %+v, %v; want Titan V2, its vectors kept", k, err)
	}
	cfg.Embeddings = service.EmbeddingsOff
	if k, err := service.Keeper(aws.Config{}, nil, cfg, bedrock.New); err != nil || k != nil {
		t.Errorf("off: %+v, %v; want none", k, err)
	}
}

func TestTheIndexerIsMadeForEverySearchableResourceWithTheKeeperTheConfigurationNames(t *testing.T) {
	root, err := embedtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	cfg := service.DefaultConfig()
	cfg.OpenSearchEndpoint, cfg.OpenSearchService, cfg.OpenSearchIndexPrefix = "https://search-x.eu-west-1.es.amazonaws.com", "es", "p"
	cfg.EmbeddingsModelFile = filepath.Join(root, embed.DefaultLocalModelFile)
	load := func(context.Context) (aws.Config, error) { return aws.Config{Region: "eu-west-1"}, nil }
	var resources, keepers []string
	var made []string
	newIndexer := func(_ context.Context, _ aws.Config, k *vectors.Keeper, endpoint, service, prefix string, schemas []*search.Schema) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
		resources = resources[:0]
		for _, s := range schemas {
			resources = append(resources, s.Resource)
		}
		switch {
		case k == nil:
			keepers = append(keepers, "none")
		case k.Persist && k.Store == nil:
			keepers = append(keepers, k.Model()+" without a store")
		case k.Cooldown >= 0:
			keepers = append(keepers, k.Model()+" resting after a failure (Lambda's retries would find it resting)")
		default:
			keepers = append(keepers, k.Model())
		}
		made = []string{endpoint, service, prefix}
		return func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			return events.DynamoDBEventResponse{}, nil
		}, nil
	}
	for _, e := range []string{service.EmbeddingsLocal, service.EmbeddingsBedrock, service.EmbeddingsOff} {
		cfg.Embeddings = e
		h, err := service.Indexer(context.Background(), load, cfg, newIndexer, bedrock.New)
		if err != nil || h == nil {
			t.Fatalf("EMBEDDINGS=%s: %v", e, err)
		}
	}
	var want []string
	for _, d := range kinds.Searchable() {
		want = append(want, d.Name)
	}
	if strings.Join(resources, ",") != strings.Join(want, ",") {
		t.Errorf("indexer schemas %v, want %v", resources, want)
	}
	if strings.Join(made, " ") != "https://search-x.eu-west-1.es.amazonaws.com es p" {
		t.Errorf("indexer made with %v", made)
	}
	// Bedrock's vectors are kept in the table: its keeper has the store.
	if got, want := strings.Join(keepers, ", "), embed.LocalName+", bedrock:"+embed.TitanV2+", none"; got != want {
		t.Errorf("the indexer was given the keepers %s, want %s", got, want)
	}
	cfg.Embeddings, cfg.EmbeddingsModelFile = service.EmbeddingsLocal, filepath.Join(t.TempDir(), "missing.vec")
	if _, err := service.Indexer(context.Background(), load, cfg, newIndexer, bedrock.New); err == nil || !strings.Contains(err.Error(), "EMBEDDINGS=local") {
		t.Errorf("a missing local model: %v, want the indexer to fail at start naming EMBEDDINGS=local", err)
	}
}

func TestTheSearchAndIndexerFunctionsExitAtStartWithoutAnOpenSearchEndpointOrTheEngineTheirBuildLacks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three functions")
	}
	t.Parallel()
	dir := t.TempDir()
	creds := []string{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=y"}
	for _, c := range []struct {
		function, tags string
		env            []string
		want           string
	}{
		{"search", "", []string{"SEARCH_ENGINE=opensearch"}, "OPENSEARCH_ENDPOINT"},
		{"indexer", "", nil, "OPENSEARCH_ENDPOINT"},
		// Each build of the search function has one engine.
		{"search", "", append([]string{"SEARCH_ENGINE=opensearch", "OPENSEARCH_ENDPOINT=https://abc.eu-west-1.aoss.amazonaws.com"}, creds...), "deploy its OpenSearch build (go build -tags " + routes.OpenSearchTag},
		{"search", routes.OpenSearchTag, creds, "this is the OpenSearch build of the search function"},
	} {
		bin := filepath.Join(dir, c.function+c.tags)
		testinputs.Tree()
		if out, err := exec.Command("go", "build", "-tags", strings.Trim(strings.Join(lambdaenv.Tags, ",")+","+c.tags, ","), "-o", bin, "../../functions/"+c.function).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", c.function, err, out)
		}
		cmd := exec.Command(bin)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "AWS_REGION=us-east-1", "AWS_LAMBDA_RUNTIME_API=127.0.0.1:1"}, c.env...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), c.want) {
			t.Errorf("%s (tags %q) with %v: %v, output %q; want exit 1 saying %q", c.function, c.tags, c.env, err, out, c.want)
		}
	}
}
