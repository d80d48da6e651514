package recordsapi_test

import (
	"slices"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Funds are one declaration (resources.Funds): these tests check what it
// derives over HTTP beside the contract suite's walk of every declared
// resource — its references, its search, its MCP tools and its place on
// lists.

func TestAFundsManagerAndDealsMustBeRecordsOfTheCallersOrganization(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c, other := e.Org(t), e.Org(t)
	manager := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Northgate Partners"}))
	theirs := apitest.IDOf(t, apitest.CreateCompany(t, other, map[string]any{"canonicalName": "Elsewhere Capital"}))
	deal := apitest.IDOf(t, c.Do("POST", "/v1/deals", map[string]any{"name": "Acme buyout"}).Want(t, 201).Object(t))
	theirDeal := apitest.IDOf(t, other.Do("POST", "/v1/deals", map[string]any{"name": "Their deal"}).Want(t, 201).Object(t))

	fund := c.Do("POST", "/v1/funds", map[string]any{"name": "  Northgate Fund IV  ", "vintageYear": 2021, "size": 750000000,
		"currency": "EUR", "strategy": "buyout", "managerCompanyId": manager, "dealIds": []any{deal}}).Want(t, 201).Object(t)
	id := apitest.IDOf(t, fund)
	if fund["name"] != "Northgate Fund IV" || fund["managerCompanyId"] != manager || apitest.JSONOf(fund["dealIds"]) != apitest.JSONOf([]any{deal}) {
		t.Fatalf("created %v", fund)
	}

	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"name": "F", "managerCompanyId": theirs}), 400,
		"managerCompanyId", "must be the id of a company of your organization")
	apitest.WantError(t, c.Do("PUT", "/v1/funds/"+id, map[string]any{"managerCompanyId": theirs}), 400, "managerCompanyId")
	apitest.WantError(t, c.Do("PUT", "/v1/funds/"+id, map[string]any{"dealIds": []any{deal, theirDeal}}), 400,
		"dealIds[1]", "must be the id of a deal of your organization")
	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"name": "F", "size": 10}), 400, "currency", "is required when size is set")
	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"name": "F", "currency": "eur"}), 400, "currency", "ISO 4217")
	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"name": "F", "vintageYear": 1850}), 400, "vintageYear", "from 1900 to 2100")
	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"name": "F", "vintageYear": 2020.5}), 400, "vintageYear", "integer")
	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"name": "F", "size": -1, "currency": "USD"}), 400, "size", "at least 0")
	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"name": "F", "strategy": "hedge"}), 400, "strategy", "must be one of buyout")
	apitest.WantError(t, c.Do("POST", "/v1/funds", map[string]any{"vintageYear": 2020}), 400, "name", "is required")
	// Another organization does not see the fund.
	apitest.WantError(t, other.Do("GET", "/v1/funds/"+id, nil), 404)

	// The list filters by manager and by strategy.
	c.Do("POST", "/v1/funds", map[string]any{"name": "Unmanaged Credit I", "strategy": "credit"}).Want(t, 201)
	if got := apitest.IDsOf(t, c.Do("GET", "/v1/funds?managerCompanyId="+manager, nil).Want(t, 200).List(t)); !slices.Equal(got, []string{id}) {
		t.Errorf("?managerCompanyId: %v, want [%s]", got, id)
	}
	if got := c.Do("GET", "/v1/funds?strategy=credit", nil).Want(t, 200).List(t); len(got) != 1 || got[0]["name"] != "Unmanaged Credit I" {
		t.Errorf("?strategy=credit: %v", got)
	}

	// As for every reference to a company or a deal, deleting the record
	// leaves the fund's reference as stored (docs/resources.md says so).
	c.Do("DELETE", "/v1/companies/"+manager, nil).Want(t, 204)
	c.Do("DELETE", "/v1/deals/"+deal, nil).Want(t, 204)
	got := c.Do("GET", "/v1/funds/"+id, nil).Want(t, 200).Object(t)
	if got["managerCompanyId"] != manager || apitest.JSONOf(got["dealIds"]) != apitest.JSONOf([]any{deal}) {
		t.Errorf("after the deletes: %v", got)
	}
	// A PUT that does not change the dangling references is accepted; one
	// that sets them again checks them.
	c.Do("PUT", "/v1/funds/"+id, map[string]any{"size": 800000000}).Want(t, 200)
	apitest.WantError(t, c.Do("PUT", "/v1/funds/"+id, map[string]any{"managerCompanyId": theirs}), 400, "managerCompanyId")
}
