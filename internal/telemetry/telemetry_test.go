package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

func TestATraceHeaderIsReadAndHandedOnWithTheCurrentSegmentAsParent(t *testing.T) {
	tr := parseTrace("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=a:1")
	if tr.root != "1-5759e988-bd862e3fe1be46a994272793" || tr.parent != "53995c3f42cd8ad8" || !tr.sampled {
		t.Fatalf("parsed %+v", tr)
	}
	if parseTrace("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0").sampled {
		t.Fatal("Sampled=0 read as sampled")
	}
	ctx := context.WithValue(context.Background(), lambdaTraceKey, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1") //nolint:staticcheck // aws-lambda-go's key
	if got := Outgoing(ctx); got != "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1" {
		t.Fatalf("Outgoing %q", got)
	}
	unsampled := context.WithValue(context.Background(), lambdaTraceKey, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0") //nolint:staticcheck // aws-lambda-go's key
	if Outgoing(unsampled) != "" || TraceHeader(unsampled) != nil || TraceHeader(context.Background()) != nil {
		t.Fatal("an unsampled or absent trace is handed on")
	}

	// With a daemon, a segment nests what follows under it.
	d := listen(t)
	t.Setenv(EnvDaemonAddress, "udp:"+d.LocalAddr().String()+" tcp:127.0.0.1:2000")
	sctx, seg := Start(ctx, "GET /v1/companies/{id}")
	if seg == nil {
		t.Fatal("no segment of a sampled trace with a daemon")
	}
	if got := Outgoing(sctx); got != "Root=1-5759e988-bd862e3fe1be46a994272793;Parent="+seg.doc.ID+";Sampled=1" {
		t.Fatalf("Outgoing under a segment %q", got)
	}
	seg.Annotate("request_id", "req_1")
	seg.SetHTTP("GET", "/v1/companies/cmp_1", 429)
	seg.End()
	doc := d.read(t)
	if doc["name"] != "GET /v1/companies/:id" || doc["parent_id"] != "53995c3f42cd8ad8" || doc["throttle"] != true || doc["error"] != true {
		t.Fatalf("segment %v", doc)
	}
	if doc["end_time"].(float64) < doc["start_time"].(float64) {
		t.Fatalf("ends before it starts: %v", doc)
	}
}

func TestNoSegmentIsMadeWithoutASampledTraceOrADaemonAndANilSegmentDoesNothing(t *testing.T) {
	t.Setenv(EnvDaemonAddress, "")
	sampled := context.WithValue(context.Background(), lambdaTraceKey, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1") //nolint:staticcheck // aws-lambda-go's key
	if _, s := Start(sampled, "x"); s != nil {
		t.Fatal("a segment without a daemon")
	}
	t.Setenv(EnvDaemonAddress, "127.0.0.1:2000")
	if _, s := Start(context.Background(), "x"); s != nil {
		t.Fatal("a segment without a trace")
	}
	var s *Segment
	s.Annotate("a", "b")
	s.SetHTTP("GET", "/", 200)
	s.SetName("x")
	s.End()
}

func TestSegmentNamesKeepToWhatXRayAccepts(t *testing.T) {
	for in, want := range map[string]string{
		"GET /v1/companies/{id}":       "GET /v1/companies/:id",
		"GET /v1/files/{path...}":      "GET /v1/files/:path...",
		"DynamoDB":                     "DynamoDB",
		"POST /v1/x?y=1*":              "POST /v1/x_y=1_",
		strings.Repeat("a", 300):       strings.Repeat("a", 200),
		"PUT /v1/companies/{id}/notes": "PUT /v1/companies/:id/notes",
	} {
		if got := segmentName(in); got != want {
			t.Errorf("segmentName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEmitMetricsWritesOneEMFLineByFunction(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	defer slog.SetDefault(prev)
	EmitMetrics(context.Background(), "delivery failed", []Metric{{MetricDeliveryFailures, "Count", 1}, {MetricEndpointConsecutiveFailures, "Count", 4}},
		slog.String("endpointId", "we_1"))
	var line struct {
		Msg  string `json:"msg"`
		AWS  emf    `json:"_aws"`
		Fn   string `json:"Function"`
		DF   float64
		ECF  float64 `json:"EndpointConsecutiveFailures"`
		EpID string  `json:"endpointId"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	var raw map[string]any
	json.Unmarshal(buf.Bytes(), &raw)
	if line.Msg != "delivery failed" || line.Fn != LocalFunction || raw["DeliveryFailures"] != 1.0 || line.ECF != 4 || line.EpID != "we_1" {
		t.Fatalf("line %s", buf.Bytes())
	}
	d := line.AWS.CloudWatchMetrics
	if len(d) != 1 || d[0].Namespace != Namespace || len(d[0].Dimensions) != 1 || d[0].Dimensions[0][0] != DimensionFunction || len(d[0].Metrics) != 2 || line.AWS.Timestamp == 0 {
		t.Fatalf("directive %+v", line.AWS)
	}
}

// udpDaemon is a UDP listener on loopback standing in for X-Ray's daemon.
type udpDaemon struct{ *net.UDPConn }

func listen(t testing.TB) udpDaemon {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return udpDaemon{c}
}

func (d udpDaemon) read(t *testing.T) map[string]any {
	t.Helper()
	buf := make([]byte, 64<<10)
	d.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := d.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := bytes.Cut(buf[:n], []byte("\n"))
	if string(head) != `{"format":"json","version":1}` {
		t.Fatalf("header %q", head)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// BenchmarkTracedRequest is what tracing adds to a request that makes
// three AWS calls when its trace is sampled: four segments built, encoded
// and sent to a daemon on loopback. docs/performance.md quotes it.
func BenchmarkTracedRequest(b *testing.B) {
	c := listen(b)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	b.Setenv(EnvDaemonAddress, c.LocalAddr().String())
	ctx := context.WithValue(context.Background(), lambdaTraceKey, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1") //nolint:staticcheck // aws-lambda-go's key
	b.ReportAllocs()
	for b.Loop() {
		rctx, seg := Start(ctx, "GET /v1/companies/{id}")
		for range 3 {
			_, call := Start(rctx, "DynamoDB")
			call.mu.Lock()
			call.doc.Namespace, call.doc.AWS = "aws", map[string]any{"operation": "GetItem", "table_name": "sourcebase", "region": "eu-west-1"}
			call.mu.Unlock()
			call.End()
		}
		seg.Annotate("request_id", "req_01")
		seg.SetHTTP("GET", "/v1/companies/cmp_1", 200)
		seg.End()
	}
}

// BenchmarkUntracedRequest is the same request when its trace is not
// sampled: what every other request pays.
func BenchmarkUntracedRequest(b *testing.B) {
	b.Setenv(EnvDaemonAddress, "127.0.0.1:2000")
	ctx := context.WithValue(context.Background(), lambdaTraceKey, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0") //nolint:staticcheck // aws-lambda-go's key
	b.ReportAllocs()
	for b.Loop() {
		rctx, seg := Start(ctx, "GET /v1/companies/{id}")
		for range 3 {
			_, call := Start(rctx, "DynamoDB")
			call.End()
		}
		seg.End()
	}
}
