package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/eventsapi"
	co "github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// The registry declares every kind of record's operations from its
// declaration — companies, workflows and runs as every declared resource —
// and each operation once, with policies that agree (routes.Route.Check).
func TestTheRegistryDeclaresEveryKindOfRecordAndEachOperationOnce(t *testing.T) {
	t.Parallel()
	declared := map[string]bool{}
	for _, r := range api.Routes() {
		if err := r.Check(); err != nil {
			t.Error(err)
		}
		if declared[r.Pattern()] {
			t.Errorf("%s declared twice", r.Pattern())
		}
		declared[r.Pattern()] = true
		if r.Resource != "" {
			declared[r.Resource+" "+r.Pattern()] = true
		}
	}
	crud := func(name string) []string {
		return []string{"POST /v1/" + name, "GET /v1/" + name, "GET /v1/" + name + "/{id}", "PUT /v1/" + name + "/{id}", "DELETE /v1/" + name + "/{id}"}
	}
	want := map[string][]string{co.Name: crud(co.Name), workflows.Def.Name: crud(workflows.Def.Name),
		runs.Def.Name: {"GET /v1/workflow-runs", "GET /v1/workflow-runs/{id}", "POST /v1/workflows/{id}/runs", "PATCH /v1/workflow-runs/{id}"}}
	for _, d := range resources.All() {
		want[d.Name] = crud(d.Name)
	}
	for _, d := range kinds.Searchable() {
		want[d.Name] = append(want[d.Name], "POST /v1/"+d.Name+"/search")
	}
	for name, patterns := range want {
		for _, p := range patterns {
			if !declared[name+" "+p] {
				t.Errorf("%s: no operation %s of its records", name, p)
			}
		}
	}
}

// The MCP tools are the registry's: each named once, each an operation of
// the OpenAPI document, and each kind with MCP set — companies as every
// other — has a tool for each of its generic operations (create, list,
// search, get, update, delete, upsert, batch) it has.
func TestTheMCPToolsAreTheRegistrysOwn(t *testing.T) {
	t.Parallel()
	offer := api.MCP()
	names := map[string]bool{}
	for _, tool := range offer.Tools {
		if names[tool.Name] {
			t.Errorf("tool %s declared twice", tool.Name)
		}
		names[tool.Name] = true
	}
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &spec); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, ops := range spec.Paths {
		for _, op := range ops {
			ids[op.OperationID] = true
		}
	}
	for _, tool := range offer.Tools {
		if !ids[tool.OperationID] {
			t.Errorf("tool %s calls %s, which the document does not have", tool.Name, tool.OperationID)
		}
	}
	tools := map[string]string{} // the tool of each route, by pattern ("" for none)
	for _, r := range api.Routes() {
		tools[r.Pattern()] = ""
		if r.Tool != nil {
			tools[r.Pattern()] = r.Tool.Name
		}
	}
	snake := strings.NewReplacer(" ", "_", "-", "_")
	for _, d := range append([]*resource.Def{co.Def, workflows.Def, runs.Def}, resources.All()...) {
		if !d.MCP {
			continue
		}
		base, item, one := "/v1/"+d.Name, "/v1/"+d.Name+"/{id}", snake.Replace(d.Singular)
		want := map[string]string{"POST " + base: "create_" + one, "POST " + base + "/query": "list_" + snake.Replace(d.Name),
			"POST " + base + "/search": "search_" + d.Name, "GET " + item: "get_" + one, "PUT " + item: "update_" + one,
			"DELETE " + item: "delete_" + one, "PUT " + base: "upsert_" + one, "POST " + base + "/batch": "batch_" + snake.Replace(d.Name)}
		for pattern, tool := range want {
			if got, ok := tools[pattern]; ok && got != tool {
				t.Errorf("%s: %s is the tool %q, want %s", d.Name, pattern, got, tool)
			}
		}
		for _, pattern := range []string{"POST " + base + "/query", "GET " + item} {
			if tools[pattern] == "" {
				t.Errorf("%s: no tool reads it (%s)", d.Name, pattern)
			}
		}
		if !slices.Contains(offer.Records, d.Name) {
			t.Errorf("the MCP server's instructions do not name %s", d.Name)
		}
	}
	for _, tool := range []string{"list_companies", "create_company", "update_company", "delete_company"} {
		if !names[tool] {
			t.Errorf("no tool %s", tool)
		}
	}
}

func TestOnlyVersionedRoutesButTheOpenAPIDocumentNeedAnAPIKeyAndEveryRouteHasAFunction(t *testing.T) {
	t.Parallel()
	groups := map[string]bool{}
	for _, g := range routes.Served {
		groups[g] = true
	}
	for _, r := range api.Routes() {
		if !groups[r.Function] {
			t.Errorf("%s: unknown function %q", r.Pattern(), r.Function)
		}
		if want := strings.HasPrefix(r.Path, "/v1/") && r.Path != routes.OpenAPIPath; r.Authenticated() != want {
			t.Errorf("%s: Authenticated() = %v", r.Pattern(), r.Authenticated())
		}
		if (r.Function == lambdas.Webhook) != strings.HasPrefix(r.Path, "/webhooks/") {
			t.Errorf("%s: webhook paths belong to the webhook function, and only they", r.Pattern())
		}
	}
}

func TestEveryDeclaredFunctionHasItsMainPackageAndEveryMainPackageIsDeclared(t *testing.T) {
	t.Parallel()
	declared := map[string]bool{}
	for _, f := range routes.Functions {
		declared[f.Name] = true
		if _, err := os.Stat("../../functions/" + f.Name + "/main.go"); err != nil {
			t.Errorf("function %s has no functions/%s/main.go: %v", f.Name, f.Name, err)
		}
		if n := len(routes.Of(api.Routes(), f.Name)); (n > 0) != (f.Reach == routes.ByAPI || f.Reach == routes.ByURL) {
			t.Errorf("function %s is reached %s but has %d routes", f.Name, f.Reach, n)
		}
	}
	fallbacks := 0
	for _, f := range routes.Functions {
		if f.Fallback {
			fallbacks++
			if f.Reach != routes.ByAPI {
				t.Errorf("the fallback %s is not reached by the HTTP API", f.Name)
			}
		}
	}
	if fallbacks != 1 {
		t.Errorf("%d functions serve the HTTP API's $default route, want exactly 1", fallbacks)
	}
	dirs, err := os.ReadDir("../../functions")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue // functions/*_test.go: the bootstraps' tests
		}
		if !declared[d.Name()] {
			t.Errorf("functions/%s is not declared in routes.Functions", d.Name())
		}
	}
}

func TestTableAccessFollowsTheRoutes(t *testing.T) {
	t.Parallel()
	rs := api.Routes()
	for _, f := range routes.Functions {
		access := f.Access(rs)
		if f.Reach == routes.ByStream && len(f.Table) == 0 {
			// The indexer reads the stream only; the events function also
			// reads deletion markers and endpoints and writes events (its
			// Table).
			if len(access) != 0 {
				t.Errorf("%s reads the table's stream, not the table, but has %v", f.Name, access)
			}
			continue
		}
		if !slices.Contains(access, store.Read) {
			t.Errorf("%s cannot read the table: %v", f.Name, access)
		}
		for _, r := range routes.Of(rs, f.Name) {
			if r.Method != "GET" && !r.ReadOnly && !slices.Contains(access, store.Write) {
				t.Errorf("%s serves %s but cannot write: %v", f.Name, r.Pattern(), access)
			}
		}
		if slices.Contains(access, store.Manage) {
			t.Errorf("%s may create tables: only the operator CLI does", f.Name)
		}
	}
	keys, _ := routes.FunctionNamed(lambdas.Keys)
	if !slices.Contains(keys.Access(rs), store.Describe) {
		t.Errorf("the keys function serves the health check but cannot describe the table")
	}
	if got, _ := routes.FunctionNamed(lambdas.Search); !slices.Equal(got.Access(rs), []store.Access{store.Read, store.Count, store.Vectors}) {
		t.Errorf("the search function needs only to read the table, count requests and put the records' vectors, has %v", got.Access(rs))
	}
	companies, _ := routes.FunctionNamed(lambdas.Companies)
	if slices.Contains(companies.Access(rs), store.Describe) {
		t.Errorf("the companies function may describe the table without needing to")
	}
}

func TestNoTwoRoutesShareAPattern(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range api.Routes() {
		if seen[r.Pattern()] {
			t.Errorf("%s is routed twice", r.Pattern())
		}
		seen[r.Pattern()] = true
	}
}

// TestTheEventsOfAKindAreAdminOnlyAsItsListRouteIs holds the event
// catalog's admin-only kinds (history.Kind.AdminOnly, which GET /v1/events
// hides from member keys) to the route table: a kind whose list route is
// admin-only has admin-only events with the same action, and no other.
func TestTheEventsOfAKindAreAdminOnlyAsItsListRouteIs(t *testing.T) {
	listAdmin := map[string]string{}
	for _, r := range api.Routes() {
		if r.Method == http.MethodGet {
			listAdmin[r.Path] = r.Admin
		}
	}
	hidden := eventsapi.AdminOnly()
	for _, k := range kinds.Events().Kinds() {
		if got, want := hidden[k.Name], listAdmin["/v1/"+k.Resource]; got != want {
			t.Errorf("the events of %s are admin-only for %q; GET /v1/%s is admin-only for %q", k.Name, got, k.Resource, want)
		}
	}
	if len(hidden) < 2 {
		t.Errorf("admin-only event types %v: the API keys' and the webhook endpoints' are", hidden)
	}
}
