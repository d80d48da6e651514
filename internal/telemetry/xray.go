package telemetry

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
)

// X-Ray: a function with active tracing runs beside the X-Ray daemon
// (AWS_XRAY_DAEMON_ADDRESS) and gets each invocation's trace header
// (Root=…;Parent=…;Sampled=…) in its context. When that trace is sampled,
// the service sends the daemon a subsegment for each request it handles
// (Start: named by its route, annotated with its request id and
// organization) and each AWS call (instrument.go), nested under the
// invocation's segment, and passes the trace on to what it starts
// (Outgoing: Step Functions' TraceHeader, SQS's AWSTraceHeader), so that
// one trace runs from API Gateway through the function, DynamoDB and Step
// Functions to the runner, and from the stream's function through SQS to
// the deliveries. Which invocations are sampled is X-Ray's sampling rule
// (the stack's traceSampleRate), decided before the function runs: an
// unsampled one costs a context lookup per call.
//
// The documents go over UDP to the daemon as the X-Ray SDKs send them (a
// JSON header line, then the segment document); the SDK itself is not
// linked, which would add about a megabyte to every bootstrap.

// EnvDaemonAddress is where Lambda's X-Ray daemon listens: host:port, or
// "udp:host:port tcp:host:port".
const EnvDaemonAddress = "AWS_XRAY_DAEMON_ADDRESS"

// lambdaTraceKey is the context key aws-lambda-go puts an invocation's
// trace header under.
const lambdaTraceKey = "x-amzn-trace-id"

// trace is a parsed trace header.
type trace struct {
	root, parent string
	sampled      bool
}

// parseTrace reads a trace header: Root=…;Parent=…;Sampled=1.
func parseTrace(h string) trace {
	var t trace
	for _, part := range strings.Split(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Root":
			t.root = v
		case "Parent":
			t.parent = v
		case "Sampled":
			t.sampled = v == "1"
		}
	}
	return t
}

// Segment is a subsegment in progress; a nil *Segment (an unsampled
// trace, no daemon) takes every call and does nothing.
type Segment struct {
	mu  sync.Mutex
	doc segmentDoc
}

type segmentDoc struct {
	Name        string         `json:"name"`
	ID          string         `json:"id"`
	TraceID     string         `json:"trace_id"`
	ParentID    string         `json:"parent_id,omitempty"`
	Type        string         `json:"type"`
	StartTime   float64        `json:"start_time"`
	EndTime     float64        `json:"end_time"`
	Namespace   string         `json:"namespace,omitempty"`
	Error       bool           `json:"error,omitempty"`
	Fault       bool           `json:"fault,omitempty"`
	Throttle    bool           `json:"throttle,omitempty"`
	HTTP        *segmentHTTP   `json:"http,omitempty"`
	AWS         map[string]any `json:"aws,omitempty"`
	Annotations map[string]any `json:"annotations,omitempty"`
}

type segmentHTTP struct {
	Request  *httpRequest  `json:"request,omitempty"`
	Response *httpResponse `json:"response,omitempty"`
}

type httpRequest struct {
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
}

type httpResponse struct {
	Status int `json:"status,omitempty"`
}

type segmentKey struct{}

// current is ctx's trace and the segment new work nests under: its
// innermost Segment, else the Lambda invocation's.
func current(ctx context.Context) (root, parent string, ok bool) {
	if s, _ := ctx.Value(segmentKey{}).(*Segment); s != nil {
		return s.doc.TraceID, s.doc.ID, true
	}
	h, _ := ctx.Value(lambdaTraceKey).(string)
	if h == "" {
		return "", "", false
	}
	t := parseTrace(h)
	if !t.sampled || t.root == "" || t.parent == "" {
		return "", "", false
	}
	return t.root, t.parent, true
}

// Start begins a subsegment named name under ctx's current segment and
// returns ctx carrying it; the segment is nil when ctx's trace is not
// sampled or no daemon listens. End sends it.
func Start(ctx context.Context, name string) (context.Context, *Segment) {
	root, parent, ok := current(ctx)
	if !ok || daemonAddress() == "" {
		return ctx, nil
	}
	s := &Segment{doc: segmentDoc{Name: segmentName(name), ID: newID(), TraceID: root, ParentID: parent, Type: "subsegment", StartTime: epoch(time.Now())}}
	return context.WithValue(ctx, segmentKey{}, s), s
}

// Annotate records an indexed value (X-Ray's filter expressions search
// them: annotation.request_id = "…").
func (s *Segment) Annotate(key string, value any) {
	if s == nil || value == "" {
		return
	}
	s.mu.Lock()
	if s.doc.Annotations == nil {
		s.doc.Annotations = map[string]any{}
	}
	s.doc.Annotations[key] = value
	s.mu.Unlock()
}

// SetHTTP records the request's method and path (never its query, which
// may hold a secret) and the answer's status, and marks a 4xx an error, a
// 429 a throttle and a 5xx a fault.
func (s *Segment) SetHTTP(method, path string, status int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.doc.HTTP = &segmentHTTP{Request: &httpRequest{Method: method, URL: path}, Response: &httpResponse{Status: status}}
	s.mark(status)
	s.mu.Unlock()
}

// mark flags the segment by status (s.mu held).
func (s *Segment) mark(status int) {
	switch {
	case status == 429:
		s.doc.Error, s.doc.Throttle = true, true
	case status >= 500:
		s.doc.Fault = true
	case status >= 400:
		s.doc.Error = true
	}
}

// End closes the segment and sends it to the daemon.
func (s *Segment) End() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.doc.EndTime = epoch(time.Now())
	b, err := json.Marshal(s.doc)
	s.mu.Unlock()
	if err == nil {
		send(b)
	}
}

// Outgoing is the trace header to hand on to what ctx's work starts
// (a Step Functions execution's TraceHeader, an SQS message's
// AWSTraceHeader system attribute), with ctx's current segment as the
// parent; "" when ctx's trace is not sampled, so nothing is handed on.
func Outgoing(ctx context.Context) string {
	root, parent, ok := current(ctx)
	if !ok {
		return ""
	}
	return "Root=" + root + ";Parent=" + parent + ";Sampled=1"
}

func epoch(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// newID is a segment id: 64 random bits in hex.
func newID() string {
	var b [8]byte
	v := rand.Uint64()
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return hex.EncodeToString(b[:])
}

// daemonAddress is the daemon's UDP address from the environment; "" when
// the function is not traced.
func daemonAddress() string {
	v := os.Getenv(EnvDaemonAddress)
	for _, f := range strings.Fields(v) {
		if a, ok := strings.CutPrefix(f, "udp:"); ok {
			return a
		}
	}
	if strings.Contains(v, " ") || strings.HasPrefix(v, "tcp:") {
		return ""
	}
	return v
}

// The daemon's connection, one per address.
var daemon struct {
	sync.Mutex
	addr string
	conn net.Conn
}

// header precedes every document sent to the daemon.
var header = []byte(`{"format":"json","version":1}` + "\n")

// send writes one segment document to the daemon; a failure loses the
// document, never the request.
func send(doc []byte) {
	addr := daemonAddress()
	if addr == "" {
		return
	}
	daemon.Lock()
	defer daemon.Unlock()
	if daemon.conn == nil || daemon.addr != addr {
		if daemon.conn != nil {
			daemon.conn.Close()
		}
		c, err := net.Dial("udp", addr)
		if err != nil {
			daemon.conn = nil
			return
		}
		daemon.conn, daemon.addr = c, addr
	}
	daemon.conn.Write(append(append(make([]byte, 0, len(header)+len(doc)), header...), doc...))
}

// SetName renames the segment (a request's, once its route is known).
func (s *Segment) SetName(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.doc.Name = segmentName(name)
	s.mu.Unlock()
}

// segmentName is name as X-Ray takes one: up to 200 of letters, digits,
// spaces and _ . : / % & # = + \ - @; a route's {param} becomes :param.
func segmentName(name string) string {
	var b strings.Builder
	for _, c := range name {
		switch {
		case c == '{':
			b.WriteByte(':')
		case c == '}':
		case unicode.IsLetter(c) || unicode.IsDigit(c) || c == ' ' || strings.ContainsRune(`_.:/%&#=+\-@`, c):
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// TraceHeader is Outgoing as an SDK input's optional field: nil when
// nothing is handed on.
func TraceHeader(ctx context.Context) *string {
	if h := Outgoing(ctx); h != "" {
		return &h
	}
	return nil
}
