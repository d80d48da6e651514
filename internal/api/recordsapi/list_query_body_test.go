package recordsapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 46, item 2: POST /v1/<resource>/query takes the list's filter,
// sort, fields, expand, limit and cursor as a typed JSON body and answers
// what GET answers for the same list: the same records, page by page,
// served by the same plan.
func TestAListQueryBodyAnswersAsTheGETList(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	sectors := []string{"AI", "Fintech", "Robotics"}
	var ops []any
	for i := range 30 {
		ops = append(ops, map[string]any{"op": "create", "data": map[string]any{
			"canonicalName": fmt.Sprintf("Query %02d, Alpha", i), "externalId": fmt.Sprint("q-", i), "sector": sectors[i%3],
			"tags": []string{fmt.Sprint("t", i%4)}, "companyType": []string{"operating", "investor"}[i%2]}})
	}
	c.Do("POST", "/v1/companies/batch", map[string]any{"operations": ops}).Want(t, 200)
	if n := len(c.Do("GET", "/v1/companies", nil).Want(t, 200).List(t)); n != 30 {
		t.Fatalf("the batch made %d companies, want 30", n)
	}

	cases := []struct {
		get  string
		body map[string]any
	}{
		{"", map[string]any{}},
		{"filter[sector]=AI", map[string]any{"filter": map[string]any{"sector": "AI"}}},
		{"filter[tags][contains]=t1&filter[companyType]=investor&sort=canonicalName&direction=asc",
			map[string]any{"filter": map[string]any{"tags": map[string]any{"contains": "t1"}, "companyType": "investor"},
				"sort": []any{map[string]any{"field": "canonicalName", "direction": "asc"}}}},
		{"filter[sector][in]=AI,Robotics&sort=-sector,canonicalName&fields=canonicalName,sector",
			map[string]any{"filter": map[string]any{"sector": map[string]any{"in": []any{"AI", "Robotics"}}},
				"sort":   []any{map[string]any{"field": "sector", "direction": "desc"}, map[string]any{"field": "canonicalName", "direction": "asc"}},
				"fields": []any{"canonicalName", "sector"}}},
		{"filter[externalId]=q-7", map[string]any{"filter": map[string]any{"externalId": "q-7"}}},
	}
	for _, hint := range []string{"", "key", "search"} {
		for _, tc := range cases {
			name := fmt.Sprintf("%s with plan %q", tc.get, hint)
			var get, post []string
			var getPlan, postPlan string
			for next := ""; ; {
				path := "/v1/companies?limit=7"
				if tc.get != "" {
					path += "&" + tc.get
				}
				if next != "" {
					path += "&cursor=" + url.QueryEscape(next)
				}
				r := c.Do("GET", path, nil, "X-Query-Plan", hint)
				if r.Status == 400 && hint != "" {
					break // that plan cannot serve it
				}
				r.Want(t, 200)
				getPlan = r.Header.Get("X-Query-Plan")
				for _, rec := range r.List(t) {
					get = append(get, apitest.JSONOf(rec))
				}
				if next = r.Header.Get("X-Next-Cursor"); next == "" {
					break
				}
			}
			for next := ""; ; {
				body := map[string]any{"limit": 7}
				for k, v := range tc.body {
					body[k] = v
				}
				if next != "" {
					body["cursor"] = next
				}
				r := c.Do("POST", "/v1/companies/query", body, "X-Query-Plan", hint)
				if r.Status == 400 && hint != "" && get == nil {
					break
				}
				r.Want(t, 200)
				postPlan = r.Header.Get("X-Query-Plan")
				if r.Header.Get("Link") != "" {
					t.Errorf("%s: a query answered Link %q, which a GET would follow", name, r.Header.Get("Link"))
				}
				for _, rec := range r.List(t) {
					post = append(post, apitest.JSONOf(rec))
				}
				if next = r.Header.Get("X-Next-Cursor"); next == "" {
					break
				}
			}
			if getPlan != postPlan {
				t.Errorf("%s: GET served by %q, the query by %q", name, getPlan, postPlan)
			}
			if strings.Join(get, "\n") != strings.Join(post, "\n") {
				t.Errorf("%s: GET answered %d records, the query %d, or other ones:\nGET   %v\nquery %v", name, len(get), len(post), get, post)
			}
		}
	}

	// A cursor of one form continues the other.
	first := c.Do("GET", "/v1/companies?filter[sector]=AI&sort=canonicalName&direction=asc&limit=3", nil).Want(t, 200)
	second := c.Do("GET", "/v1/companies?filter[sector]=AI&sort=canonicalName&direction=asc&limit=3&cursor="+url.QueryEscape(first.Header.Get("X-Next-Cursor")), nil).Want(t, 200)
	viaBody := c.Do("POST", "/v1/companies/query", map[string]any{"filter": map[string]any{"sector": "AI"}, "limit": 3,
		"sort": []any{map[string]any{"field": "canonicalName", "direction": "asc"}}, "cursor": first.Header.Get("X-Next-Cursor")}).Want(t, 200)
	if apitest.JSONOf(viaBody.List(t)) != apitest.JSONOf(second.List(t)) || viaBody.Header.Get("X-Next-Cursor") != second.Header.Get("X-Next-Cursor") {
		t.Errorf("GET's cursor sent in a query answered %s, GET's second page %s", apitest.JSONOf(viaBody.List(t)), apitest.JSONOf(second.List(t)))
	}

	// A value of in holding a comma, which GET's comma-separated form
	// cannot send.
	r := c.Do("POST", "/v1/companies/query", map[string]any{"filter": map[string]any{"canonicalName": map[string]any{"in": []any{"Query 03, Alpha", "Query 04, Alpha"}}}}).Want(t, 200)
	if n := len(r.List(t)); n != 2 {
		t.Errorf("in with two names holding commas found %d companies", n)
	}
	// A cursor is bound to its list: another filter's is a 400 naming cursor.
	next := c.Do("POST", "/v1/companies/query", map[string]any{"limit": 1, "filter": map[string]any{"sector": "AI"}}).Want(t, 200).Header.Get("X-Next-Cursor")
	for _, bad := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"cursor": next, "filter": map[string]any{"sector": "Fintech"}}, "cursor"},
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"limit": 1001}, "limit"},
		{map[string]any{"limit": "10"}, "limit"},
		{map[string]any{"page": 2}, "page"},
		{map[string]any{"filter": map[string]any{"sector": map[string]any{"like": "A"}}}, "filter.sector.like"},
		{map[string]any{"filter": map[string]any{"nope": 1}}, "filter.nope"},
		{map[string]any{"filter": map[string]any{"createdAt": map[string]any{"gte": "yesterday"}}}, "filter.createdAt.gte"},
		{map[string]any{"filter": map[string]any{"sector": map[string]any{"in": "AI,Fintech"}}}, "filter.sector.in"},
		{map[string]any{"filter": []any{"sector"}}, "filter"},
		{map[string]any{"sort": []any{map[string]any{"field": "canonicalName"}}}, "sort[0]"},
		{map[string]any{"sort": []any{map[string]any{"field": "tags", "direction": "asc"}}}, "sort[0].field"},
		{map[string]any{"fields": []any{"secret"}}, "fields[0]"},
	} {
		r := c.Do("POST", "/v1/companies/query", bad.body).Want(t, 400)
		if p := r.Header.Get("X-Error-Param"); p != bad.param {
			t.Errorf("%v: 400 naming %q (%s), want %q", bad.body, p, r.Error(t), bad.param)
		}
	}
	// A declared resource takes it too, with its own fields.
	c.Do("POST", "/v1/deals", map[string]any{"name": "Query deal", "companyId": c.Do("GET", "/v1/companies?limit=1", nil).Want(t, 200).List(t)[0]["id"]}).Want(t, 201)
	r = c.Do("POST", "/v1/deals/query", map[string]any{"filter": map[string]any{"name": "Query deal"}, "expand": []any{"companyId"}}).Want(t, 200)
	if got := r.List(t); len(got) != 1 || got[0]["expanded"] == nil {
		t.Errorf("a deal query with expand answered %v", got)
	}
}
