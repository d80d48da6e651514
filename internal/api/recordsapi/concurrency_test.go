package recordsapi_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestExternalIDIsUniqueWithinAnOrganizationAndA409NamesTheCompanyHoldingIt(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	first := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "First", "externalId": "crm-1"})

	msg := apitest.WantError(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Second", "externalId": "crm-1"}), 409)
	if want := `externalId "crm-1" is already used by company ` + apitest.IDOf(t, first); msg != want {
		t.Errorf("error %q, want %q", msg, want)
	}
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Fatalf("a refused create stored a company: %s", apitest.JSONOf(list))
	}
	second := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Second"})
	apitest.WantError(t, c.Do("PUT", "/v1/companies/"+apitest.IDOf(t, second), map[string]any{"externalId": "crm-1"}), 409,
		`externalId "crm-1"`, apitest.IDOf(t, first))
	if got := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, second), nil).Want(t, 200).Object(t); !reflect.DeepEqual(got, second) {
		t.Errorf("a refused update changed the company: %s", apitest.JSONOf(got))
	}
	// Another organization has its own externalIds.
	apitest.CreateCompany(t, e.Org(t), map[string]any{"canonicalName": "Elsewhere", "externalId": "crm-1"})

	// Changing, clearing and deleting free the value.
	c.Do("PUT", "/v1/companies/"+apitest.IDOf(t, first), map[string]any{"externalId": "crm-2"}).Want(t, 200)
	c.Do("PUT", "/v1/companies/"+apitest.IDOf(t, second), map[string]any{"externalId": "crm-1"}).Want(t, 200)
	apitest.WantError(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Third", "externalId": "crm-2"}), 409, apitest.IDOf(t, first))
	c.Do("PUT", "/v1/companies/"+apitest.IDOf(t, second), map[string]any{"externalId": nil}).Want(t, 200)
	c.Do("DELETE", "/v1/companies/"+apitest.IDOf(t, first), nil).Want(t, 204)
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Third", "externalId": "crm-1"})
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Fourth", "externalId": "crm-2"})
	// Saving a company with its own externalId is no clash.
	third := apitest.Companies(t, c)[1]
	c.Do("PUT", "/v1/companies/"+apitest.IDOf(t, third), map[string]any{"externalId": third["externalId"], "description": "Same id."}).Want(t, 200)
}

func TestTwentyParallelCreatesWithOneExternalIDMakeOneCompany(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	rs := make([]*apitest.Response, 20)
	apitest.InParallel(len(rs), func(i int) {
		rs[i] = c.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprint("Racer ", i), "externalId": "race"})
	})
	if got := apitest.StatusCounts(rs); got[201] != 1 || got[409] != 19 {
		t.Fatalf("statuses %v, want one 201 and nineteen 409", got)
	}
	list := apitest.Companies(t, c)
	if len(list) != 1 {
		t.Fatalf("%d companies, want 1", len(list))
	}
	for _, r := range rs {
		if r.Status == 409 {
			apitest.WantError(t, r, 409, `externalId "race" is already used by company `+apitest.IDOf(t, list[0]))
		}
	}
}
