// Package apitest runs the real handler stack over HTTP against a fresh
// table in DynamoDB Local, with helpers to make organizations and keys and
// to call the API as a client would. Packages using it call testenv.Main
// from TestMain.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/docs"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/serve/eventfns"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Env is one running service.
type Env struct {
	URL    string
	Deps   service.Deps
	Store  *store.Store
	Engine *runs.InProcess // nil with SOURCEBASE_TARGET=lambdas: runs execute in the state machine
	// Runner runs the bulk jobs in the process (nil with
	// SOURCEBASE_TARGET=lambdas).
	Runner *jobs.Runner
	// prism, when set, is Prism's validating proxy, which the clients the
	// Env makes send their calls through (ThroughPrism).
	prism string
}

// Options tune an Env.
type Options struct {
	CacheTTL  time.Duration // API key cache window; 0 means the maximum
	NoCache   bool          // disable the key cache
	Transport http.RoundTripper
	// Store, when set, is served instead of a fresh table, so that two Envs
	// (two processes, each with its own key cache) share one table.
	// Transport is then ignored: the store already has its client.
	Store *store.Store
	// Resolver, when set, resolves webhook endpoints' hosts.
	Resolver *net.Resolver
	// NoEmbeddings serves search without an embedding model
	// (EMBEDDINGS=off).
	NoEmbeddings bool
}

// Service is what the Envs of a test binary serve (Serve).
type Service struct {
	// Handler serves the operations over a process's services:
	// api.Handler for the whole service, Features for some features.
	Handler func(d service.Deps) http.Handler
	// JobTargets are what the bulk jobs move (jobsapi.Targets); nil:
	// none.
	JobTargets func(d service.Deps) []jobs.Target
}

// Features serves the operations of features alone, each over its API
// (operation.Bind), behind the service's credentials, rate limits and
// Idempotency-Key: a test package of one feature serves that feature and
// those whose records its tests make, so that its test binary links no
// other feature's handlers and Go's test cache keeps its result while
// another feature changes.
func Features(features ...operation.Feature[service.Deps]) Service {
	return Service{Handler: func(d service.Deps) http.Handler {
		authenticate, idempotency := d.Guards()
		return operation.Handler(operation.Bind(d, nil, features...), nil, authenticate, idempotency)
	}}
}

var served *Service

// Serve sets what the Envs of this test binary serve; call it from
// TestMain, before testenv.Main.
func Serve(s Service) { served = &s }

// New starts the service over HTTP on a fresh table; with
// SOURCEBASE_TARGET=lambdas (EnvTarget), returns the Lambda functions
// behind the local front instead, over the one table they share.
func New(t testing.TB) *Env {
	t.Helper()
	if Lambdas() {
		return newLambdas(t)
	}
	return NewWith(t, Options{})
}

// NewWith is New with options. The options are in-process hooks: with
// SOURCEBASE_TARGET=lambdas, the test is skipped.
func NewWith(t testing.TB, o Options) *Env {
	t.Helper()
	InProcessOnly(t, "it sets apitest.Options (its own transport, store or key cache)")
	st := o.Store
	if st == nil {
		st = testenv.StoreWith(t, o.Transport)
	}
	ttl := o.CacheTTL
	if ttl == 0 {
		ttl = auth.MaxCacheTTL
	}
	if o.NoCache {
		ttl = 0
	}
	// The server starts first so that trigger urls can name it.
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	deps := service.Build(st, service.Config{Table: st.Table, CacheTTL: ttl, WebhookBaseURL: srv.URL, WebhooksAllowLoopback: true,
		WebhooksResolver: o.Resolver}, service.InProcessRuns())
	// The local model (make model installs it) embeds, as make run's.
	var keeper *vectors.Keeper
	if !o.NoEmbeddings {
		keeper = vectors.New(embedtest.Local(t), st, false)
	}
	deps.Search = embedded.NewEngine(st, keeper)
	deps.NewMCP = mcpserver.Handler(docs.Pages)
	engine := service.InProcess(deps)
	t.Cleanup(func() { engine.Close(testenv.Scaled(5 * time.Second)) })
	if served == nil {
		t.Fatal("apitest: no service to serve: the test package's TestMain calls apitest.Serve")
	}
	targets := served.JobTargets
	if targets == nil {
		targets = func(service.Deps) []jobs.Target { return nil }
	}
	runner, files, err := service.LocalJobs(context.Background(), &deps, t.TempDir(), srv.URL, targets)
	if err != nil {
		t.Fatalf("bulk jobs: %v", err)
	}
	t.Cleanup(runner.Close)
	// Imports of tests write as fast as the table takes them.
	deps.Jobs.RowsPerSecond = 100_000
	srv.Config.Handler = service.WithFiles(files.Handler(), served.Handler(deps))
	return &Env{URL: srv.URL, Deps: deps, Store: st, Engine: engine, Runner: runner}
}

// StartEvents starts the events function and the deliver function of the
// Env's process (eventfns.StartEvents: the table's stream read through
// DynamoDB Local's Streams API, deliveries queued in the process) until
// the test ends. Tests of the change history and outbound webhooks call
// it; the others leave the stream unread.
func (e *Env) StartEvents(t testing.TB) *eventfns.LocalEvents {
	t.Helper()
	evs := eventfns.StartEvents(context.Background(), e.Deps)
	t.Cleanup(evs.Stop)
	return evs
}

// Org makes an organization and returns an admin client of it.
func (e *Env) Org(t testing.TB) *Client {
	t.Helper()
	o, err := e.Deps.Keys.CreateOrg(context.Background(), "Org "+t.Name(), 0)
	if err != nil {
		t.Fatalf("create org: %v", err)
	}
	return e.Key(t, o.ID, "admin")
}

// Key makes a key of org with role and returns a client using it.
func (e *Env) Key(t testing.TB, org, role string) *Client {
	t.Helper()
	k, err := e.Deps.Keys.CreateKey(context.Background(), org, "key "+role, role)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return &Client{t: t, Base: e.URL, Org: org, ClientID: k.ClientID, Secret: k.Secret, prism: e.prism}
}

// Anonymous returns a client without credentials.
func (e *Env) Anonymous(t testing.TB) *Client { return &Client{t: t, Base: e.URL, prism: e.prism} }

// Client calls the API with one key's credentials.
type Client struct {
	t        testing.TB
	Base     string
	Org      string
	ClientID string
	Secret   string
	prism    string // Prism's validating proxy, when the calls go through it
}

// Response is a finished call.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request. body is sent as is when it is a string or []byte,
// as JSON otherwise, and not at all when nil. headers are extra "Name",
// "value" pairs.
func (c *Client) Do(method, path string, body any, headers ...string) *Response {
	c.t.Helper()
	var sent []byte
	switch b := body.(type) {
	case nil:
	case string:
		sent = []byte(b)
	case []byte:
		sent = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatalf("encode body: %v", err)
		}
		sent = j
	}
	newRequest := func() *http.Request {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(sent)
		}
		req, err := http.NewRequest(method, c.Base+path, rd)
		if err != nil {
			c.t.Fatalf("new request: %v", err)
		}
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.ClientID != "" {
			req.Header.Set("x-service-client-id", c.ClientID)
		}
		if c.Secret != "" {
			req.Header.Set("x-service-api-key", c.Secret)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		return req
	}
	req := newRequest()
	var out *Response
	if c.prism != "" {
		out = c.throughPrism(req, newRequest)
	} else {
		out = c.send(req)
	}
	checkContract(c.t, req, sent, out)
	return out
}

// send sends req and reads the whole answer.
func (c *Client) send(req *http.Request) *Response {
	c.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.RequestURI(), err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Want fails the test unless the status is want; returns r for chaining.
func (r *Response) Want(t testing.TB, want int) *Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body: %s", r.Status, want, r.Body)
	}
	return r
}

// Data decodes {"data": ...} into a generic value.
func (r *Response) Data(t testing.TB) any {
	t.Helper()
	var env struct {
		Data any `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return env.Data
}

// Decode decodes the whole body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Object returns the data of a single-record response.
func (r *Response) Object(t testing.TB) map[string]any {
	t.Helper()
	m, ok := r.Data(t).(map[string]any)
	if !ok {
		t.Fatalf("data is not an object: %s", r.Body)
	}
	return m
}

// List returns the data of a list response.
func (r *Response) List(t testing.TB) []map[string]any {
	t.Helper()
	raw, ok := r.Data(t).([]any)
	if !ok {
		t.Fatalf("data is not an array: %s", r.Body)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// Error returns the message of an {"error": ...} body.
func (r *Response) Error(t testing.TB) string {
	t.Helper()
	var env struct {
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Error == nil {
		t.Fatalf("not an error body: %s", r.Body)
	}
	return *env.Error
}
