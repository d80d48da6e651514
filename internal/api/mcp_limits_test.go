package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/docs"
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/mcpapi"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/usage"
)

// rpc posts JSON-RPC messages (one, or a batch) to c's /mcp as an MCP
// client does (accepting both JSON and an event stream); headers are
// extra "Name", "value" pairs.
func rpc(t *testing.T, c *apitest.Client, body any, headers ...string) *apitest.Response {
	t.Helper()
	return c.Do("POST", "/mcp", body, append([]string{"Accept", "application/json, text/event-stream"}, headers...)...)
}

// oldProtocol is the header of a client of the last protocol version with
// batches; a client that sends none is taken to be one.
var oldProtocol = []string{"MCP-Protocol-Version", "2025-03-26"}

func listTools(id int) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list"}
}

func callTool(id int, name string, args map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}}
}

// rpcAnswer is a JSON-RPC response as /mcp answers it.
type rpcAnswer struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

func (a rpcAnswer) tool(t *testing.T) toolResult {
	t.Helper()
	if a.Error != nil {
		t.Fatalf("JSON-RPC error %d: %s", a.Error.Code, a.Error.Message)
	}
	var res toolResult
	if err := json.Unmarshal(a.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tool result: %.300s", a.Result)
	}
	return res
}

// answers decodes a batch's answers.
func answers(t *testing.T, r *apitest.Response) []rpcAnswer {
	t.Helper()
	var out []rpcAnswer
	r.Decode(t, &out)
	return out
}

// answer decodes the answer to one message.
func answer(t *testing.T, r *apitest.Response) rpcAnswer {
	t.Helper()
	var out rpcAnswer
	r.Decode(t, &out)
	return out
}

func TestAnMCPBatchOfMoreThanTenMessagesIsRefusedBeforeAnyOfThemRuns(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	batch := make([]any, 2000)
	for i := range batch {
		batch[i] = listTools(i)
	}
	for _, headers := range [][]string{nil, oldProtocol} {
		r := rpc(t, c, batch, headers...).Want(t, http.StatusBadRequest)
		a := answer(t, r)
		if a.Error == nil || a.Error.Code != -32600 || a.ID != nil || !strings.Contains(a.Error.Message, "at most 10 messages; this one holds 2000") {
			t.Errorf("refusal %s, want a JSON-RPC Invalid Request (-32600) without id", r.Body)
		}
		if len(r.Body) > 1000 {
			t.Errorf("the refusal of a batch takes %d bytes", len(r.Body))
		}
	}

	// The body is bounded as every body is: 1 MiB.
	huge := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("a", httpapi.MaxBodyBytes) + `"}}`
	apitest.WantError(t, rpc(t, c, huge), http.StatusRequestEntityTooLarge, "1 MiB")

	// None of a refused batch's messages runs: not the run one would start.
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "Batch", "steps": []any{
		map[string]any{"id": "up", "type": "upsertCompany", "with": map[string]any{"canonicalName.$": "$.input.name"}}}}).Want(t, 201).Object(t)
	start := make([]any, mcpapi.MaxBatch+1)
	for i := range start {
		start[i] = callTool(i, "start_workflow_run", map[string]any{"id": wf["id"], "body": map[string]any{"dryRun": false, "input": map[string]any{"name": "Batch Co"}}})
	}
	rpc(t, c, start, oldProtocol...).Want(t, http.StatusBadRequest)
	if runs := c.Do("GET", "/v1/workflow-runs", nil).Want(t, http.StatusOK).List(t); len(runs) != 0 {
		t.Errorf("a refused batch started %d runs", len(runs))
	}

	// A batch of MaxMCPBatch is answered, every message.
	got := answers(t, rpc(t, c, batch[:mcpapi.MaxBatch], oldProtocol...).Want(t, http.StatusOK))
	if len(got) != mcpapi.MaxBatch {
		t.Fatalf("%d answers to a batch of %d", len(got), mcpapi.MaxBatch)
	}
	for _, a := range got {
		if a.Error != nil || len(a.Result) == 0 {
			t.Errorf("answer %v: %v", a.ID, a.Error)
		}
	}
}

func TestEveryMCPMessageCountsOnceAgainstTheKeysLimitAndAtTheLimitMCPIs429(t *testing.T) {
	t.Parallel()
	e, _ := apitest.Limited(t)
	c := e.Org(t)
	apitest.SetLimits(t, e, c.Org, ratelimit.Limits{KeyPerMinute: 10, WebhookPerMinute: 10})
	setup := e.Key(t, c.Org, "admin") // the records' writes are another key's
	id := apitest.CreateCompany(t, setup, map[string]any{"canonicalName": "Counted Co"})["id"].(string)
	wantLeft := func(r *apitest.Response, left int) {
		t.Helper()
		if r.Header.Get("X-RateLimit-Limit") != "10" || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(left) || r.Header.Get("X-RateLimit-Reset") != "55" {
			t.Errorf("rate headers: limit %q remaining %q reset %q, want 10, %d, 55", r.Header.Get("X-RateLimit-Limit"),
				r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset"), left)
		}
	}

	wantLeft(rpc(t, c, listTools(1)).Want(t, http.StatusOK), 9)
	// A batch of three counts three, the notification too; the tools'
	// REST calls are not counted again.
	r := rpc(t, c, []any{listTools(1), map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"},
		callTool(2, "get_company", map[string]any{"id": id})}, oldProtocol...).Want(t, http.StatusOK)
	wantLeft(r, 6)
	got := answers(t, r)
	if len(got) != 2 {
		t.Fatalf("%d answers: %s", len(got), r.Body)
	}
	for _, a := range got { // in the order they were ready
		if a.ID == float64(2) {
			if res := a.tool(t); res.IsError || !strings.Contains(res.Content[0].Text, "Counted Co") {
				t.Errorf("get_company: %+v", res)
			}
		}
	}
	// The key's REST calls share its count.
	wantLeft(c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK), 5)
	r = rpc(t, c, []any{listTools(1), listTools(2), callTool(3, "list_deals", nil), callTool(4, "get_company", map[string]any{"id": id}),
		callTool(5, "search_companies", nil)}).Want(t, http.StatusOK)
	wantLeft(r, 0)
	for _, a := range answers(t, r) {
		if a.ID.(float64) < 3 {
			continue // tools/list
		}
		if res := a.tool(t); res.IsError {
			t.Errorf("tool call %v at the last requests of the limit: %s", a.ID, res.Content[0].Text)
		}
	}

	// At its limit the key is refused on /mcp as on /v1, before any
	// message runs.
	for _, body := range []any{listTools(1), callTool(1, "get_company", map[string]any{"id": id})} {
		r = rpc(t, c, body).Want(t, http.StatusTooManyRequests)
		apitest.WantExactBody(t, r, `{"error":"Too many requests for this API key: the limit is 10 a minute; try again in 55 seconds."}`)
		if r.Header.Get("Retry-After") != "55" || r.Header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("Retry-After %q, remaining %q", r.Header.Get("Retry-After"), r.Header.Get("X-RateLimit-Remaining"))
		}
	}
	c.Do("GET", "/v1/companies", nil).Want(t, http.StatusTooManyRequests)
	// Another key of the organization goes on.
	rpc(t, setup, listTools(1)).Want(t, http.StatusOK)
}

// The mcp function has no search engine: a search tool's REST call goes
// to the HTTP API, whose search function counts it as any request; /mcp
// does not count that message again, and answers the search function's
// rate headers. Its 429 is the tool's error, saying when to retry.
func TestAToolCallTheRateLimitRefusesSaysWhenToRetry(t *testing.T) {
	t.Parallel()
	e, now := apitest.Limited(t)
	c := e.Org(t)
	apitest.SetLimits(t, e, c.Org, ratelimit.Limits{KeyPerMinute: 2, WebhookPerMinute: 10})
	deps := service.Build(e.Store, service.Config{Table: e.Store.Table, CacheTTL: auth.MaxCacheTTL, SearchBaseURL: e.URL}, nil)
	deps.NewMCP = mcpserver.Handler(docs.Pages)
	deps.Limits.SetClock(func() time.Time { return *now })
	srv := httptest.NewServer(api.Handler(deps, lambdas.MCP))
	t.Cleanup(srv.Close)
	fn := *c
	fn.Base = srv.URL

	search := callTool(1, "search_companies", map[string]any{"body": map[string]any{"text": "robotics"}})
	for i := range 2 {
		r := rpc(t, &fn, search).Want(t, http.StatusOK)
		if res := answer(t, r).tool(t); res.IsError {
			t.Fatalf("search %d: %s", i, res.Content[0].Text)
		}
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(1-i) || r.Header.Get("X-RateLimit-Limit") != "2" {
			t.Errorf("search %d: X-RateLimit-Remaining %q, limit %q: want %d of 2 (each search counted once)", i, got, r.Header.Get("X-RateLimit-Limit"), 1-i)
		}
	}
	r := rpc(t, &fn, search).Want(t, http.StatusOK)
	res := answer(t, r).tool(t)
	if !res.IsError || !strings.Contains(res.Content[0].Text, "try again in 55 seconds") {
		t.Errorf("a search over the limit: %+v, want a tool error saying to try again in 55 seconds", res)
	}
	if sc := res.StructuredContent; sc["status"] != float64(http.StatusTooManyRequests) || sc["retryAfter"] != float64(55) {
		t.Errorf("structured content %v, want status 429 and retryAfter 55", sc)
	}
	if r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("X-RateLimit-Remaining %q, want 0", r.Header.Get("X-RateLimit-Remaining"))
	}
	// The two searches took the key's whole limit: counted once each.
	c.Do("GET", "/v1/companies", nil).Want(t, http.StatusTooManyRequests)
}

// A tool's arguments reach the API with their numbers as sent: one no
// client can read is the API's 400 naming the field, as over REST.
func TestAToolCallWithANumberNoClientReadsIsTheAPIs400NamingTheField(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Numbers", apitest.Step("s", "set", map[string]any{"v.$": "$.input.n"}))
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start_workflow_run","arguments":` +
		`{"id":"` + wf + `","body":{"dryRun":false,"input":{"n":1e400}}}}}`
	var answer rpcAnswer
	rpc(t, c, body).Want(t, 200).Decode(t, &answer)
	res := answer.tool(t)
	if !res.IsError || res.StructuredContent["status"] != 400.0 || !strings.Contains(res.Content[0].Text, "input.n") {
		t.Errorf("a run input holding 1e400 through MCP: %+v, want the API's 400 naming input.n", res)
	}
	// The API's error code and parameter, as a REST client reads them in
	// X-Error-Code and X-Error-Param.
	if res.StructuredContent["code"] != "invalid_body" || res.StructuredContent["param"] != "input.n" {
		t.Errorf("the tool error's code and param: %v, want invalid_body and input.n", res.StructuredContent)
	}
	if rs := apitest.RunsOf(t, c, wf); len(rs) != 0 {
		t.Errorf("the refused call started runs: %s", apitest.JSONOf(rs))
	}
}

// TestMCPMessagesCountTowardTheOrganizationsUsageOnce: each message of an
// MCP request counts as a request of the organization's usage (what
// list-orgs reports), and the units its tools' REST calls spent with it,
// not those calls again as requests.
func TestMCPMessagesCountTowardTheOrganizationsUsageOnce(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Usage Co"})
	rpc(t, c, []any{listTools(1), callTool(2, "list_companies", map[string]any{})}, oldProtocol...).Want(t, http.StatusOK)
	if err := e.Deps.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	u, err := usage.Read(context.Background(), e.Deps.Store, c.Org, now.Add(-24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	// The create and the MCP request's two messages.
	if u.Requests != 3 || u.ReadUnits <= 0 || u.WriteUnits <= 0 {
		t.Errorf("usage %+v, want 3 requests and the units they spent", u)
	}
}
