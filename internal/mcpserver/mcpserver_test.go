package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/openapi"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The document the tools are made from: a list, a get, a create, a start
// with a default, a search and a read that can grow large.
var ops = []openapi.Operation{
	{Method: "GET", Path: "/v1/widgets", Function: "things", Summary: "List widgets", Status: 200, Paged: true,
		Data: openapi.Schema{"type": "array", "items": openapi.Ref("Widget")},
		Query: []openapi.Param{{Name: "limit", Description: "how many", Schema: openapi.Schema{"type": "integer"}}, {Name: "cursor", Schema: openapi.Schema{"type": "string"}},
			{Name: "fields", Schema: openapi.Schema{"type": "string", openapi.CommaSeparated: openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string", "enum": []any{"name", "size"}}}}},
			{Name: "filter", Style: "deepObject", Explode: true, Schema: openapi.Schema{"type": "object", "additionalProperties": false, "properties": openapi.Schema{
				"size": openapi.Schema{"anyOf": []any{openapi.Schema{"type": "integer"}, openapi.Schema{"type": "object", "properties": openapi.Schema{
					"gte": openapi.Schema{"type": "integer"},
					"in":  openapi.Schema{"type": "string", "description": "comma-separated", openapi.CommaSeparated: openapi.Schema{"type": "array", "items": openapi.Schema{"type": "integer"}}},
				}}}},
			}}}}},
	{Method: "GET", Path: "/v1/widgets/{id}", Function: "things", Summary: "Get a widget", Status: 200, Data: openapi.Ref("Widget")},
	{Method: "POST", Path: "/v1/widgets", Function: "things", Summary: "Create a widget", Status: 201, Data: openapi.Ref("Widget"),
		Body: openapi.Ref("WidgetCreate"), Idempotent: true},
	{Method: "POST", Path: "/v1/widgets/{id}/runs", Function: "things", Summary: "Start a run", Status: 202, Data: openapi.Schema{"type": "object"},
		Body: openapi.Schema{"type": "object", "properties": openapi.Schema{"dryRun": openapi.Schema{"type": "boolean"}, "input": openapi.Schema{}}}, Idempotent: true},
	{Method: "POST", Path: "/v1/widgets/search", Function: "search", Summary: "Search widgets", Status: 200, Data: openapi.Schema{"type": "array"},
		Body: openapi.Schema{"type": "object"}, BodyOptional: true},
}

var tools = []mcpserver.ToolSpec{
	{Name: "list_widgets", OperationID: "getWidgets", Description: "list"},
	{Name: "get_widget", OperationID: "getWidgetsById", Description: "get"},
	{Name: "create_widget", OperationID: "postWidgets", Description: "create"},
	{Name: "start_run", OperationID: "postWidgetsByIdRuns", Description: "start", Defaults: map[string]any{"dryRun": true}},
	{Name: "search_widgets", OperationID: "postWidgetsSearch", Description: "search"},
}

func openAPIDocument(t *testing.T) []byte {
	t.Helper()
	schemas := map[string]openapi.Schema{
		"Widget":       {"type": "object", "properties": openapi.Schema{"id": openapi.Schema{"type": "string"}, "part": openapi.Ref("Part")}},
		"Part":         {"type": "object", "properties": openapi.Schema{"label": openapi.Schema{"type": "string"}}},
		"WidgetCreate": {"type": "object", "required": []any{"name"}, "properties": openapi.Schema{"name": openapi.Schema{"type": "string"}, "part": openapi.Ref("Part")}},
		"Unused":       {"type": "object"},
	}
	tagged := make([]openapi.Operation, len(ops)) // every operation is under one of the document's tags
	for i, op := range ops {
		op.Tag = "widgets"
		tagged[i] = op
	}
	b, err := openapi.Document(tagged, schemas, map[string]openapi.Schema{}, openapi.Info{Title: "Test",
		Tags: []openapi.Tag{{Name: "widgets", Title: "Widgets", Description: "Widgets.", Section: "Test"}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// call is a REST call a tool made, as the API received it.
type call struct {
	method, uri, body   string
	clientID, key, idem string
	contentType         string
	budget              int
}

// api is the REST API the tools call: it records each call and answers
// by path.
type api struct {
	mu    sync.Mutex
	calls []call
	// answer, when set, answers instead of the default echo.
	answer func(w http.ResponseWriter, r *http.Request)
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.calls = append(a.calls, call{method: r.Method, uri: r.URL.RequestURI(), body: string(b),
		clientID: r.Header.Get(httpapi.HeaderClientID), key: r.Header.Get(httpapi.HeaderAPIKey),
		idem: r.Header.Get(httpapi.HeaderIdempotencyKey), contentType: r.Header.Get("Content-Type"), budget: httpapi.Budget(r.Context())})
	answer := a.answer
	a.mu.Unlock()
	if answer != nil {
		answer(w, r)
		return
	}
	httpapi.Data(w, http.StatusOK, map[string]any{"path": r.URL.Path, "big": json.Number("12345678901234567890123")})
}

// setAnswer makes the API answer with fn.
func (a *api) setAnswer(fn func(w http.ResponseWriter, r *http.Request)) {
	a.mu.Lock()
	a.answer = fn
	a.mu.Unlock()
}

func (a *api) last(t *testing.T) call {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.calls) == 0 {
		t.Fatal("no REST call was made")
	}
	return a.calls[len(a.calls)-1]
}

func (a *api) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.calls)
}

// fixture is the MCP endpoint over HTTP, with a real key to call it with.
type fixture struct {
	url      string
	api      *api
	endpoint *mcpserver.Endpoint
	key      apikeys.Created
}

// newFixture serves the endpoint; budget, when positive, is the byte
// budget each request gets (as /mcp gives each message its share).
func newFixture(t *testing.T, budget int) *fixture {
	t.Helper()
	st := testenv.Store(t)
	ks := apikeys.New(st)
	org, err := ks.CreateOrg(context.Background(), "Acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ks.CreateKey(context.Background(), org.ID, "agent", "")
	if err != nil {
		t.Fatal(err)
	}
	a := &api{}
	h, list, err := mcpserver.New(mcpserver.Options{API: a, Auth: auth.New(ks, time.Minute), OpenAPI: openAPIDocument(t), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(tools) {
		t.Fatalf("%d tools", len(list))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if budget > 0 {
			r = r.WithContext(httpapi.WithBudget(r.Context(), budget))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &fixture{url: srv.URL, api: a, endpoint: h.(*mcpserver.Endpoint), key: k}
}

// credentials adds a key's two headers to every request.
type credentials struct{ clientID, secret string }

func (c credentials) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(httpapi.HeaderClientID, c.clientID)
	r.Header.Set(httpapi.HeaderAPIKey, c.secret)
	return http.DefaultTransport.RoundTrip(r)
}

func (f *fixture) session(t *testing.T) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: f.url, MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: credentials{f.key.ClientID, f.key.Secret}, Timeout: testenv.Scaled(30 * time.Second)}}
	s, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// result is a tool call's result: its text and structured content.
func callTool(t *testing.T, s *mcp.ClientSession, tool string, args any) (*mcp.CallToolResult, string, map[string]any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	var sc map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &sc)
	return res, text, sc
}

func schemaOf(t *testing.T, s *mcp.ClientSession) map[string]string {
	t.Helper()
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		out[tool.Name] = string(b)
	}
	return out
}

func TestEachToolsInputSchemaIsItsOperationsParametersAndBody(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.session(t)
	schemas := schemaOf(t, s)
	for name, c := range map[string]struct{ has, lacks []string }{
		"list_widgets": {has: []string{`"limit":{"description":"how many","type":"integer"}`, `"cursor":{"description":"the cursor","type":"string"}`, `"additionalProperties":false`},
			lacks: []string{`"required"`, `"body"`, `"idempotencyKey"`}},
		"get_widget": {has: []string{`"required":["id"]`, `"id":{`}, lacks: []string{`"body"`, `"idempotencyKey"`}},
		// The body's components are inlined, those they refer to as well:
		// the schema is self-contained (selfContained), every property
		// described.
		"create_widget": {has: []string{`"body":{"description":"the request body of POST /v1/widgets: Create a widget","properties":{"name":{`,
			`"part":{"description":"the part","properties":{"label":{"description":"the label","type":"string"}}`, `"required":["body"]`, `"idempotencyKey":{`},
			lacks: []string{"#/components/", "$ref", "$defs", `"Unused"`}},
		"start_run":      {has: []string{`"required":["id"]`, `"allOf"`, `dryRun default to true`, `"idempotencyKey"`}},
		"search_widgets": {has: []string{`"body":{"description":"the request body of POST /v1/widgets/search: Search widgets","type":"object"}`}, lacks: []string{`"idempotencyKey"`}},
	} {
		got, ok := schemas[name]
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		for _, h := range c.has {
			if !strings.Contains(got, h) {
				t.Errorf("%s's schema lacks %s: %s", name, h, got)
			}
		}
		for _, l := range c.lacks {
			if strings.Contains(got, l) {
				t.Errorf("%s's schema has %s: %s", name, l, got)
			}
		}
	}
}

func TestAToolCallIsItsRESTCallWithTheCallersKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.session(t)
	// Path parameters are escaped into the path; query parameters sent.
	res, text, sc := callTool(t, s, "get_widget", map[string]any{"id": "a/b c?d"})
	c := f.api.last(t)
	if res.IsError || c.method != "GET" || c.uri != "/v1/widgets/a%2Fb%20c%3Fd" || c.body != "" {
		t.Errorf("get_widget: %+v, %s", c, text)
	}
	if c.clientID != f.key.ClientID || c.key != f.key.Secret {
		t.Errorf("the REST call carried %q %q", c.clientID, c.key)
	}
	// The answer's numbers come back as the API wrote them.
	if !strings.Contains(text, `"big":12345678901234567890123`) || sc["data"] == nil {
		t.Errorf("the result: %s", text)
	}
	callTool(t, s, "list_widgets", map[string]any{"limit": 10, "cursor": "abc"})
	if c := f.api.last(t); c.uri != "/v1/widgets?cursor=abc&limit=10" {
		t.Errorf("list_widgets called %s", c.uri)
	}
	// A body's numbers reach the API as sent, however large or precise.
	callTool(t, s, "create_widget", map[string]any{"body": json.RawMessage(`{"name":"w","n":123456789012345678901234567890,"x":0.1000000000000000055511151231257827}`),
		"idempotencyKey": "idem-1"})
	c = f.api.last(t)
	if c.method != "POST" || c.uri != "/v1/widgets" || c.idem != "idem-1" || c.contentType != "application/json" ||
		!strings.Contains(c.body, `"n":123456789012345678901234567890`) || !strings.Contains(c.body, `"x":0.1000000000000000055511151231257827`) {
		t.Errorf("create_widget: %+v", c)
	}
	// A default applies unless the caller sets the field.
	callTool(t, s, "start_run", map[string]any{"id": "w1", "body": map[string]any{"input": map[string]any{"a": 1}}})
	if c := f.api.last(t); c.uri != "/v1/widgets/w1/runs" || !strings.Contains(c.body, `"dryRun":true`) {
		t.Errorf("start_run without dryRun: %+v", c)
	}
	callTool(t, s, "start_run", map[string]any{"id": "w1", "body": map[string]any{"dryRun": false}})
	if c := f.api.last(t); !strings.Contains(c.body, `"dryRun":false`) {
		t.Errorf("start_run with dryRun false: %+v", c)
	}
	callTool(t, s, "start_run", map[string]any{"id": "w1"})
	if c := f.api.last(t); c.body != `{"dryRun":true}` {
		t.Errorf("start_run without a body: %+v", c)
	}
	// Calls names the route a call makes, exactly as the tool decides.
	for _, c := range []struct{ tool, args, want string }{
		{"get_widget", `{"id":"x"}`, "GET /v1/widgets/{id}"},
		{"get_widget", `{}`, ""},
		{"get_widget", `{"id":""}`, ""},
		{"get_widget", `[1]`, ""},
		{"search_widgets", ``, "POST /v1/widgets/search"},
		{"no_such_tool", `{}`, ""},
	} {
		if got := f.endpoint.Calls(c.tool, json.RawMessage(c.args)); got != c.want {
			t.Errorf("Calls(%s, %s) = %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

func TestAMissingPathParameterIsAToolErrorAndNoCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.session(t)
	for _, args := range []any{map[string]any{}, map[string]any{"id": ""}, map[string]any{"id": 5}} {
		res, text, _ := callTool(t, s, "get_widget", args)
		if !res.IsError || text != "id is required" {
			t.Errorf("get_widget %v: error %v, %q", args, res.IsError, text)
		}
	}
	if n := f.api.count(); n != 0 {
		t.Errorf("%d REST calls were made", n)
	}
}

func TestAnAPIErrorIsAToolErrorWithItsStatusAndWhenToRetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.session(t)
	f.api.setAnswer(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/widgets/limited":
			w.Header().Set("Retry-After", "7")
			httpapi.ErrorBody(w, http.StatusTooManyRequests, "Too many requests for this API key.")
		case "/v1/widgets/down":
			w.Header().Set("Retry-After", "5")
			httpapi.ErrorBody(w, http.StatusServiceUnavailable, "unavailable; try again in 5 seconds.")
		case "/v1/widgets/gone":
			httpapi.ErrorBody(w, http.StatusNotFound, "not found")
		default:
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html>bad gateway</html>")
		}
	})
	for _, c := range []struct {
		id, text string
		status   float64
		retry    any
	}{
		{"limited", "Too many requests for this API key. Try again in 7 seconds.", 429, float64(7)},
		{"down", "unavailable; try again in 5 seconds.", 503, float64(5)},
		{"gone", "not found", 404, nil},
		{"odd", "the API answered 502: <html>bad gateway</html>", 502, nil},
	} {
		res, text, sc := callTool(t, s, "get_widget", map[string]any{"id": c.id})
		if !res.IsError || text != c.text || sc["status"] != c.status || sc["retryAfter"] != c.retry {
			t.Errorf("%s: error %v, %q, %v", c.id, res.IsError, text, sc)
		}
	}
}

func TestAToolResultStaysWithinTheMessagesBudget(t *testing.T) {
	t.Parallel()
	const budget = 60_000
	f := newFixture(t, budget)
	s := f.session(t)
	var size atomic.Int64
	f.api.setAnswer(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(httpapi.HeaderNextCursor, "next-page")
		httpapi.Data(w, 200, map[string]string{"pad": strings.Repeat("a", int(size.Load()))})
	})
	// The REST call gets the budget of one of the result's copies.
	size.Store(10)
	res, text, sc := callTool(t, s, "list_widgets", map[string]any{})
	if res.IsError || sc["nextCursor"] != "next-page" {
		t.Errorf("a small answer: %v %s", res.IsError, text)
	}
	if got, want := f.api.last(t).budget, (budget-8<<10)/3; got != want {
		t.Errorf("the REST call's budget: %d, want %d", got, want)
	}
	// An answer whose result would exceed the budget is a tool error
	// saying so (the text and the structured content both count).
	size.Store(budget / 2)
	res, text, _ = callTool(t, s, "list_widgets", map[string]any{})
	if !res.IsError || !strings.Contains(text, "more than the 60000 this call may take") || !strings.Contains(text, "limit") {
		t.Errorf("a large answer: error %v, %.200s", res.IsError, text)
	}
	// For a write, the error says the call was made.
	_, text, _ = callTool(t, s, "create_widget", map[string]any{"body": map[string]any{"name": "x"}})
	if !strings.Contains(text, "the API did answer 200 (the call was made)") {
		t.Errorf("a large answer to a write: %.300s", text)
	}
	// Just under it fits: the text once quoted and once as is.
	size.Store(budget/2 - 8<<10)
	if res, text, _ := callTool(t, s, "list_widgets", map[string]any{}); res.IsError {
		t.Errorf("an answer within the budget: %.200s", text)
	}
}

func TestTheEndpointNeedsAValidKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	for _, k := range []credentials{{}, {f.key.ClientID, "wrong"}} {
		req, _ := http.NewRequest("POST", f.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := (&http.Client{Transport: k}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 401 || string(b) != `{"error":"invalid api key or clientId"}`+"\n" {
			t.Errorf("key %q: %d %s", k.clientID, res.StatusCode, b)
		}
	}
	if f.api.count() != 0 {
		t.Error("an unauthenticated message made a REST call")
	}
}

func TestAToolOfAnOperationNotInTheDocumentIsRefused(t *testing.T) {
	t.Parallel()
	_, _, err := mcpserver.New(mcpserver.Options{API: http.NotFoundHandler(), OpenAPI: openAPIDocument(t),
		Tools: []mcpserver.ToolSpec{{Name: "nope", OperationID: "getNothing"}}})
	if err == nil || !strings.Contains(err.Error(), "getNothing") {
		t.Errorf("an unknown operation: %v", err)
	}
	if _, _, err := mcpserver.New(mcpserver.Options{OpenAPI: []byte("{")}); err == nil {
		t.Error("a document that is not JSON was accepted")
	}
}

// A list's filter, an object sent as deepObject query parameters, and its
// comma-separated parameters, offered as arrays, reach the API as the REST
// API takes them.
func TestAFilterObjectAndArraysReachTheAPIAsItsQueryParameters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.session(t)
	got := schemaOf(t, s)["list_widgets"]
	for _, want := range []string{`"style"`, `"fields":{"description":"the fields","items":{"enum":["name","size"],"type":"string"},"type":"array"}`,
		`"in":{"description":"comma-separated","items":{"type":"integer"},"type":"array"}`} {
		if want == `"style"` {
			if strings.Contains(got, want) || strings.Contains(got, `"x-`) {
				t.Errorf("list_widgets's schema keeps the document's serialization: %s", got)
			}
			continue
		}
		if !strings.Contains(got, want) {
			t.Errorf("list_widgets's schema lacks %s: %s", want, got)
		}
	}
	res, text, _ := callTool(t, s, "list_widgets", json.RawMessage(
		`{"filter": {"size": {"gte": 50, "in": [1, 2.5e1]}, "name": "Robot, Inc", "location.city": "Paris", "gone": null, "tags": {"in": ["ai", "robotics"]}},
		  "fields": ["name", "size"], "limit": 5}`))
	if res.IsError {
		t.Fatalf("list_widgets: %s", text)
	}
	c := f.api.last(t)
	u, err := url.Parse(c.uri)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"filter[size][gte]": {"50"}, "filter[size][in]": {"1,2.5e1"}, "filter[name]": {"Robot, Inc"},
		"filter[location.city]": {"Paris"}, "filter[tags][in]": {"ai,robotics"}, "fields": {"name,size"}, "limit": {"5"}}
	if u.Path != "/v1/widgets" || u.Query().Encode() != want.Encode() {
		t.Errorf("list_widgets called %s, want the query %s", c.uri, want.Encode())
	}
	// A string is sent as it is; a filter that is not an object is no call.
	callTool(t, s, "list_widgets", map[string]any{"fields": "name"})
	if c := f.api.last(t); c.uri != "/v1/widgets?fields=name" {
		t.Errorf("list_widgets with fields as a string called %s", c.uri)
	}
	n := f.api.count()
	if res, text, _ := callTool(t, s, "list_widgets", map[string]any{"filter": "size=5"}); !res.IsError || text != "filter must be an object" {
		t.Errorf("a filter string: error %v, %q", res.IsError, text)
	}
	if f.api.count() != n {
		t.Error("a filter that is not an object made a call")
	}
}
