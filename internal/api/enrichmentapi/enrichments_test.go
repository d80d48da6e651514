package enrichmentapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/store"
)

// enrichOrg is an organization with one company whose candidates tests write.
type enrichOrg struct {
	c  *apitest.Client
	id string
}

func newEnrichOrg(t *testing.T, e *apitest.Env) *enrichOrg {
	t.Helper()
	c := e.Org(t)
	id := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme Enriched"}).Want(t, 201).Object(t)["id"].(string)
	return &enrichOrg{c: c, id: id}
}

func (o *enrichOrg) path() string { return "/v1/enrichments/resources/companies/" + o.id }

// add writes candidates (source provider, confidence 50 unless set) and
// returns them as answered.
func (o *enrichOrg) add(t *testing.T, values ...map[string]any) []map[string]any {
	t.Helper()
	for _, v := range values {
		if _, ok := v["source"]; !ok {
			v["source"] = "provider"
		}
		if _, ok := v["confidence"]; !ok {
			v["confidence"] = 50
		}
	}
	return o.c.Do("POST", o.path(), map[string]any{"values": values}).Want(t, 201).List(t)
}

func (o *enrichOrg) company(t *testing.T) map[string]any {
	t.Helper()
	return o.c.Do("GET", "/v1/companies/"+o.id, nil).Want(t, 200).Object(t)
}

func cand(prop string, value any, kv ...any) map[string]any {
	m := map[string]any{"property": prop, "value": value}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func TestReconciliationPicksTheWinnerByTheDocumentedRules(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cases := []struct {
		name string
		// steps: values to add in order, then an action on the n-th added value
		batches [][]map[string]any
		action  func(t *testing.T, o *enrichOrg, added []map[string]any)
		want    any
	}{
		{name: "the highest confidence wins",
			batches: [][]map[string]any{{cand("sector", "Fintech", "confidence", 60), cand("sector", "Banking", "confidence", 90)}},
			want:    "Banking"},
		{name: "a pin beats a higher confidence",
			batches: [][]map[string]any{{cand("sector", "Fintech", "confidence", 10), cand("sector", "Banking", "confidence", 90)}},
			action: func(t *testing.T, o *enrichOrg, added []map[string]any) {
				o.c.Do("PATCH", o.path()+"/"+added[0]["id"].(string), map[string]any{"pinned": true}).Want(t, 200)
			},
			want: "Fintech"},
		{name: "the most recently pinned wins among pins",
			batches: [][]map[string]any{{cand("sector", "A"), cand("sector", "B")}},
			action: func(t *testing.T, o *enrichOrg, added []map[string]any) {
				o.c.Do("PATCH", o.path()+"/"+added[1]["id"].(string), map[string]any{"pinned": true}).Want(t, 200)
				o.c.Do("PATCH", o.path()+"/"+added[0]["id"].(string), map[string]any{"pinned": true}).Want(t, 200)
			},
			want: "A"},
		{name: "a tie of confidence goes to the user over a provider",
			batches: [][]map[string]any{{cand("sector", "Provider's", "source", "provider"), cand("sector", "User's", "source", "user")}},
			want:    "User's"},
		{name: "a tie of confidence goes to a provider over a workflow and a workflow over the web",
			batches: [][]map[string]any{{cand("sector", "Web's", "source", "web"), cand("sector", "Workflow's", "source", "workflow"), cand("sector", "Provider's", "source", "provider")}},
			want:    "Provider's"},
		{name: "a workflow beats the web",
			batches: [][]map[string]any{{cand("sector", "Web's", "source", "web"), cand("sector", "Workflow's", "source", "workflow")}},
			want:    "Workflow's"},
		{name: "a tie of confidence and source goes to the newer capture",
			batches: [][]map[string]any{{cand("sector", "New", "capturedOn", "2026-02-01T00:00:00Z"), cand("sector", "Old", "capturedOn", "2025-02-01T00:00:00Z")}},
			want:    "New"},
		{name: "a full tie goes to the later value",
			batches: [][]map[string]any{{cand("sector", "First", "capturedOn", "2026-02-01T00:00:00Z")}, {cand("sector", "Second", "capturedOn", "2026-02-01T00:00:00Z")}},
			want:    "Second"},
		{name: "unpinning falls back to the highest confidence",
			batches: [][]map[string]any{{cand("sector", "Pinned", "confidence", 10), cand("sector", "Confident", "confidence", 90)}},
			action: func(t *testing.T, o *enrichOrg, added []map[string]any) {
				p := o.path() + "/" + added[0]["id"].(string)
				o.c.Do("PATCH", p, map[string]any{"pinned": true}).Want(t, 200)
				if got := o.company(t)["sector"]; got != "Pinned" {
					t.Errorf("pinned: sector %v", got)
				}
				o.c.Do("PATCH", p, map[string]any{"pinned": false}).Want(t, 200)
			},
			want: "Confident"},
		{name: "deleting the winner falls back to the next",
			batches: [][]map[string]any{{cand("sector", "Second", "confidence", 40), cand("sector", "Winner", "confidence", 90)}},
			action: func(t *testing.T, o *enrichOrg, added []map[string]any) {
				o.c.Do("DELETE", o.path()+"/"+added[1]["id"].(string), nil).Want(t, 204)
			},
			want: "Second"},
		{name: "deleting the last candidate clears the attribute",
			batches: [][]map[string]any{{cand("sector", "Only")}},
			action: func(t *testing.T, o *enrichOrg, added []map[string]any) {
				o.c.Do("DELETE", o.path()+"/"+added[0]["id"].(string), nil).Want(t, 204)
			},
			want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newEnrichOrg(t, e)
			var added []map[string]any
			for _, b := range tc.batches {
				added = append(added, o.add(t, b...)...)
			}
			if tc.action != nil {
				tc.action(t, o, added)
			}
			co := o.company(t)
			if co["sector"] != tc.want {
				t.Errorf("sector = %v, want %v", co["sector"], tc.want)
			}
			checkConsistent(t, o, co)
		})
	}
}

// checkConsistent checks that the company's enrichment field and values
// are the ranking of its stored candidates.
func checkConsistent(t *testing.T, o *enrichOrg, co map[string]any) {
	t.Helper()
	vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t)
	byProp := map[string][]map[string]any{}
	for _, v := range vals {
		byProp[v["property"].(string)] = append(byProp[v["property"].(string)], v)
	}
	enr := co["enrichment"].(map[string]any)
	if len(enr) != len(byProp) {
		t.Errorf("enrichment has %d properties, the listing %d", len(enr), len(byProp))
	}
	for p, vs := range byProp {
		shown, _ := enr[p].([]any)
		if len(shown) != min(len(vs), 10) {
			t.Errorf("%s: enrichment shows %d candidates, %d stored", p, len(shown), len(vs))
			continue
		}
		for i, s := range shown {
			if s.(map[string]any)["value"] != shownText(vs[i]["value"]) {
				t.Errorf("%s: shown candidate %d is %v, listing has %v", p, i, s, vs[i]["value"])
			}
		}
		if fmt.Sprint(dropNulls(co[p])) != fmt.Sprint(dropNulls(vs[0]["value"])) {
			t.Errorf("%s = %v, want the first ranked %v", p, co[p], vs[0]["value"])
		}
	}
}

func TestAUserEditThroughTheCompanyBeatsAProviderOfHigherConfidence(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	o.c.Do("PUT", "/v1/companies/"+o.id, map[string]any{"website": "https://mine.example"}).Want(t, 200)
	o.add(t, cand("website", "https://provider.example", "confidence", 99))
	co := o.company(t)
	if co["website"] != "https://mine.example" {
		t.Errorf("website = %v, want the user's", co["website"])
	}
	vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t)
	if len(vals) != 2 || vals[0]["source"] != "user" || vals[0]["pinned"] != true {
		t.Errorf("candidates %v, want the user's pinned first", vals)
	}
	checkConsistent(t, o, co)
}

func TestEnrichmentValuesAnswerWithTheSpecFields(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	o := newEnrichOrg(t, e)
	got := o.add(t, cand("employeeCount", 120, "provider", "crunchbase", "sourceId", "cb-1", "confidence", 70.5, "capturedOn", "2026-01-31T09:30:00Z"))
	v := got[0]
	if id, _ := v["id"].(string); !strings.HasPrefix(id, "env_") {
		t.Errorf("id %v", v["id"])
	}
	want := map[string]any{"property": "employeeCount", "value": 120.0, "provider": "crunchbase", "source": "provider",
		"sourceId": "cb-1", "confidence": 70.5, "capturedOn": "2026-01-31T09:30:00.000Z", "pinned": false}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %v, want %v", k, v[k], w)
		}
	}
	listed := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t)
	if len(listed) != 1 || listed[0]["id"] != v["id"] {
		t.Errorf("listing %v", listed)
	}
	co := o.company(t)
	if co["employeeCount"] != 120.0 || co["lastEnrichedAt"] == nil {
		t.Errorf("company employeeCount %v, lastEnrichedAt %v", co["employeeCount"], co["lastEnrichedAt"])
	}
	c := co["enrichment"].(map[string]any)["employeeCount"].([]any)[0].(map[string]any)
	if c["value"] != "120" || c["source"] != "provider" || c["confidence"] != 70.5 || c["pinned"] != false || c["discoveredAt"] != "2026-01-31T09:30:00.000Z" {
		t.Errorf("candidate %v", c)
	}
}

func TestEveryEnrichablePropertyAcceptsAValueOfItsType(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	good := []map[string]any{
		cand("website", "acme.example"), cand("linkedinUrl", "https://linkedin.com/company/acme"), cand("description", "Makes things.\nMany."),
		cand("shortDescription", "Makes things"), cand("sector", "Tech"), cand("subsector", "SaaS"), cand("industry", "Software"),
		cand("location", map[string]any{"city": "Paris", "country": "FR"}), cand("employeeCount", 12), cand("ownershipStatus", "private"),
		cand("lastValuation", 1.5e7), cand("lastAmountRaised", 2000000), cand("totalMoneyRaised", 3000000.5), cand("lastRoundDate", "2025-06-30"),
		cand("lastFinancials", map[string]any{"revenue": 10}), cand("alternativeNames", []string{"Acme Inc"}),
	}
	o.add(t, good...)
	co := o.company(t)
	for _, v := range good {
		if got, want := fmt.Sprint(co[v["property"].(string)]), fmt.Sprint(normalizeJSON(v["value"])); got != want {
			t.Errorf("%s = %s, want %s", v["property"], got, want)
		}
	}
	checkConsistent(t, o, co)
}

// shownText is a value as a company's enrichment field shows it.
func shownText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// dropNulls leaves out an object's null members (a location's unknown parts).
func dropNulls(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, e := range m {
		if e != nil {
			out[k] = e
		}
	}
	return out
}

// normalizeJSON is v as it reads back from JSON.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	}
	return v
}

func TestAWrongValueIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	cases := []struct {
		name  string
		value map[string]any
		field string
	}{
		{"employeeCount not an integer", cand("employeeCount", 1.5), "values[1].value"},
		{"employeeCount a string", cand("employeeCount", "12"), "values[1].value"},
		{"lastRoundDate not a date", cand("lastRoundDate", "30/06/2025"), "values[1].value"},
		{"website not a URL", cand("website", "not a url"), "values[1].value"},
		{"linkedinUrl not a URL", cand("linkedinUrl", "linkedin"), "values[1].value"},
		{"lastValuation not a number", cand("lastValuation", "big"), "values[1].value"},
		{"location not an object", cand("location", "Paris"), "values[1].value"},
		{"location with an unknown part", cand("location", map[string]any{"planet": "Mars"}), "values[1].value.planet"},
		{"alternativeNames not an array", cand("alternativeNames", "Acme"), "values[1].value"},
		{"lastFinancials not an object", cand("lastFinancials", 3), "values[1].value"},
		{"sector not a string", cand("sector", 3), "values[1].value"},
		{"null value", cand("sector", nil), "values[1].value"},
		{"confidence above 100", cand("sector", "x", "confidence", 101), "values[1].confidence"},
		{"confidence below 0", cand("sector", "x", "confidence", -1), "values[1].confidence"},
		{"unknown property", cand("color", "red"), "values[1].property"},
		{"unknown source", cand("sector", "x", "source", "rumour"), "values[1].source"},
		{"document source without sourceId", cand("sector", "x", "source", "document"), "values[1].sourceId"},
		{"document source naming no document", cand("sector", "x", "source", "document", "sourceId", "doc_nope"), "values[1].sourceId"},
		{"bad capturedOn", cand("sector", "x", "capturedOn", "yesterday"), "values[1].capturedOn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"values": []map[string]any{
				{"property": "sector", "value": "ok", "source": "provider", "confidence": 5}, tc.value}}
			if _, ok := tc.value["source"]; !ok {
				tc.value["source"] = "provider"
			}
			if _, ok := tc.value["confidence"]; !ok {
				tc.value["confidence"] = 50
			}
			msg := o.c.Do("POST", o.path(), body).Want(t, 400).Error(t)
			if !strings.Contains(msg, tc.field) {
				t.Errorf("error %q does not name %s", msg, tc.field)
			}
		})
	}
	if vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t); len(vals) != 0 {
		t.Errorf("refused batches stored %v", vals)
	}
	many := make([]map[string]any, 51)
	for i := range many {
		many[i] = cand("sector", "x", "source", "web", "confidence", 1)
	}
	o.c.Do("POST", o.path(), map[string]any{"values": many}).Want(t, 400)
	o.c.Do("POST", o.path(), map[string]any{"values": []any{}}).Want(t, 400)
}

func TestADocumentCandidateNamesADocumentOfTheOrganization(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	doc := o.c.Do("POST", "/v1/documents", map[string]any{"name": "deck.pdf", "type": "pdf", "companyId": o.id}).Want(t, 201).Object(t)["id"].(string)
	o.add(t, cand("sector", "From the deck", "source", "document", "sourceId", doc))
	other := newEnrichOrg(t, e)
	other.c.Do("POST", other.path(), map[string]any{"values": []any{cand("sector", "x", "source", "document", "sourceId", doc, "confidence", 1)}}).Want(t, 400)
}

func TestUnknownResourcesAndValuesAnswer404(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	added := o.add(t, cand("sector", "x"))
	body := map[string]any{"values": []any{cand("sector", "x", "source", "web", "confidence", 1)}}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/enrichments/resources/planets/" + o.id},
		{"POST", "/v1/enrichments/resources/planets/" + o.id},
		{"GET", "/v1/enrichments/resources/companies/cmp_nope"},
		{"POST", "/v1/enrichments/resources/companies/cmp_nope"},
		{"PATCH", o.path() + "/env_nope"},
		{"DELETE", o.path() + "/env_nope"},
		{"PATCH", "/v1/enrichments/resources/companies/cmp_nope/" + added[0]["id"].(string)},
	} {
		var b any
		switch tc.method {
		case "POST":
			b = body
		case "PATCH":
			b = map[string]any{"pinned": true}
		}
		o.c.Do(tc.method, tc.path, b).Want(t, 404)
	}
}

func TestAnotherOrganizationSeesAndChangesNoneOfTheValues(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	added := o.add(t, cand("sector", "Mine"))
	stranger := e.Org(t)
	stranger.Do("GET", o.path(), nil).Want(t, 404)
	stranger.Do("POST", o.path(), map[string]any{"values": []any{cand("sector", "x", "source", "web", "confidence", 100)}}).Want(t, 404)
	stranger.Do("PATCH", o.path()+"/"+added[0]["id"].(string), map[string]any{"pinned": true}).Want(t, 404)
	stranger.Do("DELETE", o.path()+"/"+added[0]["id"].(string), nil).Want(t, 404)
	if vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t); len(vals) != 1 || vals[0]["pinned"] != false {
		t.Errorf("values after a stranger's writes: %v", vals)
	}
}

func TestConcurrentWritersToOneCompanyLoseNothingAndAgree(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	seed := o.add(t, cand("sector", "Seed", "confidence", 1), cand("industry", "Seed", "confidence", 1))
	const writers = 12
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch w % 4 {
			case 3:
				o.c.Do("PATCH", o.path()+"/"+seed[w%2]["id"].(string), map[string]any{"pinned": w%8 == 3}).Want(t, 200)
			default:
				o.c.Do("POST", o.path(), map[string]any{"values": []any{
					cand("sector", fmt.Sprintf("S%d", w), "source", "provider", "confidence", 10+w),
					cand("industry", fmt.Sprintf("I%d", w), "source", "web", "confidence", 50-w),
				}}).Want(t, 201)
			}
		}()
	}
	wg.Wait()
	vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t)
	if want := 2 + 2*(writers-writers/4); len(vals) != want {
		t.Errorf("%d values stored, want %d", len(vals), want)
	}
	checkConsistent(t, o, o.company(t))
}

func TestAUserEditAfterCandidatesIsPinnedAndClearingItFallsBack(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	o := newEnrichOrg(t, e)
	o.add(t, cand("sector", "Provider's", "confidence", 99), cand("sector", "Web's", "source", "web", "confidence", 20))
	o.c.Do("PUT", "/v1/companies/"+o.id, map[string]any{"sector": "Mine"}).Want(t, 200)
	if got := o.company(t)["sector"]; got != "Mine" {
		t.Errorf("after the user's edit sector = %v", got)
	}
	o.add(t, cand("sector", "Newer provider's", "confidence", 100))
	if got := o.company(t)["sector"]; got != "Mine" {
		t.Errorf("a provider replaced the user's edit: sector = %v", got)
	}
	o.c.Do("PUT", "/v1/companies/"+o.id, map[string]any{"sector": "Mine again"}).Want(t, 200)
	vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t)
	users := 0
	for _, v := range vals {
		if v["source"] == "user" {
			users++
		}
	}
	if users != 1 || vals[0]["value"] != "Mine again" {
		t.Errorf("after a second edit: %d user candidates, first %v", users, vals[0])
	}
	checkConsistent(t, o, o.company(t))
	o.c.Do("PUT", "/v1/companies/"+o.id, map[string]any{"sector": nil}).Want(t, 200)
	co := o.company(t)
	if co["sector"] != "Newer provider's" {
		t.Errorf("after clearing: sector = %v, want the best remaining candidate", co["sector"])
	}
	checkConsistent(t, o, co)
}

func TestADryRunOfAddEnrichmentReportsTheValuesAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	wf := o.c.Do("POST", "/v1/workflows", map[string]any{"name": "Enrich", "steps": []any{
		map[string]any{"id": "enrich", "type": "addEnrichment", "with": map[string]any{"resourceId": o.id,
			"values": []any{map[string]any{"property": "sector", "value": "Dry", "confidence": 90}}}},
	}}).Want(t, 201).Object(t)
	run := apitest.AwaitRun(t, o.c, apitest.IDOf(t, o.c.Do("POST", "/v1/workflows/"+apitest.IDOf(t, wf)+"/runs", map[string]any{"dryRun": true}).Want(t, 202).Object(t)))
	apitest.WantStatus(t, run, "completed")
	out := run["output"].(map[string]any)
	would, _ := out["wouldAdd"].([]any)
	if out["dryRun"] != true || len(would) != 1 || would[0].(map[string]any)["source"] != "workflow" {
		t.Errorf("dry run output %v", out)
	}
	if vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t); len(vals) != 0 {
		t.Errorf("a dry run stored %v", vals)
	}
	if co := o.company(t); co["sector"] != nil || co["lastEnrichedAt"] != nil {
		t.Errorf("a dry run changed the company: sector %v, lastEnrichedAt %v", co["sector"], co["lastEnrichedAt"])
	}
}

func TestUpsertCompanyWritesWorkflowCandidatesThatNeverOverwriteAUsersValue(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	o.c.Do("PUT", "/v1/companies/"+o.id, map[string]any{"website": "https://users.example", "externalId": "ext-enrich"}).Want(t, 200)
	wf := o.c.Do("POST", "/v1/workflows", map[string]any{"name": "Upsert", "steps": []any{
		map[string]any{"id": "up", "type": "upsertCompany", "with": map[string]any{"externalId": "ext-enrich",
			"website": "https://workflows.example", "sector": "From the workflow"}},
	}}).Want(t, 201).Object(t)
	runID := apitest.IDOf(t, o.c.Do("POST", "/v1/workflows/"+apitest.IDOf(t, wf)+"/runs", map[string]any{}).Want(t, 202).Object(t))
	apitest.WantStatus(t, apitest.AwaitRun(t, o.c, runID), "completed")
	co := o.company(t)
	if co["website"] != "https://users.example" || co["sector"] != "From the workflow" {
		t.Errorf("website %v (want the user's), sector %v (want the workflow's)", co["website"], co["sector"])
	}
	vals := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t)
	workflow := 0
	for _, v := range vals {
		if v["source"] == "workflow" {
			workflow++
			if v["sourceId"] != runID || v["confidence"] != 100.0 {
				t.Errorf("workflow candidate %v, want sourceId %s and confidence 100", v, runID)
			}
		}
	}
	if workflow != 2 {
		t.Errorf("%d workflow candidates, want 2: %v", workflow, vals)
	}
	checkConsistent(t, o, co)
}

func TestACompanyAWorkflowCreatesIsWrittenOnceWithItsWorkflowCandidates(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "Create", "steps": []any{
		map[string]any{"id": "up", "type": "upsertCompany", "with": map[string]any{"canonicalName": "Made By A Run",
			"website": "https://made.example", "sector": "Robotics"}},
	}}).Want(t, 201).Object(t)
	run := apitest.AwaitRun(t, c, apitest.IDOf(t, c.Do("POST", "/v1/workflows/"+apitest.IDOf(t, wf)+"/runs", map[string]any{}).Want(t, 202).Object(t)))
	apitest.WantStatus(t, run, "completed")
	id := run["output"].(map[string]any)["company"].(map[string]any)["id"].(string)
	o := &enrichOrg{c: c, id: id}
	got := c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200)
	// One write: the version a company created by POST has.
	fresh := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Made By A User"}).Want(t, 201)
	if apitest.ETagOf(t, got) != apitest.ETagOf(t, fresh) {
		t.Errorf("the workflow's company has ETag %s, a company written once %s", apitest.ETagOf(t, got), apitest.ETagOf(t, fresh))
	}
	co := got.Object(t)
	if co["lastEnrichedAt"] == nil {
		t.Errorf("lastEnrichedAt is not set: %v", co)
	}
	for _, v := range o.c.Do("GET", o.path(), nil).Want(t, 200).List(t) {
		if v["source"] != "workflow" || v["sourceId"] != run["id"] || v["pinned"] == true {
			t.Errorf("candidate %v, want an unpinned workflow candidate of run %s", v, run["id"])
		}
	}
	checkConsistent(t, o, co)
}

func TestDeletingACompanyDeletesItsEnrichmentValues(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newEnrichOrg(t, e)
	o.add(t, cand("employeeCount", 40), cand("sector", "Robotics"))
	o.c.Do("DELETE", "/v1/companies/"+o.id, nil).Want(t, 204)
	left := 0
	if _, err := e.Store.ReadRange(context.Background(), store.EnrichmentPartition(o.c.Org, "companies", o.id), "", "~", func(json.RawMessage) (bool, error) {
		left++
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d enrichment values of the deleted company are left", left)
	}
	o.c.Do("GET", o.path(), nil).Want(t, 404)
}

// purgeFault fails, while armed, every table call that reads or deletes the
// items of partition (a stalled table, for one company's candidates).
type purgeFault struct {
	armed     atomic.Bool
	partition string
}

func (f *purgeFault) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.armed.Load() && r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(f.partition)) && !bytes.Contains(b, []byte(`"PURGE"`)) {
			return apitest.DynamoError(500, "InternalServerError")(r)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestCandidatesWhosePurgeFailedAfterTheirCompanysDeleteAreDeletedByTheSweep(t *testing.T) {
	t.Parallel()
	fault := &purgeFault{}
	e := apitest.NewWith(t, apitest.Options{Transport: fault})
	o := newEnrichOrg(t, e)
	o.add(t, cand("employeeCount", 40), cand("sector", "Robotics"))
	part := store.EnrichmentPartition(o.c.Org, "companies", o.id)
	count := func(pk string) int {
		t.Helper()
		n := 0
		if _, err := e.Store.ReadRange(context.Background(), pk, "", "~", func(json.RawMessage) (bool, error) {
			n++
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}

	fault.partition = part
	fault.armed.Store(true)
	o.c.Do("DELETE", "/v1/companies/"+o.id, nil).Want(t, 204)
	fault.armed.Store(false)
	o.c.Do("GET", "/v1/companies/"+o.id, nil).Want(t, 404)
	if n := count(part); n != 2 {
		t.Fatalf("%d candidates after a delete whose purge failed, want the 2 left for the sweep", n)
	}
	purges := func() int {
		n := 0
		for _, pk := range store.QueuePartitions(store.TypePurge) {
			n += count(pk)
		}
		return n
	}
	if n := purges(); n != 1 {
		t.Fatalf("%d purge jobs recorded, want 1: a failed purge must not be only logged", n)
	}

	// The sweep (the runner's schedule, the dev server's minute) completes it.
	if n, err := e.Deps.Enrichment.SweepPurges(context.Background()); err != nil || n != 1 {
		t.Fatalf("SweepPurges = %d, %v; want the 1 purge left over", n, err)
	}
	if n := count(part); n != 0 {
		t.Errorf("%d candidates of the deleted company left after the sweep", n)
	}
	if n := purges(); n != 0 {
		t.Errorf("%d purge jobs left after the sweep", n)
	}
}

// A candidate's optional provider and sourceId are null when not given,
// as every optional field of the service, in the write's answer and when
// listed; given, they are answered as sent.
func TestACandidatesProviderAndSourceIDAreNullWhenNotGiven(t *testing.T) {
	t.Parallel()
	o := newEnrichOrg(t, apitest.New(t))
	added := o.add(t, cand("employeeCount", 42), cand("sector", "Robotics", "provider", "crunchbase", "sourceId", "cb-1"))
	listed := o.c.Do("GET", o.path(), nil).Want(t, 200).List(t)
	for _, got := range [][]map[string]any{added, listed} {
		for _, v := range got {
			p, hasP := v["provider"]
			s, hasS := v["sourceId"]
			switch v["property"] {
			case "employeeCount":
				if !hasP || p != nil || !hasS || s != nil {
					t.Errorf("a candidate without provider or sourceId answers %v", v)
				}
			case "sector":
				if p != "crunchbase" || s != "cb-1" {
					t.Errorf("a candidate with provider and sourceId answers %v", v)
				}
			}
		}
	}
}
