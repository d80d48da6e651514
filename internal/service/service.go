// Package service builds the service from its configuration: the one place
// where environment variables are read and dependencies wired, shared by
// the Lambda functions, the dev server and the operator CLI.
package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/sourcebase/sourcebase/internal/embed"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/series"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/usage"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// DefaultTable is the table name when TABLE_NAME is unset.
const DefaultTable = "sourcebase"

// Config is the service's configuration.
type Config struct {
	Table           string        // TABLE_NAME
	CacheTTL        time.Duration // API_KEY_CACHE_TTL
	StateMachineARN string        // STATE_MACHINE_ARN: runs execute in Step Functions when set
	WebhookBaseURL  string        // WEBHOOK_BASE_URL: public base of the webhook endpoint, shown in trigger urls
	StoreTimeout    time.Duration // STORE_TIMEOUT: deadline of one storage call, retries included
	// SEARCH_BASE_URL: the HTTP API's base URL, where a function without a
	// search engine (mcp) sends the search routes; unset, the address the
	// MCP request came to (Deps.SearchBaseURL).
	SearchBaseURL string

	SearchEngine          string // SEARCH_ENGINE: SearchEmbedded (default) or SearchOpenSearch
	OpenSearchEndpoint    string // OPENSEARCH_ENDPOINT: https URL of the collection or domain
	OpenSearchService     string // OPENSEARCH_SERVICE: "aoss" (Serverless, default) or "es" (managed domain)
	OpenSearchIndexPrefix string // OPENSEARCH_INDEX_PREFIX: indexes are <prefix>-<resource> (default "sourcebase")

	// Embeddings (EMBEDDINGS) is the embedding provider of hybrid search
	// and similar records: EmbeddingsLocal, EmbeddingsBedrock or
	// EmbeddingsOff; "" (unset): the local model where it is installed,
	// else none (Keeper).
	Embeddings string
	// EmbeddingsModel (EMBEDDINGS_MODEL) is Bedrock's model id (default
	// embed.TitanV2).
	EmbeddingsModel string
	// EmbeddingsModelFile (EMBEDDINGS_MODEL_FILE) is the local model's
	// file (default embed.DefaultLocalModelFile, relative to the working
	// directory).
	EmbeddingsModelFile string

	DeliverQueueURL string // DELIVER_QUEUE_URL: the outbound webhooks' delivery queue (SQS FIFO) in AWS
	DeliverDLQURL   string // DELIVER_DLQ_URL: its dead-letter queue, where the deliver function moves what exhausts its retries
	// WEBHOOKS_ALLOW_LOOPBACK=true lets webhook endpoints be on this
	// machine (the dev server's setting, never a deployment's).
	WebhooksAllowLoopback bool
	// WebhooksResolver resolves webhook endpoints' hosts (nil: the
	// system's); tests answer from a resolver of their own, never the
	// network's.
	WebhooksResolver *net.Resolver
	// EVENT_BUS_NAME: the EventBridge bus the events function publishes
	// to, for the organizations whose operator asked for it (the events
	// function's setting).
	EventBusName string
	// BULK_BUCKET: the S3 bucket of the bulk jobs' files (uploads,
	// exports, errors files), for the functions that create or run jobs.
	BulkBucket string
	// JOBS_STATE_MACHINE_ARN: the job state machine, which the function
	// creating exports starts.
	JobsStateMachineARN string
	// BULK_DIR, BULK_FILES_URL and BULK_FILES_SECRET: without S3 (the
	// local Lambda front), the jobs' files are in a directory whose signed
	// URLs (HMAC-SHA256 with the hex secret) a process at the base URL
	// serves (blob.Dir).
	BulkDir, BulkFilesURL, BulkFilesSecret string
	// IMPORT_ROWS_PER_SECOND bounds each import's writes (0: the default,
	// jobs.DefaultRowsPerSecond).
	ImportRowsPerSecond float64
}

// The search engines SEARCH_ENGINE names.
const (
	SearchEmbedded   = "embedded"   // bleve in the search function's process
	SearchOpenSearch = "opensearch" // OpenSearch, fed by the indexer function
)

// The embedding providers EMBEDDINGS names.
const (
	EmbeddingsLocal   = "local"   // word vectors from an npm package, in process (make run, tests)
	EmbeddingsBedrock = "bedrock" // Amazon Bedrock's Titan Text Embeddings V2 (deployments)
	EmbeddingsOff     = "off"     // none: hybrid ranks by keywords, similar answers 501
)

// Defaults of the OpenSearch settings.
const (
	DefaultOpenSearchService     = "aoss"
	DefaultOpenSearchIndexPrefix = "sourcebase"
)

// indexPrefix: what an OpenSearch index name may start with (lower case,
// no characters OpenSearch refuses, not starting with _, - or +).
var indexPrefix = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// MaxStoreTimeout is the longest STORE_TIMEOUT (store.MaxCallTimeout).
const MaxStoreTimeout = store.MaxCallTimeout

// ParseStoreTimeout reads STORE_TIMEOUT: a Go duration from 100ms to
// MaxStoreTimeout; empty means store.DefaultCallTimeout.
func ParseStoreTimeout(s string) (time.Duration, error) {
	if s == "" {
		return store.DefaultCallTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("STORE_TIMEOUT: %q is not a Go duration such as 10s", s)
	}
	if d < 100*time.Millisecond || d > MaxStoreTimeout {
		return 0, fmt.Errorf("STORE_TIMEOUT: %s is outside 100ms..%s", d, MaxStoreTimeout)
	}
	return d, nil
}

// The environment variables of the configuration.
const (
	EnvTable           = "TABLE_NAME"
	EnvCacheTTL        = "API_KEY_CACHE_TTL"
	EnvStateMachineARN = "STATE_MACHINE_ARN"
	EnvWebhookBaseURL  = "WEBHOOK_BASE_URL"
	EnvStoreTimeout    = "STORE_TIMEOUT"
	EnvSearchBaseURL   = "SEARCH_BASE_URL"

	EnvDeliverQueueURL       = "DELIVER_QUEUE_URL"
	EnvDeliverDLQURL         = "DELIVER_DLQ_URL"
	EnvWebhooksAllowLoopback = "WEBHOOKS_ALLOW_LOOPBACK"
	EnvEventBusName          = "EVENT_BUS_NAME"
	EnvBulkBucket            = "BULK_BUCKET"
	EnvJobsStateMachineARN   = "JOBS_STATE_MACHINE_ARN"
	EnvBulkDir               = "BULK_DIR"
	EnvBulkFilesURL          = "BULK_FILES_URL"
	EnvBulkFilesSecret       = "BULK_FILES_SECRET"
	EnvImportRowsPerSecond   = "IMPORT_ROWS_PER_SECOND"

	EnvSearchEngine          = "SEARCH_ENGINE"
	EnvOpenSearchEndpoint    = "OPENSEARCH_ENDPOINT"
	EnvOpenSearchService     = "OPENSEARCH_SERVICE"
	EnvOpenSearchIndexPrefix = "OPENSEARCH_INDEX_PREFIX"

	EnvEmbeddings          = "EMBEDDINGS"
	EnvEmbeddingsModel     = "EMBEDDINGS_MODEL"
	EnvEmbeddingsModelFile = "EMBEDDINGS_MODEL_FILE"
)

// DefaultConfig is the configuration of an empty environment.
func DefaultConfig() Config {
	return Config{Table: DefaultTable, CacheTTL: auth.MaxCacheTTL, StoreTimeout: store.DefaultCallTimeout,
		SearchEngine: SearchEmbedded, OpenSearchService: DefaultOpenSearchService, OpenSearchIndexPrefix: DefaultOpenSearchIndexPrefix,
		EmbeddingsModel: embed.TitanV2, EmbeddingsModelFile: embed.DefaultLocalModelFile}
}

// ConfigFromEnv reads the configuration, rejecting invalid values.
func ConfigFromEnv() (Config, error) {
	c := Config{Table: os.Getenv(EnvTable), StateMachineARN: os.Getenv(EnvStateMachineARN), WebhookBaseURL: os.Getenv(EnvWebhookBaseURL),
		SearchBaseURL: os.Getenv(EnvSearchBaseURL), DeliverQueueURL: os.Getenv(EnvDeliverQueueURL), DeliverDLQURL: os.Getenv(EnvDeliverDLQURL),
		EventBusName: os.Getenv(EnvEventBusName), BulkBucket: os.Getenv(EnvBulkBucket), JobsStateMachineARN: os.Getenv(EnvJobsStateMachineARN),
		BulkDir: os.Getenv(EnvBulkDir), BulkFilesURL: os.Getenv(EnvBulkFilesURL), BulkFilesSecret: os.Getenv(EnvBulkFilesSecret)}
	switch v := os.Getenv(EnvWebhooksAllowLoopback); v {
	case "", "false":
	case "true":
		c.WebhooksAllowLoopback = true
	default:
		return c, fmt.Errorf("%s: %q is neither true nor false", EnvWebhooksAllowLoopback, v)
	}
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if v := os.Getenv(EnvImportRowsPerSecond); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 0 || math.IsInf(n, 0) {
			return c, fmt.Errorf("%s: %q is not a positive number of rows a second", EnvImportRowsPerSecond, v)
		}
		c.ImportRowsPerSecond = n
	}
	ttl, err := auth.ParseCacheTTL(os.Getenv(EnvCacheTTL))
	if err != nil {
		return c, err
	}
	c.CacheTTL = ttl
	if c.StoreTimeout, err = ParseStoreTimeout(os.Getenv(EnvStoreTimeout)); err != nil {
		return c, err
	}
	if err := c.readSearch(); err != nil {
		return c, err
	}
	if c.SearchBaseURL != "" {
		u, err := url.Parse(c.SearchBaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return c, fmt.Errorf("%s: %q is not the base URL of the HTTP API, such as https://abc123.execute-api.us-east-1.amazonaws.com", EnvSearchBaseURL, c.SearchBaseURL)
		}
	}
	return c, nil
}

// readSearch reads the search engine's settings.
func (c *Config) readSearch() error {
	c.SearchEngine = os.Getenv(EnvSearchEngine)
	c.OpenSearchEndpoint = os.Getenv(EnvOpenSearchEndpoint)
	c.OpenSearchService = os.Getenv(EnvOpenSearchService)
	c.OpenSearchIndexPrefix = os.Getenv(EnvOpenSearchIndexPrefix)
	switch c.SearchEngine {
	case "":
		c.SearchEngine = SearchEmbedded
	case SearchEmbedded, SearchOpenSearch:
	default:
		return fmt.Errorf("%s: %q is neither %s nor %s", EnvSearchEngine, c.SearchEngine, SearchEmbedded, SearchOpenSearch)
	}
	switch c.OpenSearchService {
	case "":
		c.OpenSearchService = DefaultOpenSearchService
	case "aoss", "es":
	default:
		return fmt.Errorf("%s: %q is neither aoss (OpenSearch Serverless) nor es (OpenSearch Service domain)", EnvOpenSearchService, c.OpenSearchService)
	}
	if c.OpenSearchIndexPrefix == "" {
		c.OpenSearchIndexPrefix = DefaultOpenSearchIndexPrefix
	} else if !indexPrefix.MatchString(c.OpenSearchIndexPrefix) {
		return fmt.Errorf("%s: %q is not an index name prefix (lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100)", EnvOpenSearchIndexPrefix, c.OpenSearchIndexPrefix)
	}
	if c.OpenSearchEndpoint != "" {
		u, err := url.Parse(c.OpenSearchEndpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return fmt.Errorf("%s: %q is not an endpoint URL such as https://abc123.us-east-1.aoss.amazonaws.com", EnvOpenSearchEndpoint, c.OpenSearchEndpoint)
		}
	}
	if c.SearchEngine == SearchOpenSearch && c.OpenSearchEndpoint == "" {
		return fmt.Errorf("%s: %s=%s needs the endpoint of the collection or domain", EnvOpenSearchEndpoint, EnvSearchEngine, SearchOpenSearch)
	}
	return c.readEmbeddings()
}

// readEmbeddings reads the embedding provider's settings.
func (c *Config) readEmbeddings() error {
	c.Embeddings = os.Getenv(EnvEmbeddings)
	c.EmbeddingsModel = os.Getenv(EnvEmbeddingsModel)
	c.EmbeddingsModelFile = os.Getenv(EnvEmbeddingsModelFile)
	switch c.Embeddings {
	case "", EmbeddingsLocal, EmbeddingsBedrock, EmbeddingsOff:
	default:
		return fmt.Errorf("%s: %q is none of %s, %s and %s", EnvEmbeddings, c.Embeddings, EmbeddingsLocal, EmbeddingsBedrock, EmbeddingsOff)
	}
	if c.EmbeddingsModel == "" {
		c.EmbeddingsModel = embed.TitanV2
	} else if !embed.ValidModelID(c.EmbeddingsModel) {
		return fmt.Errorf("%s: %q is not a Bedrock model id such as %s", EnvEmbeddingsModel, c.EmbeddingsModel, embed.TitanV2)
	}
	if c.EmbeddingsModelFile == "" {
		c.EmbeddingsModelFile = embed.DefaultLocalModelFile
	}
	return nil
}

// Env is the environment that ConfigFromEnv reads back as c: what the
// infrastructure gives a function. The state machine, webhook base and
// search base are left out when unset, and the search settings when they are the defaults
// (so functions without search get none).
func (c Config) Env() map[string]string {
	env := map[string]string{
		EnvTable:        c.Table,
		EnvCacheTTL:     c.CacheTTL.String(),
		EnvStoreTimeout: c.StoreTimeout.String(),
	}
	if c.StateMachineARN != "" {
		env[EnvStateMachineARN] = c.StateMachineARN
	}
	if c.WebhookBaseURL != "" {
		env[EnvWebhookBaseURL] = c.WebhookBaseURL
	}
	if c.SearchBaseURL != "" {
		env[EnvSearchBaseURL] = c.SearchBaseURL
	}
	if c.SearchEngine != "" && c.SearchEngine != SearchEmbedded {
		env[EnvSearchEngine] = c.SearchEngine
	}
	if c.OpenSearchEndpoint != "" {
		env[EnvOpenSearchEndpoint] = c.OpenSearchEndpoint
	}
	if c.OpenSearchService != "" && c.OpenSearchService != DefaultOpenSearchService {
		env[EnvOpenSearchService] = c.OpenSearchService
	}
	if c.OpenSearchIndexPrefix != "" && c.OpenSearchIndexPrefix != DefaultOpenSearchIndexPrefix {
		env[EnvOpenSearchIndexPrefix] = c.OpenSearchIndexPrefix
	}
	if c.Embeddings != "" {
		env[EnvEmbeddings] = c.Embeddings
	}
	if c.EmbeddingsModel != "" && c.EmbeddingsModel != embed.TitanV2 {
		env[EnvEmbeddingsModel] = c.EmbeddingsModel
	}
	if c.EmbeddingsModelFile != "" && c.EmbeddingsModelFile != embed.DefaultLocalModelFile {
		env[EnvEmbeddingsModelFile] = c.EmbeddingsModelFile
	}
	if c.DeliverQueueURL != "" {
		env[EnvDeliverQueueURL] = c.DeliverQueueURL
	}
	if c.DeliverDLQURL != "" {
		env[EnvDeliverDLQURL] = c.DeliverDLQURL
	}
	if c.WebhooksAllowLoopback {
		env[EnvWebhooksAllowLoopback] = "true"
	}
	if c.EventBusName != "" {
		env[EnvEventBusName] = c.EventBusName
	}
	if c.BulkBucket != "" {
		env[EnvBulkBucket] = c.BulkBucket
	}
	if c.JobsStateMachineARN != "" {
		env[EnvJobsStateMachineARN] = c.JobsStateMachineARN
	}
	if c.ImportRowsPerSecond > 0 {
		env[EnvImportRowsPerSecond] = strconv.FormatFloat(c.ImportRowsPerSecond, 'g', -1, 64)
	}
	if c.BulkDir != "" {
		env[EnvBulkDir], env[EnvBulkFilesURL], env[EnvBulkFilesSecret] = c.BulkDir, c.BulkFilesURL, c.BulkFilesSecret
	}
	return env
}

// Logger installs the JSON logger (with request ids) as the default.
func Logger(w io.Writer) *slog.Logger {
	l := slog.New(httpapi.LogHandler{Handler: slog.NewJSONHandler(w, nil)})
	slog.SetDefault(l)
	return l
}

// Build wires the services over st; runs execute on the engine that
// engine makes: Step Functions (FromEnv), in process (InProcessRuns), or
// none (nil: a run fails at once saying so).
func Build(st *store.Store, cfg Config, engine runs.EngineFactory) Deps {
	k := apikeys.New(st)
	cs := companies.NewService(st)
	wf := workflows.NewService(st, cfg.WebhookBaseURL)
	reg := resources.NewRegistry(st, resource.External{Singular: "company", Exists: cs.Exists}, companies.FieldNames())
	ms := series.NewService(st, recordExists(cs, reg), resources.SeriesKinds())
	rs := runs.NewService(st, wf, cs, engine)
	rs.UseMetrics(ms)
	es := enrichment.NewService(st, documentExists(reg), enrichment.Companies(cs))
	rs.UseEnrichment(es)
	wf.CheckStepsWith(rs.CheckSteps)
	catalog := kinds.Events()
	orgs := k.Cached(cfg.CacheTTL)
	eps := endpoints.New(st, catalog, &outbound.Client{AllowLoopback: cfg.WebhooksAllowLoopback, Resolver: cfg.WebhooksResolver},
		unqueued{})
	eps.OrgStatus = orgStatus(orgs)
	return Deps{
		History:    &history.History{Store: st, Catalog: catalog, Retention: k.EventRetention},
		Endpoints:  eps,
		Store:      st,
		Keys:       k,
		Orgs:       orgs,
		Auth:       auth.New(k, cfg.CacheTTL),
		Limits:     ratelimit.New(st),
		Usage:      usage.NewRecorder(st),
		Companies:  cs,
		Workflows:  wf,
		Runs:       rs,
		Series:     ms,
		Enrichment: es,
		Resources:  reg,
		Entries:    resources.NewEntries(st, reg, companyReader(cs), cs.Exists),
		Present:    presenter(cs, reg),

		SearchBaseURL: cfg.SearchBaseURL,
	}
}

// presenter presents the stored records of companies and of the
// declared resources (Deps.Present).
func presenter(cs *companies.Service, reg *resource.Registry) func(d *resource.Def) (resource.Presenter, bool) {
	return func(d *resource.Def) (resource.Presenter, bool) {
		if d == companies.Def {
			return cs, true
		}
		svc, ok := reg.Service(d.Name)
		if !ok {
			return nil, false
		}
		return svc, true
	}
}

// recordExists checks the records metric series belong to: companies,
// and the declared resources (deals, people).
func recordExists(cs *companies.Service, reg *resource.Registry) series.ExistsFunc {
	return func(ctx context.Context, org, resourceType, id string) (bool, error) {
		if resourceType == companies.Name {
			return cs.Exists(ctx, org, id)
		}
		svc, ok := reg.Service(resourceType)
		if !ok {
			return false, nil
		}
		return svc.Exists(ctx, org, id)
	}
}

// documentExists checks the sourceId of document candidates.
func documentExists(reg *resource.Registry) enrichment.ExistsFunc {
	return func(ctx context.Context, org, id string) (bool, error) {
		svc, ok := reg.Service("documents")
		if !ok {
			return false, nil
		}
		return svc.Exists(ctx, org, id)
	}
}

// InProcessRuns makes runs execute in this process, 8 at once (dev
// server, tests): pass it to Build.
func InProcessRuns() runs.EngineFactory { return runs.InProcessEngine(8) }

// InProcess is the in-process engine of services built with
// InProcessRuns (to Close it); nil when runs execute elsewhere.
func InProcess(deps Deps) *runs.InProcess {
	e, _ := deps.Runs.Engine().(*runs.InProcess)
	return e
}

// AWSLoader loads the AWS configuration: awsenv.Load in a function, the
// SDK's full chain (app/operator) on an operator's machine.
type AWSLoader func(context.Context) (aws.Config, error)

// StoreFromEnv opens the table named by the configuration, reaching AWS
// with the configuration load loads (after the service's own
// configuration is known to be valid).
func StoreFromEnv(ctx context.Context, load AWSLoader) (*store.Store, Config, error) {
	st, cfg, _, err := storeFromEnv(ctx, load)
	return st, cfg, err
}

func storeFromEnv(ctx context.Context, load AWSLoader) (*store.Store, Config, aws.Config, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, cfg, aws.Config{}, err
	}
	awsCfg, err := load(ctx)
	if err != nil {
		return nil, cfg, awsCfg, err
	}
	return store.New(store.NewClient(awsCfg, store.TimeoutsFor(cfg.StoreTimeout)), cfg.Table), cfg, awsCfg, nil
}

// FromEnv builds the services from the environment, reaching AWS with the
// configuration load loads, which it also returns.
func FromEnv(ctx context.Context, load AWSLoader) (Deps, Config, aws.Config, error) {
	st, cfg, awsCfg, err := storeFromEnv(ctx, load)
	if err != nil {
		return Deps{}, cfg, awsCfg, err
	}
	var engine runs.EngineFactory
	if cfg.StateMachineARN != "" {
		engine = runs.UseEngine(runs.StepFunctions{Client: sfn.NewFromConfig(awsCfg), StateMachineARN: cfg.StateMachineARN})
	}
	return Build(st, cfg, engine), cfg, awsCfg, nil
}

// Must exits with a message when err is set: for main functions.
func Must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// companyReader reads companies by id for list entries.
func companyReader(cs *companies.Service) resources.RecordReader {
	return func(ctx context.Context, org string, ids []string) (map[string]any, error) {
		found, err := cs.GetMany(ctx, org, ids)
		out := make(map[string]any, len(found))
		for i := range found {
			out[found[i].ID] = &found[i]
		}
		return out, err
	}
}
