package search_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/search"
)

var workspaces = &search.Schema{Resource: "workspaces", Fields: []search.Field{
	{Name: "name", Type: search.Text, Weight: 3, Sortable: true},
	{Name: "source", Type: search.Keyword},
	{Name: "isPrivate", Type: search.Bool},
	{Name: "headcount", Type: search.Integer, Sortable: true},
	{Name: "score", Type: search.Number},
	{Name: "foundedOn", Type: search.Date},
	{Name: "createdAt", Type: search.DateTime, Sortable: true},
	{Name: "tags", Type: search.Keywords},
}}

func decode(t *testing.T, body string) *search.Request {
	t.Helper()
	r, err := search.Decode(workspaces, []byte(body), 1, 20)
	if err != nil {
		t.Fatalf("Decode(%s): %v", body, err)
	}
	return r
}

func TestNestedPredicatesDecodeIntoATreeWithTypedValues(t *testing.T) {
	r := decode(t, `{"text":"  acme  ","fuzzy":true,"filters":{"and":[
		{"field":"isPrivate","operator":"eq","value":false},
		{"or":[{"field":"headcount","operator":"gte","value":10},{"field":"foundedOn","operator":"lt","value":"2020-01-01","and":[{"field":"tags","operator":"contains","value":"fintech"}]}]}
	]},"sort":[{"field":"headcount","direction":"desc"},{"field":"name"}]}`)
	if r.Text != "acme" || !r.Fuzzy || r.Hybrid || r.FullText {
		t.Errorf("flags and text: %+v", r)
	}
	f := r.Filter
	if f == nil || len(f.And) != 2 || f.And[0].Value != false || len(f.And[1].Or) != 2 {
		t.Fatalf("tree: %+v", f)
	}
	if v := f.And[1].Or[0].Value; v != int64(10) {
		t.Errorf("integer value %#v", v)
	}
	d := f.And[1].Or[1]
	if d.Value != time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) || len(d.And) != 1 || d.And[0].Value != "fintech" {
		t.Errorf("date predicate with nested and: %+v", d)
	}
	if len(r.Sort) != 2 || r.Sort[0] != (search.SortKey{Field: "headcount", Desc: true}) || r.Sort[1] != (search.SortKey{Field: "name"}) {
		t.Errorf("sort %+v", r.Sort)
	}
}

func TestBadSearchesAreRefusedNamingWhereAndWhy(t *testing.T) {
	deep := `{"field":"source","operator":"eq","value":"x"}`
	for i := 0; i < search.MaxDepth; i++ {
		deep = `{"and":[` + deep + `]}`
	}
	for _, c := range []struct{ body, want string }{
		{`{"filters":{"and":[{"field":"nope","operator":"eq","value":1}]}}`, `filters.and[0].field "nope" is not a searchable field of workspaces`},
		{`{"filters":{"and":[{"field":"source","operator":"like","value":"x"}]}}`, `filters.and[0].operator`},
		{`{"filters":{"and":[{"field":"source","value":"x"}]}}`, `filters.and[0].operator is required`},
		{`{"filters":{"or":[{"field":"headcount","operator":"eq","value":"ten"}]}}`, `filters.or[0].value must be an integer for headcount, not "ten"`},
		{`{"filters":{"or":[{"field":"headcount","operator":"eq","value":1.5}]}}`, `filters.or[0].value must be an integer for headcount, not 1.5`},
		{`{"filters":{"and":[{"field":"name","operator":"gt","value":"m"}]}}`, `cannot be compared with gt`},
		{`{"filters":{"and":[{"field":"isPrivate","operator":"contains","value":true}]}}`, `cannot be matched with contains`},
		{`{"filters":{"and":[{"field":"foundedOn","operator":"eq","value":"2020-13-01"}]}}`, `must be a date (YYYY-MM-DD) for foundedOn`},
		{`{"filters":{"and":[{"field":"source","operator":"in","value":[]}]}}`, `must hold 1 to 100 values for in`},
		{`{"filters":{"and":[{"field":"source","operator":"in","value":["a",2]}]}}`, `filters.and[0].value[1] must be a string`},
		{`{"filters":{"and":[{"field":"source","operator":"exists","value":"yes"}]}}`, `must be true or false for exists`},
		{`{"filters":{"and":[{}]}}`, `filters.and[0] must name a field`},
		{`{"filters":{"and":[` + deep + `]}}`, `nests deeper than 8 levels`},
		{`{"filters":{"xor":[]}}`, `xor`},
		{`{"sort":[{"field":"source"}]}`, `sort[0].field "source" is not a sortable field`},
		{`{"sort":[{"field":"name","direction":"up"}]}`, `sort[0].direction`},
		{`{"sort":[{"field":"name"},{"field":"name"}]}`, `names name twice`},
		{`{"fuzzy":"yes"}`, `fuzzy must be a boolean`},
		{`{"text":5}`, `text must be a string`},
		{`{"query":"x"}`, `query`},
	} {
		_, err := search.Decode(workspaces, []byte(c.body), 1, 20)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want an invalid body naming %q", c.body, err, c.want)
		}
	}
}

func TestAnEmptyBodyIsAnEmptySearch(t *testing.T) {
	for _, body := range []string{"", "  ", "{}", `{"filters":null}`, `{"filters":{"and":[],"or":[]}}`} {
		if r := decode(t, body); r.Filter != nil || r.Text != "" || len(r.Sort) != 0 {
			t.Errorf("%q decoded to %+v", body, r)
		}
	}
}

func TestPagingAllowsTheDeepestOffsetExactlyAndNoFurther(t *testing.T) {
	for q, want := range map[string][2]int{"": {1, search.DefaultLimit}, "page=2&limit=400": {2, 400}, "page=26&limit=400": {26, 400}, "page=10001&limit=1": {10001, 1}} {
		v, _ := url.ParseQuery(q)
		p, l, err := search.ParsePaging(v)
		if err != nil || p != want[0] || l != want[1] {
			t.Errorf("%q: %d, %d, %v; want %v", q, p, l, err, want)
		}
	}
	for q, want := range map[string]string{"page=27&limit=400": "page reaches past", "page=10002&limit=1": "page reaches past", "limit=401": "limit must be", "limit=0": "limit must be",
		"page=0": "page must be", "page=x": "page must be", "sort=name": "sort is not a parameter", "page=1&page=2": "given 2 times", "page=99999999999999999999": "page must be"} {
		v, _ := url.ParseQuery(q)
		_, _, err := search.ParsePaging(v)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.In != apperr.InQuery || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a query error containing %q", q, err, want)
		}
	}
}
