package recordsapi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// similar asks for the records of resource similar to id, returning the
// values of field and the metadata.
func similar(t *testing.T, c *apitest.Client, resource, id, query string, body any, field string) ([]string, map[string]any) {
	t.Helper()
	return apitest.SearchPage(t, c, "/v1/"+resource+"/"+id+"/similar", query, body, field)
}

func TestSimilarCompaniesAreTheNearestByMeaningFilteredPagedAndNeverTheCompanyItself(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	ids := map[string]string{}
	for _, co := range []map[string]any{
		{"canonicalName": "Voltride", "description": "Builds electric cars and delivery vans with its own battery packs", "sector": "Automotive"},
		{"canonicalName": "Amperline", "description": "Manufactures lithium battery cells for electric vehicles", "sector": "Energy"},
		{"canonicalName": "Roadwise Motors", "description": "Designs electric trucks and buses for city fleets", "sector": "Automotive"},
		{"canonicalName": "Crumb & Co", "description": "A chain of bakeries selling bread, pastries and cakes", "sector": "Food"},
		{"canonicalName": "Lexorbit", "description": "Contract review software for law firms and lawyers", "sector": "Legal"},
		{"canonicalName": "Mediscan", "description": "Imaging software that helps radiologists read scans in hospitals", "sector": "Health"},
	} {
		ids[co["canonicalName"].(string)] = c.Do("POST", "/v1/companies", co).Want(t, 201).Object(t)["id"].(string)
	}
	got, meta := similar(t, c, "companies", ids["Voltride"], "", nil, "canonicalName")
	if len(got) != 5 || slices.Contains(got, "Voltride") {
		t.Fatalf("similar to Voltride: %v, want the 5 others, never itself", got)
	}
	if top := got[:2]; !slices.Contains(top, "Amperline") || !slices.Contains(top, "Roadwise Motors") {
		t.Errorf("similar to Voltride: %v, want the battery maker and the truck maker first", got)
	}
	if meta["ranking"] != "semantic" || meta["totalCount"] != 5.0 || meta["page"] != 1.0 || meta["totalPages"] != 1.0 || meta["semantic"] != nil {
		t.Errorf("metadata %v", meta)
	}
	// Filters apply before ranking.
	got, meta = similar(t, c, "companies", ids["Voltride"], "", map[string]any{"filters": map[string]any{"and": []any{
		map[string]any{"field": "sector", "operator": "ne", "value": "Automotive"}}}}, "canonicalName")
	if len(got) != 4 || got[0] != "Amperline" || slices.Contains(got, "Roadwise Motors") || meta["totalCount"] != 4.0 {
		t.Errorf("similar outside automotive: %v %v", got, meta)
	}
	// Pages continue each other.
	all, _ := similar(t, c, "companies", ids["Voltride"], "", nil, "canonicalName")
	var paged []string
	for page := 1; page <= 3; page++ {
		p, meta := similar(t, c, "companies", ids["Voltride"], fmt.Sprintf("page=%d&limit=2", page), nil, "canonicalName")
		if meta["totalCount"] != 5.0 || meta["totalPages"] != 3.0 {
			t.Errorf("page %d metadata %v", page, meta)
		}
		paged = append(paged, p...)
	}
	if !slices.Equal(paged, all) {
		t.Errorf("pages of 2: %v, want %v", paged, all)
	}
	// A changed text moves the record; a deleted one leaves.
	c.Do("PUT", "/v1/companies/"+ids["Crumb & Co"], map[string]any{"description": "Makes electric scooters and motorbikes with swappable batteries"}).Want(t, 200)
	if got, _ := similar(t, c, "companies", ids["Voltride"], "limit=3", nil, "canonicalName"); !slices.Contains(got, "Crumb & Co") {
		t.Errorf("after the bakery turned to scooters: %v, want it among the 3 nearest", got)
	}
	c.Do("DELETE", "/v1/companies/"+ids["Amperline"], nil).Want(t, 204)
	if got, _ := similar(t, c, "companies", ids["Voltride"], "", nil, "canonicalName"); slices.Contains(got, "Amperline") || len(got) != 4 {
		t.Errorf("after deleting Amperline: %v", got)
	}
	// Documents have it too.
	d1 := c.Do("POST", "/v1/documents", map[string]any{"name": "Supplier concentration risk memo"}).Want(t, 201).Object(t)["id"].(string)
	c.Do("POST", "/v1/documents", map[string]any{"name": "Dependence on a handful of vendors"}).Want(t, 201)
	c.Do("POST", "/v1/documents", map[string]any{"name": "Holiday party playlist"}).Want(t, 201)
	if got, _ := similar(t, c, "documents", d1, "", nil, "name"); len(got) != 2 || got[0] != "Dependence on a handful of vendors" {
		t.Errorf("documents similar to the supplier memo: %v", got)
	}
}

func TestSimilarRefusesWhatIsNotThereOrNotAsked(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c, other := e.Org(t), e.Org(t)
	id := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Voltride", "description": "electric cars"}).Want(t, 201).Object(t)["id"].(string)
	other.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Other org's twin", "description": "electric cars"}).Want(t, 201)
	// Another organization's record is not found, and its records never rank.
	other.Do("POST", "/v1/companies/"+id+"/similar", nil).Want(t, 404)
	if got, _ := similar(t, c, "companies", id, "", nil, "canonicalName"); len(got) != 0 {
		t.Errorf("similar in an organization of one company: %v, want none", got)
	}
	c.Do("POST", "/v1/companies/cmp_missing/similar", nil).Want(t, 404)
	apitest.WantParam(t, c.Do("POST", "/v1/companies/"+id+"/similar", map[string]any{"text": "cars"}).Want(t, 400), "text")
	apitest.WantParam(t, c.Do("POST", "/v1/companies/"+id+"/similar?sort=name", nil).Want(t, 400), "sort")
	apitest.WantParam(t, c.Do("POST", "/v1/companies/"+id+"/similar?limit=401", nil).Want(t, 400), "limit")
	apitest.WantParam(t, c.Do("POST", "/v1/companies/"+id+"/similar", map[string]any{"filters": map[string]any{"and": []any{
		map[string]any{"field": "size", "operator": "gt", "value": "ten"}}}}).Want(t, 400), "filters.and[0].field")
	c.Do("GET", "/v1/companies/"+id+"/similar", nil).Want(t, 405)
}

func TestSimilarRecordsAnswer501WithoutAnEmbeddingModel(t *testing.T) {
	t.Parallel()
	e := apitest.NewWith(t, apitest.Options{NoEmbeddings: true})
	c := e.Org(t)
	id := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Voltride", "description": "electric cars"}).Want(t, 201).Object(t)["id"].(string)
	r := c.Do("POST", "/v1/companies/"+id+"/similar", nil).Want(t, 501)
	if code := r.Header.Get("X-Error-Code"); code != "semantic_off" {
		t.Errorf("X-Error-Code %q, want semantic_off", code)
	}
	// Hybrid search ranks by keywords and says so.
	if got, meta := apitest.Searched(t, c, "companies", "", map[string]any{"text": "electric", "hybrid": true}, "canonicalName"); len(got) != 1 || meta["ranking"] != "keyword" {
		t.Errorf("hybrid without a model: %v %v", got, meta)
	}
}
