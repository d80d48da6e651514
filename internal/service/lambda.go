package service

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

// fullVCPUMemoryMB is the memory size at which Lambda gives a function one
// whole vCPU (CPU is allocated in proportion to memory).
const fullVCPUMemoryMB = 1769

// LambdaProcs is the GOMAXPROCS a function of memoryMB megabytes runs with:
// 1 below one whole vCPU, where a second scheduler thread only adds
// contention for a fraction of a core (garbage collection and the handler
// fight over the same slice of CPU time); 0 (leave Go's default) at or
// above it, when the memory is unknown (0), or when GOMAXPROCS is set in
// the environment.
func LambdaProcs(memoryMB int, envGOMAXPROCS string) int {
	if envGOMAXPROCS != "" || memoryMB <= 0 || memoryMB >= fullVCPUMemoryMB {
		return 0
	}
	return 1
}

// SizeToCPU applies LambdaProcs to this process, from the memory size the
// Lambda runtime announces (AWS_LAMBDA_FUNCTION_MEMORY_SIZE).
func SizeToCPU() {
	mb, _ := strconv.Atoi(os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))
	if n := LambdaProcs(mb, os.Getenv("GOMAXPROCS")); n > 0 {
		runtime.GOMAXPROCS(n)
	}
}

// OpenSearchEngine makes the OpenSearch engine over st from the
// configuration's endpoint, service and index prefix, signing with
// awsCfg's credentials (package search/opensearch's NewEngine).
type OpenSearchEngine func(ctx context.Context, awsCfg aws.Config, st *store.Store, keeper *vectors.Keeper, endpoint, service, indexPrefix string) (search.Engine, error)

// EmbeddedEngine makes the embedded engine over st (package
// search/embedded's NewEngine), with the records' vectors when keeper is
// not nil.
type EmbeddedEngine func(st *store.Store, keeper *vectors.Keeper) search.Engine

// NewBedrock makes Bedrock's embedding provider of a model through a
// client of awsCfg (package embed/bedrock's New): given by the functions
// that embed, so that the others do not link Bedrock's client.
type NewBedrock func(awsCfg aws.Config, model string) embed.Provider

// Keeper is the keeper of the records' vectors that cfg.Embeddings names:
// nil when it is off; Bedrock's model cfg.EmbeddingsModel through
// newBedrock and awsCfg, its vectors kept in the table (an embedding costs
// a call); the local model from cfg.EmbeddingsModelFile (found under the
// working directory or an ancestor of it, embed.FindFile). Unset, it is
// the local model where make installed it, and off (logged) where it did
// not: a deployment names its provider.
func Keeper(awsCfg aws.Config, st *store.Store, cfg Config, newBedrock NewBedrock) (*vectors.Keeper, error) {
	switch cfg.Embeddings {
	case EmbeddingsOff:
		return nil, nil
	case EmbeddingsBedrock:
		if newBedrock == nil {
			return nil, fmt.Errorf("%s=%s: this program does not link Bedrock's client", EnvEmbeddings, EmbeddingsBedrock)
		}
		return vectors.New(newBedrock(awsCfg, cmp.Or(cfg.EmbeddingsModel, embed.TitanV2)), st, true), nil
	case EmbeddingsLocal, "":
		file, found := embed.FindFile(cmp.Or(cfg.EmbeddingsModelFile, embed.DefaultLocalModelFile))
		if !found && cfg.Embeddings == "" {
			slog.Warn("embeddings: no provider: EMBEDDINGS is unset and the local model is not installed (make model); hybrid searches rank by keywords and similar records answer 501",
				"file", file)
			return nil, nil
		}
		p, err := embed.LoadLocal(file)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w (or set %s=%s)", EnvEmbeddings, EmbeddingsLocal, err, EnvEmbeddings, EmbeddingsOff)
		}
		return vectors.New(p, st, false), nil
	}
	return nil, fmt.Errorf("%s: %q is none of %s, %s and %s", EnvEmbeddings, cfg.Embeddings, EmbeddingsLocal, EmbeddingsBedrock, EmbeddingsOff)
}

// SearchEngine is the engine cfg.SearchEngine names: embedded's over st,
// or openSearch's; a nil one is not in this build of the function.
func SearchEngine(ctx context.Context, awsCfg aws.Config, st *store.Store, cfg Config, embedded EmbeddedEngine, openSearch OpenSearchEngine, newBedrock NewBedrock) (search.Engine, error) {
	switch cfg.SearchEngine {
	case SearchEmbedded, "":
		if embedded == nil {
			return nil, fmt.Errorf("%s=%s: this is the OpenSearch build of the search function (-tags %s), without the embedded engine; deploy its default build", EnvSearchEngine, SearchEmbedded, routes.OpenSearchTag)
		}
	case SearchOpenSearch:
		if cfg.OpenSearchEndpoint == "" {
			return nil, fmt.Errorf("%s: %s=%s needs the endpoint of the collection or domain", EnvOpenSearchEndpoint, EnvSearchEngine, SearchOpenSearch)
		}
		if openSearch == nil {
			return nil, fmt.Errorf("%s=%s: this build of the search function has the embedded engine only; deploy its OpenSearch build (go build -tags %s; make build puts it in bin/lambda/%s)", EnvSearchEngine, SearchOpenSearch, routes.OpenSearchTag, searchFunction().Asset(true))
		}
	default:
		return nil, fmt.Errorf("%s: %q is neither %s nor %s", EnvSearchEngine, cfg.SearchEngine, SearchEmbedded, SearchOpenSearch)
	}
	keeper, err := Keeper(awsCfg, st, cfg, newBedrock)
	if err != nil {
		return nil, err
	}
	if cfg.SearchEngine == SearchOpenSearch {
		return openSearch(ctx, awsCfg, st, keeper, cfg.OpenSearchEndpoint, cfg.OpenSearchService, cfg.OpenSearchIndexPrefix)
	}
	return embedded(st, keeper), nil
}

// StreamHandler handles a batch of the table's stream records.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// NewIndexer makes the indexer of the searchable schemas from the
// configuration's endpoint, service and index prefix, signing with
// awsCfg's credentials, embedding the records' texts with keeper (nil
// when EMBEDDINGS=off) (package search/opensearch's NewStreamHandler).
type NewIndexer func(ctx context.Context, awsCfg aws.Config, keeper *vectors.Keeper, endpoint, service, indexPrefix string, schemas []*search.Schema) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error)

// Indexer is the indexer function's handler for cfg, reaching AWS with
// the configuration load loads: it needs OPENSEARCH_ENDPOINT whatever
// SEARCH_ENGINE says. Its keeper of the records' vectors is the one
// cfg.Embeddings names (Keeper), over the table cfg.Table (where
// Bedrock's vectors are kept).
func Indexer(ctx context.Context, load AWSLoader, cfg Config, newIndexer NewIndexer, newBedrock NewBedrock) (StreamHandler, error) {
	if cfg.OpenSearchEndpoint == "" {
		return nil, fmt.Errorf("%s: the indexer needs the endpoint of the collection or domain", EnvOpenSearchEndpoint)
	}
	awsCfg, err := load(ctx)
	if err != nil {
		return nil, err
	}
	st := store.New(store.NewClient(awsCfg, store.TimeoutsFor(cfg.StoreTimeout)), cfg.Table)
	keeper, err := Keeper(awsCfg, st, cfg, newBedrock)
	if err != nil {
		return nil, err
	}
	if keeper != nil {
		// Every batch tries the model: a record it cannot embed is
		// retried by Lambda within seconds, and a cooldown would spend
		// its retries before the model is asked again.
		keeper.Cooldown = -1
	}
	var schemas []*search.Schema
	for _, d := range kinds.Searchable() {
		schemas = append(schemas, search.SchemaOf(d))
	}
	h, err := newIndexer(ctx, awsCfg, keeper, cfg.OpenSearchEndpoint, cfg.OpenSearchService, cfg.OpenSearchIndexPrefix, schemas)
	return StreamHandler(h), err
}

// ServeIndexer runs the indexer function: the table's DynamoDB stream
// (NEW_AND_OLD_IMAGES, with ReportBatchItemFailures) into the OpenSearch
// indexes of the searchable resources.
func ServeIndexer(newIndexer NewIndexer, newBedrock NewBedrock) {
	SizeToCPU()
	Logger(os.Stdout)
	cfg, err := ConfigFromEnv()
	Must(err)
	h, err := Indexer(context.Background(), awsenv.Load, cfg, newIndexer, newBedrock)
	Must(err)
	lambda.Start(h)
}

// ServeRunner runs the Lambda the state machine invokes to execute a run
// and, from its Catch path, to mark a run failed; its schedule
// (routes.Function.Schedule) invokes it to sweep (RunnerHandler).
func ServeRunner(options ...func(*Deps)) {
	SizeToCPU()
	Logger(os.Stdout)
	deps, _, _, err := FromEnv(context.Background(), awsenv.Load)
	Must(err)
	for _, o := range options {
		o(&deps)
	}
	lambda.Start(RunnerHandler(deps))
}

// searchFunction is the search function's declaration.
func searchFunction() routes.Function {
	f, _ := routes.FunctionNamed(lambdas.Search)
	return f
}
