package api_test

import (
	"context"
	"slices"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestFundsAreSearchableAndHaveMCPToolsAndGoOnLists(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c, other := e.Org(t), e.Org(t)
	manager := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Harbor Growth"}))
	c.Do("POST", "/v1/funds", map[string]any{"name": "Harbor Growth Fund II", "vintageYear": 2019, "strategy": "growth", "managerCompanyId": manager}).Want(t, 201)
	c.Do("POST", "/v1/funds", map[string]any{"name": "Harbor Growth Fund III", "vintageYear": 2023, "strategy": "growth", "managerCompanyId": manager}).Want(t, 201)
	fund := apitest.IDOf(t, c.Do("POST", "/v1/funds", map[string]any{"name": "Quay Infrastructure I", "vintageYear": 2023, "strategy": "infrastructure"}).Want(t, 201).Object(t))
	other.Do("POST", "/v1/funds", map[string]any{"name": "Harbor Growth Fund II", "vintageYear": 2019}).Want(t, 201)

	apitest.WantNames(t, c, "funds", map[string]any{"text": "harbor", "sort": []any{map[string]any{"field": "vintageYear", "direction": "desc"}}},
		"Harbor Growth Fund III", "Harbor Growth Fund II")
	apitest.WantNames(t, c, "funds", map[string]any{"filters": map[string]any{"and": []any{
		map[string]any{"field": "vintageYear", "operator": "gte", "value": 2020},
		map[string]any{"field": "strategy", "operator": "eq", "value": "infrastructure"}}}}, "Quay Infrastructure I")
	apitest.WantNames(t, c, "funds", map[string]any{"filters": map[string]any{"and": []any{
		map[string]any{"field": "managerCompanyId", "operator": "eq", "value": manager}}}, "sort": []any{map[string]any{"field": "name"}}},
		"Harbor Growth Fund II", "Harbor Growth Fund III")

	s := mcpSession(t, e, c)
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"search_funds", "get_fund"} {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %s among %v", want, names)
		}
	}
	found, _ := call(t, s, "search_funds", map[string]any{"body": map[string]any{"text": "quay"}}, false)
	if data := found["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != fund {
		t.Errorf("search_funds: %v", found)
	}
	got, _ := call(t, s, "get_fund", map[string]any{"id": fund}, false)
	if got["data"].(map[string]any)["strategy"] != "infrastructure" {
		t.Errorf("get_fund: %v", got)
	}

	// A list of funds holds funds, with fund columns.
	lst := apitest.IDOf(t, c.Do("POST", "/v1/lists", map[string]any{"name": "Infrastructure", "resourceType": "fund",
		"columns": []any{map[string]any{"field": "vintageYear"}}}).Want(t, 201).Object(t))
	apitest.WantError(t, c.Do("POST", "/v1/lists", map[string]any{"name": "L", "resourceType": "fund",
		"columns": []any{map[string]any{"field": "canonicalName"}}}), 400, "columns[0].field", "vintageYear")
	entry := c.Do("POST", "/v1/lists/"+lst+"/entries", map[string]any{"recordId": fund}).Want(t, 201).Object(t)
	if rec, _ := entry["record"].(map[string]any); rec["id"] != fund {
		t.Errorf("entry %v", entry)
	}
	apitest.WantError(t, c.Do("POST", "/v1/lists/"+lst+"/entries", map[string]any{"recordId": manager}), 400, "recordId", "fund")
}
