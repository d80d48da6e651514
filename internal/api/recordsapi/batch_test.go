package recordsapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// batchResults reads a batch's answer: one result per operation.
func batchResults(t *testing.T, r *apitest.Response) []map[string]any {
	t.Helper()
	r.Want(t, 200)
	return r.List(t)
}

func TestABatchAnswersEachOperationAsIfSentAloneAndOneFailureRollsBackNothing(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	existing := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Old", "externalId": "ext-old"}).Want(t, 201)
	oldID := apitest.IDOf(t, existing.Object(t))
	gone := apitest.IDOf(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Gone"}).Want(t, 201).Object(t))

	res := batchResults(t, c.Do("POST", "/v1/companies/batch", map[string]any{"operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Acme", "externalId": "ext-1"}},
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": 7}},
		map[string]any{"op": "update", "id": oldID, "ifMatch": `"1"`, "data": map[string]any{"sector": "Robotics"}},
		map[string]any{"op": "update", "id": oldID, "ifMatch": `"1"`, "data": map[string]any{"sector": "Stale"}},
		map[string]any{"op": "upsert", "match": "externalId", "data": map[string]any{"canonicalName": "Acme 2", "externalId": "ext-1"}},
		map[string]any{"op": "upsert", "match": "externalId", "data": map[string]any{"canonicalName": "Brand new", "externalId": "ext-2"}},
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Dup", "externalId": "ext-2"}},
		map[string]any{"op": "delete", "id": gone},
		map[string]any{"op": "delete", "id": gone},
	}}))
	apitest.WantStatuses(t, res, 201, 400, 200, 412, 200, 201, 409, 204, 404)
	if res[1]["param"] != "canonicalName" || res[1]["code"] != "invalid_body" || !strings.Contains(res[1]["error"].(string), "canonicalName") {
		t.Errorf("the invalid create answered %s", apitest.JSONOf(res[1]))
	}
	if res[6]["code"] != "unique_violation" || res[6]["param"] != "externalId" {
		t.Errorf("the duplicate create answered %s", apitest.JSONOf(res[6]))
	}
	if _, ok := res[7]["data"]; ok {
		t.Errorf("a delete answered data: %s", apitest.JSONOf(res[7]))
	}
	acme := res[0]["data"].(map[string]any)
	if upserted := res[4]["data"].(map[string]any); upserted["id"] != acme["id"] || upserted["canonicalName"] != "Acme 2" {
		t.Errorf("the upsert of ext-1 wrote %s, want company %s renamed", apitest.JSONOf(upserted), acme["id"])
	}
	got := c.Do("GET", "/v1/companies/"+oldID, nil).Want(t, 200).Object(t)
	if got["sector"] != "Robotics" {
		t.Errorf("the company's sector is %v, want the first update's", got["sector"])
	}
	c.Do("GET", "/v1/companies/"+gone, nil).Want(t, 404)
	if list := apitest.Companies(t, c); len(list) != 3 {
		t.Errorf("%d companies, want 3 (Old, Acme 2, Brand new): %s", len(list), apitest.JSONOf(list))
	}
}

func TestAnAtomicBatchWritesEverythingOrNothingAndNamesTheOperationAtFault(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	taken := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Holder", "externalId": "taken"}).Want(t, 201)
	holder := apitest.IDOf(t, taken.Object(t))

	// A unique value already taken: found when the transaction commits.
	r := c.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "A"}},
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "B", "externalId": "taken"}},
	}})
	apitest.WantError(t, r, 409, "operation 1 (create)", "nothing was written", "already used")
	apitest.WantParam(t, r, "")
	// Invalid data: found before anything is sent.
	r = c.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "A"}},
		map[string]any{"op": "update", "id": holder, "data": map[string]any{"website": 5}},
	}})
	apitest.WantError(t, r, 400, "operation 1 (update)", "website")
	apitest.WantParam(t, r, "operations[1].data.website")
	// A stale ifMatch.
	r = c.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "A"}},
		map[string]any{"op": "delete", "id": holder, "ifMatch": `"9"`},
	}})
	apitest.WantError(t, r, 412, "operation 1 (delete)")
	apitest.WantParam(t, r, "")
	// One record written twice.
	r = c.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "update", "id": holder, "data": map[string]any{"sector": "x"}},
		map[string]any{"op": "update", "id": holder, "data": map[string]any{"industry": "y"}},
	}})
	apitest.WantError(t, r, 400, "operations 0 and 1 write the same item")
	apitest.WantParam(t, r, "atomic")
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Fatalf("failed atomic batches left %d companies, want only the holder: %s", len(list), apitest.JSONOf(list))
	}
	if got := c.Do("GET", "/v1/companies/"+holder, nil).Want(t, 200).Object(t); got["sector"] != nil {
		t.Errorf("a failed atomic batch changed the holder: %s", apitest.JSONOf(got))
	}

	res := batchResults(t, c.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "A", "externalId": "a"}},
		map[string]any{"op": "upsert", "match": "externalId", "data": map[string]any{"canonicalName": "Holder 2", "externalId": "taken"}},
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "B"}},
	}}))
	apitest.WantStatuses(t, res, 201, 200, 201)
	if list := apitest.Companies(t, c); len(list) != 3 {
		t.Errorf("%d companies after the atomic batch, want 3", len(list))
	}
	if got := c.Do("GET", "/v1/companies/"+holder, nil).Want(t, 200); got.Object(t)["canonicalName"] != "Holder 2" || got.Header.Get("ETag") != `"2"` {
		t.Errorf("the upserted holder is %s (ETag %s)", got.Body, got.Header.Get("ETag"))
	}
}

func TestAnAtomicBatchTooLargeForOneTransactionIsRefusedNamingTheLimit(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	var ops []any
	for i := range 40 {
		// Each create of a company with an externalId writes the record,
		// its uniqueness item and its change-feed entry.
		ops = append(ops, map[string]any{"op": "create", "data": map[string]any{"canonicalName": fmt.Sprint("C", i), "externalId": fmt.Sprint("x", i)}})
	}
	apitest.WantError(t, c.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": ops}), 400, "atomic", "at most 100")
	if list := apitest.Companies(t, c); len(list) != 0 {
		t.Errorf("%d companies written by a refused batch", len(list))
	}
	// Without atomic, all of them.
	res := batchResults(t, c.Do("POST", "/v1/companies/batch", map[string]any{"operations": ops}))
	for _, r := range res {
		if apitest.Num(r["status"]) != 201 {
			t.Fatalf("result %s", apitest.JSONOf(r))
		}
	}
}

func TestBadBatchBodiesAreRefusedNamingTheOperationAndField(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	many := make([]any, 101)
	for i := range many {
		many[i] = map[string]any{"op": "delete", "id": "x"}
	}
	for _, tc := range []struct {
		body  any
		param string
		text  string
	}{
		{map[string]any{}, "operations", "required"},
		{map[string]any{"operations": []any{}}, "operations", "1 to 100"},
		{map[string]any{"operations": many}, "operations", "100"},
		{map[string]any{"operations": []any{map[string]any{"data": map[string]any{}}}}, "operations[0].op", "required"},
		{map[string]any{"operations": []any{map[string]any{"op": "merge"}}}, "operations[0].op", "create, update, upsert"},
		{map[string]any{"operations": []any{map[string]any{"op": "update", "data": map[string]any{}}}}, "operations[0].id", "required for update"},
		{map[string]any{"operations": []any{map[string]any{"op": "delete", "id": "x", "data": map[string]any{}}}}, "operations[0].data", "does not apply"},
		{map[string]any{"operations": []any{map[string]any{"op": "upsert", "data": map[string]any{}}}}, "operations[0].match", "required"},
		{map[string]any{"operations": []any{map[string]any{"op": "update", "id": "x", "ifMatch": "3", "data": map[string]any{}}}}, "operations[0].ifMatch", "entity tag"},
		{map[string]any{"operations": []any{map[string]any{"op": "create", "data": []any{}}}}, "operations[0].data", "object"},
		{map[string]any{"operations": []any{}, "atomic": "yes"}, "atomic", "boolean"},
		{map[string]any{"operations": []any{}, "extra": 1}, "extra", ""},
	} {
		apitest.WantError(t, c.Do("POST", "/v1/companies/batch", tc.body), 400, tc.param, tc.text)
	}
	// An upsert by a field that is not unique: that operation's 400.
	res := batchResults(t, c.Do("POST", "/v1/companies/batch", map[string]any{"operations": []any{
		map[string]any{"op": "upsert", "match": "website", "data": map[string]any{"canonicalName": "A", "website": "a.com"}}}}))
	if apitest.Num(res[0]["status"]) != 400 || res[0]["param"] != "match" || !strings.Contains(res[0]["error"].(string), "externalId") {
		t.Errorf("upsert by website answered %s", apitest.JSONOf(res[0]))
	}
}

func TestUpsertByAUniqueFieldCreatesThenUpdatesAndTwentyParallelUpsertsMakeOneRecord(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	first := c.Do("PUT", "/v1/companies?match=externalId", map[string]any{"canonicalName": "Acme", "externalId": "crm-1", "tags": []any{"a"}}).Want(t, 201)
	id := apitest.IDOf(t, first.Object(t))
	second := c.Do("PUT", "/v1/companies?match=externalId", map[string]any{"externalId": "crm-1", "sector": "Robotics"}).Want(t, 200)
	if got := second.Object(t); apitest.IDOf(t, got) != id || got["sector"] != "Robotics" || got["canonicalName"] != "Acme" || second.Header.Get("ETag") != `"2"` {
		t.Errorf("the second upsert answered %s (ETag %s)", second.Body, second.Header.Get("ETag"))
	}
	apitest.WantError(t, c.Do("PUT", "/v1/companies", map[string]any{"externalId": "crm-1"}), 400, "match", "required")
	apitest.WantError(t, c.Do("PUT", "/v1/companies?match=canonicalName", map[string]any{"canonicalName": "A"}), 400, "match", "externalId")
	apitest.WantError(t, c.Do("PUT", "/v1/companies?match=externalId", map[string]any{"canonicalName": "A"}), 400, "externalId", "required")
	apitest.WantError(t, c.Do("PUT", "/v1/companies?match=externalId", map[string]any{"externalId": "new-one"}), 400, "canonicalName", "required")

	rs := make([]*apitest.Response, 20)
	apitest.InParallel(len(rs), func(i int) {
		rs[i] = c.Do("PUT", "/v1/companies?match=externalId", map[string]any{"canonicalName": fmt.Sprint("Par ", i), "externalId": "crm-par"})
	})
	created, ids := 0, map[string]bool{}
	for _, r := range rs {
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("a parallel upsert answered %d %s", r.Status, r.Body)
		}
		if r.Status == 201 {
			created++
		}
		ids[apitest.IDOf(t, r.Object(t))] = true
	}
	if created != 1 || len(ids) != 1 {
		t.Errorf("20 parallel upserts: %d created, %d records; want 1 and 1", created, len(ids))
	}
	if list := apitest.Companies(t, c); len(list) != 2 {
		t.Errorf("%d companies, want 2", len(list))
	}
}

func TestEveryDeclaredResourceWithAUniqueFieldUpsertsByIt(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	for _, d := range resources.All() {
		unique := d.UniqueFields()
		if len(unique) == 0 {
			apitest.WantError(t, c.Do("PUT", "/v1/"+d.Name+"?match=externalId", map[string]any{}), 405, "", "")
			continue
		}
		body := apitest.Sample(t, c, d, true)
		first := c.Do("PUT", "/v1/"+d.Name+"?match="+unique[0], body)
		if first.Status != http.StatusCreated {
			t.Errorf("%s: the first upsert answered %d %s", d.Name, first.Status, first.Body)
			continue
		}
		again := c.Do("PUT", "/v1/"+d.Name+"?match="+unique[0], body).Want(t, 200)
		if apitest.IDOf(t, again.Object(t)) != apitest.IDOf(t, first.Object(t)) {
			t.Errorf("%s: the second upsert wrote another record", d.Name)
		}
		res := batchResults(t, c.Do("POST", "/v1/"+d.Name+"/batch", map[string]any{"operations": []any{
			map[string]any{"op": "upsert", "match": unique[0], "data": body},
			map[string]any{"op": "delete", "id": apitest.IDOf(t, first.Object(t))},
		}}))
		apitest.WantStatuses(t, res, 200, 204)
	}
}
