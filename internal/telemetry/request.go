package telemetry

import (
	"context"
	"log/slog"
	"time"
)

// Request is what one HTTP request's log line reports.
type Request struct {
	Method, Path string
	// Route is the route that served it ("GET /v1/companies/{id}");
	// NoRoute when none did.
	Route   string
	Status  int
	Bytes   int
	Latency time.Duration
	// Meter counted its DynamoDB calls and units (nil: none).
	Meter *Meter
	// Rate is the rate limit's state as the answer's headers told it.
	Rate RateState
}

// NoRoute is the Route of a request no route matched (404, 405).
const NoRoute = "none"

// RateState is the state of the rate limit that counted a request.
type RateState struct {
	// Counted is whether a limit counted it (the headers were set).
	Counted bool
	// Limit, Remaining and ResetSeconds are the window's requests, those
	// left, and the seconds until it starts again.
	Limit, Remaining, ResetSeconds int64
	// Limited is whether the request was refused (429).
	Limited bool
}

// The metrics each request line carries (CloudWatch Embedded Metric
// Format): every one by Function, and latency and units also by Function
// and Route.
const (
	MetricRequests      = "Requests"
	MetricErrors5xx     = "Errors5xx"
	MetricErrors4xx     = "Errors4xx"
	MetricLatency       = "Latency"
	MetricDynamoDBCalls = "DynamoDBCalls"
	MetricReadUnits     = "ReadUnits"
	MetricWriteUnits    = "WriteUnits"
	MetricRateLimited   = "RateLimited"

	DimensionFunction = "Function"
	DimensionRoute    = "Route"
)

// emfMetric is a metric of an EMF directive.
type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// emfDirective tells CloudWatch which members of a log line are metrics,
// and by which dimensions.
type emfDirective struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []emfMetric `json:"Metrics"`
}

// emf is the line's "_aws" member.
type emf struct {
	Timestamp         int64          `json:"Timestamp"`
	CloudWatchMetrics []emfDirective `json:"CloudWatchMetrics"`
}

// requestDirectives are the request line's metrics. Per route are only
// latency and units (a route's requests are its latency's sample count):
// about 150 routes times 3 metrics, custom metrics billed only in the
// hours a route is called (docs/operations.md).
var requestDirectives = []emfDirective{
	{Namespace: Namespace, Dimensions: [][]string{{DimensionFunction}}, Metrics: []emfMetric{
		{MetricRequests, "Count"}, {MetricErrors5xx, "Count"}, {MetricErrors4xx, "Count"}, {MetricLatency, "Milliseconds"},
		{MetricDynamoDBCalls, "Count"}, {MetricReadUnits, "Count"}, {MetricWriteUnits, "Count"}, {MetricRateLimited, "Count"},
	}},
	{Namespace: Namespace, Dimensions: [][]string{{DimensionFunction, DimensionRoute}}, Metrics: []emfMetric{
		{MetricLatency, "Milliseconds"}, {MetricReadUnits, "Count"}, {MetricWriteUnits, "Count"},
	}},
}

// Log writes r's line ("request") to the default logger: the request's
// fields, API Gateway's request id, its DynamoDB calls and units, its rate
// limit's state, and the EMF metrics CloudWatch extracts from the line.
// The logger's handler adds the request id and caller. No header, query
// or body is logged: they may hold secrets.
func (r Request) Log(ctx context.Context) {
	var calls int64
	var read, write float64
	if r.Meter != nil {
		calls, read, write = r.Meter.Calls(), r.Meter.ReadUnits(), r.Meter.WriteUnits()
	}
	ms := float64(r.Latency.Microseconds()) / 1000
	route := r.Route
	if route == "" {
		route = NoRoute
	}
	flag := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.Path), slog.Int("status", r.Status),
		slog.Int("bytes", r.Bytes), slog.Float64("durationMs", ms),
	}
	if id := GatewayRequestID(ctx); id != "" {
		attrs = append(attrs, slog.String("apiGatewayRequestId", id))
	}
	attrs = append(attrs,
		slog.Group("dynamodb", slog.Int64("calls", calls), slog.Float64("readUnits", read), slog.Float64("writeUnits", write)))
	if r.Rate.Counted {
		attrs = append(attrs, slog.Group("rateLimit", slog.Int64("limit", r.Rate.Limit), slog.Int64("remaining", r.Rate.Remaining),
			slog.Int64("resetSeconds", r.Rate.ResetSeconds), slog.Bool("limited", r.Rate.Limited)))
	}
	attrs = append(attrs,
		slog.Any("_aws", emf{Timestamp: time.Now().UnixMilli(), CloudWatchMetrics: requestDirectives}),
		slog.String(DimensionFunction, FunctionName()), slog.String(DimensionRoute, route),
		slog.Int(MetricRequests, 1), slog.Int(MetricErrors5xx, flag(r.Status >= 500)), slog.Int(MetricErrors4xx, flag(r.Status >= 400 && r.Status < 500)),
		slog.Float64(MetricLatency, ms), slog.Int64(MetricDynamoDBCalls, calls), slog.Float64(MetricReadUnits, read),
		slog.Float64(MetricWriteUnits, write), slog.Int(MetricRateLimited, flag(r.Rate.Limited)))
	slog.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// The metrics of other lines (EmitMetrics), by Function: a delivery that
// failed, and its failures in a row to its endpoint; the jobs a sweep found
// stuck past their bound.
const (
	MetricDeliveryFailures            = "DeliveryFailures"
	MetricEndpointConsecutiveFailures = "EndpointConsecutiveFailures"
	MetricJobsStuck                   = "JobsStuck"
)

// Metric is one value of a metric line (EmitMetrics).
type Metric struct {
	Name  string
	Unit  string // Count, Milliseconds, Seconds, Bytes
	Value float64
}

// EmitMetrics writes a line of metrics by Function (the deliveries', the
// sweep's) in EMF to the default logger, with msg as its message and attrs
// beside them.
func EmitMetrics(ctx context.Context, msg string, ms []Metric, attrs ...slog.Attr) {
	d := emfDirective{Namespace: Namespace, Dimensions: [][]string{{DimensionFunction}}}
	for _, m := range ms {
		d.Metrics = append(d.Metrics, emfMetric{m.Name, m.Unit})
		attrs = append(attrs, slog.Float64(m.Name, m.Value))
	}
	attrs = append(attrs, slog.Any("_aws", emf{Timestamp: time.Now().UnixMilli(), CloudWatchMetrics: []emfDirective{d}}),
		slog.String(DimensionFunction, FunctionName()))
	slog.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
}
