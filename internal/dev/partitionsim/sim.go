// Package partitionsim is a DynamoDB proxy that meters and throttles by
// partition, in front of DynamoDB Local (which does neither): every
// request's capacity units are counted per table and index partition key
// value per second, as DynamoDB charges them, and a request that would
// take a key past its partition's limit is throttled as DynamoDB
// throttles it (ProvisionedThroughputExceededException; a transaction
// cancelled with ThrottlingError; a batch's items left unprocessed).
//
// The limits are DynamoDB's per partition (PartitionWriteUnits,
// PartitionReadUnits) divided by Options.Scale, so that a 2-core machine
// can reach them. A key that stays hot splits in two (DynamoDB's split
// for heat) unless its writes only append past its last sort key, which
// no split spreads. Tests and make bench run the service against a Sim to
// find the keys that cap it, and to prove that nothing does at a load.
//
// What it leaves out: burst capacity (DynamoDB lends a partition up to
// 300 seconds of unused capacity; the simulator lends none, so it
// throttles first), table-level and account-level limits (on-demand
// tables have none below the partitions' in practice), Scan (charged to
// no key) and the streams API (passed through).
package partitionsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Sim.
type Options struct {
	// Upstream is the DynamoDB API the Sim forwards to (DynamoDB Local).
	Upstream string
	// Scale divides DynamoDB's partition limits; 1 (or 0) keeps them.
	Scale float64
	// SplitAfter is how long a key must stay above half its capacity
	// before it splits; 0 is 5 seconds.
	SplitAfter time.Duration
	// Window is the length of the intervals a key's units are counted
	// in: it may take Window's seconds times its limit per second in
	// each; 0 is one second, as DynamoDB counts. A scaled run (Scale K)
	// makes its requests K times slower than the load it stands for, so
	// the number of requests in a second is more spread out than at full
	// rate; a Window of K seconds counts what one second of the full
	// load would hold, as it would spread.
	Window time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Sim is the proxy. Its zero value is not usable: see New and Start.
type Sim struct {
	upstream string
	client   *http.Client
	meter    *meter

	mu     sync.Mutex
	tables map[string]*table // by access key and table name

	cancelled atomic.Int64 // transactions cancelled for throughput

	server *http.Server
	// URL is the endpoint to give DynamoDB clients (Start).
	URL string
}

// New returns a Sim forwarding to o.Upstream; serve it with ServeHTTP.
func New(o Options) *Sim {
	if o.Scale <= 0 {
		o.Scale = 1
	}
	if o.SplitAfter <= 0 {
		o.SplitAfter = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Window <= 0 {
		o.Window = time.Second
	}
	return &Sim{
		upstream: strings.TrimSuffix(o.Upstream, "/"),
		client:   &http.Client{Timeout: time.Minute},
		meter:    &meter{scale: o.Scale, window: o.Window, splitAfter: max(1, int(o.SplitAfter/o.Window)), now: o.Now, keys: map[Key]*keyState{}},
		tables:   map[string]*table{},
	}
}

// Start runs a Sim on a port of 127.0.0.1; Close stops it.
func Start(o Options) (*Sim, error) {
	s := New(o)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("partitionsim: listen: %w", err)
	}
	s.server = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.URL = "http://" + l.Addr().String()
	go func() { _ = s.server.Serve(l) }()
	return s, nil
}

// Close stops a started Sim.
func (s *Sim) Close() error {
	if s.server == nil {
		return nil
	}
	return s.server.Close()
}

// Stats returns what the meter saw of every key, in key order, and how
// many requests it throttled.
func (s *Sim) Stats() ([]KeyStats, int) { return s.meter.snapshot() }

// SetScale changes Options.Scale from now on: a test sets up at one
// scale and loads at another.
func (s *Sim) SetScale(k float64) {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	s.meter.scale = max(k, 1)
}

// Cancelled is how many transactions the Sim cancelled for throughput
// (TransactionCanceledException with ThrottlingError).
func (s *Sim) Cancelled() int { return int(s.cancelled.Load()) }

// Throttles is how many requests the Sim throttled.
func (s *Sim) Throttles() int {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	return s.meter.throttles
}

// WriteLimit and ReadLimit are one unsplit partition's units per window
// (Options.Window).
func (s *Sim) WriteLimit() float64 {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	return PartitionWriteUnits / s.meter.scale * s.meter.window.Seconds()
}

func (s *Sim) ReadLimit() float64 {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	return PartitionReadUnits / s.meter.scale * s.meter.window.Seconds()
}

// call is one request as it came.
type call struct {
	op     string // PutItem, Query, ...
	header http.Header
	body   []byte
}

// ServeHTTP meters, throttles or forwards one DynamoDB API request.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c := call{header: r.Header, body: body}
	if target := r.Header.Get("X-Amz-Target"); strings.HasPrefix(target, "DynamoDB_20120810.") {
		c.op = strings.TrimPrefix(target, "DynamoDB_20120810.")
	}
	switch c.op {
	case "CreateTable", "DeleteTable", "UpdateTable":
		s.forget(c)
	}
	h, ok := handlers[c.op]
	if !ok {
		s.pass(w, s.forward(r.Context(), c, body))
		return
	}
	if err := h(s, r.Context(), w, c); err != nil {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "partitionsim: "+err.Error())
	}
}

// answer is an upstream's answer, read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (a answer) ok() bool { return a.err == nil && a.status == http.StatusOK }

// forward sends body as c's request to the upstream.
func (s *Sim) forward(ctx context.Context, c call, body []byte) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.upstream+"/", bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	for k, v := range c.header {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Accept-Encoding":
		default:
			req.Header[k] = v
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// side is a request of the Sim's own to the upstream, made with c's
// credentials (DynamoDB Local keeps tables per access key): a read of an
// item's image, a table's description. It is neither metered nor throttled.
func (s *Sim) side(ctx context.Context, c call, op string, in any) ([]byte, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	h := c.header.Clone()
	h.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	a := s.forward(ctx, call{header: h}, body)
	if a.err != nil {
		return nil, a.err
	}
	if a.status != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", op, a.status, a.body)
	}
	return a.body, nil
}

// pass writes an upstream's answer as the Sim's.
func (s *Sim) pass(w http.ResponseWriter, a answer) {
	if a.err != nil {
		if errors.Is(a.err, context.Canceled) {
			return
		}
		writeError(w, http.StatusInternalServerError, "InternalServerError", "partitionsim: upstream: "+a.err.Error())
		return
	}
	for k, v := range a.header {
		if http.CanonicalHeaderKey(k) != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// passRewritten writes an upstream's answer with a body of the Sim's
// (a batch's unprocessed items added), with its checksum.
func (s *Sim) passRewritten(w http.ResponseWriter, a answer, body []byte) {
	a.body = body
	a.header = a.header.Clone()
	a.header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	s.pass(w, a)
}

// accessKey is the access key of a request's credentials, which DynamoDB
// Local keeps tables under.
func accessKey(h http.Header) string {
	_, cred, _ := strings.Cut(h.Get("Authorization"), "Credential=")
	key, _, _ := strings.Cut(cred, "/")
	return key
}

// table returns the description of a table under c's access key.
func (s *Sim) table(ctx context.Context, c call, name string) (*table, error) {
	id := accessKey(c.header) + "\x00" + name
	s.mu.Lock()
	t := s.tables[id]
	s.mu.Unlock()
	if t != nil {
		return t, nil
	}
	body, err := s.side(ctx, c, "DescribeTable", map[string]string{"TableName": name})
	if err != nil {
		return nil, err
	}
	if t, err = parseTable(body); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.tables[id] = t
	s.mu.Unlock()
	return t, nil
}

// forget drops the description of a table that is created, deleted or
// changed.
func (s *Sim) forget(c call) {
	var in struct{ TableName string }
	_ = json.Unmarshal(c.body, &in)
	s.mu.Lock()
	delete(s.tables, accessKey(c.header)+"\x00"+in.TableName)
	s.mu.Unlock()
}

// image reads the stored item at key (nil when there is none).
func (s *Sim) image(ctx context.Context, c call, t *table, key item) (item, error) {
	body, err := s.side(ctx, c, "GetItem", map[string]any{"TableName": t.name, "Key": key, "ConsistentRead": true})
	if err != nil {
		return nil, err
	}
	var out struct{ Item item }
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	return out.Item, nil
}

// Throttling answers, as DynamoDB words them.
const (
	throughputMessage = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html."
)

func writeError(w http.ResponseWriter, status int, typ, message string) {
	writeJSON(w, status, map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#" + typ, "message": message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	if status != http.StatusOK {
		typ, _ := v.(map[string]any)["__type"].(string)
		_, short, _ := strings.Cut(typ, "#")
		w.Header().Set("X-Amzn-Errortype", short)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// throttled answers a request refused for throughput.
func throttled(w http.ResponseWriter) {
	writeError(w, http.StatusBadRequest, "ProvisionedThroughputExceededException", throughputMessage)
}
