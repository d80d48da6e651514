package deploy

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// What the ops team watches (issue 49): the CloudWatch alarms and the
// dashboard that the CDK stack (infra/alarms.go) and the SAM template
// (infra/sam) both render from Alarms and Dashboard, so that the two
// deploy the same ones. Every alarm sends its ALARM and OK notifications to
// the stack's alarm topic.

// MetricsNamespace is the namespace of the service's own metrics, written
// as CloudWatch Embedded Metric Format log lines (no PutMetricData calls).
const MetricsNamespace = "Sourcebase"

// The service's EMF metrics and their dimension. Every metric has the
// dimension set [Function] (the Lambda function's name,
// AWS_LAMBDA_FUNCTION_NAME); the per-request metrics also [Function,
// Route]. The API functions and the webhook function write the
// per-request ones, the deliver function DeliveryFailures and
// EndpointConsecutiveFailures, the runner's sweep JobsStuck.
const (
	DimFunction = "Function"
	DimRoute    = "Route"

	MetricRequests                    = "Requests"
	MetricErrors5xx                   = "Errors5xx"
	MetricErrors4xx                   = "Errors4xx"
	MetricLatency                     = "Latency" // milliseconds
	MetricDynamoDBCalls               = "DynamoDBCalls"
	MetricReadUnits                   = "ReadUnits"
	MetricWriteUnits                  = "WriteUnits"
	MetricRateLimited                 = "RateLimited"
	MetricDeliveryFailures            = "DeliveryFailures"
	MetricEndpointConsecutiveFailures = "EndpointConsecutiveFailures"
	MetricJobsStuck                   = "JobsStuck"
)

// The alarms' thresholds and periods. Every alarm treats missing data as
// not breaching: the metrics here are written only when something happens
// (a request, an invocation, a failure, a sweep), so no data is a quiet
// period, never a fault.
const (
	// AlarmPeriod is every alarm's period but JobsStuck's: five minutes,
	// the finest period the AWS namespaces' basic metrics (SQS's every five
	// minutes) have everywhere.
	AlarmPeriod = 5 * time.Minute
	// API5xxRate is the share of an API function's requests answered with a
	// 5xx over five minutes (Errors5xx / Requests) above which it alarms:
	// 5%. The service answers a 5xx only for a fault of its own or of AWS
	// (a 503 when DynamoDB, Step Functions or SQS refuse for capacity),
	// never for a client's mistake.
	API5xxRate = 0.05
	// APILatencyP99Ms is the p99 of an API function's request latency
	// (milliseconds, the service's Latency) above which it alarms, for
	// APILatencyPeriods periods in a row: 3 s. A warm request takes tens of
	// milliseconds and a cold start a few hundred; 3 s for fifteen minutes
	// is DynamoDB throttling or retrying, or a slow dependency, well
	// before API Gateway's 30 s limit.
	APILatencyP99Ms   = 3000
	APILatencyPeriods = 3
	// LambdaErrors: any function error (a crash, a timeout, a sweep that
	// failed) alarms. The service answers its own faults as 5xx, so a
	// Lambda error is never routine.
	LambdaErrors = 0
	// LambdaThrottles: any throttled invocation alarms: the account's
	// concurrency is exhausted, or the webhook function's reserved
	// concurrency (webhookConcurrency) is reached.
	LambdaThrottles = 0
	// DurationOfTimeout is the share of a function's timeout that its p99
	// duration alarms above: 80%. Beyond it a slower dependency turns
	// into timeouts (Lambda Errors).
	DurationOfTimeout = 0.8
	// QueueMessages: a failure or dead-letter queue with any message
	// visible alarms (it holds what was given up on, to replay).
	QueueMessages = 0
	// IteratorAgeMs is the age (milliseconds) of the newest stream record a
	// stream consumer's last batch held above which it alarms, for
	// IteratorAgePeriods periods in a row: 5 minutes. The change history
	// and the webhooks (and search, with OpenSearch) are that far behind;
	// the stream keeps records 24 hours.
	IteratorAgeMs      = 5 * 60 * 1000
	IteratorAgePeriods = 2
	// StateMachineFailures: any execution of the run or job state machine
	// that failed or timed out alarms (a run's or job's own failure is
	// recorded in the run or job and ends the execution successfully).
	StateMachineFailures = 0
	// DynamoDBThrottleEvents is how many throttled requests to the table
	// and its indexes in five minutes (reads, and writes, each) alarm:
	// more than 10. The SDK retries a throttled request, so a few go
	// unseen; more is a hot key or a burst beyond the on-demand table's
	// ramp (docs/decisions.md, capacity).
	DynamoDBThrottleEvents = 10
	// DynamoDBSystemErrors: any 5xx of DynamoDB itself alarms.
	DynamoDBSystemErrors = 0
	// EndpointConsecutiveFailures is the count of failures in a row of
	// one delivery to its endpoint (the deliver function's
	// EndpointConsecutiveFailures, its Maximum: each failed attempt
	// reports its delivery's count) at or above which it alarms: the
	// fifth attempt comes about 2.5 hours after the first
	// (outbound.Schedule), so the endpoint is down or refusing, not
	// having a blip; a delivery gets 8 attempts in all.
	EndpointConsecutiveFailures = 5
	// RateLimitedRequests: this many requests of one function refused by
	// the per-key, per-organization or per-trigger rate limits
	// (RateLimited) in 5 minutes alarm: a client is held at its limit,
	// which set-limits raises when it is the customer's due.
	RateLimitedRequests = 100
	// StageThrottleShare of the HTTP API stage's steady rate
	// (apiRateLimit), averaged over a minute for StageThrottlePeriods
	// minutes, alarms: the stage's throttle (429 from API Gateway itself,
	// which the service never sees) is near.
	StageThrottleShare   = 0.8
	StageThrottlePeriods = 3
	// JobsStuck: one job past its bound at a sweep (the runner's
	// JobsStuck, its Maximum) alarms.
	JobsStuck = 1
	// JobsStuckPeriod is twice the runner's sweep interval, so that every
	// period holds a sweep.
	JobsStuckPeriod = 10 * time.Minute
)

// DynamoDBSystemErrorOperations are the table operations whose
// SystemErrors the table's alarm adds up (the metric has an Operation
// dimension): every operation the functions call (their table actions, a
// transaction by its name), ten, the most one metric math expression of an
// alarm may read.
var DynamoDBSystemErrorOperations = []string{
	"GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "DeleteItem",
	"BatchWriteItem", "TransactWriteItems", "TransactGetItems",
}

// Comparison operators of the alarms.
const (
	GreaterThan        = "GreaterThanThreshold"
	GreaterThanOrEqual = "GreaterThanOrEqualToThreshold"
)

// NotBreaching is every alarm's TreatMissingData.
const NotBreaching = "notBreaching"

// TargetKind is the kind of resource a metric's dimension names.
type TargetKind string

// The kinds of target.
const (
	TargetFunction     TargetKind = "function"     // the function's name
	TargetQueue        TargetKind = "queue"        // the queue's name
	TargetTable        TargetKind = "table"        // the table's name
	TargetStateMachine TargetKind = "stateMachine" // the state machine's ARN
	TargetAPI          TargetKind = "api"          // the HTTP API's id
)

// SettingAPIRateLimit in an alarm's Expression is the stage's steady
// throttle (the stack's apiRateLimit, the template's ApiRateLimit), which
// the stack writes as its number and the template substitutes.
const SettingAPIRateLimit = "{apiRateLimit}"

// The queues and state machines a target names (Target.Name).
const (
	QueueEventsFailures  = "eventsFailures"  // the events function's stream failures
	QueueIndexerFailures = "indexerFailures" // the indexer's stream failures (OpenSearch)
	QueueDeliver         = "deliver"         // the delivery queue
	QueueDeliverDLQ      = "deliverDLQ"      // its dead-letter queue
	StateMachineRun      = "run"
	StateMachineJob      = "job"
)

// Target is the resource whose name (or ARN) a dimension's value is, which
// the stack or the template resolves: a function by its model name, a
// queue or state machine by the names above, the table.
type Target struct {
	Kind TargetKind
	Name string
}

// Dimension is a metric's dimension: its name and the resource whose name
// is its value. Route, when set, is a literal value instead (the
// per-route metrics).
type Dimension struct {
	Name  string
	Value Target
}

// Metric is one CloudWatch metric with its statistic ("Sum", "Maximum",
// "Average" or a percentile such as "p99"). ID names it in an alarm's or a
// widget's expression.
type Metric struct {
	ID         string
	Namespace  string
	Name       string
	Dimensions []Dimension
	Stat       string
	Label      string
}

// Alarm is one CloudWatch alarm: on Metric, or on the metric math
// Expression over Metrics (each with an ID).
type Alarm struct {
	// Name is stable and unique within a stack (the alarm's name is the
	// stack's name, a dash and it).
	Name        string
	Description string
	Metric      *Metric
	Expression  string
	Metrics     []Metric
	Period      time.Duration
	// EvaluationPeriods and DatapointsToAlarm: how many periods are looked
	// at, and how many of them must breach.
	EvaluationPeriods int
	DatapointsToAlarm int
	Threshold         float64
	Comparison        string
	TreatMissingData  string
}

// AllMetrics are a's metrics: Metric, or Metrics.
func (a Alarm) AllMetrics() []Metric {
	if a.Metric != nil {
		return []Metric{*a.Metric}
	}
	return a.Metrics
}

func fnTarget(name string) Target { return Target{Kind: TargetFunction, Name: name} }

// emf is a service metric of function fn.
func emf(name, fn, stat string) Metric {
	return Metric{Namespace: MetricsNamespace, Name: name, Stat: stat, Label: fn,
		Dimensions: []Dimension{{Name: DimFunction, Value: fnTarget(fn)}}}
}

// lambdaMetric is a metric of AWS/Lambda of function fn.
func lambdaMetric(name, fn, stat string) Metric {
	return Metric{Namespace: "AWS/Lambda", Name: name, Stat: stat, Label: fn,
		Dimensions: []Dimension{{Name: "FunctionName", Value: fnTarget(fn)}}}
}

func queueMetric(name, queue, stat string) Metric {
	return Metric{Namespace: "AWS/SQS", Name: name, Stat: stat, Label: queue,
		Dimensions: []Dimension{{Name: "QueueName", Value: Target{Kind: TargetQueue, Name: queue}}}}
}

func statesMetric(name, machine string) Metric {
	return Metric{Namespace: "AWS/States", Name: name, Stat: "Sum", Label: machine + " " + name,
		Dimensions: []Dimension{{Name: "StateMachineArn", Value: Target{Kind: TargetStateMachine, Name: machine}}}}
}

// tableMetric is a metric of AWS/DynamoDB of the table, or of its index
// when index is set, or of one operation.
func tableMetric(name, stat string, extra ...Dimension) Metric {
	return Metric{Namespace: "AWS/DynamoDB", Name: name, Stat: stat,
		Dimensions: append([]Dimension{{Name: "TableName", Value: Target{Kind: TargetTable}}}, extra...)}
}

// literal is a dimension with a fixed value (an index, an operation): its
// Target's Kind is empty and its Name the value.
func literal(name, value string) Dimension { return Dimension{Name: name, Value: Target{Name: value}} }

// one is an alarm over one metric, on one period of AlarmPeriod.
func one(name, desc string, m Metric, threshold float64, cmp string) Alarm {
	return Alarm{Name: name, Description: desc, Metric: &m, Period: AlarmPeriod, EvaluationPeriods: 1, DatapointsToAlarm: 1,
		Threshold: threshold, Comparison: cmp, TreatMissingData: NotBreaching}
}

// The names of the alarms of a function, a queue, a stream consumer, a
// state machine.
func Alarm5xxRate(fn string) string          { return fn + "-5xx-rate" }
func AlarmLatencyP99(fn string) string       { return fn + "-latency-p99" }
func AlarmErrors(fn string) string           { return fn + "-errors" }
func AlarmThrottles(fn string) string        { return fn + "-throttles" }
func AlarmDurationP99(fn string) string      { return fn + "-duration-p99" }
func AlarmRateLimited(fn string) string      { return fn + "-rate-limited" }
func AlarmIteratorAge(fn string) string      { return fn + "-iterator-age" }
func AlarmQueue(queue string) string         { return "queue-" + kebab(queue) }
func AlarmExecutionsFailed(sm string) string { return sm + "-executions-failed" }
func AlarmExecutionsTimedOut(sm string) string {
	return sm + "-executions-timed-out"
}

// The names of the table's and the EMF alarms.
const (
	AlarmTableReadThrottles          = "table-read-throttles"
	AlarmTableWriteThrottles         = "table-write-throttles"
	AlarmTableSystemErrors           = "table-system-errors"
	AlarmEndpointConsecutiveFailures = "deliver-endpoint-consecutive-failures"
	AlarmJobsStuck                   = "runner-jobs-stuck"
	AlarmStageThrottleNear           = "api-stage-throttle-near"
	throttleEventsExpressionID       = "throttled"
	systemErrorsExpressionID         = "errors"
	rateExpression                   = "FILL(errors5xx, 0) / requests"
)

// kebab is a camel-case name in lower case words joined by dashes
// (deliverDLQ → deliver-dlq).
func kebab(s string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range s {
		upper := 'A' <= r && r <= 'Z'
		if upper && prevLower {
			b.WriteByte('-')
		}
		if upper {
			r += 'a' - 'A'
		}
		prevLower = !upper
		b.WriteRune(r)
	}
	return b.String()
}

// DurationThresholdMs is the p99 duration (milliseconds) of function f
// that alarms: DurationOfTimeout of its timeout.
func DurationThresholdMs(f deploymodel.Function) float64 {
	return math.Round(DurationOfTimeout * float64(f.TimeoutSeconds) * 1000)
}

// Queues are the failure and dead-letter queues of a deployment
// (openSearch: one searching with OpenSearch, which has the indexer's).
func Queues(openSearch bool) []string {
	q := []string{QueueEventsFailures, QueueDeliverDLQ}
	if openSearch {
		q = append(q, QueueIndexerFailures)
	}
	return q
}

// Alarms are the alarms of a deployment of m (openSearch: one searching
// with OpenSearch), in a stable order.
func Alarms(m *deploymodel.Model, openSearch bool) []Alarm {
	var out []Alarm
	fns := m.Deployed(openSearch)
	for _, f := range fns {
		if f.Reach != deploymodel.ByAPI {
			continue
		}
		out = append(out, Alarm{
			Name: Alarm5xxRate(f.Name),
			Description: fmt.Sprintf("More than %g%% of the %s function's requests were answered with a 5xx in 5 minutes (Sourcebase Errors5xx / Requests).",
				API5xxRate*100, f.Name),
			Expression: rateExpression,
			Metrics: []Metric{
				withID("errors5xx", emf(MetricErrors5xx, f.Name, "Sum")),
				withID("requests", emf(MetricRequests, f.Name, "Sum")),
			},
			Period: AlarmPeriod, EvaluationPeriods: 1, DatapointsToAlarm: 1,
			Threshold: API5xxRate, Comparison: GreaterThan, TreatMissingData: NotBreaching,
		})
		lat := one(AlarmLatencyP99(f.Name),
			fmt.Sprintf("The p99 of the %s function's request latency stayed above %d ms for %d periods of 5 minutes (Sourcebase Latency).", f.Name, APILatencyP99Ms, APILatencyPeriods),
			emf(MetricLatency, f.Name, "p99"), APILatencyP99Ms, GreaterThan)
		lat.EvaluationPeriods, lat.DatapointsToAlarm = APILatencyPeriods, APILatencyPeriods
		out = append(out, lat)
	}
	for _, f := range fns {
		out = append(out,
			one(AlarmErrors(f.Name), fmt.Sprintf("The %s function failed (crashed, timed out or returned an error) in the last 5 minutes (AWS/Lambda Errors).", f.Name),
				lambdaMetric("Errors", f.Name, "Sum"), LambdaErrors, GreaterThan),
			one(AlarmThrottles(f.Name), fmt.Sprintf("Invocations of the %s function were throttled in the last 5 minutes (AWS/Lambda Throttles): concurrency exhausted.", f.Name),
				lambdaMetric("Throttles", f.Name, "Sum"), LambdaThrottles, GreaterThan),
			one(AlarmDurationP99(f.Name), fmt.Sprintf("The p99 duration of the %s function exceeded %g%% of its %d s timeout (AWS/Lambda Duration).",
				f.Name, DurationOfTimeout*100, f.TimeoutSeconds),
				lambdaMetric("Duration", f.Name, "p99"), DurationThresholdMs(f), GreaterThan),
		)
	}
	for _, q := range Queues(openSearch) {
		out = append(out, one(AlarmQueue(q), fmt.Sprintf("The %s queue holds messages: what was given up on, to look at and replay (AWS/SQS ApproximateNumberOfMessagesVisible).", kebab(q)),
			queueMetric("ApproximateNumberOfMessagesVisible", q, "Maximum"), QueueMessages, GreaterThan))
	}
	for _, f := range fns {
		if f.Reach != deploymodel.ByStream {
			continue
		}
		a := one(AlarmIteratorAge(f.Name), fmt.Sprintf("The %s function is more than %d minutes behind the table's stream for %d periods (AWS/Lambda IteratorAge).",
			f.Name, IteratorAgeMs/60000, IteratorAgePeriods), lambdaMetric("IteratorAge", f.Name, "Maximum"), IteratorAgeMs, GreaterThan)
		a.EvaluationPeriods, a.DatapointsToAlarm = IteratorAgePeriods, IteratorAgePeriods
		out = append(out, a)
	}
	for _, sm := range []string{StateMachineRun, StateMachineJob} {
		out = append(out,
			one(AlarmExecutionsFailed(sm), "An execution of the "+sm+" state machine failed (AWS/States ExecutionsFailed).",
				statesMetric("ExecutionsFailed", sm), StateMachineFailures, GreaterThan),
			one(AlarmExecutionsTimedOut(sm), "An execution of the "+sm+" state machine timed out (AWS/States ExecutionsTimedOut).",
				statesMetric("ExecutionsTimedOut", sm), StateMachineFailures, GreaterThan),
		)
	}
	for _, rw := range []struct{ name, metric, what string }{
		{AlarmTableReadThrottles, "ReadThrottleEvents", "reads"},
		{AlarmTableWriteThrottles, "WriteThrottleEvents", "writes"},
	} {
		ms := []Metric{withID("table", tableMetric(rw.metric, "Sum"))}
		var ids []string
		for i, ix := range m.Table.Indexes {
			ms = append(ms, withID(fmt.Sprintf("index%d", i+1), tableMetric(rw.metric, "Sum", literal("GlobalSecondaryIndexName", ix.Name))))
		}
		for _, x := range ms {
			ids = append(ids, x.ID)
		}
		out = append(out, Alarm{
			Name: rw.name,
			Description: fmt.Sprintf("More than %d throttled %s of the table and its indexes in 5 minutes (AWS/DynamoDB %s).",
				DynamoDBThrottleEvents, rw.what, rw.metric),
			// FILL: a throttle metric has data only where there were
			// throttles, and a sum with a missing term is missing.
			Expression: "SUM([" + strings.Join(fill(ids), ", ") + "])", Metrics: ms,
			Period: AlarmPeriod, EvaluationPeriods: 1, DatapointsToAlarm: 1,
			Threshold: DynamoDBThrottleEvents, Comparison: GreaterThan, TreatMissingData: NotBreaching,
		})
	}
	var ops []Metric
	var ids []string
	for i, op := range DynamoDBSystemErrorOperations {
		x := withID(fmt.Sprintf("op%d", i+1), tableMetric("SystemErrors", "Sum", literal("Operation", op)))
		ops, ids = append(ops, x), append(ids, x.ID)
	}
	out = append(out, Alarm{
		Name:        AlarmTableSystemErrors,
		Description: "DynamoDB answered requests to the table with a 5xx of its own in the last 5 minutes (AWS/DynamoDB SystemErrors).",
		// FILL: an operation with no error in the period has no data point.
		Expression: "SUM([" + strings.Join(fill(ids), ", ") + "])", Metrics: ops,
		Period: AlarmPeriod, EvaluationPeriods: 1, DatapointsToAlarm: 1,
		Threshold: DynamoDBSystemErrors, Comparison: GreaterThan, TreatMissingData: NotBreaching,
	})
	if d, ok := only(fns, deploymodel.ByQueue); ok {
		out = append(out, one(AlarmEndpointConsecutiveFailures,
			fmt.Sprintf("A webhook endpoint failed %d or more deliveries in a row (Sourcebase EndpointConsecutiveFailures, Maximum).", EndpointConsecutiveFailures),
			emf(MetricEndpointConsecutiveFailures, d.Name, "Maximum"), EndpointConsecutiveFailures, GreaterThanOrEqual))
	}
	if r, ok := only(fns, deploymodel.ByStateMachine); ok {
		a := one(AlarmJobsStuck, "A sweep found a bulk job past its bound (Sourcebase JobsStuck, Maximum).",
			emf(MetricJobsStuck, r.Name, "Maximum"), JobsStuck, GreaterThanOrEqual)
		a.Period = JobsStuckPeriod
		out = append(out, a)
	}
	for _, f := range fns {
		if f.Reach != deploymodel.ByAPI && f.Reach != deploymodel.ByURL {
			continue
		}
		out = append(out, one(AlarmRateLimited(f.Name),
			fmt.Sprintf("%d or more requests of the %s function were refused by a rate limit (per key, organization or trigger) in 5 minutes (Sourcebase RateLimited).", RateLimitedRequests, f.Name),
			emf(MetricRateLimited, f.Name, "Sum"), RateLimitedRequests, GreaterThanOrEqual))
	}
	out = append(out, Alarm{
		Name: AlarmStageThrottleNear,
		Description: fmt.Sprintf("The HTTP API's requests a second stayed above %g%% of the stage's throttle (apiRateLimit) for %d minutes (AWS/ApiGateway Count): its 429s are near.",
			StageThrottleShare*100, StageThrottlePeriods),
		Expression: "requests / 60 / " + SettingAPIRateLimit,
		Metrics:    []Metric{withID("requests", apiMetric("Count", "Sum"))},
		Period:     time.Minute, EvaluationPeriods: StageThrottlePeriods, DatapointsToAlarm: StageThrottlePeriods,
		Threshold: StageThrottleShare, Comparison: GreaterThan, TreatMissingData: NotBreaching,
	})
	return out
}

// apiMetric is a metric of AWS/ApiGateway of the HTTP API.
func apiMetric(name, stat string) Metric {
	return Metric{Namespace: "AWS/ApiGateway", Name: name, Stat: stat, Label: "HTTP API " + name,
		Dimensions: []Dimension{{Name: "ApiId", Value: Target{Kind: TargetAPI}}}}
}

func withID(id string, m Metric) Metric { m.ID = id; return m }

func fill(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "FILL(" + id + ", 0)"
	}
	return out
}

func only(fns []deploymodel.Function, reach deploymodel.Reach) (deploymodel.Function, bool) {
	var found []deploymodel.Function
	for _, f := range fns {
		if f.Reach == reach {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		return deploymodel.Function{}, false
	}
	return found[0], true
}

// Row is one row of the dashboard: a path through the service, its text
// widget (Title, Text) first, then its graphs.
type Row struct {
	Title, Text string
	Graphs      []Graph
}

// Graph is a metric widget: its metrics (those with Hidden only feed its
// expressions) and expressions.
type Graph struct {
	Title       string
	Metrics     []Metric
	Hidden      []Metric
	Expressions []Expression
}

// Expression is a metric math line of a graph.
type Expression struct {
	ID, Expression, Label string
}

// The dashboard's rows' titles.
const (
	RowAPI      = "API"
	RowWebhooks = "Webhooks in"
	RowRuns     = "Runs"
	RowEvents   = "Events and deliveries"
	RowJobs     = "Jobs"
	RowSearch   = "Search"
	RowTable    = "Table and operator"
)

// Dashboard is the dashboard of a deployment of m (openSearch: one
// searching with OpenSearch): one row per path (RowAPI...), each with the
// metrics of its alarms.
func Dashboard(m *deploymodel.Model, openSearch bool) []Row {
	fns := m.Deployed(openSearch)
	var api []deploymodel.Function
	for _, f := range fns {
		if f.Reach == deploymodel.ByAPI {
			api = append(api, f)
		}
	}
	perFn := func(fs []deploymodel.Function, mk func(string) Metric) []Metric {
		var out []Metric
		for _, f := range fs {
			out = append(out, mk(f.Name))
		}
		return out
	}
	lambda := func(name, stat string) func(string) Metric {
		return func(fn string) Metric { return lambdaMetric(name, fn, stat) }
	}
	service := func(name, stat string) func(string) Metric {
		return func(fn string) Metric { return emf(name, fn, stat) }
	}
	// lambdaGraphs are the graphs of the Lambda metrics the alarms of fs
	// read: errors and throttles, duration p99, invocations.
	lambdaGraphs := func(what string, fs []deploymodel.Function) []Graph {
		var errs []Metric
		for _, f := range fs {
			e, th := lambdaMetric("Errors", f.Name, "Sum"), lambdaMetric("Throttles", f.Name, "Sum")
			e.Label, th.Label = f.Name+" errors", f.Name+" throttles"
			errs = append(errs, e, th)
		}
		return []Graph{
			{Title: what + ": invocations", Metrics: perFn(fs, lambda("Invocations", "Sum"))},
			{Title: what + ": Lambda errors and throttles", Metrics: errs},
			{Title: what + ": duration p99 (ms)", Metrics: perFn(fs, lambda("Duration", "p99"))},
		}
	}
	var rateHidden []Metric
	var rates []Expression
	for i, f := range api {
		e, r := withID(fmt.Sprintf("e%d", i+1), emf(MetricErrors5xx, f.Name, "Sum")), withID(fmt.Sprintf("r%d", i+1), emf(MetricRequests, f.Name, "Sum"))
		rateHidden = append(rateHidden, e, r)
		rates = append(rates, Expression{ID: fmt.Sprintf("rate%d", i+1), Expression: e.ID + " / " + r.ID, Label: f.Name})
	}
	rows := []Row{{
		Title: RowAPI,
		Text:  "## API\nThe HTTP API's functions: requests, 5xx answers and their share, p99 latency (the service's metrics), and each function's Lambda errors, throttles and duration.",
		Graphs: append([]Graph{
			{Title: "API: requests", Metrics: perFn(api, service(MetricRequests, "Sum"))},
			{Title: "API: 5xx answers", Metrics: perFn(api, service(MetricErrors5xx, "Sum"))},
			{Title: "API: 5xx rate", Hidden: rateHidden, Expressions: rates},
			{Title: "API: latency p99 (ms)", Metrics: perFn(api, service(MetricLatency, "p99"))},
			{Title: "API: requests at the stage (API Gateway), and refused by a rate limit", Metrics: append([]Metric{apiMetric("Count", "Sum")},
				perFn(append(slicesClone(api), webhookFns(fns)...), labelled(service(MetricRateLimited, "Sum"), " rate limited"))...)},
		}, lambdaGraphs("API", api)...),
	}}
	byReach := func(r deploymodel.Reach) []deploymodel.Function {
		var out []deploymodel.Function
		for _, f := range fns {
			if f.Reach == r {
				out = append(out, f)
			}
		}
		return out
	}
	webhook := byReach(deploymodel.ByURL)
	rows = append(rows, Row{
		Title: RowWebhooks,
		Text:  "## Webhooks in\nThe webhook function behind its public URL: signed deliveries that start runs. Throttles here are its reserved concurrency (webhookConcurrency) at work.",
		Graphs: append([]Graph{
			{Title: "Webhooks: requests and 5xx", Metrics: append(perFn(webhook, service(MetricRequests, "Sum")), perFn(webhook, labelled(service(MetricErrors5xx, "Sum"), " 5xx"))...)},
			{Title: "Webhooks: latency p99 (ms)", Metrics: perFn(webhook, service(MetricLatency, "p99"))},
		}, lambdaGraphs("Webhooks", webhook)...),
	})
	runner := byReach(deploymodel.ByStateMachine)
	machine := func(sm string) Graph {
		var ms []Metric
		for _, n := range []string{"ExecutionsStarted", "ExecutionsSucceeded", "ExecutionsFailed", "ExecutionsTimedOut"} {
			ms = append(ms, statesMetric(n, sm))
		}
		return Graph{Title: sm + " state machine: executions", Metrics: ms}
	}
	rows = append(rows, Row{
		Title:  RowRuns,
		Text:   "## Runs\nWorkflow runs: the run state machine's executions and the runner function that executes their steps (and sweeps every 5 minutes).",
		Graphs: append([]Graph{machine(StateMachineRun)}, lambdaGraphs("Runner", runner)...),
	})
	var streams, deliver []deploymodel.Function
	for _, f := range fns {
		switch {
		case f.Reach == deploymodel.ByStream && !f.Indexer:
			streams = append(streams, f)
		case f.Reach == deploymodel.ByQueue:
			deliver = append(deliver, f)
		}
	}
	events := append(slicesClone(streams), deliver...)
	rows = append(rows, Row{
		Title: RowEvents,
		Text:  "## Events and deliveries\nThe table's stream into the events function (iterator age), the delivery queue and its dead-letter queue, the deliver function and the webhook endpoints' failures.",
		Graphs: append([]Graph{
			{Title: "Events: stream iterator age (ms)", Metrics: perFn(streams, lambda("IteratorAge", "Maximum"))},
			{Title: "Delivery queues: messages visible", Metrics: []Metric{
				queueMetric("ApproximateNumberOfMessagesVisible", QueueDeliver, "Maximum"),
				queueMetric("ApproximateNumberOfMessagesVisible", QueueDeliverDLQ, "Maximum"),
				queueMetric("ApproximateNumberOfMessagesVisible", QueueEventsFailures, "Maximum"),
			}},
			{Title: "Deliveries: failures, and an endpoint's consecutive failures", Metrics: append(
				perFn(deliver, labelled(service(MetricDeliveryFailures, "Sum"), " failures")),
				perFn(deliver, labelled(service(MetricEndpointConsecutiveFailures, "Maximum"), " endpoint consecutive failures"))...)},
		}, lambdaGraphs("Events and deliver", events)...),
	})
	rows = append(rows, Row{
		Title: RowJobs,
		Text:  "## Jobs\nBulk imports and exports: the job state machine's executions, and the jobs the runner's sweep found past their bound.",
		Graphs: []Graph{
			machine(StateMachineJob),
			{Title: "Jobs stuck (at each sweep)", Metrics: perFn(runner, labelled(service(MetricJobsStuck, "Maximum"), " jobs stuck"))},
		},
	})
	var search []deploymodel.Function
	for _, f := range fns {
		if f.HoldsIndexes {
			search = append(search, f)
		}
	}
	searchRow := Row{
		Title: RowSearch,
		Text:  "## Search\nThe search function's requests, 5xx answers and latency" + map[bool]string{true: ", and the indexer keeping OpenSearch's indexes from the table's stream.", false: "."}[openSearch],
		Graphs: []Graph{
			{Title: "Search: requests and 5xx", Metrics: append(perFn(search, service(MetricRequests, "Sum")), perFn(search, labelled(service(MetricErrors5xx, "Sum"), " 5xx"))...)},
			{Title: "Search: latency p99 (ms)", Metrics: perFn(search, service(MetricLatency, "p99"))},
		},
	}
	if openSearch {
		var indexer []deploymodel.Function
		for _, f := range fns {
			if f.Indexer {
				indexer = append(indexer, f)
			}
		}
		searchRow.Graphs = append(searchRow.Graphs,
			Graph{Title: "Indexer: stream iterator age (ms) and failures queue", Metrics: append(perFn(indexer, lambda("IteratorAge", "Maximum")),
				queueMetric("ApproximateNumberOfMessagesVisible", QueueIndexerFailures, "Maximum"))})
		searchRow.Graphs = append(searchRow.Graphs, lambdaGraphs("Indexer", indexer)...)
	}
	rows = append(rows, searchRow)
	var throttles []Metric
	for _, a := range Alarms(m, openSearch) {
		if a.Name == AlarmTableReadThrottles || a.Name == AlarmTableWriteThrottles {
			for _, x := range a.Metrics {
				x.ID = ""
				x.Label = strings.TrimSuffix(x.Name, "Events") + " " + dimValues(x)
				throttles = append(throttles, x)
			}
		}
	}
	var sysErrs []Metric
	for _, op := range DynamoDBSystemErrorOperations {
		x := tableMetric("SystemErrors", "Sum", literal("Operation", op))
		x.Label = op
		sysErrs = append(sysErrs, x)
	}
	rows = append(rows, Row{
		Title: RowTable,
		Text:  "## Table and operator\nThe DynamoDB table's and its indexes' throttled requests and DynamoDB's own errors, and the operator (admin) function.",
		Graphs: append([]Graph{
			{Title: "Table: throttled requests", Metrics: throttles},
			{Title: "Table: system errors by operation", Metrics: sysErrs},
		}, lambdaGraphs("Operator", byReach(deploymodel.ByOperator))...),
	})
	return rows
}

func labelled(mk func(string) Metric, suffix string) func(string) Metric {
	return func(fn string) Metric { x := mk(fn); x.Label = fn + suffix; return x }
}

// webhookFns are the functions reached by a URL (the webhook function).
func webhookFns(fns []deploymodel.Function) []deploymodel.Function {
	var out []deploymodel.Function
	for _, f := range fns {
		if f.Reach == deploymodel.ByURL {
			out = append(out, f)
		}
	}
	return out
}

func slicesClone(fs []deploymodel.Function) []deploymodel.Function {
	return append([]deploymodel.Function(nil), fs...)
}

func dimValues(m Metric) string {
	var parts []string
	for _, d := range m.Dimensions[1:] {
		parts = append(parts, d.Value.Name)
	}
	if len(parts) == 0 {
		return "table"
	}
	return strings.Join(parts, " ")
}

// Dashboard layout: each row is Height high; its text widget TextWidth
// wide, then its graphs GraphWidth wide each, wrapping to the next line of
// the dashboard's 24 columns.
const (
	dashboardColumns = 24
	TextWidth        = 6
	GraphWidth       = 6
	RowHeight        = 6
)

// DashboardBody is the dashboard's JSON (CloudWatch's dashboard body
// structure) with each target's name given by name and the region by
// region: what the stack and the template resolve.
func DashboardBody(rows []Row, region string, name func(Target) string) string {
	var widgets []map[string]any
	y := 0
	for _, r := range rows {
		widgets = append(widgets, map[string]any{
			"type": "text", "x": 0, "y": y, "width": TextWidth, "height": RowHeight,
			"properties": map[string]any{"markdown": r.Text},
		})
		x := TextWidth
		for _, g := range r.Graphs {
			if x+GraphWidth > dashboardColumns {
				x, y = TextWidth, y+RowHeight
			}
			var lines []any
			for _, e := range g.Expressions {
				lines = append(lines, []any{map[string]any{"expression": e.Expression, "label": e.Label, "id": e.ID}})
			}
			add := func(m Metric, hidden bool) {
				line := []any{m.Namespace, m.Name}
				for _, d := range m.Dimensions {
					line = append(line, d.Name, DimensionValue(d, name))
				}
				opts := map[string]any{"stat": m.Stat}
				if m.Label != "" {
					opts["label"] = m.Label
				}
				if m.ID != "" {
					opts["id"] = m.ID
				}
				if hidden {
					opts["visible"] = false
				}
				lines = append(lines, append(line, opts))
			}
			for _, m := range g.Metrics {
				add(m, false)
			}
			for _, m := range g.Hidden {
				add(m, true)
			}
			widgets = append(widgets, map[string]any{
				"type": "metric", "x": x, "y": y, "width": GraphWidth, "height": RowHeight,
				"properties": map[string]any{
					"title": g.Title, "region": region, "view": "timeSeries", "stacked": false,
					"period": int(AlarmPeriod.Seconds()), "metrics": lines,
				},
			})
			x += GraphWidth
		}
		y += RowHeight
	}
	b, err := json.Marshal(map[string]any{"widgets": widgets})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// DimensionValue is d's value: a literal, or its target's name by name.
func DimensionValue(d Dimension, name func(Target) string) string {
	if d.Value.Kind == "" {
		return d.Value.Name
	}
	return name(d.Value)
}
