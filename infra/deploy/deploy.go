// Package deploy holds the deployment decisions that the CDK stack and the
// SAM template share, so that the two describe the same functions: their
// memory and timeouts, the webhook's reserved concurrency.
package deploy

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
)

// Config is the configuration f runs with in a deployment: base with the
// table, the run state machine (only for a function that starts runs), the
// webhook URL (only for one that shows trigger urls) and the HTTP API's
// URL (only for one that searches through it; "" leaves it to the address
// of each request), each a value or the template's reference to it.
func Config(base app.Config, f routes.Function, table, stateMachineARN, webhookURL, apiURL string) app.Config {
	cfg := base
	cfg.Table, cfg.StateMachineARN, cfg.WebhookBaseURL, cfg.SearchBaseURL = table, "", "", ""
	if f.StartsRuns {
		cfg.StateMachineARN = stateMachineARN
	}
	if f.WebhookURLs {
		cfg.WebhookBaseURL = webhookURL
	}
	if f.SearchesByAPI {
		cfg.SearchBaseURL = apiURL
	}
	return cfg
}

// OpenSearch is cfg for a deployment that searches with the OpenSearch
// collection at endpoint: the functions that search (the search function)
// and index (the stream's indexer) are told so.
func OpenSearch(cfg app.Config, f routes.Function, endpoint string) app.Config {
	if f.HoldsIndexes || f.Reach == routes.ByStream {
		cfg.SearchEngine, cfg.OpenSearchEndpoint = app.SearchOpenSearch, endpoint
	}
	return cfg
}

// Sizing is a function's memory and timeout in AWS, and why.
type Sizing struct {
	MemoryMB int
	Timeout  time.Duration
	Why      string
}

// Sizing of the functions, by how they are reached. Lambda gives a
// function CPU in proportion to its memory (a full vCPU at 1,769 MB); the
// Go handlers themselves use a few tens of MB.
const (
	// requestMemoryMB: a cold start (SDK configuration, TLS to DynamoDB)
	// and JSON encoding of pages up to Lambda's 6 MB response are CPU
	// bound; at 512 MB a request of tens of milliseconds costs about what
	// it costs at 256 MB (half the time at twice the price per ms) while
	// cold starts take about half as long.
	requestMemoryMB = 512
	// requestTimeout: above the longest single storage call
	// (store.MaxCallTimeout, 25 s), so a slow table ends in the handler's
	// own 503 rather than in Lambda cutting the request off; below API
	// Gateway's 30 s integration timeout, so a function never keeps
	// working on a request the gateway has given up on. Function URLs have
	// no such limit, but webhook senders wait no longer.
	requestTimeout = 28 * time.Second
	// indexMemoryMB: a function holding search indexes in memory (up to
	// embedded.DefaultMaxDocs records, about 240 MB) with room for the
	// garbage collector; the CPU that comes with it builds a cold index of
	// 10,000 records in about a second.
	indexMemoryMB = 1024
	// runnerMemoryMB: the runner executes a run's steps (reads, upserts and
	// scores many records) for up to its timeout (RunnerTimeout).
	runnerMemoryMB = 512
	// adminMemoryMB, adminTimeout: a few storage calls per operator action
	// (create an organization, issue or revoke a key, describe the table);
	// 60 s leaves room for several calls at the storage timeout.
	adminMemoryMB = 256
	adminTimeout  = 60 * time.Second
	// indexerMemoryMB, indexerTimeout: a batch of the table's stream (at
	// most IndexerBatchSize records of up to 400 KB) sent as one bulk
	// request to OpenSearch.
	indexerMemoryMB = 256
	indexerTimeout  = 60 * time.Second
)

// IndexerBatchSize is how many stream records the indexer gets at once:
// one bulk request each.
const IndexerBatchSize = 100

// WebhookConcurrency is the webhook function's reserved concurrency: its
// URL is public (the signature is checked in code), so a flood of
// deliveries cannot take the account's whole Lambda concurrency or the
// table's throughput.
const WebhookConcurrency = 10

// SizingOf is f's memory and timeout.
func SizingOf(f routes.Function) (Sizing, error) {
	switch f.Reach {
	case routes.ByAPI, routes.ByURL:
		if f.HoldsIndexes {
			return Sizing{indexMemoryMB, requestTimeout, "1024 MB: its search indexes (about 240 MB at most, embedded.DefaultMaxDocs) and the CPU to build them; 28 s: as behind the API"}, nil
		}
		return Sizing{requestMemoryMB, requestTimeout, "512 MB: CPU for cold starts and JSON; 28 s: under API Gateway's 30 s, above the longest storage call (25 s)"}, nil
	case routes.ByStateMachine:
		t, err := RunnerTimeout()
		return Sizing{runnerMemoryMB, t, "timeout: the longest Task TimeoutSeconds of the state machine, so Step Functions times a step out and its Catch path records it"}, err
	case routes.ByOperator:
		return Sizing{adminMemoryMB, adminTimeout, "occasional operator calls, a few storage calls each"}, nil
	case routes.ByStream:
		return Sizing{indexerMemoryMB, indexerTimeout, "256 MB: a batch of up to 100 records into one bulk request; 60 s: the bulk request's time with room"}, nil
	}
	return Sizing{}, fmt.Errorf("function %s: unknown reach %q", f.Name, f.Reach)
}

// RunnerTimeout is the longest TimeoutSeconds of the run state machine's
// Task states (Execute's 900 s, also Lambda's maximum): the runner's
// timeout, so the state machine, not Lambda, decides when a step took too
// long.
func RunnerTimeout() (time.Duration, error) {
	var def struct {
		States map[string]struct {
			Type           string
			TimeoutSeconds int
		}
	}
	if err := json.Unmarshal([]byte(runs.StateMachineDefinition("runner")), &def); err != nil {
		return 0, fmt.Errorf("state machine definition: %w", err)
	}
	longest := 0
	for _, s := range def.States {
		if s.Type == "Task" {
			longest = max(longest, s.TimeoutSeconds)
		}
	}
	if longest == 0 || longest > 900 {
		return 0, fmt.Errorf("state machine Task timeouts must be 1..900 s (Lambda's limit), the longest is %d", longest)
	}
	return time.Duration(longest) * time.Second, nil
}
