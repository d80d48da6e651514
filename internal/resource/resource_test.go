package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Two declared resources: funds, and investments that reference them
// (Restrict: a fund with investments cannot be deleted) and an outside
// resource (companies).
var (
	funds = &resource.Def{Name: "funds", Singular: "fund", Type: "FUND", IDPrefix: "fnd", Function: "crm",
		Fields: []resource.Field{
			{Name: "name", Kind: resource.String, Required: true, Unique: true, Fold: true, Sort: true},
			{Name: "currency", Kind: resource.Enum, Values: []string{"USD", "EUR"}, Immutable: true, Lookup: true},
			{Name: "size", Kind: resource.Number, Sort: true},
			{Name: "vintageYear", Kind: resource.Int, Min: ptr(1900.0), Max: ptr(2100.0)},
			{Name: "tags", Kind: resource.Strings},
			{Name: "open", Kind: resource.Bool, Lookup: true},
			{Name: "score", Kind: resource.Number, ReadOnly: true},
		},
		Check: func(rec map[string]any) error {
			if rec["open"] == true && rec["size"] == nil {
				return apperr.Invalid("size", "is required for an open fund")
			}
			return nil
		}}
	investments = &resource.Def{Name: "investments", Singular: "investment", Type: "INVESTMENT", IDPrefix: "inv", Function: "crm",
		Fields: []resource.Field{
			{Name: "fundId", Kind: resource.Ref, Target: "funds", Required: true, Lookup: true, Restrict: true},
			{Name: "companyId", Kind: resource.Ref, Target: "companies"},
		}}
)

func ptr[T any](v T) *T { return &v }

// services are the two resources' services over a fresh table; companies
// named "cmp_known" exist.
func services(t *testing.T) (*resource.Service, *resource.Service) {
	t.Helper()
	reg := resource.NewRegistry(testenv.Store(t), []*resource.Def{funds, investments}, map[string]resource.External{
		"companies": {Singular: "company", Exists: func(_ context.Context, _, id string) (bool, error) { return id == "cmp_known", nil }},
	})
	f, ok := reg.Service("funds")
	i, ok2 := reg.Service("investments")
	if !ok || !ok2 {
		t.Fatal("no service")
	}
	return f, i
}

func invalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	var inv *apperr.InvalidError
	if !errors.As(err, &inv) || !strings.HasPrefix(err.Error(), field+" ") {
		t.Errorf("%s: %v, want a 400 naming %s", what, err, field)
	}
}

func encode(t *testing.T, r *resource.Record) map[string]any {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func TestACreatedRecordHasEveryFieldInDeclarationOrderAndReadsBackTheSame(t *testing.T) {
	t.Parallel()
	f, _ := services(t)
	ctx := context.Background()
	rec, err := f.Create(ctx, "org_a", []byte(`{"name":"  Growth I ","currency":"USD","size":1e9,"vintageYear":2021,"tags":["a","a","b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	keys := []string{`"id"`, `"name"`, `"currency"`, `"size"`, `"vintageYear"`, `"tags"`, `"open"`, `"score"`, `"createdAt"`, `"updatedAt"`}
	last := -1
	for _, k := range keys {
		i := strings.Index(string(b), k+":")
		if i < last {
			t.Errorf("%s is out of declaration order in %s", k, b)
		}
		last = i
	}
	m := encode(t, rec)
	if !strings.HasPrefix(rec.ID(), "fnd_") || m["name"] != "Growth I" || m["open"] != false || m["score"] != nil ||
		strings.Join(toStrings(m["tags"]), ",") != "a,b" || m["createdAt"] != m["updatedAt"] || rec.ETag() != `"1"` {
		t.Errorf("the created record: %s (ETag %s)", b, rec.ETag())
	}
	got, err := f.Get(ctx, "org_a", rec.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(got); string(again) != string(b) {
		t.Errorf("read back as %s, created as %s", again, b)
	}
	// Another organization does not see it.
	if _, err := f.Get(ctx, "org_b", rec.ID()); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("another organization's get: %v", err)
	}
	if ok, err := f.Exists(ctx, "org_b", rec.ID()); ok || err != nil {
		t.Errorf("Exists in another organization: %v %v", ok, err)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func TestABodyIsRefusedNamingTheFieldAtFault(t *testing.T) {
	t.Parallel()
	f, i := services(t)
	ctx := context.Background()
	for _, c := range []struct{ name, body, field string }{
		{"no name", `{"currency":"USD"}`, "name"},
		{"a null name", `{"name":null}`, "name"},
		{"a read-only field", `{"name":"x","score":1}`, "score"},
		{"a built-in field", `{"name":"x","id":"fnd_mine"}`, "id"},
		{"an unknown field", `{"name":"x","manager":"y"}`, "manager"},
		{"a value not offered", `{"name":"x","currency":"GBP"}`, "currency"},
		{"below the minimum", `{"name":"x","vintageYear":1899}`, "vintageYear"},
		{"above the maximum", `{"name":"x","vintageYear":2101}`, "vintageYear"},
		{"a fraction for an integer", `{"name":"x","vintageYear":2020.5}`, "vintageYear"},
		{"text for a number", `{"name":"x","size":"big"}`, "size"},
		{"the record's own rule", `{"name":"x","open":true}`, "size"},
	} {
		_, err := f.Create(ctx, "org_a", []byte(c.body))
		invalid(t, c.name, err, c.field)
	}
	// References must name records of the organization.
	_, err := i.Create(ctx, "org_a", []byte(`{"fundId":"fnd_missing"}`))
	invalid(t, "a reference to no fund", err, "fundId")
	fund, err := f.Create(ctx, "org_a", []byte(`{"name":"F"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = i.Create(ctx, "org_b", []byte(`{"fundId":"`+fund.ID()+`"}`))
	invalid(t, "a reference to another organization's fund", err, "fundId")
	_, err = i.Create(ctx, "org_a", []byte(`{"fundId":"`+fund.ID()+`","companyId":"cmp_other"}`))
	invalid(t, "a reference to an unknown company", err, "companyId")
	if _, err := i.Create(ctx, "org_a", []byte(`{"fundId":"`+fund.ID()+`","companyId":"cmp_known"}`)); err != nil {
		t.Errorf("valid references: %v", err)
	}
}

func TestAnUpdateChangesOnlyWhatItSendsAndNothingWhenNothingChanges(t *testing.T) {
	t.Parallel()
	f, _ := services(t)
	ctx := context.Background()
	rec, err := f.Create(ctx, "org_a", []byte(`{"name":"F","currency":"EUR","size":10,"tags":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	id := rec.ID()
	created := encode(t, rec)
	// Sending what the record holds changes nothing: no write, same time.
	same, err := f.Update(ctx, "org_a", id, []byte(`{"name":"F","size":10,"tags":["x"]}`))
	if err != nil || same.ETag() != `"1"` || encode(t, same)["updatedAt"] != created["updatedAt"] {
		t.Errorf("an update that changes nothing: %v, ETag %s", err, same.ETag())
	}
	changed, err := f.Update(ctx, "org_a", id, []byte(`{"size":null,"tags":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := encode(t, changed)
	if m["size"] != nil || len(m["tags"].([]any)) != 0 || m["name"] != "F" || m["currency"] != "EUR" || changed.ETag() != `"2"` {
		t.Errorf("after clearing size and tags: %v, ETag %s", m, changed.ETag())
	}
	_, err = f.Update(ctx, "org_a", id, []byte(`{"currency":"USD"}`))
	invalid(t, "changing an immutable field", err, "currency")
	_, err = f.Update(ctx, "org_a", id, []byte(`{"name":null}`))
	invalid(t, "clearing a required field", err, "name")
	if _, err := f.Update(ctx, "org_b", id, []byte(`{"size":1}`)); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("another organization's update: %v", err)
	}
}

func TestAUniqueFieldIsUniqueCaseInsensitivelyWithinAnOrganization(t *testing.T) {
	t.Parallel()
	f, _ := services(t)
	ctx := context.Background()
	a, err := f.Create(ctx, "org_a", []byte(`{"name":"Alpha"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Create(ctx, "org_a", []byte(`{"name":"ALPHA"}`)); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("a second Alpha: %v", err)
	}
	if _, err := f.Create(ctx, "org_b", []byte(`{"name":"alpha"}`)); err != nil {
		t.Errorf("Alpha in another organization: %v", err)
	}
	// Renaming frees the value.
	if _, err := f.Update(ctx, "org_a", a.ID(), []byte(`{"name":"Beta"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Create(ctx, "org_a", []byte(`{"name":"alpha"}`)); err != nil {
		t.Errorf("Alpha after the rename: %v", err)
	}
}

func TestListsSortByNumbersInNumericOrderAndFilterByLookups(t *testing.T) {
	t.Parallel()
	f, _ := services(t)
	ctx := context.Background()
	for _, body := range []string{
		`{"name":"a","size":-5,"currency":"USD"}`, `{"name":"b","size":100,"currency":"EUR","open":true}`,
		`{"name":"c","size":9,"currency":"USD"}`, `{"name":"d","size":-0.5}`, `{"name":"e","size":1e6,"currency":"USD","open":true}`,
	} {
		if _, err := f.Create(ctx, "org_a", []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	names := func(q store.Query, filter, value string) string {
		t.Helper()
		p, err := f.List(ctx, "org_a", q, filter, value)
		if err != nil {
			t.Fatalf("list %+v %s=%s: %v", q, filter, value, err)
		}
		var out []string
		for _, r := range p.Items {
			out = append(out, r.Fields["name"].(string))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		q             store.Query
		filter, value string
		want          string
	}{
		{store.Query{Limit: 10, Sort: "size"}, "", "", "a,d,c,b,e"},
		{store.Query{Limit: 10, Sort: "size", Desc: true}, "", "", "e,b,c,d,a"},
		{store.Query{Limit: 10, Sort: "name", Desc: true}, "", "", "e,d,c,b,a"},
		// A filtered list is in id (creation) order.
		{store.Query{Limit: 10}, "currency", "USD", "a,c,e"},
		{store.Query{Limit: 10, Desc: true}, "open", "true", "e,b"},
		{store.Query{Limit: 2, Sort: "size"}, "", "", "a,d"},
	} {
		if got := names(c.q, c.filter, c.value); got != c.want {
			t.Errorf("%+v %s=%s: %s, want %s", c.q, c.filter, c.value, got, c.want)
		}
	}
	for _, c := range []struct{ filter, value string }{{"name", "a"}, {"open", "yes"}, {"currency", "GBP"}} {
		_, err := f.List(ctx, "org_a", store.Query{Limit: 10}, c.filter, c.value)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.In != apperr.InQuery {
			t.Errorf("filter %s=%s: %v", c.filter, c.value, err)
		}
	}
	if got := strings.Join(funds.Filters(), ","); got != "currency,open" {
		t.Errorf("filters: %s", got)
	}
	if got := strings.Join(funds.SortFields(), ","); got != "id,createdAt,name,size" {
		t.Errorf("sort fields: %s", got)
	}
}

func TestARestrictedReferenceKeepsItsTargetUntilTheReferenceGoes(t *testing.T) {
	t.Parallel()
	f, i := services(t)
	ctx := context.Background()
	fund, err := f.Create(ctx, "org_a", []byte(`{"name":"F"}`))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := i.Create(ctx, "org_a", []byte(`{"fundId":"`+fund.ID()+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	err = f.Delete(ctx, "org_a", fund.ID())
	if !errors.Is(err, apperr.ErrConflict) || !strings.Contains(err.Error(), inv.ID()) {
		t.Errorf("deleting a referenced fund: %v", err)
	}
	if err := i.Delete(ctx, "org_a", inv.ID()); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete(ctx, "org_a", fund.ID()); err != nil {
		t.Errorf("deleting the fund once nothing references it: %v", err)
	}
	if err := f.Delete(ctx, "org_a", fund.ID()); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("deleting it again: %v", err)
	}
}

func TestGetByIDsReadsTheRecordsNamedInOrderOnce(t *testing.T) {
	t.Parallel()
	f, _ := services(t)
	ctx := context.Background()
	var ids []string
	for _, n := range []string{"a", "b", "c"} {
		r, err := f.Create(ctx, "org_a", []byte(`{"name":"`+n+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID())
	}
	recs, err := f.GetByIDs(ctx, "org_a", "ids="+ids[2]+","+ids[0]+",fnd_missing,"+ids[2])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID())
	}
	if strings.Join(got, ",") != ids[2]+","+ids[0] {
		t.Errorf("got %v, want %s then %s", got, ids[2], ids[0])
	}
	if recs, err := f.GetByIDs(ctx, "org_b", "ids="+ids[0]); err != nil || len(recs) != 0 {
		t.Errorf("another organization's multi-get: %d, %v", len(recs), err)
	}
	many := strings.Repeat("x,", store.MaxBatch) + "x"
	for _, seg := range []string{ids[0], "ids=", "ids=a,,b", "ids=" + many} {
		_, err := f.GetByIDs(ctx, "org_a", seg)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.In != apperr.InPath {
			t.Errorf("segment %.30s: %v", seg, err)
		}
	}
}
