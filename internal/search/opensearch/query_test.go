package opensearch_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// notes are the shared test resource.
var notes = searchtest.Notes

// schemaAs is the notes schema under another resource name, for the flag
// rules that depend on the resource.
func schemaAs(resourceName string) *search.Schema {
	s := search.SchemaOf(notes)
	s.Resource = resourceName
	return s
}

// cases are the golden requests: testdata/query-<name>.json is the body
// of each, searched by org1.
var cases = []struct {
	name, resource, query, body string
}{
	{"empty", "notes", "", ``},
	{"paging", "notes", "page=3&limit=25", ``},
	{"text", "notes", "", `{"text":"Acme rocket, the launch"}`},
	{"text-stopwords-only", "notes", "", `{"text":"the of"}`},
	{"text-fulltext", "notes", "", `{"text":"acme rocket","fullText":true}`},
	{"text-fuzzy", "notes", "", `{"text":"ac acme rockets","fuzzy":true}`},
	{"text-fuzzy-fulltext", "notes", "", `{"text":"acme rockets","fuzzy":true,"fullText":true}`},
	{"fuzzy-ignored-by-documents", "documents", "", `{"text":"acme rockets","fuzzy":true}`},
	{"fuzzy-ignored-by-company-hybrid", "companies", "", `{"text":"acme rockets","fuzzy":true,"hybrid":true}`},
	{"fuzzy-used-by-company-keyword", "companies", "", `{"text":"acme rockets","fuzzy":true}`},
	{"fuzzy-ignored-by-activity-fulltext", "activities", "", `{"text":"acme rockets","fuzzy":true,"fullText":true}`},
	{"fuzzy-used-by-activity-without-fulltext", "activities", "", `{"text":"acme rockets","fuzzy":true}`},
	{"fuzzy-used-by-workspaces", "workspaces", "", `{"text":"acme","fuzzy":true,"hybrid":true}`},
	{"eq-every-type", "notes", "", `{"filters":{"and":[
		{"field":"stage","operator":"eq","value":"won"},
		{"field":"name","operator":"eq","value":"Acme"},
		{"field":"size","operator":"eq","value":3},
		{"field":"score","operator":"eq","value":2.5},
		{"field":"isPrivate","operator":"eq","value":false},
		{"field":"closedOn","operator":"eq","value":"2024-05-01"},
		{"field":"createdAt","operator":"eq","value":"2024-05-01T10:00:00+02:00"},
		{"field":"tags","operator":"eq","value":"red"},
		{"field":"location.city","operator":"eq","value":"Oslo"},
		{"field":"contacts.email","operator":"eq","value":"a@b.co"}]}}`},
	{"ne-in-nin", "notes", "", `{"filters":{"and":[
		{"field":"stage","operator":"ne","value":"lost"},
		{"field":"size","operator":"in","value":[1,2,3]},
		{"field":"name","operator":"in","value":["Acme","Globex"]},
		{"field":"tags","operator":"nin","value":["red","blue"]},
		{"field":"closedOn","operator":"nin","value":["2024-01-01"]}]}}`},
	{"ranges", "notes", "", `{"filters":{"and":[
		{"field":"size","operator":"gt","value":1},
		{"field":"size","operator":"lte","value":10},
		{"field":"score","operator":"gte","value":0.5},
		{"field":"score","operator":"lt","value":9.5},
		{"field":"closedOn","operator":"gte","value":"2024-01-01"},
		{"field":"updatedAt","operator":"lt","value":"2024-06-01T00:00:00.123Z"}]}}`},
	{"contains-startswith-exists", "notes", "", `{"filters":{"and":[
		{"field":"name","operator":"contains","value":"Me*Co?"},
		{"field":"source","operator":"startsWith","value":"Web"},
		{"field":"body","operator":"contains","value":"launch"},
		{"field":"tags","operator":"contains","value":"red"},
		{"field":"location.city","operator":"exists","value":true},
		{"field":"score","operator":"exists","value":false}]}}`},
	{"or-only", "notes", "", `{"filters":{"or":[
		{"field":"stage","operator":"eq","value":"won"},
		{"field":"stage","operator":"eq","value":"new"}]}}`},
	{"nested", "notes", "", `{"text":"acme","filters":{"and":[
		{"field":"isPrivate","operator":"eq","value":false},
		{"or":[
			{"field":"stage","operator":"eq","value":"won"},
			{"field":"size","operator":"gt","value":5,"and":[{"field":"tags","operator":"contains","value":"big"}]},
			{"and":[{"field":"source","operator":"exists","value":false},{"or":[{"field":"score","operator":"lt","value":1}]}]}]}],
		"or":[{"field":"name","operator":"startsWith","value":"a"},{"field":"name","operator":"startsWith","value":"b"}]}}`},
	{"sort", "notes", "", `{"text":"acme","sort":[
		{"field":"name","direction":"asc"},{"field":"size","direction":"desc"},{"field":"closedOn"}]}`},
	{"sort-by-id", "notes", "", `{"sort":[{"field":"isPrivate"},{"field":"id","direction":"asc"}]}`},
}

func TestEachGoldenRequestTranslatesToItsGoldenQueryBody(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := translate(t, schemaAs(c.resource), c.query, c.body)
			golden(t, "query-"+c.name+".json", got)
		})
	}
}

func TestEachSearchableResourceHasItsGoldenIndexMapping(t *testing.T) {
	schemas := []*search.Schema{search.SchemaOf(notes)}
	for _, d := range api.Searchable() {
		schemas = append(schemas, search.SchemaOf(d))
	}
	for _, s := range schemas {
		got, err := opensearch.Mapping(s)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "mapping-"+s.Resource+".json", got)
	}
}

func TestEveryGoldenFileIsValidJSON(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) < len(cases)+2 {
		t.Fatalf("only %d golden files", len(files))
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Errorf("%s is not valid JSON", name)
		}
	}
}

func TestEveryOperatorOnEveryFieldThatDecodeAcceptsTranslatesWithoutError(t *testing.T) {
	s := search.SchemaOf(notes)
	samples := map[search.Type][]string{
		search.Keyword: {`"x"`}, search.Text: {`"x"`}, search.Keywords: {`"x"`},
		search.Number: {`1.5`, `2`}, search.Integer: {`3`}, search.Bool: {`true`},
		search.Date: {`"2024-02-29"`}, search.DateTime: {`"2024-02-29T12:00:00Z"`},
	}
	tried, accepted := 0, 0
	for _, f := range s.Fields {
		for _, op := range search.Ops {
			for _, v := range append(samples[f.Type], `"x"`, `true`, `7`, `null`) {
				if op == search.In || op == search.Nin {
					v = "[" + v + "]"
				}
				body := `{"filters":{"and":[{"field":"` + f.Name + `","operator":"` + string(op) + `","value":` + v + `}]}}`
				tried++
				req, err := search.Decode(s, []byte(body), 1, 20)
				if err != nil {
					continue // refused before any engine sees it
				}
				accepted++
				if _, err := opensearch.Query("org1", s, req); err != nil {
					t.Errorf("%s: decoded, but the translation fails: %v", body, err)
				}
			}
		}
	}
	if accepted == 0 || accepted == tried {
		t.Fatalf("accepted %d of %d bodies: the sample does not exercise both sides", accepted, tried)
	}
}

func TestAValueOfTheWrongTypeIsAnErrorNotAWrongQuery(t *testing.T) {
	s := search.SchemaOf(notes)
	for _, p := range []*search.Predicate{
		{Field: "size", Op: search.Eq, Value: "3"},
		{Field: "closedOn", Op: search.Gt, Value: "2024-01-01"},
		{Field: "name", Op: search.Gt, Value: "a"},
		{Field: "isPrivate", Op: search.Contains, Value: "t"},
		{Field: "stage", Op: search.In, Value: "won"},
		{Field: "stage", Op: search.Exists, Value: "yes"},
		{Field: "nowhere", Op: search.Eq, Value: "x"},
	} {
		if _, err := opensearch.Query("org1", s, &search.Request{Filter: p, Page: 1, Limit: 1}); err == nil {
			t.Errorf("%+v translated", p)
		}
	}
}

func translate(t *testing.T, s *search.Schema, query, body string) []byte {
	t.Helper()
	page, limit := 1, search.DefaultLimit
	if query != "" {
		q := map[string][]string{}
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			q[k] = []string{v}
		}
		var err error
		if page, limit, err = search.ParsePaging(q); err != nil {
			t.Fatal(err)
		}
	}
	req, err := search.Decode(s, []byte(body), page, limit)
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	got, err := opensearch.Query("org1", s, req)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/search/opensearch -update)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}
