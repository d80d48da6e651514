package recordsapi_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestTextMatchingFoldsCaseAndDiacriticsInSearchListFiltersAndSort: a
// search's text, contains and startsWith (in a search and in a list,
// whichever plan serves it) and the order of names ignore case and
// diacritics, so that "zurich" finds "Zürich" and "Émile" sorts between
// D and F.
func TestTextMatchingFoldsCaseAndDiacriticsInSearchListFiltersAndSort(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, name := range []string{"Zürich Versicherung", "Fabrikam", "Müller AG", "Dora Capital", "Société Générale", "Zeta Labs", "Émile Frères", "Muller Brothers"} {
		apitest.CreateCompany(t, c, map[string]any{"canonicalName": name})
	}
	sorted := []string{"Dora Capital", "Émile Frères", "Fabrikam", "Müller AG", "Muller Brothers", "Société Générale", "Zeta Labs", "Zürich Versicherung"}
	byName := []any{map[string]any{"field": "canonicalName"}}
	cond := func(op, value string) map[string]any {
		return map[string]any{"and": []any{map[string]any{"field": "canonicalName", "operator": op, "value": value}}}
	}

	// Search: text (exact and fuzzy), filters and sort.
	apitest.WantNames(t, c, "companies", map[string]any{"text": "zurich"}, "Zürich Versicherung")
	apitest.WantNames(t, c, "companies", map[string]any{"text": "ZURICH versicherung", "fullText": true}, "Zürich Versicherung")
	apitest.WantNames(t, c, "companies", map[string]any{"text": "muller", "sort": byName}, "Müller AG", "Muller Brothers")
	apitest.WantNames(t, c, "companies", map[string]any{"text": "societe generale", "fullText": true}, "Société Générale")
	apitest.WantNames(t, c, "companies", map[string]any{"text": "zürch", "fuzzy": true}, "Zürich Versicherung")
	apitest.WantNames(t, c, "companies", map[string]any{"filters": cond("contains", "zurich")}, "Zürich Versicherung")
	apitest.WantNames(t, c, "companies", map[string]any{"filters": cond("startsWith", "soc")}, "Société Générale")
	apitest.WantNames(t, c, "companies", map[string]any{"filters": cond("startsWith", "EMILE")}, "Émile Frères")
	apitest.WantNames(t, c, "companies", map[string]any{"filters": cond("eq", "Societe Generale")}) // eq stays exact
	apitest.WantNames(t, c, "companies", map[string]any{"sort": byName}, sorted...)

	// Lists: the same conditions and order under every plan that serves them.
	names := func(recs []map[string]any) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r["canonicalName"].(string))
		}
		return out
	}
	reversed := slices.Clone(sorted)
	slices.Reverse(reversed)
	served := map[string]bool{}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"filter[canonicalName][contains]=zurich", []string{"Zürich Versicherung"}},
		{"filter[canonicalName][contains]=GENERALE", []string{"Société Générale"}},
		{"filter[canonicalName][startsWith]=soc", []string{"Société Générale"}},
		{"filter[canonicalName][startsWith]=SOCIETE", []string{"Société Générale"}},
		{"filter[canonicalName][startsWith]=mu&sort=canonicalName&direction=asc", []string{"Müller AG", "Muller Brothers"}},
		{"filter[canonicalName]=Societe+Generale", nil}, // eq stays exact
		{"sort=canonicalName&direction=asc", sorted},
		{"sort=-canonicalName", reversed},
	} {
		for _, hint := range []string{"", "key", "index", "search"} {
			r := c.Do("GET", "/v1/companies?"+tc.query+"&limit=3", nil, "X-Query-Plan", hint)
			if hint != "" && r.Status == 400 && strings.Contains(r.Error(t), "X-Query-Plan") {
				continue // that plan cannot serve this list
			}
			r.Want(t, 200)
			plan := r.Header.Get("X-Query-Plan")
			served[strings.Split(plan, ":")[0]] = true
			got := names(r.List(t))
			for next := r.Header.Get("X-Next-Cursor"); next != ""; {
				p := c.Do("GET", "/v1/companies?"+tc.query+"&limit=3&cursor="+url.QueryEscape(next), nil, "X-Query-Plan", hint).Want(t, 200)
				got = append(got, names(p.List(t))...)
				next = p.Header.Get("X-Next-Cursor")
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("GET /v1/companies?%s served by %s: %q, want %q", tc.query, plan, got, tc.want)
			}
		}
	}
	for _, kind := range []string{"key", "index", "search"} {
		if kind == "search" && e.Engine == nil {
			continue // a Lambda list function holds no search engine
		}
		if !served[kind] {
			t.Errorf("no list was served by a %s plan (served: %v)", kind, served)
		}
	}
}
