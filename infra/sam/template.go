package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// Spec is what the template is generated from: the deployment model
// (internal/deploymodel: the table, the state machines, the event types),
// and of it the functions and the route table the template has.
type Spec struct {
	Model     *deploymodel.Model
	Functions []deploymodel.Function
	Routes    []deploymodel.Route
}

// SpecOf is the service as m declares it, with the embedded search engine
// (the template has no OpenSearch collection): m.Deployed(false) and
// m.Routes.
func SpecOf(m *deploymodel.Model) Spec {
	return Spec{Model: m, Functions: m.Deployed(false), Routes: m.Routes}
}

// DefaultSpec is SpecOf the committed model (deploymodel.Default).
func DefaultSpec() Spec { return SpecOf(deploymodel.Default()) }

// Logical ids of the resources that are not functions.
const (
	TableID        = "Table"
	HttpAPIID      = "HttpApi"
	StateMachineID = "RunStateMachine"
	// DeliverQueueID is the outbound webhooks' delivery queue (SQS FIFO),
	// DeliverDLQID its dead-letter queue (FIFO), EventsFailuresID the
	// queue of the stream batches the events function gave up on.
	DeliverQueueID   = "DeliverQueue"
	DeliverDLQID     = "DeliverDeadLetters"
	EventsFailuresID = "EventsFailures"
	// BulkBucketID is the bulk jobs' bucket (imports' uploads, exports,
	// errors files), JobStateMachineID the job state machine running them
	// over the runner.
	BulkBucketID      = "BulkBucket"
	JobStateMachineID = "JobStateMachine"
	// DynamoDBEndpointParam is the template parameter that points every
	// function at another DynamoDB (DynamoDB Local under sam local); empty
	// in a deployment, where the variable is left out.
	DynamoDBEndpointParam = "DynamoDBEndpoint"
	// UseDynamoDBEndpoint is the condition "DynamoDBEndpoint is set".
	UseDynamoDBEndpoint = "UseDynamoDBEndpoint"
	// SearchBaseURLParam is the template parameter that points the mcp
	// function's searches at the HTTP API (app.EnvSearchBaseURL); empty in
	// a deployment, where each MCP request's address is used.
	SearchBaseURLParam = "SearchBaseUrl"
	// The deployment limits, as the CDK stack's context sets them
	// (infra/options.go): the HTTP API's throttle for every organization
	// together, the webhook function's reserved concurrency and the
	// deliveries in flight at once (docs/deployment.md).
	APIRateLimitParam       = "ApiRateLimit"
	APIBurstLimitParam      = "ApiBurstLimit"
	WebhookConcurrencyParam = "WebhookConcurrency"
	DeliverConcurrencyParam = "DeliverConcurrency"
	// UseSearchBaseURL is the condition "SearchBaseUrl is set".
	UseSearchBaseURL = "UseSearchBaseUrl"
	// The embedding settings, as the CDK stack's context sets them
	// (embeddings, embeddingModel): the provider of the functions that
	// embed (bedrock or off) and the Bedrock model id they invoke.
	// EmbeddingsOn is the condition "Embeddings is bedrock", under which
	// they may invoke the model.
	EmbeddingsParam       = "Embeddings"
	EmbeddingModelIDParam = "EmbeddingModelId"
	EmbeddingsOn          = "EmbeddingsOn"
	// InvokeEmbeddingModelSid is the Sid of a function's statement
	// allowing bedrock:InvokeModel on the model.
	InvokeEmbeddingModelSid = "InvokeEmbeddingModel"
	// EnvDynamoDBEndpoint is the SDK's standard endpoint variable for
	// DynamoDB (read by store.NewClient through the SDK configuration).
	EnvDynamoDBEndpoint = "AWS_ENDPOINT_URL_DYNAMODB"
	// RunnerArnVar is the substitution variable of the runner's ARN in the
	// state machine definition.
	RunnerArnVar = "RunnerArn"
)

// LogicalID is the logical id of a function's resource: its name with a
// capital initial, then "Function" (companies → CompaniesFunction). The
// Makefile's build-<LogicalId> rule turns it back into functions/<name>
// by lowercasing, so a name must be lowercase letters and digits.
func LogicalID(name string) string {
	return strings.ToUpper(name[:1]) + name[1:] + "Function"
}

// URLID is the logical id of the AWS::Lambda::Url resource SAM generates
// for a function's FunctionUrlConfig.
func URLID(name string) string { return LogicalID(name) + "Url" }

// EventName is the name of a route's HttpApi event: the method and the
// path's words (GET /v1/companies/{id} → GetV1CompaniesId).
func EventName(r deploymodel.Route) string {
	var b strings.Builder
	b.WriteString(title(strings.ToLower(r.Method)))
	for _, w := range strings.FieldsFunc(r.Path, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) {
		b.WriteString(title(w))
	}
	return b.String()
}

func title(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

// DefaultEventName is the event of the fallback function's $default route.
const DefaultEventName = "Default"

// ScheduleEventName is the Schedule event of a function with a Schedule
// (the runner's sweeps).
const ScheduleEventName = "Sweep"

// StreamEventName is the DynamoDB event of the events function (the
// table's stream), QueueEventName the SQS event of the deliver function
// (the delivery queue).
const (
	StreamEventName = "TableStream"
	QueueEventName  = "DeliveryQueue"
)

// UploadEventName is the job state machine's EventBridgeRule event: S3's
// Object Created event of an import's upload starts an execution.
const UploadEventName = "ImportUpload"

// scheduleNote says in the template that f is invoked on its schedule.
func scheduleNote(f deploymodel.Function) string {
	if f.Schedule == "" {
		return ""
	}
	return fmt.Sprintf(" Also invoked on %s by an EventBridge schedule (its %s event, a Scheduled Event).", f.Schedule, ScheduleEventName)
}

// reachNote says in the template how a function is invoked.
var reachNote = map[deploymodel.Reach]string{
	deploymodel.ByAPI:          "Invoked by the HTTP API: one HttpApi event per route of its group in the route table.",
	deploymodel.ByURL:          "Invoked through its function URL (no HTTP API route).",
	deploymodel.ByStateMachine: "Invoked by the Task states of the run state machine and of the job state machine.",
	deploymodel.ByOperator:     "Invoked directly by operators with aws lambda invoke (no events, never public).",
	deploymodel.ByStream:       "Invoked with batches of the table's DynamoDB stream (its " + StreamEventName + " event), filtered to the item types that have events.",
	deploymodel.ByQueue:        "Invoked with batches of the delivery queue (its " + QueueEventName + " event, SQS FIFO) at a bounded concurrency.",
}

// disposablePolicy of the template.
const (
	// disposablePolicy is the DeletionPolicy and UpdateReplacePolicy of
	// the log groups and queues (the stateful resources besides the table,
	// which is retained): Delete, as in the CDK stack's dev stage
	// (RemovalPolicy DESTROY), since samconfig.toml deploys the template
	// as a development stack (sourcebase-dev). Said explicitly, so that no
	// default decides (cfn-lint's I3011). Retained, a log group would
	// outlive a deleted stack, and the state machines' have fixed names
	// (/aws/vendedlogs/states/<stack>-runs and -jobs): deploying the stack
	// again under its name would fail.
	disposablePolicy = "Delete"
)

// tableResources are the table's ARN and its indexes', each named (no
// index/* wildcard).
func tableResources(def deploymodel.Table) []any {
	out := []any{getAtt(TableID + ".Arn")}
	for _, ix := range def.Indexes {
		out = append(out, sub("${"+TableID+".Arn}/index/"+ix.Name))
	}
	return out
}

// header is the comment at the top of the generated files.
const header = `GENERATED from the Go declarations; do not edit by hand.
  Functions: routes.Deployed(false) (internal/routes; the OpenSearch indexer is the CDK stack's only); HttpApi events: api.Routes() (internal/api);
  table: store.TableDefinition and store.Indexes (internal/store); environment: service.Config.Env()
  (internal/service); IAM actions: store.IAMActions(f.Access(api.Routes())...); state machine:
  runs.StateMachineDefinition (internal/runs).
Regenerate: make sam-template   (= cd infra && go run ./sam -write)
Checked by: cd infra && go test ./sam   (fails when this file differs from what the code generates;
  go test ./sam -update rewrites it)
Build and run: make sam-build, make sam-local (need the SAM CLI; sam-local also Docker).
Stream and queues: the events function's stream source (filter criteria from kinds.Events()), the delivery
  queue and its dead-letter queue, with their settings from infra/deploy.
Bulk jobs: their bucket (settings and grants from infra/deploy) and the job state machine
  (jobs.StateMachineDefinition, internal/jobs) over the runner, started by an import's upload (EventBridge).`

// Generate returns the SAM template of s.
func Generate(s Spec) ([]byte, error) {
	if err := validate(s); err != nil {
		return nil, err
	}
	resources := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(comment, id string, r *yaml.Node) {
		resources.Content = append(resources.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id, HeadComment: comment}, r)
	}

	add("The single table: keys, GSIs, stream and TTL attribute from internal/store.", TableID, table(s.Model.Table))
	add("The outbound webhooks' delivery queue: FIFO, one message group per endpoint and record (a record's deliveries to an endpoint in order); "+
		"messages carry their delivery's deduplication id. Settings from infra/deploy.", DeliverQueueID, deliverQueue(s.Model))
	add("", DeliverQueueID+"Policy", tlsOnly(DeliverQueueID))
	add("Deliveries that exhausted their retries (moved here by the deliver function), and messages whose batches kept crashing it (the redrive).",
		DeliverDLQID, fifoQueue(deploy.DeliverDLQRetentionDays))
	add("", DeliverDLQID+"Policy", tlsOnly(DeliverDLQID))
	add("The stream batches the events function gave up on (its DynamoDB event's OnFailure destination), kept to replay.",
		EventsFailuresID, disposable("AWS::SQS::Queue", obj(
			field("SqsManagedSseEnabled", true),
			field("MessageRetentionPeriod", deploy.FailureRetentionDays*secondsPerDay),
		)))
	add("", EventsFailuresID+"Policy", tlsOnly(EventsFailuresID))
	add("The bulk jobs' files: imports' uploads (presigned PUT URLs), exports and errors files (presigned GET URLs). Private, encrypted, "+
		"objects expiring after deploy.BulkRetentionDays; its events go to EventBridge, where an import's upload starts the job state machine.",
		BulkBucketID, bulkBucket())
	add("", BulkBucketID+"Policy", bucketTLSOnly(BulkBucketID))
	add("", "HttpApiAccessLogs", logGroup(nil))
	add("The HTTP API: every route of the route table is an HttpApi event of its group's function.", HttpAPIID, httpAPI())
	for _, f := range s.Functions {
		fn, err := function(s, f)
		if err != nil {
			return nil, err
		}
		add(fmt.Sprintf("functions/%s: %s. %s%s", f.Name, f.Description, reachNote[f.Reach], scheduleNote(f)), LogicalID(f.Name), fn)
		add("", LogicalID(f.Name)+"Logs", logGroup(sub("/aws/lambda/${"+LogicalID(f.Name)+"}")))
	}
	sm, err := stateMachine(s, StateMachineID, s.Model.RunDefinition, nil)
	if err != nil {
		return nil, err
	}
	add("Executes workflow runs: runs.StateMachineDefinition, with the runner's ARN substituted.", StateMachineID, sm)
	add("", StateMachineID+"Logs", logGroup(sub("/aws/vendedlogs/states/${AWS::StackName}-runs")))
	jsm, err := stateMachine(s, JobStateMachineID, s.Model.JobDefinition, jobEvents())
	if err != nil {
		return nil, err
	}
	add("Executes bulk imports and exports: jobs.StateMachineDefinition, with the runner's ARN substituted. An import's upload starts it "+
		"(its "+UploadEventName+" event); the functions that create exports start it with {\"organizationId\",\"jobId\"}.", JobStateMachineID, jsm)
	add("", JobStateMachineID+"Logs", logGroup(sub("/aws/vendedlogs/states/${AWS::StackName}-jobs")))
	observed, err := observeResources(s)
	if err != nil {
		return nil, err
	}
	for _, r := range observed {
		add(r.comment, r.id, r.node)
	}

	urlFn, _ := only(s.Functions, deploymodel.ByURL)
	adminFn, _ := only(s.Functions, deploymodel.ByOperator)
	outputs := obj(
		field("ApiUrl", output("Base URL of the HTTP API", sub("https://${"+HttpAPIID+"}.execute-api.${AWS::Region}.${AWS::URLSuffix}/"))),
		field("WebhookUrl", output("Function URL of the webhook function (deliveries go to <url>webhooks/workflows/<slug>)", getAtt(URLID(urlFn.Name)+".FunctionUrl"))),
		field("TableName", output("Name of the table", ref(TableID))),
		field("StateMachineArn", output("ARN of the run state machine", ref(StateMachineID))),
		field("AdminFunctionName", output("Operator function (aws lambda invoke --function-name <it> --payload '{\"action\":...}')", ref(LogicalID(adminFn.Name)))),
		field("DeliverQueueUrl", output("The outbound webhooks' delivery queue (SQS FIFO)", ref(DeliverQueueID))),
		field("DeliverDlqUrl", output("The deliveries that exhausted their retries (SQS FIFO dead-letter queue)", ref(DeliverDLQID))),
		field("BulkBucketName", output(fmt.Sprintf("The bulk jobs' files: imports' uploads, exports, errors files (objects expire after %d days)", deploy.BulkRetentionDays), ref(BulkBucketID))),
		field("JobStateMachineArn", output("ARN of the job state machine: bulk imports and exports", ref(JobStateMachineID))),
		field("AlarmTopicArn", output("The alarm topic: every alarm's ALARM and OK notifications (subscribe with the AlarmEmails parameter or to the topic itself)", ref(AlarmTopicID))),
		field("DashboardName", output("The CloudWatch dashboard: one row per path (API, webhooks in, runs, events and deliveries, jobs, search, table and operator)", ref(DashboardID))),
	)

	doc := obj(
		field("AWSTemplateFormatVersion", "2010-09-09"),
		field("Transform", "AWS::Serverless-2016-10-31"),
		field("Description", "Sourcebase: one Lambda per resource group behind an HTTP API, the webhook function URL, the run state machine and its runner, the operator function, the change history's events function on the table's stream, the outbound webhooks' delivery queue and deliver function, the bulk jobs' bucket and job state machine, the single DynamoDB table, and the alarms, their topic and the dashboard."),
		field("Parameters", obj(append([]kv{
			field(DynamoDBEndpointParam, obj(
				field("Type", "String"),
				field("Default", ""),
				field("Description", "Local runs only (samconfig.toml, env local): DynamoDB endpoint for every function, such as DynamoDB Local. Leave empty when deploying."),
			)),
			field(SearchBaseURLParam, obj(
				field("Type", "String"),
				field("Default", ""),
				field("Description", "Base URL of the HTTP API for the mcp function's searches. Leave empty when deploying: each MCP request's own address (API Gateway's domain) is used; set it for local runs or an API behind a path."),
			)),
			field(APIRateLimitParam, number(deploy.APIRateLimit, 1, 100000,
				"The HTTP API's throttle, requests a second, for every organization together: above what the organizations' own limits allow at once (each key 1,000 a second by default), within the account's 10,000 for all its HTTP APIs.")),
			field(APIBurstLimitParam, number(deploy.APIBurstLimit, 1, 100000,
				"The HTTP API's burst, requests at once, for every organization together; API Gateway caps it at the account's bucket (5,000 by default).")),
			field(WebhookConcurrencyParam, number(deploy.WebhookConcurrency, 1, 100000,
				"The webhook function's reserved concurrency: webhook deliveries handled at once (each well under 100 ms). Taken from the account's pool, which must keep 100 unreserved.")),
			field(DeliverConcurrencyParam, number(deploy.DeliverMaxConcurrency, 2, 1000,
				"Outbound webhook deliveries in flight at once, across every endpoint (the delivery queue's event source; SQS allows 2 to 1,000).")),
		}, append(embeddingParameters(s.Model), observeParameters()...)...)...)),
		field("Conditions", obj(append([]kv{
			field(UseDynamoDBEndpoint, fnNot(fnEquals(ref(DynamoDBEndpointParam), ""))),
			field(UseSearchBaseURL, fnNot(fnEquals(ref(SearchBaseURLParam), ""))),
			field(EmbeddingsOn, fnEquals(ref(EmbeddingsParam), s.Model.Embeddings.Bedrock)),
		}, observeConditions()...)...)),
		field("Resources", resources),
		field("Outputs", outputs),
	)
	doc.HeadComment = header

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// embeddingParameters are the parameters of the embedding provider and
// its model (infra/deploy's Embeddings), with the CDK context's defaults.
func embeddingParameters(m *deploymodel.Model) []kv {
	e := m.Embeddings
	return []kv{
		field(EmbeddingsParam, obj(
			field("Type", "String"),
			field("Default", e.Bedrock),
			field("AllowedValues", flow(e.Bedrock, e.Off)),
			field("Description", fmt.Sprintf("The embedding provider of the functions that embed (hybrid search): %s lets them invoke the EmbeddingModelId model on Amazon Bedrock (enable access to it in the account and region first); %s embeds nothing (searches rank by keywords) and grants nothing of Bedrock.", e.Bedrock, e.Off)),
		)),
		field(EmbeddingModelIDParam, obj(
			field("Type", "String"),
			field("Default", e.DefaultModel),
			field("AllowedPattern", e.ModelIDPattern),
			field("ConstraintDescription", "a Bedrock model id such as "+e.DefaultModel+": letters, digits, '.', '-', ':' and '_', at most 200"),
			field("Description", "The Bedrock model id the functions that embed invoke (EMBEDDINGS_MODEL); they may invoke this foundation model only."),
		)),
	}
}

// validate checks what the generator relies on.
func validate(s Spec) error {
	if s.Model == nil {
		return fmt.Errorf("no deployment model")
	}
	seen := map[string]bool{}
	for _, f := range s.Functions {
		if f.Name == "" || strings.IndexFunc(f.Name, func(c rune) bool { return !('a' <= c && c <= 'z' || '0' <= c && c <= '9') }) >= 0 {
			return fmt.Errorf("function name %q: must be lowercase letters and digits (the Makefile's build-<LogicalId> lowercases the logical id)", f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("function %q declared twice", f.Name)
		}
		seen[f.Name] = true
		if f.Reach == deploymodel.ByAPI && len(deploymodel.RoutesOf(s.Routes, f.Name)) == 0 {
			return fmt.Errorf("function %q is reached by the API but has no route", f.Name)
		}
	}
	for _, r := range s.Routes {
		if !seen[r.Function] {
			return fmt.Errorf("route %s: no function %q", r.Pattern(), r.Function)
		}
	}
	for _, reach := range []deploymodel.Reach{deploymodel.ByURL, deploymodel.ByStateMachine, deploymodel.ByOperator} {
		if _, err := only(s.Functions, reach); err != nil {
			return err
		}
	}
	var consumers, deliverers []string
	for _, f := range s.Functions {
		switch {
		case deploy.IsIndexer(f):
			return fmt.Errorf("function %q: the template has no OpenSearch collection for the indexer (the CDK stack's -c search=opensearch has)", f.Name)
		case deploy.IsEventsConsumer(f):
			consumers = append(consumers, f.Name)
		case deploy.IsDeliverer(f):
			deliverers = append(deliverers, f.Name)
		}
	}
	if len(consumers) != 1 || len(deliverers) != 1 {
		return fmt.Errorf("the template expects one events function on the table's stream and one deliver function on the delivery queue, found %v and %v", consumers, deliverers)
	}
	return jobTimeouts(s)
}

// jobTimeouts checks that the runner outlasts every Task of the job state
// machine, as its timeout outlasts the run state machine's (sizing.RunnerTimeout):
// Step Functions, not Lambda, times a step out.
func jobTimeouts(s Spec) error {
	runner, err := only(s.Functions, deploymodel.ByStateMachine)
	if err != nil {
		return err
	}
	var def struct {
		TimeoutSeconds int
		States         map[string]struct {
			Type           string
			TimeoutSeconds int
		}
	}
	if err := json.Unmarshal([]byte(s.Model.JobDefinition("runner")), &def); err != nil {
		return fmt.Errorf("job state machine definition: %w", err)
	}
	for name, st := range def.States {
		if st.Type == "Task" && (st.TimeoutSeconds <= 0 || st.TimeoutSeconds > runner.TimeoutSeconds) {
			return fmt.Errorf("job state machine: Task %s times out after %d s, want 1..%d s (the runner's timeout)", name, st.TimeoutSeconds, runner.TimeoutSeconds)
		}
	}
	if def.TimeoutSeconds != int(deploy.JobsStateMachineTimeout.Seconds()) {
		return fmt.Errorf("job state machine: TimeoutSeconds %d, want deploy.JobsStateMachineTimeout (%s)", def.TimeoutSeconds, deploy.JobsStateMachineTimeout)
	}
	return nil
}

// only returns the one function reached by reach.
func only(fns []deploymodel.Function, reach deploymodel.Reach) (deploymodel.Function, error) {
	var found []deploymodel.Function
	for _, f := range fns {
		if f.Reach == reach {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		return deploymodel.Function{}, fmt.Errorf("the template expects exactly one function reached by %q, found %d", reach, len(found))
	}
	return found[0], nil
}

func table(def deploymodel.Table) *yaml.Node {
	var stream *yaml.Node
	if def.StreamViewType != "" {
		stream = obj(field("StreamViewType", def.StreamViewType))
	}
	var attrs, keys, gsis []any
	for _, a := range def.Attributes {
		attrs = append(attrs, obj(field("AttributeName", a.Name), field("AttributeType", a.Type)))
	}
	keySchema := func(ks []deploymodel.Key) *yaml.Node {
		var out []any
		for _, k := range ks {
			out = append(out, obj(field("AttributeName", k.Attribute), field("KeyType", k.Type)))
		}
		return list(out...)
	}
	keys = append(keys, keySchema(def.KeySchema))
	for _, g := range def.Indexes {
		gsis = append(gsis, obj(
			field("IndexName", g.Name),
			field("KeySchema", keySchema(g.KeySchema)),
			field("Projection", obj(field("ProjectionType", g.Projection))),
		))
	}
	return obj(
		field("Type", "AWS::DynamoDB::Table"),
		note("Keep the data when the stack is deleted or the table replaced.", "DeletionPolicy", "Retain"),
		field("UpdateReplacePolicy", "Retain"),
		field("Properties", obj(
			field("BillingMode", def.BillingMode),
			field("AttributeDefinitions", list(attrs...)),
			field("KeySchema", keys[0]),
			field("GlobalSecondaryIndexes", list(gsis...)),
			note("The events function reads every change from it (new and old images).", "StreamSpecification", stream),
			note("Expiring items such as idempotency records (store.AttrExpires, epoch seconds).", "TimeToLiveSpecification", obj(
				field("AttributeName", def.TimeToLiveAttribute),
				field("Enabled", true),
			)),
			field("PointInTimeRecoverySpecification", obj(field("PointInTimeRecoveryEnabled", true))),
		)),
	)
}

// accessLogFormat is the HTTP API's access log line (JSON).
var accessLogFormat = func() string {
	f := map[string]string{
		"requestId":        "$context.requestId",
		"ip":               "$context.identity.sourceIp",
		"requestTime":      "$context.requestTime",
		"httpMethod":       "$context.httpMethod",
		"routeKey":         "$context.routeKey",
		"status":           "$context.status",
		"protocol":         "$context.protocol",
		"responseLength":   "$context.responseLength",
		"integrationError": "$context.integrationErrorMessage",
		"latency":          "$context.responseLatency",
	}
	b, _ := json.Marshal(f)
	return string(b)
}()

// number is a Number parameter with its default, bounds and description.
func number(def, lo, hi int, description string) *yaml.Node {
	return obj(field("Type", "Number"), field("Default", def), field("MinValue", lo), field("MaxValue", hi), field("Description", description))
}

func httpAPI() *yaml.Node {
	return obj(
		field("Type", "AWS::Serverless::HttpApi"),
		field("Properties", obj(
			field("Description", "Sourcebase REST API (routes from api.Routes())"),
			note("Every route's throttle, for every organization together (the ApiRateLimit and ApiBurstLimit parameters).", "DefaultRouteSettings", obj(
				field("ThrottlingRateLimit", ref(APIRateLimitParam)),
				field("ThrottlingBurstLimit", ref(APIBurstLimitParam)),
			)),
			field("AccessLogSettings", obj(
				field("DestinationArn", getAtt("HttpApiAccessLogs.Arn")),
				field("Format", accessLogFormat),
			)),
		)),
	)
}

func logGroup(name *yaml.Node) *yaml.Node {
	props := []kv{}
	if name != nil {
		props = append(props, field("LogGroupName", name))
	}
	props = append(props, note("The LogRetentionDays parameter.", "RetentionInDays", ref(LogRetentionDaysParam)))
	return disposable("AWS::Logs::LogGroup", obj(props...))
}

// disposable is a resource of type typ with properties props that is
// deleted with the stack or when replaced (disposablePolicy).
func disposable(typ string, props *yaml.Node) *yaml.Node {
	return obj(
		field("Type", typ),
		field("DeletionPolicy", disposablePolicy),
		field("UpdateReplacePolicy", disposablePolicy),
		field("Properties", props),
	)
}

// Env is the environment of f: the model's (deploy.Env), with the table's
// name, the state machines' ARNs, the webhook function's URL, the search
// base URL parameter (the mcp function), the delivery queues' URLs, the
// bulk jobs' bucket and the event bus where f's environment refers to
// them, plus the DynamoDB endpoint for local runs. Values are YAML nodes.
func Env(s Spec, f deploymodel.Function) (map[string]*yaml.Node, error) {
	urlFn, err := only(s.Functions, deploymodel.ByURL)
	if err != nil {
		return nil, err
	}
	out, err := deploy.Env(f, false, func(v string) *yaml.Node { return node(v) }, func(r deploymodel.Ref) (*yaml.Node, error) {
		switch r {
		case deploymodel.RefTable:
			return ref(TableID), nil
		case deploymodel.RefStateMachine:
			return ref(StateMachineID), nil
		case deploymodel.RefDeliverQueue:
			return ref(DeliverQueueID), nil // a queue's Ref is its URL
		case deploymodel.RefDeliverDLQ:
			return ref(DeliverDLQID), nil
		case deploymodel.RefBulkBucket:
			return ref(BulkBucketID), nil // a bucket's Ref is its name
		case deploymodel.RefJobsStateMachine:
			return ref(JobStateMachineID), nil // a state machine's Ref is its ARN
		case deploymodel.RefWebhookURL:
			return getAtt(URLID(urlFn.Name) + ".FunctionUrl"), nil
		case deploymodel.RefAPIURL:
			// A parameter, not the HttpApi's URL: SAM builds the API's
			// definition from the functions' events, so a function naming
			// the API would be a circular dependency. Unset, the function
			// uses the address each MCP request came to.
			return fnIf(UseSearchBaseURL, ref(SearchBaseURLParam), ref("AWS::NoValue")), nil
		case deploymodel.RefEventBus:
			return node(deploy.EventBus), nil
		case deploymodel.RefEmbeddings:
			return ref(EmbeddingsParam), nil
		case deploymodel.RefEmbeddingsModel:
			return ref(EmbeddingModelIDParam), nil
		}
		return nil, fmt.Errorf("function %s: the template has no %s for its environment", f.Name, r)
	})
	if err != nil {
		return nil, err
	}
	out[EnvDynamoDBEndpoint] = fnIf(UseDynamoDBEndpoint, ref(DynamoDBEndpointParam), ref("AWS::NoValue"))
	return out, nil
}

// codeURINote says what `sam build` makes of a function's CodeUri: the
// Makefile's build target, and for a function with Pages the
// documentation pages it copies beside the bootstrap.
func codeURINote(f deploymodel.Function, pagesDir string) string {
	n := "The repository root: `sam build` runs the Makefile's build-" + LogicalID(f.Name) + " (BuildMethod makefile)"
	if f.Pages {
		n += ", which also copies the documentation pages (docs/*.md) into " + pagesDir + "/ beside the bootstrap: the function reads them there (routes.Function.Pages)"
	}
	return n + "."
}

func function(s Spec, f deploymodel.Function) (*yaml.Node, error) {
	env, err := Env(s, f)
	if err != nil {
		return nil, err
	}
	var vars []kv
	for _, k := range slices.Sorted(maps.Keys(env)) {
		vars = append(vars, field(k, env[k]))
	}

	statements := []any{obj(
		field("Sid", "Table"),
		field("Effect", "Allow"),
		field("Action", strs(f.TableActions)),
		field("Resource", list(tableResources(s.Model.Table)...)),
	)}
	if f.StartsRuns {
		statements = append(statements, obj(
			field("Sid", "StartRuns"),
			field("Effect", "Allow"),
			field("Action", strs([]string{"states:StartExecution"})),
			field("Resource", ref(StateMachineID)),
		))
	}
	if f.SendsDeliveries {
		statements = append(statements, obj(
			field("Sid", "QueueDeliveries"),
			field("Effect", "Allow"),
			field("Action", strs(sendDeliveryActions)),
			field("Resource", getAtt(DeliverQueueID+".Arn")),
		))
	}
	if deploy.IsEventsConsumer(f) {
		statements = append(statements, obj(
			field("Sid", "PublishEvents"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.PublishEventsActions)),
			field("Resource", sub("arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/"+deploy.EventBus)),
		))
	}
	if f.RunsJobs {
		// A presigned URL acts with its signer's rights: uploads to
		// imports/, downloads of imports/ (errors files) and exports/.
		statements = append(statements, obj(
			field("Sid", "UploadImports"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.BulkUploadActions)),
			field("Resource", bulkObjects(deploy.BulkImportsPrefix)),
		), obj(
			field("Sid", "DownloadJobFiles"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.BulkDownloadActions)),
			field("Resource", bulkObjects(deploy.BulkImportsPrefix, deploy.BulkExportsPrefix)),
		), obj(
			field("Sid", "StartJobs"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.StartJobActions)),
			field("Resource", ref(JobStateMachineID)),
		))
	}
	if deploy.IsJobRunner(f) {
		statements = append(statements, obj(
			field("Sid", "RunJobs"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.BulkRunActions)),
			field("Resource", bulkObjects(deploy.BulkImportsPrefix, deploy.BulkExportsPrefix)),
		), obj(
			field("Sid", "ListJobFiles"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.BulkListActions)),
			field("Resource", getAtt(BulkBucketID+".Arn")),
		))
	}
	if f.ManagesTenants {
		// The tenant lifecycle: an organization's export under orgs/, and
		// its deletion of its files under every prefix; listing only
		// those prefixes.
		statements = append(statements, obj(
			field("Sid", "TenantFiles"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.BulkTenantActions)),
			field("Resource", bulkObjects(deploy.BulkTenantPrefixes...)),
		), obj(
			field("Sid", "ListTenantFiles"),
			field("Effect", "Allow"),
			field("Action", strs(deploy.BulkListActions)),
			field("Resource", getAtt(BulkBucketID+".Arn")),
			field("Condition", deploy.BulkTenantListCondition()),
		))
	}
	if f.Embeds {
		// The embedding model, and nothing else of Bedrock; only when the
		// Embeddings parameter is bedrock.
		grant := list(EmbeddingsOn, obj(
			field("Sid", InvokeEmbeddingModelSid),
			field("Effect", "Allow"),
			field("Action", strs(deploy.EmbedActions)),
			field("Resource", sub(deploy.FoundationModelARN("${AWS::Partition}", "${AWS::Region}", "${"+EmbeddingModelIDParam+"}"))),
		), ref("AWS::NoValue"))
		grant.Tag = "!If" // a block sequence: the statement reads as the others
		grant.HeadComment = "Only when the Embeddings parameter is bedrock: invoking the EmbeddingModelId foundation model, nothing else of Bedrock."
		statements = append(statements, grant)
	}
	if deploy.IsDeliverer(f) {
		// Receiving and deleting come with the SQS event (SAM's
		// AWSLambdaSQSQueueExecutionRole); a retry changes its message's
		// visibility, an exhausted delivery is moved to the DLQ.
		statements = append(statements, obj(
			field("Sid", "ScheduleRetries"),
			field("Effect", "Allow"),
			field("Action", strs(retryDeliveryActions)),
			field("Resource", getAtt(DeliverQueueID+".Arn")),
		), obj(
			field("Sid", "DeadLetters"),
			field("Effect", "Allow"),
			field("Action", strs(sendDeliveryActions)),
			field("Resource", getAtt(DeliverDLQID+".Arn")),
		))
	}

	var events *yaml.Node
	if f.Reach == deploymodel.ByAPI {
		events = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		names := map[string]string{}
		for _, r := range deploymodel.RoutesOf(s.Routes, f.Name) {
			name := EventName(r)
			if prev, dup := names[name]; dup {
				return nil, fmt.Errorf("routes %s and %s have the same event name %s", prev, r.Pattern(), name)
			}
			names[name] = r.Pattern()
			events.Content = append(events.Content, node(name), obj(
				field("Type", "HttpApi"),
				field("Properties", obj(
					field("ApiId", ref(HttpAPIID)),
					field("Method", r.Method),
					field("Path", r.Path),
				)),
			))
		}
		if f.Fallback {
			// No Path and Method: SAM makes it the API's $default route,
			// so a request no route matches is answered by the service
			// (401, 405 with Allow, 404 "no such endpoint"), not by API
			// Gateway's {"message":"Not Found"}.
			events.Content = append(events.Content, node(DefaultEventName), obj(
				field("Type", "HttpApi"),
				field("Properties", obj(field("ApiId", ref(HttpAPIID)))),
			))
		}
	}

	if f.Schedule != "" {
		// SAM makes it an AWS::Events::Rule targeting the function and
		// the permission letting EventBridge invoke it from that rule.
		if events == nil {
			events = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		events.Content = append(events.Content, node(ScheduleEventName), obj(
			field("Type", "Schedule"),
			field("Properties", obj(field("Schedule", f.Schedule))),
		))
	}

	if deploy.IsEventsConsumer(f) {
		// SAM adds the stream's read actions (AWSLambdaDynamoDBExecutionRole)
		// and, for the OnFailure destination of Type SQS, sending to it.
		if events == nil {
			events = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		var filters []any
		for _, p := range deploy.EventsFilterPatterns(s.Model) {
			filters = append(filters, obj(field("Pattern", p)))
		}
		events.Content = append(events.Content, node(StreamEventName), obj(
			field("Type", "DynamoDB"),
			field("Properties", obj(
				field("Stream", getAtt(TableID+".StreamArn")),
				field("StartingPosition", "TRIM_HORIZON"),
				field("BatchSize", deploy.EventsBatchSize),
				field("BisectBatchOnFunctionError", true),
				field("FunctionResponseTypes", flow("ReportBatchItemFailures")),
				field("MaximumRetryAttempts", deploy.StreamRetryAttempts),
				note("One batch per shard at a time: a record's changes in order.", "ParallelizationFactor", 1),
				note("Only changes of item types that have events (kinds.Events()) invoke the function.", "FilterCriteria", obj(field("Filters", list(filters...)))),
				field("DestinationConfig", obj(field("OnFailure", obj(
					field("Type", "SQS"),
					field("Destination", getAtt(EventsFailuresID+".Arn")),
				)))),
			)),
		))
	}
	if deploy.IsDeliverer(f) {
		if events == nil {
			events = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		events.Content = append(events.Content, node(QueueEventName), obj(
			field("Type", "SQS"),
			field("Properties", obj(
				field("Queue", getAtt(DeliverQueueID+".Arn")),
				field("BatchSize", s.Model.DeliverBatchSize),
				note("The messages to retry, and those held behind them in their group.", "FunctionResponseTypes", flow("ReportBatchItemFailures")),
				note("At most this many deliveries in flight at once, across every endpoint (the DeliverConcurrency parameter).", "ScalingConfig", obj(field("MaximumConcurrency", ref(DeliverConcurrencyParam)))),
			)),
		))
	}

	props := []kv{
		field("Description", f.Description),
		note(codeURINote(f, s.Model.PagesDir), "CodeUri", "../"),
		field("Handler", "bootstrap"),
		field("Runtime", "provided.al2023"),
		field("Architectures", flow("arm64")),
		note(f.Sizing+".", "MemorySize", f.MemoryMB),
		field("Timeout", f.TimeoutSeconds),
		note("X-Ray active tracing (SAM adds AWSXrayWriteOnlyAccess to the role); PassThrough when the Tracing parameter is false.",
			"Tracing", fnIf(TracingOn, deploy.TracingActive, deploy.TracingPassThrough)),
		note("service.Config.Env(); AWS_ENDPOINT_URL_DYNAMODB only when the DynamoDBEndpoint parameter is set (sam local).", "Environment", obj(field("Variables", obj(vars...)))),
		note("Least privilege: store.IAMActions(f.Access(api.Routes())...), the table access of its routes (or declared in routes.Functions); StartExecution only where it starts runs; "+
			"sqs:SendMessage on the delivery queue only where it queues deliveries; the bulk bucket (infra/deploy's Bulk*Actions) only where it creates jobs "+
			"(and StartExecution on the job state machine) or runs them (the runner).", "Policies", list(obj(
			field("Version", "2012-10-17"),
			field("Statement", list(statements...)),
		))),
	}
	if f.Reach == deploymodel.ByURL {
		props = append(props,
			note("Public URL; the code checks each delivery's signature.", "FunctionUrlConfig", obj(field("AuthType", "NONE"))),
			note("The WebhookConcurrency parameter.", "ReservedConcurrentExecutions", ref(WebhookConcurrencyParam)),
		)
	}
	if events != nil {
		props = append(props, field("Events", events))
	}
	return obj(
		field("Type", "AWS::Serverless::Function"),
		field("Metadata", obj(field("BuildMethod", "makefile"))),
		field("Properties", obj(props...)),
	), nil
}

// stateMachine is state machine id: definition with the runner's ARN
// substituted, allowed to invoke the runner only, logging to its own log
// group (id+"Logs") and traced; events, when not nil, are its events.
func stateMachine(s Spec, id string, definition func(functionARN string) string, events *yaml.Node) (*yaml.Node, error) {
	runner, err := only(s.Functions, deploymodel.ByStateMachine)
	if err != nil {
		return nil, err
	}
	var def map[string]any
	if err := json.Unmarshal([]byte(definition("${"+RunnerArnVar+"}")), &def); err != nil {
		return nil, fmt.Errorf("%s definition: %w", id, err)
	}
	return obj(
		field("Type", "AWS::Serverless::StateMachine"),
		field("Properties", obj(
			field("Type", "STANDARD"),
			field("Definition", def),
			field("DefinitionSubstitutions", obj(field(RunnerArnVar, getAtt(LogicalID(runner.Name)+".Arn")))),
			field("Policies", list(
				obj(field("LambdaInvokePolicy", obj(field("FunctionName", ref(LogicalID(runner.Name)))))),
				obj(
					field("Version", "2012-10-17"),
					field("Statement", list(
						obj(
							field("Sid", "Logging"),
							field("Effect", "Allow"),
							field("Action", strs([]string{
								"logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery",
								"logs:DeleteLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy",
								"logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
							})),
							note("These CloudWatch Logs delivery actions support no resource-level permissions.", "Resource", "*"),
						),
						obj(
							field("Sid", "Tracing"),
							field("Effect", "Allow"),
							field("Action", strs([]string{"xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"})),
							note("X-Ray actions support no resource-level permissions.", "Resource", "*"),
						),
					)),
				),
			)),
			field("Logging", obj(
				field("Level", "ALL"),
				field("IncludeExecutionData", true),
				field("Destinations", list(obj(field("CloudWatchLogsLogGroup", obj(field("LogGroupArn", getAtt(id+"Logs.Arn"))))))),
			)),
			field("Tracing", obj(field("Enabled", true))),
			field("Events", events),
		)),
	), nil
}

// jobEvents are the job state machine's events: S3's Object Created
// event (through EventBridge, the bucket's EventBridgeConfiguration) for
// the keys of imports' uploads (deploy.BulkUploadPattern) starts an
// execution with the event as input (the definition reads
// $.detail.object.key and .size). SAM makes it an AWS::Events::Rule and
// the role that lets EventBridge start executions.
func jobEvents() *yaml.Node {
	return obj(field(UploadEventName, obj(
		field("Type", "EventBridgeRule"),
		field("Properties", obj(
			note("The runner's own writes under imports/ (errors files) match no upload key and start nothing.", "Pattern", uploadPattern()),
		)),
	)))
}

// uploadPattern is the EventBridge pattern of an import's upload to the
// bulk bucket.
func uploadPattern() *yaml.Node {
	return obj(
		field("source", flow("aws.s3")),
		field("detail-type", flow("Object Created")),
		field("detail", obj(
			field("bucket", obj(field("name", list(ref(BulkBucketID))))),
			field("object", obj(field("key", list(obj(field("wildcard", deploy.BulkUploadPattern)))))),
		)),
	)
}

// bulkObjects are the bulk bucket's objects under prefixes.
func bulkObjects(prefixes ...string) *yaml.Node {
	var out []any
	for _, p := range prefixes {
		out = append(out, sub("arn:${AWS::Partition}:s3:::${"+BulkBucketID+"}/"+p+"*"))
	}
	return list(out...)
}

// bulkBucket is the bulk jobs' bucket (infra/deploy's settings): public
// access blocked, objects owned by the bucket (no ACLs), SSE-S3, objects
// expiring after deploy.BulkRetentionDays and unfinished multipart uploads
// removed after deploy.BulkAbortUploadDays, events to EventBridge, and
// CORS open to PUT and GET so that browsers can use the presigned URLs.
func bulkBucket() *yaml.Node {
	return obj(
		field("Type", "AWS::S3::Bucket"),
		field("Properties", obj(
			field("BucketEncryption", obj(field("ServerSideEncryptionConfiguration", list(obj(
				field("ServerSideEncryptionByDefault", obj(field("SSEAlgorithm", "AES256"))),
			))))),
			field("PublicAccessBlockConfiguration", obj(
				field("BlockPublicAcls", true),
				field("BlockPublicPolicy", true),
				field("IgnorePublicAcls", true),
				field("RestrictPublicBuckets", true),
			)),
			field("OwnershipControls", obj(field("Rules", list(obj(field("ObjectOwnership", "BucketOwnerEnforced")))))),
			note("The jobs' URLs last an hour and a job's counts stay in its record: the files are kept a few days.", "LifecycleConfiguration", obj(field("Rules", list(obj(
				field("Id", "ExpireJobFiles"),
				field("Status", "Enabled"),
				field("ExpirationInDays", deploy.BulkRetentionDays),
				field("AbortIncompleteMultipartUpload", obj(field("DaysAfterInitiation", deploy.BulkAbortUploadDays))),
			))))),
			note("Object Created events go to EventBridge: an import's upload starts the job state machine (its "+UploadEventName+" event).",
				"NotificationConfiguration", obj(field("EventBridgeConfiguration", obj(field("EventBridgeEnabled", true))))),
			note("Browsers upload to and download from the presigned URLs the API hands out (the signature, not the origin, authorizes).",
				"CorsConfiguration", obj(field("CorsRules", list(obj(
					field("AllowedMethods", flow("PUT", "GET")),
					field("AllowedOrigins", flow("*")),
					field("AllowedHeaders", flow("*")),
					field("ExposedHeaders", flow("ETag")),
					field("MaxAge", 3600),
				))))),
		)),
	)
}

// bucketTLSOnly is the bucket policy denying every request to bucket id
// and its objects that is not sent over TLS.
func bucketTLSOnly(id string) *yaml.Node {
	return obj(
		field("Type", "AWS::S3::BucketPolicy"),
		field("Properties", obj(
			field("Bucket", ref(id)),
			field("PolicyDocument", obj(
				field("Version", "2012-10-17"),
				field("Statement", list(obj(
					field("Sid", "EnforceTLS"),
					field("Effect", "Deny"),
					field("Principal", "*"),
					field("Action", "s3:*"),
					field("Resource", list(getAtt(id+".Arn"), sub("${"+id+".Arn}/*"))),
					field("Condition", obj(field("Bool", obj(field("aws:SecureTransport", "false"))))),
				))),
			)),
		)),
	)
}

// The SQS actions of the functions' policies.
var (
	sendDeliveryActions  = []string{"sqs:SendMessage"}
	retryDeliveryActions = []string{"sqs:ChangeMessageVisibility"}
)

const secondsPerDay = 24 * 60 * 60

// fifoQueue is a FIFO queue with SQS-managed encryption, no content based
// deduplication (messages carry their deduplication id), keeping messages
// retentionDays, deleted with the stack (disposablePolicy).
func fifoQueue(retentionDays int, more ...kv) *yaml.Node {
	props := append([]kv{
		field("FifoQueue", true),
		field("ContentBasedDeduplication", false),
		field("SqsManagedSseEnabled", true),
		field("MessageRetentionPeriod", retentionDays*secondsPerDay),
	}, more...)
	return disposable("AWS::SQS::Queue", obj(props...))
}

// deliverQueue is the delivery queue (infra/deploy's settings): high
// throughput FIFO (deduplication and throughput per message group), a
// visibility timeout of six times the deliver function's timeout, and the
// dead-letter queue for messages received too often.
func deliverQueue(m *deploymodel.Model) *yaml.Node {
	return fifoQueue(deploy.DeliverRetentionDays,
		field("DeduplicationScope", "messageGroup"),
		field("FifoThroughputLimit", "perMessageGroupId"),
		note("Six times the deliver function's timeout; a retry sets its own (ChangeMessageVisibility, up to 12 hours).",
			"VisibilityTimeout", int(deploy.DeliverVisibilityTimeout(m).Seconds())),
		field("RedrivePolicy", obj(
			field("deadLetterTargetArn", getAtt(DeliverDLQID+".Arn")),
			field("maxReceiveCount", deploy.DeliverMaxReceiveCount),
		)),
	)
}

// tlsOnly is the queue policy denying every request to queue id that is
// not sent over TLS.
func tlsOnly(id string) *yaml.Node {
	return obj(
		field("Type", "AWS::SQS::QueuePolicy"),
		field("Properties", obj(
			field("Queues", list(ref(id))),
			field("PolicyDocument", obj(
				field("Version", "2012-10-17"),
				field("Statement", list(obj(
					field("Sid", "EnforceTLS"),
					field("Effect", "Deny"),
					field("Principal", "*"),
					field("Action", "sqs:*"),
					field("Resource", getAtt(id+".Arn")),
					field("Condition", obj(field("Bool", obj(field("aws:SecureTransport", "false"))))),
				))),
			)),
		)),
	)
}

func output(description string, value *yaml.Node) *yaml.Node {
	return obj(field("Description", description), field("Value", value))
}
