package listing_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/listing"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

var deals = &resource.Def{
	Name: "deals", Singular: "deal", Type: "DEAL", IDPrefix: "deal",
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, Required: true},
		{Name: "companyId", Kind: resource.Ref, Target: "companies", Lookup: true},
		{Name: "status", Kind: resource.Enum, Values: []string{"open", "won"}, Lookup: true},
		{Name: "amount", Kind: resource.Number},
		{Name: "closeDate", Kind: resource.Date, Sort: true},
		{Name: "tags", Kind: resource.Strings},
		{Name: "trigger", Kind: resource.Struct, Fields: []resource.Field{
			{Name: "scheme", Kind: resource.String},
			{Name: "secret", Kind: resource.String, ReadOnly: true, Secret: true},
		}},
	},
}

var res = listing.Resource{Def: deals, Schema: listing.Schema(deals), Expandable: []string{"companyId"}}

func parsePage(q url.Values) (store.Query, error) {
	out := store.Query{Limit: 100, Desc: q.Get("direction") != "asc", Before: q.Get("lt"), Cursor: q.Get("cursor")}
	return out, nil
}

func parse(t *testing.T, raw string) (*listing.Query, error) {
	t.Helper()
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return listing.Parse(res, q, parsePage)
}

func TestParseReadsFiltersSortFieldsAndExpand(t *testing.T) {
	q, err := parse(t, "filter[status]=open&filter[amount][gte]=50&filter[tags][in]=ai,robotics&sort=closeDate,-amount&fields=name&expand=companyId")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Filters) != 3 || len(q.Sort) != 2 || q.Sort[0].Desc || !q.Sort[1].Desc || q.Fields[0] != "name" || q.Expand[0] != "companyId" {
		t.Errorf("parsed %+v", q)
	}
	// A single key takes direction; desc by default.
	for raw, desc := range map[string]bool{"sort=name": true, "sort=name&direction=asc": false, "sort=-name": true} {
		q, err := parse(t, raw)
		if err != nil || len(q.Sort) != 1 || q.Sort[0].Desc != desc {
			t.Errorf("%s: %+v, %v", raw, q, err)
		}
	}
}

func TestParseRefusesWhatDoesNotFitNamingTheParameter(t *testing.T) {
	for raw, param := range map[string]string{
		"filter[nope]=1":                    "filter[nope]",
		"filter[amount][gte]=abc":           "filter[amount][gte]",
		"filter[name][gt]=a":                "filter[name][gt]",
		"filter[amount][between]=1":         "filter[amount][between]",
		"filter[status]=closed":             "filter[status]",
		"filter[trigger.secret]=x":          "filter[trigger.secret]",
		"filter[amount]]=1":                 "filter[amount]]",
		"filter[name][exists]=maybe":        "filter[name][exists]",
		"sort=tags":                         "sort",
		"sort=trigger.secret":               "sort",
		"sort=a,b,c,d":                      "sort",
		"sort=name,-name":                   "sort",
		"sort=name,closeDate&direction=asc": "direction",
		"sort=-name&direction=asc":          "direction",
		"fields=nope":                       "fields",
		"fields=secret":                     "fields",
		"expand=name":                       "expand",
		"companyId=a&status=open":           "status",
		"other=1":                           "other",
		"filter[name]=a&filter[name]=b":     "filter[name]",
	} {
		_, err := parse(t, raw)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.Field != param || inv.In != apperr.InQuery {
			t.Errorf("%s: %v, want a 400 naming %s", raw, err, param)
		}
	}
}

func TestThePlannerPrefersWhatReadsLeast(t *testing.T) {
	caps := listing.Caps{Lookups: []string{"companyId", "status"}, Sorts: []string{"closeDate"}, IDOrder: []string{"createdAt"}}
	withEngine := caps
	withEngine.Engine = "embedded"
	for _, c := range []struct {
		raw, hint string
		caps      listing.Caps
		want      string
	}{
		{"", "", caps, "key:deals"},
		{"sort=createdAt&direction=asc", "", caps, "key:deals"},
		{"sort=closeDate", "", caps, "index:deals.closeDate"},
		{"companyId=c1", "", caps, "index:deals.companyId"},
		{"filter[companyId]=c1", "", caps, "index:deals.companyId"},
		{"filter[companyId]=c1&filter[amount][gt]=5", "", caps, "index:deals.companyId+filter"},
		{"filter[companyId]=c1&sort=name", "", caps, "index:deals.companyId+sort"},
		{"filter[amount][gt]=5&sort=closeDate", "", caps, "index:deals.closeDate+filter"},
		{"filter[amount][gt]=5", "", caps, "key:deals+filter"},
		{"sort=name", "", caps, "key:deals+sort"},
		{"filter[amount][gt]=5&sort=name", "", caps, "key:deals+filter+sort"},
		{"filter[amount][gt]=5", "", withEngine, "search:embedded"},
		{"filter[companyId]=c1&filter[amount][gt]=5", "", withEngine, "search:embedded"},
		{"filter[companyId]=c1&filter[amount][gt]=5", "index", withEngine, "index:deals.companyId+filter"},
		{"filter[companyId]=c1&filter[amount][gt]=5", "key", withEngine, "key:deals+filter"},
		{"sort=closeDate", "search", withEngine, "search:embedded"},
		{"", "search", withEngine, "search:embedded"},
		{"companyId=c1&sort=name", "", withEngine, "index:deals.companyId+sort"},
	} {
		q, err := parse(t, c.raw)
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		p, err := q.Plan(res, c.caps, "org", c.hint)
		if err != nil || p.Name != c.want {
			t.Errorf("%s (hint %q): %q, %v; want %s", c.raw, c.hint, p.Name, err, c.want)
		}
	}
	for _, c := range []struct{ raw, hint string }{
		{"filter[amount][gt]=5", "search"}, // no engine here
		{"companyId=c1", "key"},            // the older filter is its index's
		{"", "fast"},
		{"sort=name", "index"},
	} {
		q, _ := parse(t, c.raw)
		if _, err := q.Plan(res, caps, "org", c.hint); err == nil || !strings.Contains(err.Error(), "X-Query-Plan") {
			t.Errorf("%s with hint %q: %v, want a 400 naming X-Query-Plan", c.raw, c.hint, err)
		}
	}
}

func TestProjectKeepsTheNamedFieldsAndIdAndAddsExpansions(t *testing.T) {
	got, err := listing.Project([]byte(`{"id":"d1","name":"<A>","amount":5,"tags":["x"]}`), []string{"amount"},
		[]listing.Expansion{{Field: "companyId", Value: []byte(`{"id":"c1","canonicalName":"a<b"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"d1","amount":5,"expanded":{"companyId":{"id":"c1","canonicalName":"a<b"}}}`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestAListPagedByTheEnginePastItsDepthGoesOnInMemoryFromThePosition(t *testing.T) {
	caps := listing.Caps{Lookups: []string{"companyId", "status"}, Sorts: []string{"closeDate"}, IDOrder: []string{"createdAt"}, Engine: "embedded"}
	q, _ := parse(t, "filter[amount][gt]=5&sort=name")
	first, err := q.Plan(res, caps, "org", "")
	if err != nil || first.Search == nil {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	deep := store.NewPage([]int{1}, []string{"10001"}, first.Bind, true).Next
	q, _ = parse(t, "filter[amount][gt]=5&sort=name&cursor="+deep)
	p, err := q.Plan(res, caps, "org", "")
	if err != nil || p.Name != "key:deals+filter+sort" || p.Page.Offset != 10001 || p.Page.Cursor != "" {
		t.Errorf("past the engine's depth: %s offset %d cursor %q, %v", p.Name, p.Page.Offset, p.Page.Cursor, err)
	}
	near := store.NewPage([]int{1}, []string{"9000"}, first.Bind, true).Next
	q, _ = parse(t, "filter[amount][gt]=5&sort=name&cursor="+near)
	if p, err := q.Plan(res, caps, "org", ""); err != nil || p.Search == nil || p.Start != 9000 {
		t.Errorf("within the engine's depth: %+v, %v", p, err)
	}
}
