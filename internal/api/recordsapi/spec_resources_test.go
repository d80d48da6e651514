package recordsapi_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestAScoreIsTheWeightNormalizedMeanOfItsElementScores(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	company := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme"}))
	other := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Beta"}))
	fw := apitest.IDOf(t, c.Do("POST", "/v1/frameworks", map[string]any{"name": "Growth", "elements": []any{
		map[string]any{"id": "team", "name": "Team", "weight": 3},
		map[string]any{"id": "market", "name": "Market", "weight": 1},
		map[string]any{"id": "moat", "name": "Moat", "weight": 0.5},
	}}).Want(t, 201).Object(t))
	scr := apitest.IDOf(t, c.Do("POST", "/v1/screenings", map[string]any{"name": "Q3", "frameworkId": fw, "companyIds": []any{company, other}}).Want(t, 201).Object(t))

	s := c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": company, "screeningId": scr,
		"elementScores": []any{
			map[string]any{"elementId": "team", "score": 90, "reasoning": "repeat founders", "confidence": 80},
			map[string]any{"elementId": "market", "score": 40},
			map[string]any{"elementId": "moat", "score": 70},
		}, "metadata": map[string]any{"model": "m-1"}}).Want(t, 201).Object(t)
	// (3*90 + 1*40 + 0.5*70) / 4.5 = 345/4.5 = 76.6667 (4 decimals)
	if got := s["finalScore"]; got != 76.6667 {
		t.Fatalf("finalScore %v, want 76.6667", got)
	}
	if s["frameworkName"] != "Growth" || s["company"] != company || s["screeningId"] != scr {
		t.Fatalf("score record: %s", apitest.JSONOf(s))
	}
	els := s["elementScores"].([]any)
	if el := els[0].(map[string]any); el["elementName"] != "Team" || el["reasoning"] != "repeat founders" || el["confidence"] != 80.0 {
		t.Fatalf("element score: %s", apitest.JSONOf(el))
	}
	// The spec's record, field by field.
	for _, f := range []string{"id", "frameworkId", "frameworkName", "company", "screeningId", "finalScore", "elementScores", "metadata", "createdAt", "updatedAt"} {
		if _, ok := s[f]; !ok {
			t.Errorf("score has no %s", f)
		}
	}
	got := c.Do("GET", "/v1/scores/"+apitest.IDOf(t, s), nil).Want(t, 200).Object(t)
	if apitest.JSONOf(got) != apitest.JSONOf(s) {
		t.Fatalf("GET /v1/scores/{id} %s, created %s", apitest.JSONOf(got), apitest.JSONOf(s))
	}

	// Scoring only some elements averages over those.
	s2 := c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": other,
		"elementScores": []any{map[string]any{"elementId": "market", "score": 60}}}).Want(t, 201).Object(t)
	if s2["finalScore"] != 60.0 {
		t.Fatalf("one element scored: finalScore %v, want 60", s2["finalScore"])
	}
	// Updating the element scores recomputes.
	up := c.Do("PUT", "/v1/scores/"+apitest.IDOf(t, s2), map[string]any{"elementScores": []any{
		map[string]any{"elementId": "team", "score": 100}, map[string]any{"elementId": "market", "score": 0}}}).Want(t, 200).Object(t)
	if up["finalScore"] != 75.0 {
		t.Fatalf("after update finalScore %v, want 75", up["finalScore"])
	}

	// Scores by company and by screening.
	if l := c.Do("GET", "/v1/scores?company="+company, nil).Want(t, 200).List(t); len(l) != 1 || apitest.IDOf(t, l[0]) != apitest.IDOf(t, s) {
		t.Fatalf("scores of the company: %s", apitest.JSONOf(l))
	}
	if l := c.Do("GET", "/v1/scores?screeningId="+scr, nil).Want(t, 200).List(t); len(l) != 1 {
		t.Fatalf("scores of the screening: %s", apitest.JSONOf(l))
	}

	// Element scores are checked against the framework.
	apitest.WantError(t, c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": company,
		"elementScores": []any{map[string]any{"elementId": "nope", "score": 1}}}), 400, "elementScores[0].elementId")
	apitest.WantError(t, c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": company,
		"elementScores": []any{map[string]any{"elementId": "team", "score": 1}, map[string]any{"elementId": "team", "score": 2}}}), 400, "elementScores[1].elementId")
	apitest.WantError(t, c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": company,
		"elementScores": []any{map[string]any{"elementId": "team", "score": 101}}}), 400, "elementScores[0].score")
	apitest.WantError(t, c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": company, "finalScore": 99,
		"elementScores": []any{map[string]any{"elementId": "team", "score": 1}}}), 400, "finalScore", "read-only")
	// A framework in use by a screening cannot be deleted.
	apitest.WantError(t, c.Do("DELETE", "/v1/frameworks/"+fw, nil), 409, scr)

	// A score whose framework was deleted reads as stored and refuses changes with a 409.
	fw2 := apitest.IDOf(t, c.Do("POST", "/v1/frameworks", map[string]any{"name": "Gone", "elements": []any{
		map[string]any{"id": "x", "name": "X", "weight": 1}}}).Want(t, 201).Object(t))
	s3 := apitest.IDOf(t, c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw2, "company": company,
		"elementScores": []any{map[string]any{"elementId": "x", "score": 10}}}).Want(t, 201).Object(t))
	c.Do("DELETE", "/v1/frameworks/"+fw2, nil).Want(t, 204)
	c.Do("GET", "/v1/scores/"+s3, nil).Want(t, 200)
	apitest.WantError(t, c.Do("PUT", "/v1/scores/"+s3, map[string]any{"metadata": map[string]any{"a": 1}}), 409, "has been deleted")
}

func TestSectorsTakeTheSpecsBodyOnCreateAndUpdate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	ind := apitest.IDOf(t, c.Do("POST", "/v1/industries", map[string]any{"name": "Technology"}).Want(t, 201).Object(t))
	ind2 := apitest.IDOf(t, c.Do("POST", "/v1/industries", map[string]any{"name": "Health"}).Want(t, 201).Object(t))
	body := map[string]any{"industryId": ind, "name": "Software", "externalReference": map[string]any{"source": "pitchbook", "id": "PB-1"}}
	s := c.Do("POST", "/v1/sectors", body).Want(t, 201).Object(t)
	if s["industryId"] != ind || s["name"] != "Software" || apitest.JSONOf(s["externalReference"]) != `{"id":"PB-1","source":"pitchbook"}` {
		t.Fatalf("sector %s", apitest.JSONOf(s))
	}
	up := c.Do("PUT", "/v1/sectors/"+apitest.IDOf(t, s), map[string]any{"industryId": ind2, "name": "Digital health",
		"externalReference": map[string]any{"source": "crm", "id": "9"}}).Want(t, 200).Object(t)
	if up["industryId"] != ind2 || up["name"] != "Digital health" {
		t.Fatalf("updated sector %s", apitest.JSONOf(up))
	}
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "No industry"}, "industryId"},
		{map[string]any{"industryId": ind}, "name"},
		{map[string]any{"industryId": "ind_missing", "name": "X"}, "industryId"},
		{map[string]any{"industryId": ind, "name": 5}, "name"},
		{map[string]any{"industryId": ind, "name": "X", "externalReference": map[string]any{"source": "a", "url": "b"}}, "externalReference.url"},
		{map[string]any{"industryId": ind, "name": "X", "externalReference": "PB-1"}, "externalReference"},
	} {
		apitest.WantError(t, c.Do("POST", "/v1/sectors", tc.body), 400, tc.field)
	}
	apitest.WantError(t, c.Do("PUT", "/v1/sectors/sec_missing", map[string]any{"name": "X"}), 404)
	apitest.WantError(t, e.Anonymous(t).Do("POST", "/v1/sectors", body), 401)
	// The industry cannot go while it has sectors.
	apitest.WantError(t, c.Do("DELETE", "/v1/industries/"+ind2, nil), 409, apitest.IDOf(t, s))
}

func TestActivitiesPageWithinTheSpecsBounds(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, s := range []string{"a", "b", "c"} {
		c.Do("POST", "/v1/activities", map[string]any{"subject": s, "type": "Meeting", "startedAt": "2026-01-0" + string(rune('1'+len(s))) + "T10:00:00Z"}).Want(t, 201)
	}
	if l := c.Do("GET", "/v1/activities?page=2&limit=2", nil).Want(t, 200).List(t); len(l) != 1 {
		t.Fatalf("page 2 of 2: %d records", len(l))
	}
	if l := c.Do("GET", "/v1/activities?page=100&limit=1000", nil).Want(t, 200).List(t); len(l) != 0 {
		t.Fatalf("page 100: %d records", len(l))
	}
	for _, q := range []string{"page=0", "page=101", "page=x"} {
		apitest.WantError(t, c.Do("GET", "/v1/activities?"+q, nil), 400, "page")
	}
	apitest.WantError(t, c.Do("POST", "/v1/activities", map[string]any{"subject": "s", "type": "Call", "startedAt": "2026-01-02T10:00:00Z", "endedAt": "2026-01-01T10:00:00Z"}), 400, "endedAt")
}
