package api_test

import (
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestEachSpecEndpointAnswersTheStatusesItsTableLists walks the endpoint
// tables of shared/spec/service-spec.md: each status an endpoint lists, in
// the situation the spec names (and the Errors rules: a run title of 1 to
// 120 characters, canonicalName required; 400 and 404 only where a table
// lists them). Statuses the spec does not show (201, 202, 204, 403, 409, …)
// are the service's decisions, in docs/decisions.md ("Issue 20: the
// specification's statuses").
func TestEachSpecEndpointAnswersTheStatusesItsTableLists(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c, other, anon := e.Org(t), e.Org(t), e.Anonymous(t)

	okWF := apitest.WorkflowWith(t, c, "Completes")
	failWF := apitest.WorkflowWith(t, c, "Fails", apitest.Step("stop", "fail", map[string]any{"message": "no"}))
	run := apitest.IDOf(t, apitest.RunToEnd(t, c, okWF, nil))
	failed := apitest.IDOf(t, apitest.RunToEnd(t, c, failWF, nil))
	company := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme"}))
	industry := apitest.IDOf(t, c.Do("POST", "/v1/industries", map[string]any{"name": "Tech"}).Want(t, 201).Object(t))
	sector := map[string]any{"industryId": industry, "name": "Software", "externalReference": map[string]any{"source": "crm", "id": "1"}}
	sectorID := apitest.IDOf(t, c.Do("POST", "/v1/sectors", sector).Want(t, 201).Object(t))
	fw := apitest.IDOf(t, c.Do("POST", "/v1/frameworks", map[string]any{"name": "F", "elements": []any{
		map[string]any{"id": "team", "name": "Team", "weight": 1}}}).Want(t, 201).Object(t))
	score := apitest.IDOf(t, c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": company,
		"elementScores": []any{map[string]any{"elementId": "team", "score": 50}}}).Want(t, 201).Object(t))
	list := apitest.IDOf(t, c.Do("POST", "/v1/lists", map[string]any{"name": "L", "resourceType": "company"}).Want(t, 201).Object(t))
	doc := apitest.IDOf(t, c.Do("POST", "/v1/documents", map[string]any{"name": "Deck", "type": "pdf", "companyId": company}).Want(t, 201).Object(t))
	c.Do("POST", "/v1/data/metric-points", map[string]any{"points": []any{map[string]any{"resource": "companies:" + company,
		"key": "metric:revenue", "date": "2025-01-31", "value": 1, "source": "crm"}}}).Want(t, 201)
	series := func(resource string) map[string]any {
		return map[string]any{"resource": resource, "key": "metric:revenue"}
	}

	type call struct {
		who          *apitest.Client
		method, path string
		body         any
	}
	for _, ep := range []struct {
		endpoint string
		answers  map[int][]call
	}{
		{"PATCH /v1/workflow-runs/{id}", map[int][]call{
			200: {{c, "PATCH", "/v1/workflow-runs/" + run, `{"title":"` + strings.Repeat("é", 120) + `"}`}},
			400: {{c, "PATCH", "/v1/workflow-runs/" + run, `{}`}, {c, "PATCH", "/v1/workflow-runs/" + run, `{"title":""}`},
				{c, "PATCH", "/v1/workflow-runs/" + run, `{"title":"` + strings.Repeat("a", 121) + `"}`}},
			401: {{anon, "PATCH", "/v1/workflow-runs/" + run, `{"title":"x"}`}},
			404: {{c, "PATCH", "/v1/workflow-runs/run_missing", `{"title":"x"}`}, {other, "PATCH", "/v1/workflow-runs/" + run, `{"title":"x"}`}},
		}},
		{"GET /v1/workflow-runs/{id}", map[int][]call{
			200: {{c, "GET", "/v1/workflow-runs/" + run, nil}},
			401: {{anon, "GET", "/v1/workflow-runs/" + run, nil}},
			404: {{c, "GET", "/v1/workflow-runs/run_missing", nil}, {other, "GET", "/v1/workflow-runs/" + run, nil}},
		}},
		{"POST /v1/workflow-runs/{id}/retry", map[int][]call{
			401: {{anon, "POST", "/v1/workflow-runs/" + failed + "/retry", nil}},
			404: {{c, "POST", "/v1/workflow-runs/run_missing/retry", nil}, {other, "POST", "/v1/workflow-runs/" + failed + "/retry", nil}},
			202: {{c, "POST", "/v1/workflow-runs/" + failed + "/retry", nil}},
		}},
		{"POST /v1/workflows", map[int][]call{
			201: {{c, "POST", "/v1/workflows", map[string]any{"name": "n", "description": "d"}}},
			400: {{c, "POST", "/v1/workflows", map[string]any{"description": "d"}}},
			401: {{anon, "POST", "/v1/workflows", map[string]any{"name": "n", "description": "d"}}},
		}},
		{"GET /v1/workflows/{id}", map[int][]call{
			200: {{c, "GET", "/v1/workflows/" + okWF, nil}},
			401: {{anon, "GET", "/v1/workflows/" + okWF, nil}},
			404: {{c, "GET", "/v1/workflows/wf_missing", nil}, {other, "GET", "/v1/workflows/" + okWF, nil}},
		}},
		{"POST /v1/companies", map[int][]call{
			201: {{c, "POST", "/v1/companies", map[string]any{"canonicalName": "Beta"}}},
			400: {{c, "POST", "/v1/companies", map[string]any{"website": "beta.com"}}},
			401: {{anon, "POST", "/v1/companies", map[string]any{"canonicalName": "Beta"}}},
		}},
		{"PUT /v1/companies/{id}", map[int][]call{
			200: {{c, "PUT", "/v1/companies/" + company, map[string]any{"sector": "Software"}}},
			400: {{c, "PUT", "/v1/companies/" + company, map[string]any{"sector": 5}}},
			401: {{anon, "PUT", "/v1/companies/" + company, map[string]any{"sector": "Software"}}},
			404: {{c, "PUT", "/v1/companies/cmp_missing", map[string]any{"sector": "Software"}}, {other, "PUT", "/v1/companies/" + company, map[string]any{"sector": "x"}}},
		}},
		{"GET /v1/companies", map[int][]call{
			// limit is clamped to 1..1000; direction is asc or desc.
			200: {{c, "GET", "/v1/companies?limit=0", nil}, {c, "GET", "/v1/companies?limit=5000&page=1&lt=cmp_z&sort=id&direction=asc", nil}},
			400: {{c, "GET", "/v1/companies?direction=ASC", nil}, {c, "GET", "/v1/companies?page=101", nil}},
			401: {{anon, "GET", "/v1/companies", nil}},
		}},
		{"POST /v1/sectors", map[int][]call{
			201: {{c, "POST", "/v1/sectors", sector}},
			400: {{c, "POST", "/v1/sectors", map[string]any{"industryId": "ind_missing", "name": "x"}}},
			401: {{anon, "POST", "/v1/sectors", sector}},
		}},
		{"PUT /v1/sectors/{id}", map[int][]call{
			200: {{c, "PUT", "/v1/sectors/" + sectorID, sector}},
			400: {{c, "PUT", "/v1/sectors/" + sectorID, map[string]any{"name": 5}}},
			401: {{anon, "PUT", "/v1/sectors/" + sectorID, sector}},
			404: {{c, "PUT", "/v1/sectors/sec_missing", sector}, {other, "PUT", "/v1/sectors/" + sectorID, map[string]any{"name": "x"}}},
		}},
		{"POST /v1/workspaces/search", map[int][]call{
			200: {{c, "POST", "/v1/workspaces/search?page=1&limit=400", `{}`}, {c, "POST", "/v1/workspaces/search?page=26&limit=400", `{}`}},
			401: {{anon, "POST", "/v1/workspaces/search", `{}`}},
		}},
		{"POST /v1/data/metric-series", map[int][]call{
			200: {{c, "POST", "/v1/data/metric-series", series("companies:" + company)}},
			// A record the body names that is not the organization's: 400, never 404.
			400: {{c, "POST", "/v1/data/metric-series", map[string]any{"key": "metric:revenue"}},
				{c, "POST", "/v1/data/metric-series", series("companies:cmp_missing")}, {other, "POST", "/v1/data/metric-series", series("companies:" + company)}},
			401: {{anon, "POST", "/v1/data/metric-series", series("companies:" + company)}},
		}},
		{"GET /v1/activities", map[int][]call{
			200: {{c, "GET", "/v1/activities?page=100&limit=1000", nil}, {c, "GET", "/v1/activities?page=1&limit=1", nil}},
			401: {{anon, "GET", "/v1/activities", nil}},
		}},
		{"GET /v1/enrichments/resources/{resourceType}/{resourceId}", map[int][]call{
			200: {{c, "GET", "/v1/enrichments/resources/companies/" + company, nil}},
			401: {{anon, "GET", "/v1/enrichments/resources/companies/" + company, nil}},
			404: {{c, "GET", "/v1/enrichments/resources/companies/cmp_missing", nil}, {other, "GET", "/v1/enrichments/resources/companies/" + company, nil}},
		}},
		{"GET /v1/scores/{id}", map[int][]call{
			200: {{c, "GET", "/v1/scores/" + score, nil}},
			401: {{anon, "GET", "/v1/scores/" + score, nil}},
			404: {{c, "GET", "/v1/scores/scr_missing", nil}, {other, "GET", "/v1/scores/" + score, nil}},
		}},
		{"GET /v1/documents/ids={ids}", map[int][]call{
			200: {{c, "GET", "/v1/documents/ids=" + doc + ",doc_missing", nil}, {other, "GET", "/v1/documents/ids=" + doc, nil}},
			401: {{anon, "GET", "/v1/documents/ids=" + doc, nil}},
		}},
		{"GET /v1/lists/{id}", map[int][]call{
			200: {{c, "GET", "/v1/lists/" + list, nil}},
			401: {{anon, "GET", "/v1/lists/" + list, nil}},
			404: {{c, "GET", "/v1/lists/lst_missing", nil}, {other, "GET", "/v1/lists/" + list, nil}},
		}},
		{"GET /v1/keys", map[int][]call{
			200: {{c, "GET", "/v1/keys", nil}},
			401: {{anon, "GET", "/v1/keys", nil}},
		}},
	} {
		for status, calls := range ep.answers {
			for _, k := range calls {
				r := k.who.Do(k.method, k.path, k.body)
				if r.Status != status {
					t.Errorf("%s: %s %.80s answered %d, want the spec's %d: %.300s", ep.endpoint, k.method, k.path, r.Status, status, r.Body)
				}
				if status == 401 && strings.TrimSpace(string(r.Body)) != `{"error":"invalid api key or clientId"}` {
					t.Errorf("%s: 401 body %s, want the spec's", ep.endpoint, r.Body)
				}
			}
		}
	}
	// The documents asked for are those of the organization, others left out.
	if got := c.Do("GET", "/v1/documents/ids="+doc+",doc_missing", nil).Want(t, 200).List(t); len(got) != 1 || got[0]["id"] != doc {
		t.Errorf("documents by ids: %s", apitest.JSONOf(got))
	}
	if got := other.Do("GET", "/v1/documents/ids="+doc, nil).Want(t, 200).List(t); len(got) != 0 {
		t.Errorf("another organization's documents by ids: %s", apitest.JSONOf(got))
	}
}
