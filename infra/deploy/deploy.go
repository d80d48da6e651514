// Package deploy holds the deployment decisions that the CDK stack and the
// SAM template share, so that the two describe the same functions: their
// environment's resources, the webhook's reserved concurrency, the stream
// and queue event sources' settings, the bulk jobs' bucket and grants.
// What the service declares (its functions with their memory, timeouts,
// table access and environment, its routes, table and state machines)
// they read from the deployment model (internal/deploymodel), never from
// the service's packages.
package deploy

import (
	"encoding/json"
	"time"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// EventBus is the EventBridge bus the events function publishes to, for
// the organizations whose operator asked for it: the account's default bus,
// where customers' own rules route events (deploymodel.RefEventBus).
const EventBus = "default"

// PublishEventsActions let the events function publish to EventBus.
var PublishEventsActions = []string{"events:PutEvents"}

// Env is f's environment in a deployment (openSearch: one searching with
// OpenSearch): the model's variables of f, a literal value through
// literal, a reference (the table's name, a queue's URL: what only the
// deployment knows) through value. Which references each function gets is
// the model's decision (internal/deploymodel/derive); the event bus is
// EventBus in both stacks.
func Env[T any](f deploymodel.Function, openSearch bool, literal func(string) T, value func(deploymodel.Ref) (T, error)) (map[string]T, error) {
	out := map[string]T{}
	for k, v := range f.EnvIn(openSearch) {
		if v.Ref == "" {
			out[k] = literal(v.Value)
			continue
		}
		x, err := value(v.Ref)
		if err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}

// IsIndexer reports whether f is the OpenSearch indexer: the function fed
// by the table's stream in OpenSearch deployments only.
func IsIndexer(f deploymodel.Function) bool { return f.Indexer }

// IsEventsConsumer reports whether f turns the table's stream into the
// change history (the events function): a stream consumer that is not
// the indexer.
func IsEventsConsumer(f deploymodel.Function) bool {
	return f.Reach == deploymodel.ByStream && !IsIndexer(f)
}

// IsDeliverer reports whether f takes the delivery queue's batches (the
// deliver function).
func IsDeliverer(f deploymodel.Function) bool { return f.Reach == deploymodel.ByQueue }

// IndexerBatchSize is how many stream records the indexer gets at once:
// one bulk request each.
const IndexerBatchSize = 100

// EventsBatchSize is how many stream records the events function gets at
// once (after the filter criteria: only changes of item types that have
// events).
const EventsBatchSize = 100

// StreamRetryAttempts is how many times a stream batch that still fails
// (after bisecting) is retried before it is kept in the consumer's
// failure queue.
const StreamRetryAttempts = 5

// FailureRetentionDays is how long a queue of what a consumer gave up on
// keeps it (SQS's maximum, 14 days): time to find the cause and replay.
const FailureRetentionDays = 14

// The outbound webhooks' delivery queue (SQS FIFO: one message group per
// endpoint and record, so a record's deliveries to an endpoint keep their
// order) and its event source. Its batch size is the model's
// (deploymodel.Model.DeliverBatchSize, which the deliver function's timeout
// is made for).
const (
	// DeliverMaxConcurrency is the event source's maximum concurrency by
	// default (CDK context deliverConcurrency, SAM parameter
	// DeliverConcurrency; SQS allows 2 to 1,000): at most this many
	// deliver instances at once, each attempting one delivery at a time,
	// so at most this many deliveries are in flight across every endpoint
	// (a burst of events waits in the queue rather than opening thousands
	// of connections or taking the account's concurrency). At about 0.3 s
	// an attempt, 50 deliver some 150 a second across the deployment. It
	// caps, and reserves nothing: a small account deploys it as is.
	DeliverMaxConcurrency = 50
	// DeliverRetentionDays: a message outlives the retry schedule (about
	// 28 hours from the first attempt, outbound.Schedule) with room for
	// a group held back by an endpoint that is down.
	DeliverRetentionDays = 4
	// DeliverMaxReceiveCount is the redrive policy's receive count, for
	// a message whose batch crashes the function again and again (a
	// delivery that exhausts its retries is moved to the dead-letter queue
	// by the function itself). A message is received once per attempt
	// (1 + len(outbound.Schedule) = 8) and also each time it comes back
	// unattempted behind an earlier message of its group in the same
	// batch (at most DeliverBatchSize-1 such messages, 8 attempts each):
	// at most 80 receives in normal operation, so the redrive stays above
	// that.
	DeliverMaxReceiveCount = 100
	// DeliverDLQRetentionDays: the dead-letter queue keeps what it gets
	// as long as SQS allows.
	DeliverDLQRetentionDays = 14
)

// DeliverVisibilityTimeout is the delivery queue's visibility timeout: six
// times the deliver function's timeout, as AWS advises for a Lambda event
// source (a message is not handed out again while a batch that holds it
// may still run, its retries included). A retry sets its own visibility
// (ChangeMessageVisibility, up to 12 hours).
func DeliverVisibilityTimeout(m *deploymodel.Model) time.Duration {
	var longest time.Duration
	for _, f := range m.Functions {
		if IsDeliverer(f) {
			longest = max(longest, time.Duration(f.TimeoutSeconds)*time.Second)
		}
	}
	return 6 * longest
}

// WebhookConcurrency is the webhook function's reserved concurrency by
// default (CDK context webhookConcurrency, SAM parameter
// WebhookConcurrency): its URL is public (the signature is checked in
// code), so a flood of deliveries cannot take the account's whole Lambda
// concurrency or the table's throughput. Reserved concurrency comes out
// of the account's pool, which must keep 100 unreserved (10 in a new
// account until its quota is raised): the default stays small enough to
// deploy anywhere, and a deployment whose senders deliver more than about
// a hundred a second raises it.
const WebhookConcurrency = 10

// The HTTP API stage's throttle by default (CDK context apiRateLimit and
// apiBurstLimit, SAM parameters ApiRateLimit and ApiBurstLimit), for every
// organization together: well above one key's limit (1,000 a second,
// ratelimit.Defaults) and one organization's (2,000), so that the
// per-key and per-organization limits, not the stage, are what a client
// meets. An account's HTTP APIs share 10,000 requests a second and a
// bucket of 5,000 per region (API Gateway's quota): a stage cannot burst
// beyond the account's bucket, so the burst is the bucket's size.
const (
	APIRateLimit  = 5000 // requests a second, steady
	APIBurstLimit = 5000 // requests at once
)

// EventsFilterPatterns are the filter criteria of the events function's
// stream source (Lambda event filtering, one pattern per entry; a record
// matching any is handed to the function): a change whose new or old
// image's item type (the table's ItemTypeAttribute) is one of the model's
// EventItemTypes. Every other change (index entries, counters, the
// events and deliveries the function writes itself, deletion markers,
// which it reads by key) never invokes it. A record removed has only an
// old image, a record created only a new one.
func EventsFilterPatterns(m *deploymodel.Model) []string {
	var types []any
	for _, t := range m.EventItemTypes {
		types = append(types, t)
	}
	pattern := func(image string) string {
		b, err := json.Marshal(map[string]any{"dynamodb": map[string]any{image: map[string]any{m.Table.ItemTypeAttribute: map[string]any{"S": types}}}})
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	return []string{pattern("NewImage"), pattern("OldImage")}
}

// IsJobRunner reports whether f runs the bulk jobs' steps: the function
// the state machines invoke.
func IsJobRunner(f deploymodel.Function) bool { return f.Reach == deploymodel.ByStateMachine }

// The bulk jobs' bucket: what its objects are, and who may do what with
// them (the CDK stack and the SAM template grant exactly these).
const (
	// BulkRetentionDays is how long the bucket keeps an object (an upload,
	// an export, an errors file): the jobs' URLs last an hour, and a job's
	// counts stay in its record.
	BulkRetentionDays = 7
	// BulkAbortUploadDays is when an unfinished multipart upload is
	// removed.
	BulkAbortUploadDays = 1
	// BulkImportsPrefix starts the key of every import's files
	// (jobs.UploadKey): the objects whose creation starts an import are
	// its uploads; BulkExportsPrefix starts the exports'.
	BulkImportsPrefix = "imports/"
	BulkExportsPrefix = "exports/"
)

// BulkPresignActions are what the function that creates jobs presigns (a
// presigned URL acts with its signer's rights): uploads to imports/, and
// downloads of imports/ (errors files) and exports/.
var (
	BulkUploadActions   = []string{"s3:PutObject"}
	BulkDownloadActions = []string{"s3:GetObject"}
	// BulkRunActions are what the runner does with the jobs' objects:
	// read uploads, write exports and errors files (multipart), remove
	// parts.
	BulkRunActions = []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}
	// BulkListActions let the runner tell a missing object (404) from a
	// forbidden one (S3 answers 403 for a missing key without it).
	BulkListActions = []string{"s3:ListBucket"}
	// StartJobActions let the function that creates exports start them.
	StartJobActions = []string{"states:StartExecution"}
)

// JobsStateMachineTimeout bounds one job's execution (the definition's
// TimeoutSeconds).
const JobsStateMachineTimeout = 24 * time.Hour

// BulkUploadPattern matches the keys of imports' uploads (jobs.UploadKey,
// imports/<org>/<job>/upload) in the EventBridge rule that starts the job
// state machine on S3's Object Created events: the runner's own writes
// under imports/ (errors files) start nothing.
const BulkUploadPattern = "imports/*/*/upload"
