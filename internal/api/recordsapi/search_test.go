package recordsapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestWorkspaceSearchRanksNamesAboveOtherFieldsAndRareWordsAboveCommonOnes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	c.Do("POST", "/v1/workspaces", map[string]any{"name": "Harbor diligence", "source": "robotics pipeline"}).Want(t, 201)
	c.Do("POST", "/v1/workspaces", map[string]any{"name": "Robotics coverage", "source": "crm"}).Want(t, 201)
	for i := range 6 {
		c.Do("POST", "/v1/workspaces", map[string]any{"name": fmt.Sprintf("Diligence %d", i)}).Want(t, 201)
	}
	got, meta := apitest.Searched(t, c, "workspaces", "", map[string]any{"text": "robotics"}, "name")
	if len(got) != 2 || got[0] != "Robotics coverage" {
		t.Errorf("robotics: %v, want the name match first", got)
	}
	if meta["ranking"] != "keyword" || meta["page"] != 1.0 || meta["totalPages"] != 1.0 {
		t.Errorf("metadata %v", meta)
	}
	if got, _ := apitest.Searched(t, c, "workspaces", "", map[string]any{"text": "diligence harbor"}, "name"); len(got) != 7 || got[0] != "Harbor diligence" {
		t.Errorf("diligence harbor: %v, want the record with the rare word first", got)
	}
	// Hybrid ranks by meaning too (the local model) and says so: the
	// keyword matches first, then the records nearest by meaning.
	if got, meta := apitest.Searched(t, c, "workspaces", "", map[string]any{"text": "robotics", "hybrid": true}, "name"); meta["ranking"] != "hybrid" || len(got) != 8 || got[0] != "Robotics coverage" || meta["semantic"] != nil {
		t.Errorf("hybrid: %v, %v", got, meta)
	}
}

func TestEachResourceAppliesTheSpecsFuzzyRules(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	c.Do("POST", "/v1/workspaces", map[string]any{"name": "Semiconductor"}).Want(t, 201)
	c.Do("POST", "/v1/documents", map[string]any{"name": "Semiconductor"}).Want(t, 201)
	c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Semiconductor"}).Want(t, 201)
	c.Do("POST", "/v1/activities", map[string]any{"subject": "Semiconductor", "type": "Meeting"}).Want(t, 201)
	typo := func(extra map[string]any) map[string]any {
		b := map[string]any{"text": "semicondcutor", "fuzzy": true}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	apitest.WantNames(t, c, "workspaces", typo(nil), "Semiconductor")
	apitest.WantNames(t, c, "documents", typo(nil)) // document search ignores fuzzy
	apitest.WantNames(t, c, "companies", typo(nil), "Semiconductor")
	apitest.WantNames(t, c, "companies", typo(map[string]any{"hybrid": true})) // company hybrid search ignores fuzzy
	apitest.WantNames(t, c, "activities", typo(nil), "Semiconductor")
	apitest.WantNames(t, c, "activities", typo(map[string]any{"fullText": true})) // activities: fuzzy only without fullText
	apitest.WantNames(t, c, "workspaces", map[string]any{"text": "semicondcutor"})
}

func TestSearchFiltersNestSortByManyFieldsAndCombineWithFullText(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	for _, w := range []map[string]any{
		{"name": "Alpha fund review", "source": "crm", "isPrivate": true},
		{"name": "Beta fund review", "source": "email", "isPrivate": false},
		{"name": "Gamma review", "source": "crm", "isPrivate": false, "isPersonal": true},
	} {
		c.Do("POST", "/v1/workspaces", w).Want(t, 201)
	}
	apitest.WantNames(t, c, "workspaces", map[string]any{"text": "fund review", "fullText": true, "sort": []any{map[string]any{"field": "name"}}},
		"Alpha fund review", "Beta fund review")
	apitest.WantNames(t, c, "workspaces", map[string]any{"filters": map[string]any{"or": []any{
		map[string]any{"field": "source", "operator": "eq", "value": "email"},
		map[string]any{"field": "isPrivate", "operator": "eq", "value": true, "and": []any{map[string]any{"field": "name", "operator": "startsWith", "value": "alp"}}},
	}}, "sort": []any{map[string]any{"field": "source"}, map[string]any{"field": "name", "direction": "desc"}}},
		"Alpha fund review", "Beta fund review")
	apitest.WantNames(t, c, "workspaces", map[string]any{"filters": map[string]any{"and": []any{
		map[string]any{"field": "source", "operator": "in", "value": []any{"crm"}},
		map[string]any{"field": "isPersonal", "operator": "ne", "value": true},
	}}}, "Alpha fund review")
}

func TestBadSearchesAre400NamingTheFieldOperatorOrParameter(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, tc := range []struct {
		query string
		body  any
		want  string
	}{
		{"", map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": "nope", "operator": "eq", "value": 1}}}}, `filters.and[0].field "nope" is not a searchable field of workspaces`},
		{"", map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": "name", "operator": "like", "value": "x"}}}}, "filters.and[0].operator"},
		{"", map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": "isPrivate", "operator": "eq", "value": "yes"}}}}, "filters.and[0].value must be a boolean"},
		{"", map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": "createdAt", "operator": "gt", "value": "yesterday"}}}}, "must be a date-time"},
		{"", map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": "name", "operator": "gt", "value": "m"}}}}, "cannot be compared with gt"},
		{"", map[string]any{"sort": []any{map[string]any{"field": "company", "direction": "sideways"}}}, "sort[0].direction"},
		{"", map[string]any{"text": 3}, "text must be a string"},
		{"", `{"text":`, "not valid JSON"},
		{"limit=401", nil, "limit must be an integer from 1 to 400"},
		{"limit=0", nil, "limit must be"},
		{"page=0", nil, "page must be"},
		{"page=27&limit=400", nil, "(page-1)*limit must be at most 10000"},
		{"page=10002", nil, "page reaches past"},
		{"sort=name", nil, "sort is not a parameter"},
	} {
		path := "/v1/workspaces/search"
		if tc.query != "" {
			path += "?" + tc.query
		}
		if msg := c.Do("POST", path, tc.body).Want(t, 400).Error(t); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: %q, want it to contain %q", tc.query, tc.body, msg, tc.want)
		}
	}
	// The deepest page allowed is exactly at offset 10,000.
	_, meta := apitest.Searched(t, c, "workspaces", "page=26&limit=400", nil, "name")
	if meta["page"] != 26.0 || meta["limit"] != 400.0 || meta["totalCount"] != 0.0 || meta["totalPages"] != 0.0 {
		t.Errorf("deepest page metadata %v", meta)
	}
	c.Do("POST", "/v1/workspaces/search?page=10001&limit=1", nil).Want(t, 200)
}

func TestSearchPagesCountEveryMatchAndShowCurrentRecordsOfTheCallersOrganizationOnly(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	a, b := e.Org(t), e.Org(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, a.Do("POST", "/v1/workspaces", map[string]any{"name": fmt.Sprintf("Deal room %d", i)}).Want(t, 201).Object(t)["id"].(string))
	}
	b.Do("POST", "/v1/workspaces", map[string]any{"name": "Deal room of B"}).Want(t, 201)
	got, meta := apitest.Searched(t, a, "workspaces", "page=2&limit=2", map[string]any{"text": "deal room", "sort": []any{map[string]any{"field": "name"}}}, "name")
	if !slices.Equal(got, []string{"Deal room 2", "Deal room 3"}) || meta["totalCount"] != 5.0 || meta["totalPages"] != 3.0 || meta["limit"] != 2.0 {
		t.Errorf("page 2: %v %v", got, meta)
	}
	// A record in a search is the record GET returns, byte for byte.
	r := a.Do("POST", "/v1/workspaces/search", map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": "id", "operator": "eq", "value": ids[0]}}}}).Want(t, 200)
	var found struct{ Data []json.RawMessage }
	var one struct{ Data json.RawMessage }
	r.Decode(t, &found)
	a.Do("GET", "/v1/workspaces/"+ids[0], nil).Want(t, 200).Decode(t, &one)
	if len(found.Data) != 1 || string(found.Data[0]) != string(one.Data) {
		t.Errorf("searched %s, got %s", found.Data, one.Data)
	}
	// Writes show in the very next search.
	a.Do("PUT", "/v1/workspaces/"+ids[1], map[string]any{"name": "Renamed room"}).Want(t, 200)
	a.Do("DELETE", "/v1/workspaces/"+ids[2], nil).Want(t, 204)
	apitest.WantNames(t, a, "workspaces", map[string]any{"text": "renamed"}, "Renamed room")
	got, _ = apitest.Searched(t, a, "workspaces", "", map[string]any{"text": "deal", "sort": []any{map[string]any{"field": "name"}}}, "name")
	if !slices.Equal(got, []string{"Deal room 0", "Deal room 3", "Deal room 4"}) {
		t.Errorf("after an update and a delete: %v", got)
	}
	apitest.WantNames(t, b, "workspaces", map[string]any{"text": "deal"}, "Deal room of B")
}

func TestCompanyDocumentAndActivitySearchesFindTheirOwnRecords(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	co := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Northwind Traders", "description": "wholesale food", "tags": []any{"logistics"}}).Want(t, 201).Object(t)
	c.Do("POST", "/v1/documents", map[string]any{"name": "Northwind deck", "type": "pitch_deck", "companyId": co["id"]}).Want(t, 201)
	// A company in a search is the company GET returns, byte for byte.
	var found struct{ Data []json.RawMessage }
	var got struct{ Data json.RawMessage }
	c.Do("POST", "/v1/companies/search", map[string]any{"text": "northwind"}).Want(t, 200).Decode(t, &found)
	c.Do("GET", "/v1/companies/"+co["id"].(string), nil).Want(t, 200).Decode(t, &got)
	if len(found.Data) != 1 || string(found.Data[0]) != string(got.Data) {
		t.Errorf("searched %s, got %s", found.Data, got.Data)
	}
	c.Do("POST", "/v1/activities", map[string]any{"subject": "Call with Northwind", "type": "Call", "participants": []any{map[string]any{"type": "company", "id": co["id"]}}}).Want(t, 201)
	apitest.WantNames(t, c, "companies", map[string]any{"text": "wholesale logistics"}, "Northwind Traders")
	apitest.WantNames(t, c, "documents", map[string]any{"text": "northwind", "filters": map[string]any{"and": []any{map[string]any{"field": "companyId", "operator": "eq", "value": co["id"]}}}}, "Northwind deck")
	apitest.WantNames(t, c, "activities", map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": "participants.id", "operator": "contains", "value": co["id"]}}}}, "Call with Northwind")
}

func TestEveryOperatorFiltersOverHTTPAndRefusesValuesOfTheWrongType(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, d := range []map[string]any{
		{"name": "Deck", "type": "pitch_deck", "size": 100, "mimeType": "application/pdf"},
		{"name": "Model", "type": "financials", "size": 2500},
		{"name": "Memo", "type": "memo"},
	} {
		c.Do("POST", "/v1/documents", d).Want(t, 201)
	}
	pred := func(field, op string, value any) map[string]any {
		return map[string]any{"filters": map[string]any{"and": []any{map[string]any{"field": field, "operator": op, "value": value}}}, "sort": []any{map[string]any{"field": "name"}}}
	}
	for _, tc := range []struct {
		body any
		want []string
	}{
		{pred("type", "eq", "memo"), []string{"Memo"}},
		{pred("type", "ne", "memo"), []string{"Deck", "Model"}},
		{pred("type", "in", []any{"memo", "financials"}), []string{"Memo", "Model"}},
		{pred("type", "nin", []any{"memo", "financials"}), []string{"Deck"}},
		{pred("size", "gt", 100), []string{"Model"}},
		{pred("size", "gte", 100), []string{"Deck", "Model"}},
		{pred("size", "lt", 2500), []string{"Deck"}},
		{pred("size", "lte", 2500), []string{"Deck", "Model"}},
		{pred("mimeType", "contains", "PDF"), []string{"Deck"}},
		{pred("name", "startsWith", "m"), []string{"Memo", "Model"}},
		{pred("size", "exists", false), []string{"Memo"}},
		{pred("createdAt", "lt", "2000-01-01T00:00:00Z"), nil},
	} {
		apitest.WantNames(t, c, "documents", tc.body, tc.want...)
	}
	for _, tc := range []struct {
		body any
		want string
	}{
		{pred("size", "gt", "big"), "filters.and[0].value must be an integer for size"},
		{pred("size", "in", []any{1, "two"}), "filters.and[0].value[1] must be an integer for size"},
		{pred("type", "in", "memo"), "filters.and[0].value must be an array of string values for in"},
		{pred("type", "gt", "a"), "cannot be compared with gt"},
		{pred("size", "contains", 1), "cannot be matched with contains"},
		{pred("size", "startsWith", "1"), "cannot be matched with startsWith"},
		{pred("size", "exists", 1), "must be true or false for exists"},
		{pred("type", "eq", nil), "must be a string for type, not null"},
		{pred("createdAt", "gte", "2026-13-01"), "must be a date-time (RFC 3339) for createdAt"},
	} {
		if msg := c.Do("POST", "/v1/documents/search", tc.body).Want(t, 400).Error(t); !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %q, want it to contain %q", tc.body, msg, tc.want)
		}
	}
}
