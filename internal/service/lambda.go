package service

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/search"
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
type OpenSearchEngine func(ctx context.Context, awsCfg aws.Config, st *store.Store, endpoint, service, indexPrefix string) (search.Engine, error)

// SearchEngine is the engine cfg.SearchEngine names: embedded's over st,
// or openSearch's; a nil one is not in this build of the function.
func SearchEngine(ctx context.Context, awsCfg aws.Config, st *store.Store, cfg Config, embedded func(*store.Store) search.Engine, openSearch OpenSearchEngine) (search.Engine, error) {
	switch cfg.SearchEngine {
	case SearchEmbedded, "":
		if embedded == nil {
			return nil, fmt.Errorf("%s=%s: this is the OpenSearch build of the search function (-tags %s), without the embedded engine; deploy its default build", EnvSearchEngine, SearchEmbedded, routes.OpenSearchTag)
		}
		return embedded(st), nil
	case SearchOpenSearch:
		if cfg.OpenSearchEndpoint == "" {
			return nil, fmt.Errorf("%s: %s=%s needs the endpoint of the collection or domain", EnvOpenSearchEndpoint, EnvSearchEngine, SearchOpenSearch)
		}
		if openSearch == nil {
			return nil, fmt.Errorf("%s=%s: this build of the search function has the embedded engine only; deploy its OpenSearch build (go build -tags %s; make build puts it in bin/lambda/%s)", EnvSearchEngine, SearchOpenSearch, routes.OpenSearchTag, searchFunction().Asset(true))
		}
		return openSearch(ctx, awsCfg, st, cfg.OpenSearchEndpoint, cfg.OpenSearchService, cfg.OpenSearchIndexPrefix)
	}
	return nil, fmt.Errorf("%s: %q is neither %s nor %s", EnvSearchEngine, cfg.SearchEngine, SearchEmbedded, SearchOpenSearch)
}

// StreamHandler handles a batch of the table's stream records.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// NewIndexer makes the indexer of the searchable schemas from the
// configuration's endpoint, service and index prefix, signing with
// awsCfg's credentials (package search/opensearch's NewStreamHandler).
type NewIndexer func(ctx context.Context, awsCfg aws.Config, endpoint, service, indexPrefix string, schemas []*search.Schema) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error)

// Indexer is the indexer function's handler for cfg, reaching AWS with
// the configuration load loads: it needs OPENSEARCH_ENDPOINT whatever
// SEARCH_ENGINE says.
func Indexer(ctx context.Context, load AWSLoader, cfg Config, newIndexer NewIndexer) (StreamHandler, error) {
	if cfg.OpenSearchEndpoint == "" {
		return nil, fmt.Errorf("%s: the indexer needs the endpoint of the collection or domain", EnvOpenSearchEndpoint)
	}
	awsCfg, err := load(ctx)
	if err != nil {
		return nil, err
	}
	var schemas []*search.Schema
	for _, d := range kinds.Searchable() {
		schemas = append(schemas, search.SchemaOf(d))
	}
	h, err := newIndexer(ctx, awsCfg, cfg.OpenSearchEndpoint, cfg.OpenSearchService, cfg.OpenSearchIndexPrefix, schemas)
	return StreamHandler(h), err
}

// ServeIndexer runs the indexer function: the table's DynamoDB stream
// (NEW_AND_OLD_IMAGES, with ReportBatchItemFailures) into the OpenSearch
// indexes of the searchable resources.
func ServeIndexer(newIndexer NewIndexer) {
	SizeToCPU()
	Logger(os.Stdout)
	cfg, err := ConfigFromEnv()
	Must(err)
	h, err := Indexer(context.Background(), awsenv.Load, cfg, newIndexer)
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
