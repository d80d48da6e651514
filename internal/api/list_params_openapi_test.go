package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sourcebase/sourcebase/internal/api"
	companydef "github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/listing"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// The OpenAPI document declares each generic list's filter, sort, fields,
// expand and X-Query-Plan typed from the list's schema, in forms the
// contract checker (kin-openapi) decodes and validates, and the lists
// take exactly what it declares.

// listContract runs a list request and a 200 answer of body through the
// contract checker; it returns what the checker refuses.
func listContract(target string, header http.Header, body string) error {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	res := http.Header{"Content-Type": {"application/json"}, "X-Query-Plan": {"index:deals.companyId+filter"}}
	return apitest.Contract(req, nil, http.StatusOK, res, []byte(body))
}

func TestTheDocumentValidatesTheFormsOfAListsFiltersSortFieldsAndExpand(t *testing.T) {
	t.Parallel()
	plan := http.Header{"X-Query-Plan": {"index:deals.companyId"}}
	for _, q := range []string{
		"/v1/companies?filter[sector]=Robotics&filter[employeeCount][gte]=50&filter[tags][in]=ai,robotics&filter[website][exists]=true&sort=sector,-employeeCount&fields=canonicalName",
		"/v1/companies?filter[sector][ne]=&filter[tags]=ai&filter[tags][contains]=ai&filter[canonicalName][startsWith]=ac&filter[location.city]=Paris&sort=-canonicalName&direction=asc",
		"/v1/companies?filter[createdAt][gte]=2026-01-01T00:00:00.000Z&filter[companyType][in]=operating,investor&filter[employeeCount]=7&fields=canonicalName,website,tags",
		"/v1/deals?filter[status]=open&filter[amount][gte]=12.5&filter[amount][in]=5,1e3&filter[closeDate][lt]=2026-02-28&filter[closeDate][in]=2025-01-01,2026-02-28&sort=status,-amount,closeDate&fields=name&expand=companyId",
		"/v1/deals?companyId=cmp_1&limit=10&cursor=abc&sort=name&direction=desc",
		"/v1/workflow-runs?filter[dryRun]=true&sort=-createdAt",
		// A field's value and its operators at once (the contract checker
		// reads the value as eq: see apitest.Contract).
		"/v1/companies?filter[employeeCount]=5&filter[employeeCount][gte]=5&filter[employeeCount][eq]=5",
	} {
		if err := listContract(q, plan, `{"data": []}`); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	// What kin-openapi can check, the document refuses: a value of another
	// type, an enum's other value, a name that is not a field. (Unknown
	// filter fields and operators it drops before validating, and a list
	// without expandable fields declares no expand: see openapi_lists.go.)
	for _, q := range []string{
		"/v1/companies?filter[employeeCount]=many",
		"/v1/companies?filter[createdAt][gte]=yesterday",
		"/v1/companies?filter[companyType]=bank",
		"/v1/companies?filter[companyType][in]=operating,bank",
		"/v1/deals?filter[amount][in]=5,x",
		"/v1/deals?filter[closeDate][gt]=2025-13-01",
		"/v1/deals?filter[closeDate]=soon",
		"/v1/companies?sort=nope",
		"/v1/companies?sort=a,b,c,d",
		"/v1/companies?sort=tags",
		"/v1/companies?fields=canonicalName,nope",
		"/v1/deals?expand=name",
	} {
		if err := listContract(q, nil, `{"data": []}`); err == nil || !strings.Contains(err.Error(), "the request") {
			t.Errorf("%s: the checker accepted it (%v)", q, err)
		}
	}
	// A listed record has its id and the fields asked, and the records
	// its expand names.
	for body, ok := range map[string]bool{
		`{"data": [{"id": "deal_1", "name": "A", "expanded": {"companyId": null}}]}`: true,
		`{"data": [{"id": "deal_1", "expanded": {"companyId": {"id": "cmp_1"}}}]}`:   false, // not a whole company
		`{"data": [{"name": "A"}]}`:                                     false,
		`{"data": [{"id": "deal_1", "expanded": {"name": null}}]}`:      false,
		`{"data": [{"id": "deal_1", "unknown": 1}]}`:                    false,
		`{"data": [{"id": "deal_1", "amount": 5, "tags": ["a"]}]}`:      true,
		`{"data": [{"id": "deal_1", "amount": "five", "tags": ["a"]}]}`: false,
	} {
		if err := listContract("/v1/deals?fields=name&expand=companyId", nil, body); (err == nil) != ok {
			t.Errorf("the answer %s: %v", body, err)
		}
	}
}

// listDefs are the kinds with a generic list, by path.
func listDefs() map[string]*resource.Def {
	out := map[string]*resource.Def{}
	for _, d := range append([]*resource.Def{companydef.Def, workflows.Def, runs.Def}, resources.All()...) {
		out["/v1/"+d.Name] = d
	}
	return out
}

// listParams are the query parameters the document declares for GET
// path, the filter's properties with the components they refer to.
func listParams(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b, err := api.StrictOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []map[string]any `json:"parameters"`
		} `json:"paths"`
		Components struct {
			Schemas    map[string]any            `json:"schemas"`
			Parameters map[string]map[string]any `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, p := range doc.Paths[path]["get"].Parameters {
		if ref, ok := p["$ref"].(string); ok { // a header many lists declare alike
			p = doc.Components.Parameters[strings.TrimPrefix(ref, "#/components/parameters/")]
		}
		if name, ok := p["name"].(string); ok {
			out[name] = p
		}
	}
	resolve := func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			return doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return s
	}
	out["filter"]["schema"] = resolve(schemaAt(out["filter"], "schema"))
	props := schemaAt(out["filter"], "schema", "properties")
	for name, prop := range props {
		if ref, ok := prop.(map[string]any)["$ref"].(string); ok {
			props[name] = doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		}
	}
	return out
}

// schemaAt walks a decoded schema by keys.
func schemaAt(v any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	return m
}

func strs(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// The document's operators, sort keys, fields and expansions are those
// the list parser takes, field by field.
func TestEveryListParameterTheDocumentDeclaresIsOneTheListTakes(t *testing.T) {
	t.Parallel()
	for path, d := range listDefs() {
		params := listParams(t, path)
		if params["filter"]["style"] != "deepObject" || params["filter"]["explode"] != true {
			t.Errorf("%s: the filter parameter %v", path, params["filter"])
			continue
		}
		schema := listing.Schema(d)
		props := schemaAt(params["filter"], "schema", "properties")
		var sortable []string
		for _, f := range schema.Fields {
			if f.Sortable {
				sortable = append(sortable, f.Name, "-"+f.Name)
			}
			prop := schemaAt(props, f.Name)
			if prop == nil {
				t.Errorf("%s: no filter on %s", path, f.Name)
				continue
			}
			branches, _ := prop["anyOf"].([]any)
			if len(branches) != 2 || schemaAt(branches[0])["type"] == nil {
				t.Errorf("%s: filter[%s] is not a typed value or an object of operators: %v", path, f.Name, prop)
				continue
			}
			var declared []string
			for op := range schemaAt(branches[1], "properties") {
				declared = append(declared, op)
			}
			sort.Strings(declared)
			var takes []string
			for _, op := range search.Ops {
				if _, err := search.ParseCondition(schema, "p", f.Name, op, conditionValue(f.Type, op)); err == nil {
					takes = append(takes, string(op))
				}
			}
			sort.Strings(takes)
			if !slices.Equal(declared, takes) {
				t.Errorf("%s: filter[%s] declares the operators %v; the list takes %v", path, f.Name, declared, takes)
			}
		}
		if len(props) != len(schema.Fields) {
			t.Errorf("%s: %d filterable fields declared, %d in the list's schema", path, len(props), len(schema.Fields))
		}
		if got := strs(schemaAt(params["sort"], "schema", openapi.CommaSeparated, "items")["enum"]); !slices.Equal(got, sortable) {
			t.Errorf("%s: sort keys %v, want %v", path, got, sortable)
		}
		for _, name := range []string{"fields", "expand"} {
			p, ok := params[name]
			if !ok {
				continue
			}
			for _, v := range strs(schemaAt(p, "schema", openapi.CommaSeparated, "items")["enum"]) {
				q := url.Values{name: {v}}
				res := listing.Resource{Def: d, Schema: schema}
				if name == "expand" {
					res.Expandable = []string{v}
					if f, ok := d.Field(v); !ok || f.Kind != resource.Ref && f.Kind != resource.Refs {
						t.Errorf("%s: expand=%s is not a reference field", path, v)
					}
				}
				if _, err := listing.Parse(res, q, httpapi.ParsePage); err != nil {
					t.Errorf("%s: %s=%s: %v", path, name, v, err)
				}
			}
		}
		if _, ok := params["X-Query-Plan"]; !ok {
			t.Errorf("%s: no X-Query-Plan header", path)
		}
	}
}

// conditionValue is a value of a field of type t for op, as a query
// writes it.
func conditionValue(t search.Type, op search.Op) string {
	v := map[search.Type]string{search.Integer: "7", search.Number: "1.5", search.Bool: "true",
		search.Date: "2026-01-31", search.DateTime: "2026-01-31T10:00:00Z"}[t]
	switch {
	case op == search.Exists:
		return "true"
	case v == "":
		v = "a"
	}
	if op == search.In || op == search.Nin {
		return v + "," + v
	}
	return v
}

// docSample is a value the document's schema s allows (a property of a
// filter, or one of its operators).
func docSample(s map[string]any) string {
	if items := schemaAt(s, openapi.CommaSeparated, "items"); items != nil {
		return docSample(items) + "," + docSample(items)
	}
	if e, ok := s["enum"].([]any); ok {
		return e[0].(string)
	}
	switch {
	case s["type"] == "integer":
		return "7"
	case s["type"] == "number":
		return "1.5"
	case s["type"] == "boolean":
		return "true"
	case s["format"] == "date":
		return "2026-01-31"
	case s["format"] == "date-time":
		return "2026-01-31T10:00:00Z"
	}
	return "a"
}

// Every list answers 200 to every form its document declares (each
// request also checked against the document by the client), every
// filterable field with each of its operators.
func TestEveryListAnswersEveryFormItsDocumentDeclares(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range listDefs() {
			if !yield(p) {
				return
			}
		}
	})
	for _, path := range paths {
		params := listParams(t, path)
		props := schemaAt(params["filter"], "schema", "properties")
		var conds []string
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range props {
				if !yield(k) {
					return
				}
			}
		}) {
			branches := props[name].(map[string]any)["anyOf"].([]any)
			conds = append(conds, url.QueryEscape("filter["+name+"]")+"="+url.QueryEscape(docSample(schemaAt(branches[0]))))
			ops := schemaAt(branches[1], "properties")
			for _, op := range slices.Sorted(func(yield func(string) bool) {
				for k := range ops {
					if !yield(k) {
						return
					}
				}
			}) {
				conds = append(conds, url.QueryEscape("filter["+name+"]["+op+"]")+"="+url.QueryEscape(docSample(schemaAt(ops, op))))
			}
		}
		// One condition per field in a request: each field's forms spread
		// over requests of at most MaxFilters conditions.
		var requests [][]string
		for _, cond := range conds {
			field, _, _ := strings.Cut(strings.TrimPrefix(cond, url.QueryEscape("filter[")), url.QueryEscape("]"))
			placed := false
			for i, r := range requests {
				if len(r) < listing.MaxFilters && !slices.ContainsFunc(r, func(c string) bool {
					return strings.HasPrefix(c, url.QueryEscape("filter["+field+"]"))
				}) {
					requests[i], placed = append(r, cond), true
					break
				}
			}
			if !placed {
				requests = append(requests, []string{cond})
			}
		}
		for _, r := range requests {
			c.Do("GET", path+"?"+strings.Join(r, "&"), nil).Want(t, 200)
		}
		keys := strs(schemaAt(params["sort"], "schema", openapi.CommaSeparated, "items")["enum"])
		q := "sort=" + url.QueryEscape(keys[len(keys)-1]+","+keys[len(keys)-4]+","+keys[2])
		q += "&fields=" + url.QueryEscape(strings.Join(strs(schemaAt(params["fields"], "schema", openapi.CommaSeparated, "items")["enum"]), ","))
		if p, ok := params["expand"]; ok {
			q += "&expand=" + url.QueryEscape(strings.Join(strs(schemaAt(p, "schema", openapi.CommaSeparated, "items")["enum"]), ","))
		}
		c.Do("GET", path+"?"+q, nil, "X-Query-Plan", "key").Want(t, 200)
	}
}

// A list tool takes filter as an object and sort, fields and expand as
// arrays: the call reaches the list as its query parameters.
func TestAListToolsFilterObjectIsTheListsFilterParameters(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	s := mcpSession(t, e, c)
	acme := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme Robotics"}))
	for _, d := range []map[string]any{
		{"name": "Seed", "status": "won", "amount": 50, "currency": "USD", "tags": []any{"ai"}, "companyId": acme},
		{"name": "Series A", "status": "won", "amount": 500, "currency": "USD", "tags": []any{"robotics"}, "companyId": acme},
		{"name": "Series B", "status": "won", "amount": 5000, "currency": "USD", "tags": []any{"b2b"}},
		{"name": "Bridge", "status": "open", "amount": 900, "currency": "USD", "tags": []any{"ai"}},
	} {
		c.Do("POST", "/v1/deals", d).Want(t, 201)
	}
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != "list_deals" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		for _, want := range []string{`"filter":{`, `"fields":{`, `"expand":{`, `"sort":{`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("list_deals's input schema has no %s", want)
			}
		}
		if strings.Contains(string(b), `"x-`) || strings.Contains(string(b), `"style"`) {
			t.Errorf("list_deals's input schema keeps the document's serialization: %.500s", b)
		}
	}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_deals", Arguments: json.RawMessage(
		`{"filter": {"status": "won", "amount": {"gte": 100}, "tags": {"in": ["ai", "robotics", "b2b"]}},
		  "sort": [{"field": "amount", "direction": "desc"}], "fields": ["name", "amount"], "expand": ["companyId"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("list_deals: %s", text)
	}
	var got struct {
		Data []map[string]any `json:"data"`
	}
	json.Unmarshal([]byte(text), &got)
	var names []string
	for _, d := range got.Data {
		names = append(names, fmt.Sprint(d["name"]))
		if _, ok := d["status"]; ok {
			t.Errorf("fields=name,amount answered status: %v", d)
		}
	}
	if strings.Join(names, ",") != "Series B,Series A" {
		t.Errorf("list_deals answered %s", text)
	}
	if len(got.Data) == 2 {
		if exp := schemaAt(got.Data[1], "expanded", "companyId"); exp["canonicalName"] != "Acme Robotics" {
			t.Errorf("Series A's company expanded as %v", got.Data[1]["expanded"])
		}
	}
}
