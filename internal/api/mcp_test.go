package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sourcebase/sourcebase/docs"
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/generate"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/service"
)

// headers adds a key's two headers to every request of an MCP client.
type headers struct {
	clientID, secret string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-service-client-id", h.clientID)
	r.Header.Set("x-service-api-key", h.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the Go SDK's MCP client to the service's /mcp
// endpoint with c's key.
func mcpSession(t *testing.T, e *apitest.Env, c *apitest.Client) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "sourcebase-test", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: e.URL + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: headers{c.ClientID, c.Secret}, Timeout: 30 * time.Second}}
	s, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call calls a tool and returns its structured result, failing on a tool
// error unless wantError; then it returns the error's text.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any, wantError bool) (map[string]any, string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError != wantError {
		t.Fatalf("%s: error %v (want %v): %s", tool, res.IsError, wantError, text)
	}
	var out map[string]any
	if !wantError {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return out, text
}

func TestTheMCPServerListsItsToolsWithSchemasAndEveryToolAnswers(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	s := mcpSession(t, e, c)
	if got := s.InitializeResult().ServerInfo; got.Name != "sourcebase" || got.Version != "1.0.0" {
		t.Errorf("server %+v", got)
	}
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
	}
	for _, want := range []string{"search_companies", "list_companies", "get_company", "create_company", "update_company", "delete_company",
		"list_deals", "get_deal", "create_deal", "update_deal", "delete_deal", "list_people", "get_person",
		"search_documents", "get_document", "search_activities", "get_activity", "search_workspaces", "get_workspace",
		"get_enrichment_candidates", "read_metric_series", "list_workflows", "start_workflow_run", "get_workflow_run", "retry_workflow_run"} {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %s among %v", want, names)
		}
	}

	co := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Agent Robotics", "sector": "Robotics"})
	id := co["id"].(string)
	deal := c.Do("POST", "/v1/deals", map[string]any{"name": "Series A", "companyId": id}).Want(t, 201).Object(t)
	person := c.Do("POST", "/v1/people", map[string]any{"firstName": "Ada", "lastName": "Agent"}).Want(t, 201).Object(t)

	found, _ := call(t, s, "search_companies", map[string]any{"body": map[string]any{"text": "robotics"}}, false)
	if data := found["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id {
		t.Errorf("search_companies: %v", found)
	}
	got, _ := call(t, s, "get_company", map[string]any{"id": id}, false)
	if got["data"].(map[string]any)["canonicalName"] != "Agent Robotics" {
		t.Errorf("get_company: %v", got)
	}
	deals, _ := call(t, s, "list_deals", map[string]any{"limit": 10}, false)
	if data := deals["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != deal["id"] {
		t.Errorf("list_deals: %v", deals)
	}
	call(t, s, "get_deal", map[string]any{"id": deal["id"]}, false)
	call(t, s, "list_people", nil, false)
	call(t, s, "get_person", map[string]any{"id": person["id"]}, false)
	for _, tool := range []string{"search_documents", "search_activities", "search_workspaces"} {
		if out, _ := call(t, s, tool, nil, false); out["metadata"] == nil {
			t.Errorf("%s: %v", tool, out)
		}
	}
	c.Do("POST", "/v1/enrichments/resources/companies/"+id, map[string]any{"values": []any{
		map[string]any{"property": "employeeCount", "value": 42, "source": "provider", "confidence": 70}}}).Want(t, 201)
	cands, _ := call(t, s, "get_enrichment_candidates", map[string]any{"resourceType": "companies", "resourceId": id}, false)
	if data := cands["data"].([]any); len(data) != 1 {
		t.Errorf("get_enrichment_candidates: %v", cands)
	}
	c.Do("POST", "/v1/data/metric-points", map[string]any{"points": []any{map[string]any{
		"resource": "companies:" + id, "key": "metric:revenue", "date": "2026-01-31", "value": 10, "source": "agent-test"}}}).Want(t, 201)
	series, _ := call(t, s, "read_metric_series", map[string]any{"body": map[string]any{"resource": "companies:" + id, "key": "metric:revenue"}}, false)
	if pts := series["data"].(map[string]any)["points"].([]any); len(pts) != 1 {
		t.Errorf("read_metric_series: %v", series)
	}

	// Errors come back as tool errors with the REST API's message.
	_, msg := call(t, s, "get_company", map[string]any{"id": "cmp_01nosuchcompanyatall000000"}, true)
	if msg != "not found" {
		t.Errorf("missing company: %q", msg)
	}
	_, msg = call(t, s, "read_metric_series", map[string]any{"body": map[string]any{"resource": "companies:" + id, "key": "revenue"}}, true)
	if !strings.HasPrefix(msg, "Invalid request body: key must be formatted metric:<name>") {
		t.Errorf("bad key: %q", msg)
	}
}

func TestAWorkflowRunStartedThroughMCPIsADryRunUnlessTheCallerSaysOtherwise(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	s := mcpSession(t, e, c)
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "Agent upsert", "steps": []any{
		map[string]any{"id": "up", "type": "upsertCompany", "with": map[string]any{"canonicalName.$": "$.input.name"}}}}).Want(t, 201).Object(t)
	wfs, _ := call(t, s, "list_workflows", nil, false)
	if data := wfs["data"].([]any); len(data) != 1 || data[0].(map[string]any)["trigger"].(map[string]any)["secret"] != nil {
		t.Errorf("list_workflows: %v", wfs)
	}
	started, _ := call(t, s, "start_workflow_run", map[string]any{"id": wf["id"], "body": map[string]any{"input": map[string]any{"name": "Dry Co"}}}, false)
	run := started["data"].(map[string]any)
	if run["dryRun"] != true {
		t.Fatalf("a run started without dryRun is not a dry run: %v", run)
	}
	done := apitest.AwaitRun(t, c, run["id"].(string))
	apitest.WantStatus(t, done, "completed")
	read, _ := call(t, s, "get_workflow_run", map[string]any{"id": run["id"]}, false)
	if read["data"].(map[string]any)["status"] != "completed" {
		t.Errorf("get_workflow_run: %v", read)
	}
	if list := c.Do("GET", "/v1/companies", nil).Want(t, 200).List(t); len(list) != 0 {
		t.Errorf("a dry run wrote companies: %v", list)
	}
	// A write only when asked, with the same idempotency as REST.
	real, _ := call(t, s, "start_workflow_run", map[string]any{"id": wf["id"], "idempotencyKey": "agent-1",
		"body": map[string]any{"dryRun": false, "input": map[string]any{"name": "Real Co"}}}, false)
	again, _ := call(t, s, "start_workflow_run", map[string]any{"id": wf["id"], "idempotencyKey": "agent-1",
		"body": map[string]any{"dryRun": false, "input": map[string]any{"name": "Real Co"}}}, false)
	if real["data"].(map[string]any)["id"] != again["data"].(map[string]any)["id"] {
		t.Errorf("the same idempotency key started two runs")
	}
	apitest.WantStatus(t, apitest.AwaitRun(t, c, real["data"].(map[string]any)["id"].(string)), "completed")
	if list := c.Do("GET", "/v1/companies", nil).Want(t, 200).List(t); len(list) != 1 {
		t.Errorf("the real run wrote %d companies", len(list))
	}
	_, msg := call(t, s, "retry_workflow_run", map[string]any{"id": run["id"]}, true)
	if !strings.Contains(msg, "failed") {
		t.Errorf("retrying a completed run: %q", msg)
	}
}

func TestMCPNeedsTheSameKeyAndSeesOnlyItsOrganization(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	// Without credentials: the REST API's 401, word for word.
	r := e.Anonymous(t).Do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	apitest.WantExactBody(t, r.Want(t, http.StatusUnauthorized), `{"error":"invalid api key or clientId"}`)
	wrong := e.Org(t)
	wrong.Secret = "sk_not-the-secret"
	apitest.WantExactBody(t, wrong.Do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).Want(t, http.StatusUnauthorized),
		`{"error":"invalid api key or clientId"}`)

	// Another organization's records are not found.
	owner, other := e.Org(t), e.Org(t)
	id := apitest.CreateCompany(t, owner, map[string]any{"canonicalName": "Private Co"})["id"].(string)
	s := mcpSession(t, e, other)
	if _, msg := call(t, s, "get_company", map[string]any{"id": id}, true); msg != "not found" {
		t.Errorf("another organization's company: %q", msg)
	}
	found, _ := call(t, s, "search_companies", map[string]any{"body": map[string]any{"text": "Private"}}, false)
	if data := found["data"].([]any); len(data) != 0 {
		t.Errorf("search found another organization's company: %v", found)
	}
}

func TestTheMCPTransportsRefusalsAreErrorBodies(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	// A client that does not take both JSON and an event stream.
	apitest.WantExactBody(t, c.Do("POST", "/mcp", list, "Accept", "application/json").Want(t, http.StatusBadRequest),
		`{"error":"Accept must contain both 'application/json' and 'text/event-stream'"}`)
	// A body that is not JSON.
	r := c.Do("POST", "/mcp", list, "Accept", "application/json, text/event-stream", "Content-Type", "text/plain")
	apitest.WantExactBody(t, r.Want(t, http.StatusUnsupportedMediaType), `{"error":"Content-Type must be 'application/json'"}`)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("a refusal's Content-Type is %q", ct)
	}
	// Both accepted: the answer.
	c.Do("POST", "/mcp", list, "Accept", "application/json, text/event-stream").Want(t, http.StatusOK)
}

func TestTheMCPResourcesAreTheOpenAPIDocumentAndTheDocs(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	s := mcpSession(t, e, e.Org(t))
	list, err := s.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	for _, want := range []string{"sourcebase://openapi.json", "sourcebase://docs/getting-started.md", "sourcebase://docs/mcp.md"} {
		if !slices.Contains(uris, want) {
			t.Errorf("no resource %s among %v", want, uris)
		}
	}
	doc, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "sourcebase://openapi.json"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := api.OpenAPI()
	if doc.Contents[0].Text != string(want) {
		t.Errorf("the openapi.json resource is not the service's document")
	}
}

// docs/mcp.md's tool table is made by internal/generate (make generate);
// -update rewrites the page alone.
func TestMCPDocsListEveryToolAsTheServerDoes(t *testing.T) {
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	const path = "../../docs/mcp.md"
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate.MCPDoc(page, doc)
	if err != nil {
		t.Fatal(err)
	}
	if *updateSearchDocs {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(page) != string(want) {
		t.Errorf("docs/mcp.md's tool table is out of date: make generate")
	}
}

// The mcp function carries no search engine: its search tools go through
// the HTTP API with the caller's key, to the base URL it is told
// (SEARCH_BASE_URL) or, without one, to the address its own request came
// to, as API Gateway serves /mcp and the search routes on one domain.
func TestMCPWithoutASearchEngineSearchesThroughTheHTTPAPI(t *testing.T) {
	t.Parallel()
	e := apitest.NewWith(t, apitest.Options{})
	c := e.Org(t)
	other := e.Org(t)
	co := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Gateway Robotics", "sector": "Robotics"})
	apitest.CreateCompany(t, other, map[string]any{"canonicalName": "Other Robotics", "sector": "Robotics"})
	var rest map[string]any
	c.Do("POST", "/v1/companies/search", map[string]any{"text": "robotics"}).Want(t, 200).Decode(t, &rest)

	// mcpFunction is the mcp function's handler: no engine, the MCP server.
	mcpFunction := func(searchBase string) http.Handler {
		deps := service.Build(e.Store, service.Config{Table: e.Store.Table, CacheTTL: auth.MaxCacheTTL, SearchBaseURL: searchBase}, nil)
		deps.NewMCP = mcpserver.Handler(docs.Pages)
		if deps.Search != nil {
			t.Fatal("the function has a search engine")
		}
		return api.Handler(deps, lambdas.MCP)
	}
	serve := func(h http.Handler) *apitest.Env {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return &apitest.Env{URL: srv.URL}
	}
	service, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	gateway := http.NewServeMux()
	gateway.Handle("/", httputil.NewSingleHostReverseProxy(service))
	gateway.Handle("/mcp", mcpFunction(""))
	closed := testenv.Unanswering(t)

	for name, fn := range map[string]*apitest.Env{
		"the address of the request": serve(gateway),
		"SEARCH_BASE_URL":            serve(mcpFunction(e.URL)),
	} {
		t.Run(name, func(t *testing.T) {
			found, _ := call(t, mcpSession(t, fn, c), "search_companies", map[string]any{"body": map[string]any{"text": "robotics"}}, false)
			if !reflect.DeepEqual(found, rest) {
				t.Errorf("search_companies through MCP: %v\nwant what the API answers: %v", found, rest)
			}
			if data := found["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != co["id"] {
				t.Errorf("search_companies: %v, want the caller's one company", found)
			}
			// The other organization's key finds its own company only.
			found, _ = call(t, mcpSession(t, fn, other), "search_companies", map[string]any{"body": map[string]any{"text": "gateway"}}, false)
			if data := found["data"].([]any); len(data) != 0 {
				t.Errorf("another organization's search found %v", data)
			}
			// A refusal of the search function is the tool's error.
			_, msg := call(t, mcpSession(t, fn, c), "search_companies", map[string]any{"body": map[string]any{"text": 5}}, true)
			if !strings.Contains(msg, "text") {
				t.Errorf("invalid search: tool error %q, want the API's message naming text", msg)
			}
		})
	}
	_, msg := call(t, mcpSession(t, serve(mcpFunction(closed)), c), "search_companies", nil, true)
	if !strings.Contains(msg, "search: the HTTP API at "+closed+" did not answer") {
		t.Errorf("API unreachable: tool error %q", msg)
	}
}
