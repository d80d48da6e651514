package opensearch_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/search/opensearch/golden"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata (make generate rewrites them all)")

// notes are the shared test resource.
var notes = searchtest.Notes

// schemaAs is the notes schema under another resource name, for the flag
// rules that depend on the resource.
func schemaAs(resourceName string) *search.Schema {
	s := search.SchemaOf(notes)
	s.Resource = resourceName
	return s
}

func TestEachGoldenRequestTranslatesToItsGoldenQueryBody(t *testing.T) {
	for _, c := range golden.Cases {
		t.Run(c.Name, func(t *testing.T) {
			got, err := c.QueryBody()
			if err != nil {
				t.Fatal(err)
			}
			goldenFile(t, "query-"+c.Name+".json", got)
		})
	}
}

func TestEachSemanticGoldenRequestTranslatesToItsGoldenQueryBody(t *testing.T) {
	for _, c := range golden.SemanticCases {
		t.Run(c.Name, func(t *testing.T) {
			got, err := c.QueryBody()
			if err != nil {
				t.Fatal(err)
			}
			goldenFile(t, "query-"+c.Name+".json", got)
		})
	}
}

func TestEachSearchableResourceHasItsGoldenIndexMapping(t *testing.T) {
	for _, s := range golden.Schemas(searchable()) {
		got, err := opensearch.Mapping(s, golden.Dimensions)
		if err != nil {
			t.Fatal(err)
		}
		goldenFile(t, "mapping-"+s.Resource+".json", got)
	}
	got, err := opensearch.Mapping(search.SchemaOf(notes), 0)
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, golden.KeywordOnlyMapping, got)
}

// TestTheMappingHasTheVectorFieldOnlyWithEmbeddings holds the vector
// field to what hybrid search and similar records query: a knn_vector of
// the model's dimension, HNSW by faiss (efficient filtering) over the
// inner product (the vectors are of unit length), in an index with knn on.
func TestTheMappingHasTheVectorFieldOnlyWithEmbeddings(t *testing.T) {
	type vectorField struct {
		Type      string
		Dimension int
		Method    struct {
			Name, Engine string
			SpaceType    string `json:"space_type"`
		}
	}
	var m struct {
		Settings struct {
			Index struct {
				KNN             *bool `json:"knn"`
				MaxResultWindow int   `json:"max_result_window"`
			}
		}
		Mappings struct{ Properties map[string]json.RawMessage }
	}
	for _, dims := range []int{0, 100, 512} {
		b, err := opensearch.Mapping(search.SchemaOf(notes), dims)
		if err != nil {
			t.Fatal(err)
		}
		m.Settings.Index.KNN, m.Mappings.Properties = nil, nil
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		raw, has := m.Mappings.Properties[opensearch.VectorField]
		if dims == 0 {
			if has || m.Settings.Index.KNN != nil {
				t.Errorf("without embeddings: %s %s, knn %v; want neither", opensearch.VectorField, raw, m.Settings.Index.KNN)
			}
			continue
		}
		var f vectorField
		json.Unmarshal(raw, &f)
		if f.Type != "knn_vector" || f.Dimension != dims || f.Method.Name != "hnsw" || f.Method.Engine != "faiss" || f.Method.SpaceType != "innerproduct" {
			t.Errorf("%d dimensions: %s is %s", dims, opensearch.VectorField, raw)
		}
		if m.Settings.Index.KNN == nil || !*m.Settings.Index.KNN || m.Settings.Index.MaxResultWindow != search.MaxOffset+search.MaxLimit {
			t.Errorf("%d dimensions: index settings knn %v, max_result_window %d", dims, m.Settings.Index.KNN, m.Settings.Index.MaxResultWindow)
		}
	}
}

// TestTheIndexFoldsCaseAndDiacriticsOfTextAndOfLowerSubFields holds the
// mapping to what the embedded engine does with fold.Text: every text
// field's analyzer and every "lower" sub-field's normalizer lower-case and
// asciifold, so that "zurich" finds "Zürich" in both engines.
func TestTheIndexFoldsCaseAndDiacriticsOfTextAndOfLowerSubFields(t *testing.T) {
	b, err := opensearch.Mapping(search.SchemaOf(notes), golden.Dimensions)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Settings struct {
			Analysis struct {
				Analyzer   map[string]struct{ Filter []string }
				Normalizer map[string]struct{ Filter []string }
			}
		}
		Mappings struct{ Properties map[string]json.RawMessage }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	folds := func(filters []string) bool {
		l, a := slices.Index(filters, "lowercase"), slices.Index(filters, "asciifolding")
		return l >= 0 && a > l
	}
	type field struct {
		Type, Analyzer, Normalizer string
		Fields                     map[string]field
	}
	texts, lowers := 0, 0
	for name, raw := range m.Mappings.Properties {
		var f field
		json.Unmarshal(raw, &f)
		if f.Type == "text" {
			texts++
			if a, ok := m.Settings.Analysis.Analyzer[f.Analyzer]; !ok || !folds(a.Filter) {
				t.Errorf("text field %s: analyzer %q filters %v, want lowercase then asciifolding", name, f.Analyzer, a.Filter)
			}
		}
		if sub, ok := f.Fields["lower"]; ok {
			lowers++
			if n, ok := m.Settings.Analysis.Normalizer[sub.Normalizer]; !ok || !folds(n.Filter) {
				t.Errorf("%s.lower: normalizer %q filters %v, want lowercase then asciifolding", name, sub.Normalizer, n.Filter)
			}
		}
	}
	if texts == 0 || lowers == 0 {
		t.Fatalf("%d text fields and %d lower sub-fields checked: the mapping is not what this test reads", texts, lowers)
	}
}

func TestEveryGoldenFileIsValidJSON(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) < len(golden.Cases)+2 {
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

// goldenFile compares got with testdata/name, or rewrites it with -update
// (make generate rewrites every golden file, from package golden).
func goldenFile(t *testing.T, name string, got []byte) {
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
		t.Fatalf("%v (run make generate)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file (make generate rewrites it):\n%s", name, got)
	}
}

func TestMissingSmallestSortsMissingValuesFirstAscendingAndLastDescending(t *testing.T) {
	s := search.SchemaOf(notes)
	for _, c := range []struct {
		key  search.SortKey
		want string
	}{
		{search.SortKey{Field: "name"}, `{"name.lower":{"missing":"_last","order":"asc"}}`},
		{search.SortKey{Field: "name", Desc: true}, `{"name.lower":{"missing":"_last","order":"desc"}}`},
		{search.SortKey{Field: "size", MissingSmallest: true}, `{"size":{"missing":"_first","order":"asc"}}`},
		{search.SortKey{Field: "closedOn", Desc: true, MissingSmallest: true}, `{"closedOn":{"missing":"_last","order":"desc"}}`},
	} {
		body := queryBody(t, s, &search.Request{Sort: []search.SortKey{c.key}, Page: 1, Limit: 10})
		if got, _ := json.Marshal(body["sort"].([]any)[0]); string(got) != c.want {
			t.Errorf("%+v: %s, want %s", c.key, got, c.want)
		}
	}
}

func TestBeforeIsARangeOnTheIDAndFromShiftsTheOffset(t *testing.T) {
	s := search.SchemaOf(notes)
	body := queryBody(t, s, &search.Request{Before: "nte_B", Page: 2, Limit: 10, From: 5})
	filter, _ := json.Marshal(body["query"].(map[string]any)["bool"].(map[string]any)["filter"])
	if want := `[{"term":{"_org":"org1"}},{"range":{"id":{"lt":"nte_B"}}}]`; string(filter) != want {
		t.Errorf("filter %s, want %s", filter, want)
	}
	if body["from"] != 15.0 {
		t.Errorf("from %v, want 15", body["from"])
	}
	body = queryBody(t, s, &search.Request{Page: 1, Limit: 10})
	if filter, _ := json.Marshal(body["query"].(map[string]any)["bool"].(map[string]any)["filter"]); strings.Contains(string(filter), "range") {
		t.Errorf("no Before, yet %s", filter)
	}
}

func TestAPredicateWithNoConditionMatchesEveryRecord(t *testing.T) {
	s := search.SchemaOf(notes)
	body := queryBody(t, s, &search.Request{Filter: &search.Predicate{And: []*search.Predicate{{}}}, Page: 1, Limit: 10})
	filter, _ := json.Marshal(body["query"].(map[string]any)["bool"].(map[string]any)["filter"])
	if want := `[{"term":{"_org":"org1"}},{"match_all":{}}]`; string(filter) != want {
		t.Errorf("filter %s, want %s", filter, want)
	}
}

func queryBody(t *testing.T, s *search.Schema, r *search.Request) map[string]any {
	t.Helper()
	b, err := opensearch.Query("org1", s, r)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	return body
}
