package api_test

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// callFailing calls a tool that must fail and returns its error's text
// and structured content ({error, status, code, param}).
func callFailing(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := ""
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		text = tc.Text
	}
	if !res.IsError {
		t.Fatalf("%s succeeded: %s", tool, text)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	return text, sc
}

// Companies have the tools of every kind of record: list_companies takes
// the list's filters, sort, fields and cursor, and create_company,
// update_company (If-Match as ifMatch) and delete_company are the REST
// writes, through the same handlers: the same records and errors.
func TestAnAgentListsCreatesUpdatesAndDeletesCompaniesAsRESTDoes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	s := mcpSession(t, e, c)
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Zeta Robotics", "sector": "Robotics"})
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Agent Foods", "sector": "Food"})

	made, _ := call(t, s, "create_company", map[string]any{"idempotencyKey": "agent-create-1",
		"body": map[string]any{"canonicalName": "Agent Robotics", "sector": "Robotics", "externalId": "agent-1", "description": "arms"}}, false)
	rec := made["data"].(map[string]any)
	id, _ := rec["id"].(string)
	if rec["origin"] != "user" || rec["canonicalName"] != "Agent Robotics" {
		t.Fatalf("create_company: %v", made)
	}
	r := c.Do("GET", "/v1/companies/"+id, nil).Want(t, http.StatusOK)
	etag, _ := made["etag"].(string)
	if etag == "" || r.Header.Get("ETag") != etag {
		t.Errorf("create_company's etag %q, the record's ETag %q", etag, r.Header.Get("ETag"))
	}
	again, _ := call(t, s, "create_company", map[string]any{"idempotencyKey": "agent-create-1",
		"body": map[string]any{"canonicalName": "Agent Robotics", "sector": "Robotics", "externalId": "agent-1", "description": "arms"}}, false)
	if again["data"].(map[string]any)["id"] != id {
		t.Errorf("the same idempotency key created another company: %v", again)
	}

	// The list's filter, sort, fields and cursor, answered as GET answers them.
	listed, _ := call(t, s, "list_companies", map[string]any{"filter": map[string]any{"sector": "Robotics"},
		"sort": []any{map[string]any{"field": "canonicalName", "direction": "asc"}}, "fields": []any{"canonicalName"}, "limit": 1}, false)
	rest := c.Do("GET", "/v1/companies?filter[sector]=Robotics&sort=canonicalName&direction=asc&fields=canonicalName&limit=1", nil).Want(t, http.StatusOK)
	if data := listed["data"].([]any); len(data) != 1 || !reflect.DeepEqual(data[0], map[string]any{"id": id, "canonicalName": "Agent Robotics"}) {
		t.Fatalf("list_companies of Robotics by name, first page: %v", listed)
	}
	if got, want := apitest.JSONOf(listed["data"]), apitest.JSONOf(rest.List(t)); got != want {
		t.Errorf("list_companies: %s\nGET /v1/companies answers: %s", got, want)
	}
	cursor, _ := listed["nextCursor"].(string)
	if cursor == "" || cursor != rest.Header.Get("X-Next-Cursor") {
		t.Fatalf("list_companies' nextCursor %q, the list's X-Next-Cursor %q", cursor, rest.Header.Get("X-Next-Cursor"))
	}
	next, _ := call(t, s, "list_companies", map[string]any{"filter": map[string]any{"sector": "Robotics"},
		"sort": []any{map[string]any{"field": "canonicalName", "direction": "asc"}}, "fields": []any{"canonicalName"}, "limit": 1, "cursor": cursor}, false)
	if data := next["data"].([]any); len(data) != 1 || data[0].(map[string]any)["canonicalName"] != "Zeta Robotics" || next["nextCursor"] != nil {
		t.Errorf("list_companies' second page: %v", next)
	}
	byIndex, _ := call(t, s, "list_companies", map[string]any{"filter": map[string]any{"externalId": "agent-1"}}, false)
	if data := byIndex["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id {
		t.Errorf("list_companies by externalId: %v", byIndex)
	}

	// An update changes the fields sent; with ifMatch, only the version named.
	updated, _ := call(t, s, "update_company", map[string]any{"id": id, "ifMatch": etag,
		"body": map[string]any{"sector": "Automation", "description": nil}}, false)
	if u := updated["data"].(map[string]any); u["sector"] != "Automation" || u["description"] != nil || u["canonicalName"] != "Agent Robotics" {
		t.Errorf("update_company: %v", updated)
	}
	fresh, _ := updated["etag"].(string)
	if fresh == "" || fresh == etag {
		t.Errorf("update_company's etag %q after %q", fresh, etag)
	}
	msg, why := callFailing(t, s, "update_company", map[string]any{"id": id, "ifMatch": etag, "body": map[string]any{"sector": "Stale"}})
	stale := c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "Stale"}, "If-Match", etag)
	if msg != stale.Want(t, http.StatusPreconditionFailed).Error(t) || why["status"] != 412.0 || why["code"] != "precondition_failed" {
		t.Errorf("update_company with a stale ifMatch: %q %v\nREST: %s", msg, why, stale.Body)
	}

	// A bad field is the REST API's 400, its message, code and param.
	msg, why = callFailing(t, s, "update_company", map[string]any{"id": id, "body": map[string]any{"website": "not a url"}})
	bad := c.Do("PUT", "/v1/companies/"+id, map[string]any{"website": "not a url"}).Want(t, http.StatusBadRequest)
	if msg != bad.Error(t) || why["status"] != 400.0 || why["code"] != bad.Header.Get("X-Error-Code") || why["param"] != "website" {
		t.Errorf("update_company with a bad website: %q %v\nREST: %s %s %s", msg, why, bad.Body, bad.Header.Get("X-Error-Code"), bad.Header.Get("X-Error-Param"))
	}
	msg, why = callFailing(t, s, "create_company", map[string]any{"body": map[string]any{"sector": "No name"}})
	if why["status"] != 400.0 || why["code"] != "invalid_body" || why["param"] != "canonicalName" {
		t.Errorf("create_company without canonicalName: %q %v", msg, why)
	}

	// A delete: refused for a stale version, then done.
	if _, why = callFailing(t, s, "delete_company", map[string]any{"id": id, "ifMatch": etag}); why["status"] != 412.0 {
		t.Errorf("delete_company with a stale ifMatch: %v", why)
	}
	if out, _ := call(t, s, "delete_company", map[string]any{"id": id, "ifMatch": fresh}, false); len(out) != 0 {
		t.Errorf("delete_company answered %v", out)
	}
	c.Do("GET", "/v1/companies/"+id, nil).Want(t, http.StatusNotFound)
	if msg, _ := callFailing(t, s, "get_company", map[string]any{"id": id}); msg != "not found" {
		t.Errorf("get_company of the deleted company: %q", msg)
	}
}

// The change history holds a company's writes through MCP tools as it
// holds REST's: each event, by the key that called the tool.
func TestACompanyWrittenThroughMCPToolsIsInTheChangeHistoryAsTheKeys(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	c := e.Org(t)
	s := mcpSession(t, e, c)
	made, _ := call(t, s, "create_company", map[string]any{"body": map[string]any{"canonicalName": "Logged Co"}}, false)
	id := made["data"].(map[string]any)["id"].(string)
	call(t, s, "update_company", map[string]any{"id": id, "body": map[string]any{"sector": "Logs"}}, false)
	call(t, s, "delete_company", map[string]any{"id": id}, false)
	apitest.Caught(t, evs)
	var types []string
	for _, ev := range apitest.AllEvents(t, c, "resourceId="+id) {
		types = append(types, ev["type"].(string))
		if actor, _ := ev["actor"].(map[string]any); actor["type"] != "apiKey" || actor["id"] != c.ClientID {
			t.Errorf("%s by %v, want the key %s", ev["type"], ev["actor"], c.ClientID)
		}
	}
	slices.Sort(types)
	if want := []string{"company.created", "company.deleted", "company.updated"}; !reflect.DeepEqual(types, want) {
		t.Errorf("the history of the company: %v, want %v", types, want)
	}
}
