// Package sizing holds each function's memory size and timeout in AWS,
// and why: the CDK stack and the SAM template deploy them (infra/deploy),
// and the local Lambda front runs each bootstrap with them (lambdafront).
package sizing

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
)

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
	// eventsMemoryMB, eventsTimeout: a batch of the table's stream (at
	// most EventsBatchSize records) handled one record at a time: for
	// each, an event item written (and, for a delete, its deletion marker
	// read), the organization's endpoints read and a message sent per
	// delivery; tens of milliseconds a record, and a failing call ends
	// the batch (the rest is retried), so 60 s leaves room for a slow
	// table.
	eventsMemoryMB = 256
	eventsTimeout  = 60 * time.Second
	// deliverMemoryMB: signing and sending one delivery at a time over
	// HTTPS. DeliverTimeout: a batch of DeliverBatchSize deliveries made
	// one after another, each at most outbound.DefaultTimeout (10 s) plus
	// its few storage calls.
	deliverMemoryMB = 256
	DeliverTimeout  = DeliverBatchSize * (outbound.DefaultTimeout + 2*time.Second)
)

// DeliverBatchSize is how many messages the deliver function gets at
// once: SQS's maximum for a FIFO queue. They are attempted one after
// another (DeliverTimeout).
const DeliverBatchSize = 10

// Of is f's memory and timeout.
func Of(f routes.Function) (Sizing, error) {
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
		if f.Name == lambdas.Indexer {
			return Sizing{indexerMemoryMB, indexerTimeout, "256 MB: a batch of up to 100 records into one bulk request; 60 s: the bulk request's time with room"}, nil
		}
		return Sizing{eventsMemoryMB, eventsTimeout, "256 MB: a batch of up to 100 changes, each an event written and its deliveries queued; 60 s: the batch with room for a slow table"}, nil
	case routes.ByQueue:
		return Sizing{deliverMemoryMB, DeliverTimeout, fmt.Sprintf("256 MB: one signed HTTPS delivery at a time; %d s: a batch of %d deliveries of at most %d s each with their storage calls",
			int(DeliverTimeout.Seconds()), DeliverBatchSize, int(outbound.DefaultTimeout.Seconds()))}, nil
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
