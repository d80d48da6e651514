package listsapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

func TestAListHoldsEachRecordOnceAndPagesItsEntriesNewestFirstWithTheRecords(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	list := apitest.IDOf(t, c.Do("POST", "/v1/lists", map[string]any{"name": "Targets", "resourceType": "company",
		"columns": []any{map[string]any{"field": "canonicalName", "label": "Name"}}}).Want(t, 201).Object(t))
	var companyIDs []string
	for _, n := range []string{"A", "B", "C"} {
		companyIDs = append(companyIDs, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": n})))
	}
	for _, id := range companyIDs {
		entry := c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": id}).Want(t, 201).Object(t)
		if rec, _ := entry["record"].(map[string]any); rec["id"] != id || entry["recordId"] != id || entry["listId"] != list {
			t.Fatalf("entry %s, want the company %s", apitest.JSONOf(entry), id)
		}
	}
	again := c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": companyIDs[0]}).Want(t, 200).Object(t)

	var got []string
	next := "/v1/lists/" + list + "/entries?limit=2"
	for next != "" {
		r := c.Do("GET", next, nil).Want(t, 200)
		for _, ent := range r.List(t) {
			rec, _ := ent["record"].(map[string]any)
			got = append(got, rec["id"].(string))
			if ent["id"] == again["id"] && ent["recordId"] != companyIDs[0] {
				t.Errorf("adding again changed the entry")
			}
		}
		next = ""
		if cur := r.Header.Get("X-Next-Cursor"); cur != "" {
			next = "/v1/lists/" + list + "/entries?limit=2&cursor=" + cur
		}
	}
	want := slices.Clone(companyIDs)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("entries %v, want each company once, newest entry first: %v", got, want)
	}

	// A deleted record shows as null; a removed entry is gone.
	c.Do("DELETE", "/v1/companies/"+companyIDs[1], nil).Want(t, 204)
	c.Do("DELETE", "/v1/lists/"+list+"/entries/"+companyIDs[2], nil).Want(t, 204)
	apitest.WantError(t, c.Do("DELETE", "/v1/lists/"+list+"/entries/"+companyIDs[2], nil), 404)
	entries := c.Do("GET", "/v1/lists/"+list+"/entries", nil).Want(t, 200).List(t)
	if len(entries) != 2 || entries[0]["record"] != nil || entries[1]["recordId"] != companyIDs[0] {
		t.Fatalf("after deleting B and removing C: %s", apitest.JSONOf(entries))
	}
}

func TestListEntriesMustNameARecordOfTheListsTypeInTheOrganization(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c, other := e.Org(t), e.Org(t)
	list := apitest.IDOf(t, c.Do("POST", "/v1/lists", map[string]any{"name": "Deals", "resourceType": "deal"}).Want(t, 201).Object(t))
	company := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Not a deal"}))
	theirs := apitest.IDOf(t, other.Do("POST", "/v1/deals", map[string]any{"name": "Their deal"}).Want(t, 201).Object(t))
	apitest.WantError(t, c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": company}), 400, "recordId")
	apitest.WantError(t, c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": theirs}), 400, "recordId")
	apitest.WantError(t, c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{}), 400, "recordId is required")
	apitest.WantError(t, other.Do("GET", "/v1/lists/"+list+"/entries", nil), 404)
	apitest.WantError(t, other.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": theirs}), 404)

	mine := apitest.IDOf(t, c.Do("POST", "/v1/deals", map[string]any{"name": "My deal"}).Want(t, 201).Object(t))
	c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": mine}).Want(t, 201)
	// Deleting the list takes its entries with it.
	c.Do("DELETE", "/v1/lists/"+list, nil).Want(t, 204)
	apitest.WantError(t, c.Do("GET", "/v1/lists/"+list+"/entries", nil), 404)
}

func TestListColumnsMustBeFieldsOfTheListsResourceType(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	apitest.WantError(t, c.Do("POST", "/v1/lists", map[string]any{"name": "L", "resourceType": "company",
		"columns": []any{map[string]any{"field": "canonicalName"}, map[string]any{"field": "stage"}}}), 400, "columns[1].field")
	apitest.WantError(t, c.Do("POST", "/v1/lists", map[string]any{"name": "L", "resourceType": "deal",
		"columns": []any{map[string]any{"field": "stage"}, map[string]any{"field": "stage"}}}), 400, "columns[1].field", "repeats")
	apitest.WantError(t, c.Do("POST", "/v1/lists", map[string]any{"name": "L", "resourceType": "deal",
		"columns": []any{map[string]any{"field": "stage", "width": 5}}}), 400, "columns[0].width")
	l := c.Do("POST", "/v1/lists", map[string]any{"name": "L", "resourceType": "deal",
		"columns": []any{map[string]any{"field": "stage", "width": 120}}}).Want(t, 201).Object(t)
	col := l["columns"].([]any)[0].(map[string]any)
	if col["visible"] != true || col["label"] != nil {
		t.Fatalf("column defaults: %s", apitest.JSONOf(col))
	}
	apitest.WantError(t, c.Do("PUT", "/v1/lists/"+apitest.IDOf(t, l), map[string]any{"resourceType": "company"}), 400, "resourceType", "cannot be changed")
}

// addEntries creates n companies (custom holding pad) and puts each on
// list; it returns their ids, oldest first.
func addEntries(t *testing.T, c *apitest.Client, list string, n int, pad string) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprint("Entry ", i), "custom": map[string]any{"pad": pad}}))
		c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": ids[i]}).Want(t, 201)
	}
	return ids
}

func TestListEntriesClampLimitTo1000LikeEveryListAndStayWithinTheByteBudget(t *testing.T) {
	testenv.Long(t, "lists of thousands of entries")
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	newList := func(name string) string {
		return apitest.IDOf(t, c.Do("POST", "/v1/lists", map[string]any{"name": name, "resourceType": "company"}).Want(t, 201).Object(t))
	}

	// The spec clamps every list's limit to 1..1000 (default 100).
	list := newList("Many")
	ids := addEntries(t, c, list, 150, "")
	for _, tc := range []struct {
		query     string
		n         int
		continues bool
	}{
		{"", 100, true},
		{"?limit=1000", 150, false},
		{"?limit=150", 150, false},
		{"?limit=120", 120, true},
		{"?limit=5000", 150, false}, // clamped to 1000
		{"?limit=0", 1, true},       // clamped to 1
	} {
		r := c.Do("GET", "/v1/lists/"+list+"/entries"+tc.query, nil).Want(t, 200)
		entries := r.List(t)
		if len(entries) != tc.n || (r.Header.Get("X-Next-Cursor") != "") != tc.continues {
			t.Errorf("GET entries%s: %d entries, X-Next-Cursor %q; want %d entries and a cursor %v",
				tc.query, len(entries), r.Header.Get("X-Next-Cursor"), tc.n, tc.continues)
		}
		for i, ent := range entries {
			rec, _ := ent["record"].(map[string]any)
			if want := ids[len(ids)-1-i]; ent["recordId"] != want || rec["id"] != want {
				t.Fatalf("GET entries%s: entry %d is %.200s, want company %s with its record", tc.query, i, apitest.JSONOf(ent), want)
			}
		}
	}

	// Large records: a page ends within the 5 MB budget however high the
	// limit, and its cursor continues where it ended.
	big := newList("Big")
	bigIDs := addEntries(t, c, big, 110, strings.Repeat("x", 50_000))
	var got []string
	next, pages := "/v1/lists/"+big+"/entries?limit=1000", 0
	for next != "" {
		r := c.Do("GET", next, nil).Want(t, 200)
		if len(r.Body) > 5_000_000 {
			t.Errorf("a page of entries is %d bytes, over the 5 MB budget", len(r.Body))
		}
		for _, ent := range r.List(t) {
			if rec, _ := ent["record"].(map[string]any); rec["id"] != ent["recordId"] {
				t.Fatalf("entry without its record: %.200s", apitest.JSONOf(ent))
			}
			got = append(got, ent["recordId"].(string))
		}
		next = ""
		if cur := r.Header.Get("X-Next-Cursor"); cur != "" {
			next = "/v1/lists/" + big + "/entries?limit=1000&cursor=" + cur
		}
		pages++
	}
	slices.Reverse(bigIDs)
	if !slices.Equal(got, bigIDs) || pages < 2 {
		t.Errorf("%d pages of %d entries; want every one of the %d entries once, newest first, over at least 2 pages",
			pages, len(got), len(bigIDs))
	}
}
