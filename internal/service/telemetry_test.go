package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/telemetry"
	"github.com/sourcebase/sourcebase/internal/usage"
)

// daemon is a stand-in X-Ray daemon on loopback: the segment documents it
// received.
type daemon struct {
	conn *net.UDPConn
	mu   sync.Mutex
	docs []map[string]any
}

func newDaemon(t *testing.T) *daemon {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{conn: c}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			head, body, ok := bytes.Cut(buf[:n], []byte("\n"))
			if !ok || string(head) != `{"format":"json","version":1}` {
				t.Errorf("daemon: a packet without the X-Ray header: %q", buf[:n])
				continue
			}
			var doc map[string]any
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Errorf("daemon: not JSON: %q", body)
				continue
			}
			d.mu.Lock()
			d.docs = append(d.docs, doc)
			d.mu.Unlock()
		}
	}()
	return d
}

// await returns the documents once want says they are all there.
func (d *daemon) await(t *testing.T, want func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(testenv.Scaled(5 * time.Second))
	for {
		d.mu.Lock()
		docs := append([]map[string]any(nil), d.docs...)
		d.mu.Unlock()
		if want(docs) || time.Now().After(deadline) {
			return docs
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestALambdaRequestLogsOneLineWithItsMetricsAndIsTraced invokes the
// companies function's handler with API Gateway's event in an invocation
// whose trace is sampled, as Lambda does with active tracing, and reads
// what the request left: its JSON log line, with every field and the EMF
// metrics CloudWatch extracts from it, and its X-Ray subsegments (the
// request's, and its DynamoDB calls' nested in it) at a daemon on loopback.
// Not parallel: it takes the default logger and the environment.
func TestALambdaRequestLogsOneLineWithItsMetricsAndIsTraced(t *testing.T) {
	e := newLambdaEnv(t)
	d := newDaemon(t)
	t.Setenv(telemetry.EnvDaemonAddress, d.conn.LocalAddr().String())
	var logs bytes.Buffer
	var mu sync.Mutex
	prev := slog.Default()
	service.Logger(lockedWriter{&mu, &logs})
	t.Cleanup(func() { slog.SetDefault(prev) })

	const root, parent = "1-67891233-abcdef012345678912345678", "53995c3f42cd8ad8"
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", "Root="+root+";Parent="+parent+";Sampled=1") //nolint:staticcheck // aws-lambda-go's key
	ev := e.event(t, "companies-list.json")
	ev.Headers["x-request-id"] = "req-telemetry-1"
	res, err := e.companies(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	want(t, res, 200)
	if res.Headers["X-Request-Id"] != "req-telemetry-1" {
		t.Fatalf("X-Request-Id %q, want the caller's", res.Headers["X-Request-Id"])
	}

	mu.Lock()
	out := logs.String()
	mu.Unlock()
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" && m["requestId"] == "req-telemetry-1" {
			line = m
		}
	}
	if line == nil {
		t.Fatalf("no request line for req-telemetry-1 in the log:\n%s", out)
	}
	if strings.Contains(out, e.secret) {
		t.Fatalf("the log holds the key's secret:\n%s", out)
	}
	for field, want := range map[string]any{
		"method": "GET", "path": "/v1/companies", "status": 200.0, "Route": "GET /v1/companies",
		"apiGatewayRequestId": ev.RequestContext.RequestID, "clientId": e.clientID, "Function": telemetry.LocalFunction,
		"Requests": 1.0, "Errors5xx": 0.0, "Errors4xx": 0.0, "RateLimited": 0.0,
	} {
		if line[field] != want {
			t.Errorf("%s = %v, want %v (line %v)", field, line[field], want, line)
		}
	}
	if s, _ := line["organizationId"].(string); !strings.HasPrefix(s, "org_") {
		t.Errorf("organizationId %v", line["organizationId"])
	}
	for _, f := range []string{"durationMs", "Latency", "DynamoDBCalls", "ReadUnits", "WriteUnits", "bytes"} {
		if _, ok := line[f].(float64); !ok {
			t.Errorf("%s is not a number: %v", f, line[f])
		}
	}
	if line["DynamoDBCalls"].(float64) < 1 || line["ReadUnits"].(float64) <= 0 {
		t.Errorf("a list read nothing? calls %v, read units %v", line["DynamoDBCalls"], line["ReadUnits"])
	}
	db, _ := line["dynamodb"].(map[string]any)
	if db["calls"] != line["DynamoDBCalls"] || db["readUnits"] != line["ReadUnits"] || db["writeUnits"] != line["WriteUnits"] {
		t.Errorf("dynamodb %v disagrees with the metrics", db)
	}
	rate, _ := line["rateLimit"].(map[string]any)
	if l, _ := rate["limit"].(float64); l <= 0 || rate["limited"] != false {
		t.Errorf("rateLimit %v", rate)
	}
	if _, ok := rate["remaining"].(float64); !ok {
		t.Errorf("rateLimit %v has no remaining", rate)
	}

	// The request and its units count toward the organization's usage
	// (what list-orgs reports), once the instance's totals are written.
	if err := e.deps.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	u, err := usage.Read(context.Background(), e.deps.Store, e.org, now.Add(-24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	if u.Requests != 1 || u.ReadUnits != line["ReadUnits"] || u.WriteUnits != line["WriteUnits"] {
		t.Errorf("usage %+v, want the request and its units %v/%v", u, line["ReadUnits"], line["WriteUnits"])
	}

	// The EMF directive: every metric it names is a number of the line,
	// every dimension a string of it.
	var meta struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	}
	raw, _ := json.Marshal(line["_aws"])
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Timestamp == 0 || len(meta.CloudWatchMetrics) != 2 {
		t.Fatalf("_aws %s: %v", raw, err)
	}
	names := map[string]bool{}
	for _, d := range meta.CloudWatchMetrics {
		if d.Namespace != telemetry.Namespace {
			t.Errorf("namespace %q", d.Namespace)
		}
		for _, set := range d.Dimensions {
			for _, dim := range set {
				if s, _ := line[dim].(string); s == "" {
					t.Errorf("dimension %s is not in the line", dim)
				}
			}
		}
		for _, m := range d.Metrics {
			names[m.Name] = true
			if _, ok := line[m.Name].(float64); !ok || m.Unit == "" {
				t.Errorf("metric %s (%s) is not a number of the line: %v", m.Name, m.Unit, line[m.Name])
			}
		}
	}
	for _, m := range []string{"Requests", "Errors5xx", "Errors4xx", "Latency", "DynamoDBCalls", "ReadUnits", "WriteUnits", "RateLimited"} {
		if !names[m] {
			t.Errorf("the EMF directives miss %s", m)
		}
	}

	// The trace: the request's subsegment under the invocation's segment,
	// and the DynamoDB calls' under it.
	docs := d.await(t, func(docs []map[string]any) bool {
		for _, doc := range docs {
			if doc["name"] == "GET /v1/companies" {
				return true
			}
		}
		return false
	})
	var request map[string]any
	for _, doc := range docs {
		if doc["name"] == "GET /v1/companies" {
			request = doc
		}
	}
	if request == nil {
		t.Fatalf("no subsegment of the request; the daemon got %v", docs)
	}
	if request["trace_id"] != root || request["parent_id"] != parent || request["type"] != "subsegment" {
		t.Errorf("request subsegment %v", request)
	}
	if ann, _ := request["annotations"].(map[string]any); ann["request_id"] != "req-telemetry-1" || ann["organization"] == nil {
		t.Errorf("annotations %v", request["annotations"])
	}
	calls := 0
	for _, doc := range docs {
		if doc["name"] == "DynamoDB" && doc["parent_id"] == request["id"] {
			calls++
			a, _ := doc["aws"].(map[string]any)
			if a["table_name"] == "" || a["operation"] == "" || doc["namespace"] != "aws" {
				t.Errorf("DynamoDB subsegment %v", doc)
			}
		}
	}
	if calls == 0 {
		t.Errorf("no DynamoDB subsegment nested in the request's: %v", docs)
	}
}

// lockedWriter serializes writes of concurrent requests' lines.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
