package routes_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestFunctionsHaveUniqueNamesADocAndAReach(t *testing.T) {
	seen := map[string]bool{}
	fallbacks := 0
	for _, f := range routes.Functions {
		if f.Name == "" || seen[f.Name] {
			t.Errorf("function %q is unnamed or declared twice", f.Name)
		}
		seen[f.Name] = true
		if f.Doc == "" {
			t.Errorf("function %s has no doc", f.Name)
		}
		switch f.Reach {
		case routes.ByAPI, routes.ByURL, routes.ByStateMachine, routes.ByOperator, routes.ByStream, routes.ByQueue:
		default:
			t.Errorf("function %s is reached by %q", f.Name, f.Reach)
		}
		if f.Fallback {
			fallbacks++
			if f.Reach != routes.ByAPI {
				t.Errorf("the fallback function %s is not reached by the API", f.Name)
			}
		}
		if got, ok := routes.FunctionNamed(f.Name); !ok || got.Name != f.Name {
			t.Errorf("FunctionNamed(%s): %v", f.Name, ok)
		}
	}
	if fallbacks != 1 {
		t.Errorf("%d functions serve the $default route, want 1", fallbacks)
	}
	if _, ok := routes.FunctionNamed("nope"); ok {
		t.Error("FunctionNamed found an undeclared function")
	}
}

func TestGroupsAreTheFunctionsRoutesReach(t *testing.T) {
	var want []string
	for _, f := range routes.Functions {
		if f.Reach == routes.ByAPI || f.Reach == routes.ByURL {
			want = append(want, f.Name)
		}
	}
	if !slices.Equal(routes.Served, want) {
		t.Errorf("Groups %v, want %v", routes.Served, want)
	}
	for _, g := range []string{lambdas.Companies, lambdas.Keys, lambdas.Workflows, lambdas.Webhook, lambdas.Catalog, lambdas.CRM,
		lambdas.Documents, lambdas.Scoring, lambdas.Search, lambdas.Data, lambdas.MCP} {
		if !slices.Contains(routes.Served, g) {
			t.Errorf("the group constant %q names no function reached by a route", g)
		}
	}
}

func TestEveryRoutesGroupIsAFunctionReachedByRoutesAndEachSuchFunctionHasRoutes(t *testing.T) {
	table := api.Routes()
	served := map[string]int{}
	for _, r := range table {
		f, ok := routes.FunctionNamed(r.Function)
		if !ok {
			t.Errorf("%s: group %q is no function", r.Pattern(), r.Function)
			continue
		}
		if f.Reach != routes.ByAPI && f.Reach != routes.ByURL {
			t.Errorf("%s: served by %s, which is reached by %s", r.Pattern(), f.Name, f.Reach)
		}
		if (f.Reach == routes.ByURL) != strings.HasPrefix(r.Path, "/webhooks/") {
			t.Errorf("%s: served by %s (%s)", r.Pattern(), f.Name, f.Reach)
		}
		served[r.Function]++
	}
	for _, g := range routes.Served {
		if served[g] == 0 {
			t.Errorf("the group %s serves no route", g)
		}
	}
	// The health check belongs to the fallback's function, which answers
	// what no route matches.
	for _, r := range table {
		if r.Path == routes.HealthPath {
			if f, _ := routes.FunctionNamed(r.Function); !f.Fallback {
				t.Errorf("the health check is served by %s", r.Function)
			}
		}
	}
	if len(routes.Of(table)) != len(table) {
		t.Error("Of with no group is not every route")
	}
	for _, r := range routes.Of(table, lambdas.Search, lambdas.MCP) {
		if r.Function != lambdas.Search && r.Function != lambdas.MCP {
			t.Errorf("Of(search, mcp) holds %s of %s", r.Pattern(), r.Function)
		}
	}
}

func TestAuthenticatedIsEveryV1RouteButTheDocument(t *testing.T) {
	for path, want := range map[string]bool{
		"/v1/companies": true, "/v1/companies/{id}": true, routes.OpenAPIPath: false, routes.HealthPath: false,
		routes.MCPPath: false, "/webhooks/workflows/{slug}": false, "/v1": false, "/v10/x": false,
	} {
		if got := (routes.Route{Method: "GET", Path: path}).Authenticated(); got != want {
			t.Errorf("Authenticated(%s) = %v", path, got)
		}
	}
	if p := (routes.Route{Method: "POST", Path: "/v1/x/{id}"}).Pattern(); p != "POST /v1/x/{id}" {
		t.Errorf("Pattern: %q", p)
	}
}

func TestBuildsAreEachFunctionOnceAndTheOpenSearchBuildsOfThoseWithEngineBuilds(t *testing.T) {
	builds := routes.Builds()
	assets := map[string]bool{}
	for _, b := range builds {
		if assets[b.Asset] {
			t.Errorf("asset %s is built twice", b.Asset)
		}
		assets[b.Asset] = true
		name := strings.TrimPrefix(b.Package, "./functions/")
		f, ok := routes.FunctionNamed(name)
		if !ok {
			t.Errorf("build %s of package %s: no such function", b.Asset, b.Package)
			continue
		}
		openSearch := slices.Contains(b.Tags, routes.OpenSearchTag)
		if b.Asset != f.Asset(openSearch) || openSearch && !f.EngineBuilds || len(b.Tags) > 1 {
			t.Errorf("build %+v of %s", b, f.Name)
		}
		// The package is there to build.
		if _, err := os.Stat(filepath.Join("..", "..", b.Package, "main.go")); err != nil {
			t.Errorf("build %s: %v", b.Asset, err)
		}
	}
	for _, f := range routes.Functions {
		if !assets[f.Asset(false)] {
			t.Errorf("function %s has no default build", f.Name)
		}
		if f.EngineBuilds != assets[f.Name+"-opensearch"] {
			t.Errorf("function %s: EngineBuilds %v, OpenSearch build %v", f.Name, f.EngineBuilds, assets[f.Name+"-opensearch"])
		}
		if !f.EngineBuilds && f.Asset(true) != f.Name {
			t.Errorf("%s's OpenSearch asset is %s", f.Name, f.Asset(true))
		}
	}
}

func TestDeployedLeavesOutTheOpenSearchOnlyFunctionsWithoutOpenSearch(t *testing.T) {
	with, without := routes.Deployed(true), routes.Deployed(false)
	if len(with) != len(routes.Functions) {
		t.Errorf("with OpenSearch %d of %d functions", len(with), len(routes.Functions))
	}
	for _, f := range routes.Functions {
		in := slices.ContainsFunc(without, func(g routes.Function) bool { return g.Name == f.Name })
		if in == f.OpenSearchOnly {
			t.Errorf("without OpenSearch, %s deployed: %v (OpenSearchOnly %v)", f.Name, in, f.OpenSearchOnly)
		}
	}
}

func TestAccessFollowsTheRoutes(t *testing.T) {
	rs := []routes.Route{
		{Function: "reader", Method: "GET", Path: "/v1/things", Rate: routes.RateKey},
		{Function: "searcher", Method: "GET", Path: "/v1/things", Rate: routes.RateKey},
		{Function: "searcher", Method: "POST", Path: "/v1/things/search", ReadOnly: true, Rate: routes.RateKey},
		{Function: "writer", Method: "GET", Path: "/v1/things", Rate: routes.RateKey},
		{Function: "writer", Method: "DELETE", Path: "/v1/things/{id}", Rate: routes.RateKey},
		{Function: "health", Method: "GET", Path: routes.HealthPath, Rate: routes.RateNone},
		{Function: lambdas.Webhook, Method: "POST", Path: "/webhooks/x/{slug}", Rate: routes.RateDelivery},
	}
	for _, c := range []struct {
		f    routes.Function
		want []store.Access
	}{
		// A read with a rate scope counts requests (rate limits).
		{routes.Function{Name: "reader"}, []store.Access{store.Read, store.Count}},
		{routes.Function{Name: "searcher"}, []store.Access{store.Read, store.Count}},
		// Writing includes counting.
		{routes.Function{Name: "writer"}, []store.Access{store.Read, store.Write}},
		{routes.Function{Name: "health"}, []store.Access{store.Read, store.Describe}},
		{routes.Function{Name: lambdas.Webhook}, []store.Access{store.Read, store.Write}},
		// A function without routes has what it declares.
		{routes.Function{Name: "runner", Table: []store.Access{store.Write, store.Read}}, []store.Access{store.Read, store.Write}},
		{routes.Function{Name: "idle"}, nil},
	} {
		if got := c.f.Access(rs); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.f.Name, got, c.want)
		}
	}
}

func TestAFunctionsDocNamesTheResourcesItsRoutesServe(t *testing.T) {
	f := routes.Function{Name: "g", Doc: "search of %s (engine)"}
	table := []routes.Route{{Function: "g", Resource: "deals"}, {Function: "h", Resource: "teams"}, {Function: "g"},
		{Function: "g", Resource: "people"}, {Function: "g", Resource: "deals"}, {Function: "g", Resource: "funds"}}
	if got, want := f.Describe(table), "search of deals, people and funds (engine)"; got != want {
		t.Errorf("Describe: %q, want %q", got, want)
	}
	if got := (routes.Function{Name: "g", Doc: "%s"}).Describe(table[:1]); got != "deals" {
		t.Errorf("one resource: %q", got)
	}
	// Every function's doc, once the route table fills it in, says something.
	table = api.Routes()
	for _, f := range routes.Functions {
		if d := f.Describe(table); strings.TrimSpace(strings.ReplaceAll(d, "scoring", "")) == "" || strings.Contains(d, "%s") {
			t.Errorf("function %s: doc %q", f.Name, d)
		}
	}
}

// Check refuses the declarations that contradict each other or what the
// router does with their paths.
func TestCheckRefusesContradictoryPolicies(t *testing.T) {
	ok := routes.Route{Function: "f", Method: "GET", Path: "/v1/things", Rate: routes.RateKey, Answer: routes.AnswerPaged}
	if err := ok.Check(); err != nil {
		t.Fatalf("a sound route: %v", err)
	}
	for name, change := range map[string]func(*routes.Route){
		"no function":                      func(r *routes.Route) { r.Function = "" },
		"a /v1 route not counted":          func(r *routes.Route) { r.Rate = routes.RateNone },
		"a public route counted by key":    func(r *routes.Route) { r.Path = "/public" },
		"an unknown scope":                 func(r *routes.Route) { r.Path, r.Rate = "/public", "weekly" },
		"a GET keeping Idempotency-Keys":   func(r *routes.Route) { r.Idempotent = true },
		"a POST that writes, not kept":     func(r *routes.Route) { r.Method = "POST" },
		"a read-only POST kept":            func(r *routes.Route) { r.Method, r.ReadOnly, r.Idempotent = "POST", true, true },
		"a public admin-only route":        func(r *routes.Route) { r.Path, r.Rate, r.Admin = "/public", routes.RateNone, "x" },
		"a read-only GET":                  func(r *routes.Route) { r.ReadOnly = true },
		"no answer bound":                  func(r *routes.Route) { r.Answer = "" },
		"a delete with a body":             func(r *routes.Route) { r.Method = "DELETE" },
		"a tool without a name":            func(r *routes.Route) { r.Tool = &routes.Tool{} },
		"the OpenAPI document, key-scoped": func(r *routes.Route) { r.Path = routes.OpenAPIPath },
	} {
		r := ok
		change(&r)
		if err := r.Check(); err == nil {
			t.Errorf("%s: Check accepted %+v", name, r)
		}
	}
	post := routes.Route{Function: "f", Method: "POST", Path: "/v1/things", Rate: routes.RateKey, Answer: routes.AnswerRecord, Idempotent: true}
	search := routes.Route{Function: "f", Method: "POST", Path: "/v1/things/search", Rate: routes.RateKey, Answer: routes.AnswerSearch, ReadOnly: true}
	hook := routes.Route{Function: "f", Method: "POST", Path: "/hooks/{slug}", Rate: routes.RateDelivery, Answer: routes.AnswerRecord}
	for _, r := range []routes.Route{post, search, hook} {
		if err := r.Check(); err != nil {
			t.Errorf("%s: %v", r.Pattern(), err)
		}
	}
}

// Every route is listed in the reference under one of its topics (the
// hand-written routes.Topics and one per kind of record, kinds.Topics), and
// every topic lists a route; topic names are unique and each has a title
// and a section (its description is checked in the OpenAPI document).
func TestEveryRouteIsInOneTopicAndEveryTopicHasARoute(t *testing.T) {
	topics, err := kinds.Topics()
	if err != nil {
		t.Fatal(err)
	}
	if err := routes.CheckTopics(topics, api.Routes()); err != nil {
		t.Error(err)
	}
	seen := map[string]bool{}
	for _, tp := range topics {
		if seen[tp.Name] {
			t.Errorf("topic %q listed twice", tp.Name)
		}
		seen[tp.Name] = true
		if tp.Title == "" || tp.Section == "" || tp.About == "" {
			t.Errorf("topic %q lacks a title, a section or a description: %+v", tp.Name, tp)
		}
	}
	for _, name := range []string{"deals", "frameworks", "workflow-runs", "enrichment", "mcp"} {
		if !seen[name] {
			t.Errorf("no topic %q", name)
		}
	}
}

// A kind of record's topic comes from its declaration: a new one is listed
// at the end of its section with its name capitalized, and the errors of a
// topic or a route that does not fit name the file to change and what to
// add there.
func TestAKindOfRecordsTopicComesFromItsDeclaration(t *testing.T) {
	all, err := kinds.Topics()
	if err != nil {
		t.Fatal(err)
	}
	var declared []routes.Topic // the kinds of record's topics, in the order of their declarations
	for _, d := range kinds.All() {
		i := slices.IndexFunc(all, func(tp routes.Topic) bool { return tp.Name == d.Name })
		if i < 0 || all[i].Declared == "" || all[i].Declared == routes.TopicsFile {
			t.Fatalf("%s: no topic from its declaration", d.Name)
		}
		declared = append(declared, all[i])
	}
	for name, want := range map[string][3]string{ // title, section, file
		"frameworks":    {"Scoring frameworks", "Scoring", "internal/resources/scoring.go"}, // its declaration's Title
		"workflow-runs": {"Workflow runs", "Workflows", `the resource.Def of "workflow-runs"`},
		"deals":         {"Deals", "Records", "internal/resources/crm.go"}, // the default section
	} {
		i := slices.IndexFunc(declared, func(tp routes.Topic) bool { return tp.Name == name })
		if got := declared[i]; got.Title != want[0] || got.Section != want[1] || got.Declared != want[2] {
			t.Errorf("%s's topic: %+v, want %v", name, got, want)
		}
	}
	pledges := routes.Topic{Name: "test-pledges", Title: "Test pledges", About: "a pledge", Section: "Records", Declared: "internal/resources/pledges.go"}
	got, err := routes.Reference(append(slices.Clone(declared), pledges))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tp := range got {
		names = append(names, tp.Name)
	}
	records := slices.Index(names, "industries") // the first of the next section
	if records < 1 || names[records-1] != "test-pledges" || slices.Index(names, "companies") != 0 {
		t.Errorf("the reference's topics: %v, want test-pledges at the end of the records", names)
	}

	for name, c := range map[string]struct {
		kind routes.Topic
		want []string
	}{
		"an unknown section": {routes.Topic{Name: "test-pledges", Title: "Pledges", Section: "Investing", Declared: "internal/resources/pledges.go"},
			[]string{"internal/resources/pledges.go", `section "Investing"`, "Section", routes.TopicsFile, "routes.Sections"}},
		"a hand-written topic's name": {routes.Topic{Name: "keys", Title: "Keys", Section: "Records", Declared: "internal/resources/keys.go"},
			[]string{"internal/resources/keys.go", routes.TopicsFile, `topic "keys" is declared twice`}},
	} {
		_, err := routes.Reference(append(slices.Clone(declared), c.kind))
		for _, want := range c.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want it to say %q", name, err, want)
			}
		}
	}
	_, err = routes.Reference(declared[1:])
	if want := `lists "companies" first under "Records", which is no kind of record`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("without companies: %v, want %q", err, want)
	}

	rs := []routes.Route{
		{Method: "GET", Path: "/v1/test-pledges", Resource: "test-pledges"},
		{Method: "GET", Path: "/v1/data/things", Topic: "things"},
		{Method: "GET", Path: "/v1/other"},
	}
	for _, tp := range all {
		if tp.Name != "enrichment" {
			rs = append(rs, routes.Route{Method: "GET", Path: "/v1/" + tp.Name, Topic: tp.Name})
		}
	}
	err = routes.CheckTopics(all, rs)
	for _, want := range []string{
		`GET /v1/test-pledges serves "test-pledges"`, "declare it",
		`GET /v1/data/things is listed under topic "things"`, `add {Name: "things"`, "to routes.Topics in " + routes.TopicsFile,
		"GET /v1/other serves no kind of record",
		`topic "enrichment" (` + routes.TopicsFile + ") lists no route",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckTopics: %v\nwant it to say %q", err, want)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 4 {
		t.Errorf("CheckTopics: %d errors, want 4:\n%v", n, err)
	}
}

// docs/architecture.md's table of functions names every function, each
// with its directory under functions/.
func TestTheArchitecturePageNamesEveryFunction(t *testing.T) {
	page, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(string(page), "\n## Functions\n")
	list, _, _ = strings.Cut(list, "\n## ")
	if list == "" {
		t.Fatal("docs/architecture.md no longer lists the functions (a \"## Functions\" section)")
	}
	for _, f := range routes.Functions {
		if !strings.Contains(list, "| `"+f.Name+"` |") {
			t.Errorf("docs/architecture.md's table of functions omits %s", f.Name)
		}
		if _, err := os.Stat("../../functions/" + f.Name + "/main.go"); err != nil {
			t.Errorf("function %s: %v", f.Name, err)
		}
	}
}
