package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// widgets is a declaration with a field of each rule the schemas express.
var widgets = &resource.Def{Name: "widgets", Singular: "widget", Type: "WIDGET", IDPrefix: "wdg", Function: "things",
	Doc: "A widget. It has parts.",
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, Required: true, Doc: "its name"},
		{Name: "kind", Kind: resource.Enum, Values: []string{"a", "b"}, Immutable: true},
		{Name: "size", Kind: resource.Int, Min: ptr(1.0), Max: ptr(10.0)},
		{Name: "score", Kind: resource.Number, ReadOnly: true},
		{Name: "tags", Kind: resource.Strings, MaxItems: 5},
		{Name: "active", Kind: resource.Bool},
		{Name: "site", Kind: resource.URL},
		{Name: "notes", Kind: resource.Text, MaxLen: 500},
		{Name: "parts", Kind: resource.Structs, Fields: []resource.Field{{Name: "label", Kind: resource.String, Required: true}}},
	}}

func ptr[T any](v T) *T { return &v }

// props is a schema's properties.
func props(t *testing.T, s openapi.Schema) map[string]any {
	t.Helper()
	p, ok := s["properties"].(openapi.Schema)
	if !ok {
		t.Fatalf("no properties in %v", s)
	}
	return p
}

// required is a schema's required names.
func required(s openapi.Schema) []string {
	var out []string
	r, _ := s["required"].([]any)
	for _, v := range r {
		out = append(out, v.(string))
	}
	return out
}

// allowsNull reports whether s accepts null.
func allowsNull(s any) bool {
	b, _ := json.Marshal(s)
	return strings.Contains(string(b), `"null"`)
}

func TestACreateBodyIsTheWritableFieldsWithTheRequiredOnesRequired(t *testing.T) {
	t.Parallel()
	s := openapi.Record(widgets, openapi.Create)
	p := props(t, s)
	var names []string
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "active,kind,name,notes,parts,site,size,tags" {
		t.Errorf("create properties: %v (read-only and built-in fields are not sent)", names)
	}
	if r := required(s); !slices.Equal(r, []string{"name"}) {
		t.Errorf("create required: %v", r)
	}
	if s["additionalProperties"] != false {
		t.Error("a create body takes fields the declaration does not name")
	}
	if allowsNull(p["name"]) || !allowsNull(p["size"]) || !allowsNull(p["tags"]) {
		t.Errorf("null: a required field %v, an optional one %v, an array %v", p["name"], p["size"], p["tags"])
	}
	size := p["size"].(openapi.Schema)
	if !strings.Contains(mustJSON(size), `"minimum":1`) || !strings.Contains(mustJSON(size), `"maximum":10`) || !strings.Contains(mustJSON(size), `"integer"`) {
		t.Errorf("size: %v", size)
	}
	for _, c := range [][2]string{{"name", `"maxLength":200`}, {"notes", `"maxLength":500`}, {"site", `"maxLength":2048`},
		{"tags", `"maxItems":5`}, {"kind", `"enum":["a","b"`}, {"site", `"format":"uri"`}} {
		if got := mustJSON(p[c[0]]); !strings.Contains(got, c[1]) {
			t.Errorf("%s: %s lacks %s", c[0], got, c[1])
		}
	}
	// A nested object's required fields are required in it.
	parts := mustJSON(p["parts"])
	if !strings.Contains(parts, `"required":["label"]`) {
		t.Errorf("parts: %s", parts)
	}
}

func TestAnUpdateBodyIsTheMutableFieldsNoneRequired(t *testing.T) {
	t.Parallel()
	s := openapi.Record(widgets, openapi.Update)
	p := props(t, s)
	if _, ok := p["kind"]; ok {
		t.Error("an update body may change an immutable field")
	}
	if _, ok := p["score"]; ok {
		t.Error("an update body may set a read-only field")
	}
	if len(required(s)) != 0 {
		t.Errorf("update required: %v", required(s))
	}
}

func TestABodySchemaAllowsNullExactlyWhereTheDecoderAcceptsIt(t *testing.T) {
	t.Parallel()
	var mismatches []string
	for _, c := range []struct {
		view   openapi.View
		create bool
		base   string
	}{{openapi.Create, true, `"name":"n"`}, {openapi.Update, false, ""}} {
		for name, schema := range props(t, openapi.Record(widgets, c.view)) {
			fields := `"` + name + `":null`
			if c.base != "" && name != "name" {
				fields = c.base + "," + fields
			}
			_, err := widgets.Decode([]byte("{"+fields+"}"), c.create)
			if accepted := err == nil; accepted != allowsNull(schema) {
				mismatches = append(mismatches, fmt.Sprintf("create=%v %s: the schema allows null %v, the decoder answers %v", c.create, name, allowsNull(schema), err))
			}
		}
	}
	sort.Strings(mismatches)
	if len(mismatches) > 0 {
		t.Errorf("a body schema and the decoder disagree on null (a client generated from the document sends "+
			"what the service refuses): %s", strings.Join(mismatches, "; "))
	}
}

func TestARecordIsEveryFieldWithItsIDAndCreationTimeAlwaysThere(t *testing.T) {
	t.Parallel()
	s := openapi.Record(widgets, openapi.Output)
	p := props(t, s)
	for _, f := range widgets.AllFields() {
		if _, ok := p[f.Name]; !ok {
			t.Errorf("the record schema lacks %s", f.Name)
		}
	}
	r := required(s)
	for _, n := range []string{"id", "createdAt"} {
		if !slices.Contains(r, n) || allowsNull(p[n]) {
			t.Errorf("%s: required %v, %v", n, slices.Contains(r, n), p[n])
		}
	}
	if got := mustJSON(p["score"]); !strings.Contains(got, `"readOnly":true`) {
		t.Errorf("a read-only field: %s", got)
	}
	// Arrays and booleans are answered as [] and false, never null;
	// a field without a value is null.
	if allowsNull(p["tags"]) || allowsNull(p["active"]) || !allowsNull(p["size"]) {
		t.Errorf("null: tags %v, active %v, size %v", p["tags"], p["active"], p["size"])
	}
	if s["description"] != "A widget." {
		t.Errorf("description: %v", s["description"])
	}
	if got := mustJSON(p["createdAt"]); !strings.Contains(got, `"date-time"`) {
		t.Errorf("createdAt: %s", got)
	}
}

type inner struct {
	Label string `json:"label"`
}

type Embedded struct {
	Shared string `json:"shared"`
}

type payload struct {
	Embedded
	Name     string            `json:"name" doc:"the name"`
	Count    int64             `json:"count,omitempty"`
	Ratio    float64           `json:"ratio"`
	Big      json.Number       `json:"big"`
	When     clock.Time        `json:"when"`
	Maybe    *string           `json:"maybe"`
	List     []inner           `json:"list"`
	Map      map[string]int    `json:"map"`
	Any      json.RawMessage   `json:"any"`
	Secret   string            `json:"secret" openapi:"-"`
	Skipped  string            `json:"-"`
	Optional map[string]string `json:"optional,omitzero"`
}

func TestTypeOfDescribesWhatEncodingJSONWrites(t *testing.T) {
	t.Parallel()
	s := openapi.TypeOf(reflect.TypeFor[payload]())
	p := props(t, s)
	var names []string
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "any,big,count,list,map,maybe,name,optional,ratio,shared,when" {
		t.Errorf("properties: %v", names)
	}
	r := required(s)
	if slices.Contains(r, "count") || slices.Contains(r, "optional") || !slices.Contains(r, "name") || !slices.Contains(r, "shared") {
		t.Errorf("required: %v (omitempty and omitzero fields may be absent)", r)
	}
	for name, want := range map[string]string{
		"name": `"description":"the name"`, "count": `"integer"`, "ratio": `"number"`, "big": `"number"`,
		"when": `"date-time"`, "list": `"required":["label"]`, "any": `any JSON value`,
	} {
		if got := mustJSON(p[name]); !strings.Contains(got, want) {
			t.Errorf("%s: %s lacks %s", name, got, want)
		}
	}
	// encoding/json writes nil pointers, slices and maps as null.
	for _, n := range []string{"maybe", "list", "map"} {
		if !allowsNull(p[n]) {
			t.Errorf("%s cannot be null: %v", n, p[n])
		}
	}
	if allowsNull(p["name"]) || allowsNull(p["when"]) {
		t.Error("a string or a time can be null")
	}
	// A recursive type has no schema.
	type node struct {
		Next *node `json:"next"`
	}
	defer func() {
		if recover() == nil {
			t.Error("a recursive type got a schema")
		}
	}()
	openapi.TypeOf(reflect.TypeFor[node]())
}

func TestOperationIDsComeFromTheMethodAndPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/v1/companies/{id}", "getCompaniesById"},
		{"POST", "/v1/companies/search", "postCompaniesSearch"},
		{"GET", "/v1/workflow-runs/{id}", "getWorkflowRunsById"},
		{"POST", "/v1/data/metric-series", "postDataMetricSeries"},
		{"GET", "/v1/enrichments/resources/{resourceType}/{resourceId}", "getEnrichmentsResourcesByResourceTypeByResourceId"},
		{"GET", "/healthz", "getHealthz"},
		{"GET", "/v1/openapi.json", "getOpenapiJson"},
	} {
		if got := openapi.OperationID(c.method, c.path); got != c.want {
			t.Errorf("OperationID(%s %s) = %s, want %s", c.method, c.path, got, c.want)
		}
	}
}

// ops are operations of each kind the document describes.
var ops = []openapi.Operation{
	{Method: "GET", Path: "/healthz", Function: "keys", Tag: "service", Summary: "health", Public: true, Status: 200, Data: openapi.Schema{"type": "object"}},
	{Method: "GET", Path: "/v1/widgets", Function: "things", Tag: "widgets", Summary: "list", Status: 200, Data: openapi.Schema{"type": "array", "items": openapi.Ref("Widget")}, Paged: true,
		Query: []openapi.Param{{Name: "limit", Schema: openapi.Schema{"type": "integer"}},
			{Name: "filter", Style: "deepObject", Explode: true, Schema: openapi.Schema{"type": "object", "properties": openapi.Schema{"size": openapi.Schema{"type": "integer"}}}}}},
	{Method: "POST", Path: "/v1/widgets", Function: "things", Tag: "widgets", Summary: "create", Status: 201, Data: openapi.Ref("Widget"), ETag: true,
		Body: openapi.Ref("WidgetCreate"), Idempotent: true, Errors: []int{409}},
	{Method: "GET", Path: "/v1/widgets/{id}", Function: "things", Tag: "widgets", Summary: "get", Status: 200, Data: openapi.Ref("Widget"), ETag: true},
	{Method: "PATCH", Path: "/v1/widgets/{id}", Function: "things", Tag: "widgets", Summary: "update", Status: 200, Data: openapi.Ref("Widget"),
		Body: openapi.Ref("WidgetUpdate"), Preconditioned: true},
	{Method: "DELETE", Path: "/v1/widgets/{id}", Function: "things", Tag: "widgets", Summary: "delete", Status: 204, Preconditioned: true},
	{Method: "POST", Path: "/webhooks/workflows/{slug}", Function: "webhook", Tag: "widgets", Summary: "deliver", Public: true, Status: 202,
		Body: openapi.Schema{"type": "object"}, AnyMedia: true, Data: openapi.Schema{"type": "object"},
		Security: []map[string][]string{{"signature": {}}}},
	{Method: "POST", Path: "/mcp", Function: "mcp", Tag: "mcp", Summary: "mcp", Status: 200, Raw: true, Data: openapi.Schema{"type": "object"},
		Body: openapi.Schema{"type": "object"}, Errors: []int{415}, ErrorBodies: map[int]openapi.Schema{400: {"type": "object", "title": "rpc"}}},
}

func document(t *testing.T, ops []openapi.Operation) ([]byte, map[string]any) {
	t.Helper()
	schemas := map[string]openapi.Schema{
		"Widget":       openapi.Record(widgets, openapi.Output),
		"WidgetCreate": openapi.Record(widgets, openapi.Create),
		"WidgetUpdate": openapi.Record(widgets, openapi.Update),
	}
	security := map[string]openapi.Schema{
		"clientId":  {"type": "apiKey", "in": "header", "name": openapi.HeaderClientID},
		"apiKey":    {"type": "apiKey", "in": "header", "name": openapi.HeaderAPIKey},
		"signature": {"type": "apiKey", "in": "header", "name": "x-signature"},
	}
	b, err := openapi.Document(ops, schemas, security, openapi.Info{Title: "Test", Description: "d", URL: "https://example.com",
		License: "MIT", LicenseID: "MIT", Tags: []openapi.Tag{
			{Name: "widgets", Title: "Widgets", Description: "widgets", Section: "Records"},
			{Name: "service", Title: "Service", Description: "the health check", Section: "Service"},
			{Name: "mcp", Title: "MCP", Description: "agents", Section: "Service"}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return b, doc
}

func TestTheDocumentIsValidOpenAPIAndTheSameWhateverTheOrderOfItsOperations(t *testing.T) {
	t.Parallel()
	b, _ := document(t, ops)
	loaded, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid: %v", err)
	}
	if loaded.OpenAPI != "3.1.0" || loaded.Info.Version != openapi.Version {
		t.Errorf("openapi %s, version %s", loaded.OpenAPI, loaded.Info.Version)
	}
	reversed := slices.Clone(ops)
	slices.Reverse(reversed)
	if again, _ := document(t, reversed); !bytes.Equal(b, again) {
		t.Error("the document depends on the order of its operations")
	}
	if _, err := openapi.Document(append(slices.Clone(ops), ops[1]), nil, nil, openapi.Info{}); err == nil || !strings.Contains(err.Error(), "GET /v1/widgets") {
		t.Errorf("an operation declared twice: %v", err)
	}
}

// operation is the operation object of method and path in doc.
func operation(t *testing.T, doc map[string]any, method, path string) map[string]any {
	t.Helper()
	op, ok := doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	if !ok {
		t.Fatalf("no %s %s", method, path)
	}
	return op
}

// statuses are the statuses an operation answers, sorted.
func statuses(op map[string]any) []int {
	var out []int
	for s := range op["responses"].(map[string]any) {
		n, _ := strconv.Atoi(s)
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

func TestEachOperationAnswersTheErrorsOfWhatItGoesThrough(t *testing.T) {
	t.Parallel()
	_, doc := document(t, ops)
	for _, c := range []struct {
		method, path string
		want         []int
	}{
		// Public: only what can fail everywhere.
		{"GET", "/healthz", []int{200, 500}},
		// Authenticated: credentials (and a suspended organization's
		// 403), rate limits, query parameters, unclean paths, the table.
		{"GET", "/v1/widgets", []int{200, 400, 401, 403, 404, 429, 500, 503}},
		// A JSON body (400, 413, 415), an Idempotency-Key (422), its own 409.
		{"POST", "/v1/widgets", []int{201, 400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503}},
		{"GET", "/v1/widgets/{id}", []int{200, 400, 401, 403, 404, 429, 500, 503}},
		// If-Match (412).
		{"PATCH", "/v1/widgets/{id}", []int{200, 400, 401, 403, 404, 412, 413, 415, 429, 500, 503}},
		{"DELETE", "/v1/widgets/{id}", []int{204, 400, 401, 403, 404, 412, 429, 500, 503}},
		// A webhook: its signature and its rate limit, never a 404 (an
		// unknown slug is a 401).
		{"POST", "/webhooks/workflows/{slug}", []int{202, 400, 401, 403, 413, 429, 500}},
		{"POST", "/mcp", []int{200, 400, 401, 403, 404, 413, 415, 429, 500, 503}},
	} {
		op := operation(t, doc, c.method, c.path)
		if got := statuses(op); !slices.Equal(got, c.want) {
			t.Errorf("%s %s answers %v, want %v", c.method, c.path, got, c.want)
		}
		// Every error response is declared in the components (or given
		// its own body).
		for s, r := range op["responses"].(map[string]any) {
			ref, _ := r.(map[string]any)["$ref"].(string)
			if ref == "" {
				continue
			}
			name := strings.TrimPrefix(ref, "#/components/responses/")
			if _, ok := doc["components"].(map[string]any)["responses"].(map[string]any)[name]; !ok || name != s {
				t.Errorf("%s %s %s refers to %s", c.method, c.path, s, ref)
			}
		}
	}
	// An error body of its own is offered beside the service's.
	rpc := mustJSON(operation(t, doc, "POST", "/mcp")["responses"].(map[string]any)["400"])
	if !strings.Contains(rpc, `"oneOf"`) || !strings.Contains(rpc, `"#/components/schemas/Error"`) || !strings.Contains(rpc, `"rpc"`) {
		t.Errorf("the MCP endpoint's 400: %s", rpc)
	}
}

func TestOperationsDeclareTheirParametersHeadersAndEnvelope(t *testing.T) {
	t.Parallel()
	_, doc := document(t, ops)
	get := operation(t, doc, "GET", "/v1/widgets/{id}")
	if get["operationId"] != "getWidgetsById" || mustJSON(get["tags"]) != `["widgets"]` {
		t.Errorf("get: %v %v", get["operationId"], get["tags"])
	}
	// The widgets' id is a component: three operations declare it alike.
	if p := mustJSON(doc["components"].(map[string]any)["parameters"].(map[string]any)["IdPath"]); !strings.Contains(mustJSON(get["parameters"]), "#/components/parameters/IdPath") || !strings.Contains(p, `"in":"path"`) || !strings.Contains(p, `"name":"id"`) || !strings.Contains(p, `"required":true`) {
		t.Errorf("the path parameter: %s", p)
	}
	ok := get["responses"].(map[string]any)["200"].(map[string]any)
	body := mustJSON(ok["content"])
	if !strings.Contains(body, `"required":["data"]`) || !strings.Contains(body, `"#/components/schemas/Widget"`) {
		t.Errorf("a record is answered in {data}: %s", body)
	}
	hs := mustJSON(ok["headers"])
	for _, h := range []string{"ETag", "X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if !strings.Contains(hs, `"#/components/headers/`+h+`"`) {
			t.Errorf("get answers no %s header: %s", h, hs)
		}
	}
	// A parameter serialized otherwise than by its location's default says how.
	if p := mustJSON(operation(t, doc, "GET", "/v1/widgets")["parameters"]); !strings.Contains(p, `"explode":true,"in":"query","name":"filter"`) ||
		!strings.Contains(p, `"style":"deepObject"`) || strings.Count(p, `"style"`) != 1 {
		t.Errorf("the list's parameters: %s", p)
	}
	list := mustJSON(operation(t, doc, "GET", "/v1/widgets")["responses"].(map[string]any)["200"])
	if !strings.Contains(list, "X-Next-Cursor") || !strings.Contains(list, `"#/components/headers/Link"`) {
		t.Errorf("a paged list's headers: %s", list)
	}
	create := operation(t, doc, "POST", "/v1/widgets")
	if p := mustJSON(create["parameters"]); !strings.Contains(p, "#/components/parameters/IdempotencyKey") {
		t.Errorf("an idempotent create's parameters: %s", p)
	}
	if rb := mustJSON(create["requestBody"]); !strings.Contains(rb, `"required":true`) || !strings.Contains(rb, "WidgetCreate") {
		t.Errorf("the create body: %s", rb)
	}
	if !strings.Contains(mustJSON(create["responses"]), "Idempotent-Replayed") {
		t.Error("an idempotent create does not declare Idempotent-Replayed")
	}
	if p := mustJSON(operation(t, doc, "PATCH", "/v1/widgets/{id}")["parameters"]); !strings.Contains(p, "#/components/parameters/IfMatch") {
		t.Errorf("a preconditioned update's parameters: %s", p)
	}
	// A 204 has no body.
	if _, has := operation(t, doc, "DELETE", "/v1/widgets/{id}")["responses"].(map[string]any)["204"].(map[string]any)["content"]; has {
		t.Error("a 204 declares a body")
	}
	// Public operations need no credentials; the webhook has its own.
	if s := mustJSON(operation(t, doc, "GET", "/healthz")["security"]); s != "[]" {
		t.Errorf("the health check's security: %s", s)
	}
	hook := operation(t, doc, "POST", "/webhooks/workflows/{slug}")
	if s := mustJSON(hook["security"]); s != `[{"signature":[]}]` {
		t.Errorf("the webhook's security: %s", s)
	}
	if hook[openapi.AnyBodyExtension] != true || !strings.Contains(mustJSON(hook["requestBody"]), `"*/*"`) {
		t.Error("the webhook's body is not of any media type")
	}
	// A raw answer has no envelope.
	if body := mustJSON(operation(t, doc, "POST", "/mcp")["responses"].(map[string]any)["200"]); strings.Contains(body, `"data"`) {
		t.Errorf("a raw answer: %s", body)
	}
	// Tags are the groups in the order given, with their titles and
	// descriptions, listed under their sections; an operation names its
	// function apart.
	if tags := mustJSON(doc["tags"]); tags != `[{"description":"widgets","name":"widgets","x-displayName":"Widgets"},{"description":"the health check","name":"service","x-displayName":"Service"},{"description":"agents","name":"mcp","x-displayName":"MCP"}]` {
		t.Errorf("tags: %s", tags)
	}
	if groups := mustJSON(doc["x-tagGroups"]); groups != `[{"name":"Records","tags":["widgets"]},{"name":"Service","tags":["service","mcp"]}]` {
		t.Errorf("tag groups: %s", groups)
	}
	if get := operation(t, doc, "GET", "/v1/widgets/{id}"); mustJSON(get["tags"]) != `["widgets"]` || get["x-function"] != "things" {
		t.Errorf("an operation's tag %v, function %v", get["tags"], get["x-function"])
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Every operation is in one of the document's tags, and every tag has an
// operation: a reference never shows an empty group or hides an operation.
func TestEveryOperationIsInADeclaredTagAndEveryTagHasOne(t *testing.T) {
	op := openapi.Operation{Method: "GET", Path: "/healthz", Function: "keys", Tag: "service", Summary: "health", Public: true, Status: 200, Data: openapi.Schema{"type": "object"}}
	service := openapi.Tag{Name: "service", Title: "Service", Section: "Service"}
	empty := openapi.Tag{Name: "empty", Title: "Empty", Section: "Service"}
	if _, err := openapi.Document([]openapi.Operation{op}, nil, nil, openapi.Info{Tags: []openapi.Tag{service, empty}}); err == nil || !strings.Contains(err.Error(), `"empty" has no operation`) {
		t.Errorf("a tag without an operation: %v", err)
	}
	op.Tag = "elsewhere"
	if _, err := openapi.Document([]openapi.Operation{op}, nil, nil, openapi.Info{Tags: nil}); err == nil || !strings.Contains(err.Error(), `GET /healthz is listed under tag "elsewhere", which is not one of`) {
		t.Errorf("an operation outside the tags: %v", err)
	}
}
