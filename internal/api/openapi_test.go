package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resources"
)

const openAPIFile = "../../docs/openapi.json"

func TestTheCommittedOpenAPIDocumentIsTheOneTheCodeGenerates(t *testing.T) {
	got, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if *updateSearchDocs {
		if err := os.WriteFile(openAPIFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/openapi.json is out of date: make generate")
	}
}

// loadOpenAPI is the generated document, loaded and validated as OpenAPI 3.1.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	b, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	return doc
}

func TestTheOpenAPIDocumentIsValidVersion100AndNamesExactlyTheRouteTable(t *testing.T) {
	doc := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Errorf("openapi %s, info.version %s; want 3.1.0 and 1.0.0", doc.OpenAPI, doc.Info.Version)
	}
	inTable := map[string]bool{}
	for _, rt := range api.Routes() {
		inTable[rt.Method+" "+rt.Path] = true
		item := doc.Paths.Find(rt.Path)
		if item == nil || item.GetOperation(rt.Method) == nil {
			t.Errorf("%s %s of the route table is not in the document", rt.Method, rt.Path)
			continue
		}
		op := item.GetOperation(rt.Method)
		var success, failure bool
		for code, ref := range op.Responses.Map() {
			n, _ := strconv.Atoi(code)
			hasSchema := ref.Value != nil && ref.Value.Content.Get("application/json") != nil
			switch {
			case n >= 200 && n < 300:
				success = true
			case n >= 400 && hasSchema:
				failure = true
			}
		}
		if !success || !failure {
			t.Errorf("%s %s: want a success response and an error response with a schema", rt.Method, rt.Path)
		}
		if rt.Authenticated() && op.Security != nil && len(*op.Security) == 0 {
			t.Errorf("%s %s needs credentials, but the document says it needs none", rt.Method, rt.Path)
		}
	}
	// The read of several records of a resource with MultiGet is an
	// operation of its own, answering an array, served by the route of
	// GET /v1/<name>/{id} (a route matches whole path segments).
	multiGet := map[string]bool{}
	for _, d := range resources.All() {
		if !d.MultiGet {
			continue
		}
		multiGet["GET "+recordsapi.MultiGetPath(d)] = true
		if !inTable["GET /v1/"+d.Name+"/{id}"] {
			t.Errorf("%s has MultiGet but no route GET /v1/%s/{id} to serve it", d.Name, d.Name)
		}
		item := doc.Paths.Find(recordsapi.MultiGetPath(d))
		if item == nil || item.Get == nil {
			t.Errorf("GET %s is not in the document", recordsapi.MultiGetPath(d))
			continue
		}
		data := item.Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Value.Properties["data"].Value
		if !data.Type.Is("array") || data.Items == nil || data.Items.Ref != "#/components/schemas/"+openapi.SchemaName(d) {
			t.Errorf("GET %s answers %v, want an array of %s", recordsapi.MultiGetPath(d), data.Type, openapi.SchemaName(d))
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !inTable[method+" "+path] && !multiGet[method+" "+path] {
				t.Errorf("the document names %s %s, which is not a route", method, path)
			}
		}
	}
	if len(inTable) != len(api.Routes()) {
		t.Errorf("the route table declares a route twice")
	}
}

func TestTheOpenAPIDocumentIsServedWithoutCredentials(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	r := e.Anonymous(t).Do("GET", api.OpenAPIPath, nil).Want(t, http.StatusOK)
	want, _ := api.OpenAPI()
	if !bytes.Equal(r.Body, want) {
		t.Errorf("GET %s answers another document than api.OpenAPI()", api.OpenAPIPath)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	// Only GET: the path is known, other methods are 405 like any route's.
	r = e.Anonymous(t).Do("POST", api.OpenAPIPath, "{}")
	if r.Status != http.StatusMethodNotAllowed || !slices.Contains(r.Header.Values("Allow"), "GET") {
		t.Errorf("POST %s: %d %s, Allow %v; want 405 allowing GET", api.OpenAPIPath, r.Status, r.Body, r.Header.Values("Allow"))
	}
	// Every other /v1 path still needs credentials.
	e.Anonymous(t).Do("GET", "/v1/openapi.yaml", nil).Want(t, http.StatusUnauthorized)
}

func TestTheOpenAPIDocumentPassesSpectralWithoutErrorsOrWarnings(t *testing.T) {
	spectral := "../../node_modules/.bin/spectral"
	if _, err := os.Stat(spectral); err != nil {
		t.Fatalf("Spectral is not installed (%v): run make deps", err)
	}
	testinputs.Files("package-lock.json", "docs/openapi.json", ".spectral.yaml")
	out, err := exec.Command(spectral, "lint", openAPIFile, "--ruleset", "../../.spectral.yaml",
		"--fail-severity", "warn", "--format", "text").CombinedOutput()
	if err != nil {
		t.Errorf("spectral lint docs/openapi.json: %v\n%s", err, out)
	}
}

// The reference groups operations by what a user looks for (one tag per
// kind of record or topic, kinds.Topics), each tag with a title and a
// description and listed under a section; the function serving an
// operation is its x-function.
func TestTheDocumentGroupsOperationsByTopicAndNamesTheirFunctionApart(t *testing.T) {
	b, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tags []struct {
			Name, Description string
			Title             string `json:"x-displayName"`
		}
		Groups []struct {
			Name string
			Tags []string
		} `json:"x-tagGroups"`
		Paths map[string]map[string]struct {
			Tags     []string
			Function string `json:"x-function"`
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	grouped := map[string]bool{}
	for _, g := range doc.Groups {
		for _, tag := range g.Tags {
			grouped[tag] = true
		}
	}
	for _, tag := range doc.Tags {
		if tag.Description == "" || tag.Title == "" || !grouped[tag.Name] {
			t.Errorf("tag %q: title %q, description %q, in a section: %v", tag.Name, tag.Title, tag.Description, grouped[tag.Name])
		}
	}
	functions := map[string]bool{}
	for _, r := range api.Routes() {
		functions[r.Function] = true
	}
	want := map[string]string{"/v1/deals": "deals", "/v1/teams": "teams", "/v1/lists": "lists", "/v1/data/metric-series": "metrics",
		"/v1/enrichments/resources/{resourceType}/{resourceId}": "enrichment", "/v1/companies/search": "companies", "/v1/workflow-runs/{id}": "workflow-runs"}
	for path, item := range doc.Paths {
		for method, op := range item {
			if len(op.Tags) != 1 || !functions[op.Function] {
				t.Errorf("%s %s: tags %v, x-function %q", method, path, op.Tags, op.Function)
			}
			if tag, ok := want[path]; ok && op.Tags[0] != tag {
				t.Errorf("%s %s is listed under %v, not %q", method, path, op.Tags, tag)
			}
		}
	}
}
