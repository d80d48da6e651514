package enrichmentapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/httpapi"
)

// pages follows a list's X-Next-Cursor from path and returns every page.
func pages(t *testing.T, c *apitest.Client, path string) [][]map[string]any {
	t.Helper()
	var out [][]map[string]any
	next := path
	for next != "" {
		r := c.Do("GET", next, nil).Want(t, http.StatusOK)
		apitest.WithinBudget(t, "GET "+next, r)
		out = append(out, r.List(t))
		next = ""
		if cur := r.Header.Get(httpapi.HeaderNextCursor); cur != "" {
			u, _ := url.Parse(path)
			q := u.Query()
			q.Set("cursor", cur)
			next = u.Path + "?" + q.Encode()
			if link := r.Header.Get(httpapi.HeaderLink); !strings.Contains(link, "cursor="+url.QueryEscape(cur)) {
				t.Errorf("Link %q does not carry the cursor %q", link, cur)
			}
		}
		if len(out) > 1000 {
			t.Fatal("the pages do not end")
		}
	}
	return out
}

func TestARecordsCandidatesArePagedWithinTheBudget(t *testing.T) {
	testenv.Long(t, "candidates at the size limit")
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	id := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Paged Co"})["id"].(string)
	path := "/v1/enrichments/resources/companies/" + id
	// 400 candidates of 19 KB: 7.7 MB stored, more on the wire.
	apitest.AddCandidates(t, c, id, 400)

	// Every candidate is asked for; the answer ends at the budget.
	first := c.Do("GET", path, nil).Want(t, http.StatusOK)
	apitest.WithinBudget(t, "the candidates of a record", first)
	if first.Header.Get(httpapi.HeaderNextCursor) == "" || len(first.List(t)) >= 400 {
		t.Fatalf("a first answer of %d candidates without a cursor for the rest", len(first.List(t)))
	}
	// Following the cursors lists every candidate once, by rank.
	var all []map[string]any
	for _, p := range pages(t, c, path) {
		all = append(all, p...)
	}
	seen := map[string]bool{}
	for i, v := range all {
		seen[v["id"].(string)] = true
		if i > 0 && v["confidence"].(float64) > all[i-1]["confidence"].(float64) {
			t.Fatalf("candidate %d (confidence %v) follows one of confidence %v: not in rank order", i, v["confidence"], all[i-1]["confidence"])
		}
	}
	if len(all) != 400 || len(seen) != 400 {
		t.Fatalf("the pages list %d candidates, %d distinct; want the 400", len(all), len(seen))
	}

	// limit and page as every list (limit has no default: every candidate).
	if got := c.Do("GET", path+"?limit=100", nil).Want(t, http.StatusOK).List(t); len(got) != 100 || got[0]["id"] != all[0]["id"] {
		t.Errorf("a page of 100 has %d candidates", len(got))
	}
	var paged []map[string]any
	for _, p := range pages(t, c, path+"?limit=1000") {
		paged = append(paged, p...)
	}
	if !slices.Equal(apitest.IDsOf(t, paged), apitest.IDsOf(t, all)) {
		t.Errorf("paging with limit=1000 lists %d candidates, not the %d in the same order", len(paged), len(all))
	}
	second := c.Do("GET", path+"?limit=30&page=2", nil).Want(t, http.StatusOK).List(t)
	if len(second) != 30 || second[0]["id"] != all[30]["id"] || second[29]["id"] != all[59]["id"] {
		t.Errorf("page 2 of 30 is not candidates 30 to 59")
	}
	// A page goes on after its last candidate even when it was deleted.
	r := c.Do("GET", path+"?limit=10", nil).Want(t, http.StatusOK)
	c.Do("DELETE", path+"/"+all[9]["id"].(string), nil).Want(t, http.StatusNoContent)
	next := c.Do("GET", path+"?limit=10&cursor="+url.QueryEscape(r.Header.Get(httpapi.HeaderNextCursor)), nil).Want(t, http.StatusOK).List(t)
	if next[0]["id"] != all[10]["id"] {
		t.Errorf("after a deleted candidate the next page starts at %v, want %v", next[0]["id"], all[10]["id"])
	}

	// The order is the ranking: no sort, direction or lt; a cursor is
	// bound to its record.
	for _, q := range []string{"sort=id", "direction=asc", "lt=env_1"} {
		apitest.WantError(t, c.Do("GET", path+"?"+q, nil), http.StatusBadRequest, strings.Split(q, "=")[0], "limit, page, cursor")
	}
	other := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Other Co"})["id"].(string)
	apitest.WantError(t, c.Do("GET", "/v1/enrichments/resources/companies/"+other+"?cursor="+url.QueryEscape(r.Header.Get(httpapi.HeaderNextCursor)), nil),
		http.StatusBadRequest, "cursor")
	if got := c.Do("GET", "/v1/enrichments/resources/companies/"+other, nil).Want(t, http.StatusOK); got.Header.Get(httpapi.HeaderNextCursor) != "" ||
		len(got.List(t)) != 0 {
		t.Errorf("a record without candidates: %s", got.Body)
	}
	if slices.ContainsFunc(all, func(v map[string]any) bool { return v["property"] != "description" }) {
		t.Error("a candidate of another property")
	}
}
