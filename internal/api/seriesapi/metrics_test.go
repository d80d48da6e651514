package seriesapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// metricOrg is an organization with a company and two deals, whose metric
// points tests write.
type metricOrg struct {
	c                *apitest.Client
	company          string // "companies:<id>"
	deal1, deal2     string
	companyID, other string
}

func newMetricOrg(t *testing.T, e *apitest.Env) *metricOrg {
	t.Helper()
	c := e.Org(t)
	co := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme Metrics", "companyType": "operating"}).Want(t, 201).Object(t)
	id := co["id"].(string)
	deal := func(name string) string {
		return c.Do("POST", "/v1/deals", map[string]any{"name": name, "companyId": id}).Want(t, 201).Object(t)["id"].(string)
	}
	return &metricOrg{c: c, company: "companies:" + id, companyID: id, deal1: deal("Series A"), deal2: deal("Series B")}
}

// write writes one batch of points (each completed with the org's company
// and metric:revenue unless set) and returns them as answered.
func (o *metricOrg) write(t *testing.T, points ...map[string]any) []map[string]any {
	t.Helper()
	for _, p := range points {
		if _, ok := p["resource"]; !ok {
			p["resource"] = o.company
		}
		if _, ok := p["key"]; !ok {
			p["key"] = "metric:revenue"
		}
		if _, ok := p["source"]; !ok {
			p["source"] = "provider"
		}
	}
	return o.c.Do("POST", "/v1/data/metric-points", map[string]any{"points": points}).Want(t, 201).List(t)
}

// series reads metric:revenue of the org's company with the body's other
// fields and returns the points as "date=value" strings.
func (o *metricOrg) series(t *testing.T, body map[string]any) []string {
	t.Helper()
	body["resource"], body["key"] = o.company, "metric:revenue"
	got := o.c.Do("POST", "/v1/data/metric-series", body).Want(t, 200).Object(t)
	if got["resource"] != o.company || got["key"] != "metric:revenue" {
		t.Errorf("series answers resource %v, key %v", got["resource"], got["key"])
	}
	var out []string
	for _, p := range got["points"].([]any) {
		m := p.(map[string]any)
		out = append(out, fmt.Sprintf("%s=%v", m["date"], m["value"]))
	}
	return out
}

func TestWritingMetricPointsAnswersThemWithIdsAndCaptureTimes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	o := newMetricOrg(t, e)
	got := o.write(t,
		map[string]any{"date": "2025-03-31", "value": 1250000.5, "unit": "USD", "currency": "USD", "confidence": 80,
			"dealId": o.deal1, "periodType": "quarter", "source": "data-room"},
		map[string]any{"date": "2025-04-30", "value": 7},
	)
	if len(got) != 2 {
		t.Fatalf("wrote %d points, want 2", len(got))
	}
	p := got[0]
	if id, _ := p["id"].(string); !strings.HasPrefix(id, "mpt_") || p["capturedOn"] == nil {
		t.Errorf("point has id %v, capturedOn %v", p["id"], p["capturedOn"])
	}
	want := map[string]any{"resource": o.company, "key": "metric:revenue", "date": "2025-03-31", "value": 1250000.5, "unit": "USD",
		"currency": "USD", "source": "data-room", "confidence": 80.0, "dealId": o.deal1, "periodType": "quarter"}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("point %s = %v, want %v", k, p[k], v)
		}
	}
	for _, k := range []string{"unit", "currency", "confidence", "dealId", "periodType"} {
		if v, ok := got[1][k]; !ok || v != nil {
			t.Errorf("an optional field left out answers %s = %v (present %v), want null", k, v, ok)
		}
	}
	all := o.c.Do("POST", "/v1/data/metric-series", map[string]any{"resource": o.company, "key": "metric:revenue", "policy": "all"}).Want(t, 200).Object(t)
	first := all["points"].([]any)[0].(map[string]any)
	for _, k := range []string{"date", "value", "unit", "currency", "source", "confidence", "capturedOn", "dealId"} {
		if first[k] != p[k] {
			t.Errorf("series point %s = %v, want %v as written", k, first[k], p[k])
		}
	}
	if len(first) != 8 {
		t.Errorf("series point has fields %v, want exactly date, value, unit, currency, source, confidence, capturedOn, dealId", first)
	}
}

func TestEachPolicyPicksItsPointAmongTheCandidatesOfADate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newMetricOrg(t, e)
	// Written in this order: later ones are newer captures.
	o.write(t, map[string]any{"date": "2025-01-31", "value": 1, "confidence": 90, "source": "crm"})
	o.write(t, map[string]any{"date": "2025-01-31", "value": 2, "confidence": 50, "source": "web"})
	o.write(t, map[string]any{"date": "2025-01-31", "value": 3, "confidence": 80, "source": "provider"},
		map[string]any{"date": "2025-02-28", "value": 10, "confidence": 70})
	o.write(t, map[string]any{"date": "2025-02-28", "value": 11, "confidence": 70},
		map[string]any{"date": "2025-02-28", "value": 12})
	cases := []struct {
		policy string
		want   []string
	}{
		{"", []string{"2025-01-31=3", "2025-02-28=12"}},
		{"latest", []string{"2025-01-31=3", "2025-02-28=12"}},
		{"highest_confidence", []string{"2025-01-31=1", "2025-02-28=11"}},
		{"all", []string{"2025-01-31=3", "2025-01-31=2", "2025-01-31=1", "2025-02-28=12", "2025-02-28=11", "2025-02-28=10"}},
	}
	for _, tc := range cases {
		body := map[string]any{}
		if tc.policy != "" {
			body["policy"] = tc.policy
		}
		if got := o.series(t, body); !slices.Equal(got, tc.want) {
			t.Errorf("policy %q: %v, want %v", tc.policy, got, tc.want)
		}
	}
}

func TestADealContextPrefersThePointsOfThatDealAndIgnoresOtherDeals(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newMetricOrg(t, e)
	o.write(t, map[string]any{"date": "2025-06-30", "value": 2, "dealId": o.deal1})
	o.write(t, map[string]any{"date": "2025-06-30", "value": 1})
	o.write(t, map[string]any{"date": "2025-06-30", "value": 3, "dealId": o.deal2},
		map[string]any{"date": "2025-07-31", "value": 5})
	cases := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"without a deal context every point is a candidate", map[string]any{}, []string{"2025-06-30=3", "2025-07-31=5"}},
		{"the deal's point beats a newer general point", map[string]any{"dealContext": o.deal1}, []string{"2025-06-30=2", "2025-07-31=5"}},
		{"the other deal's point", map[string]any{"dealContext": o.deal2}, []string{"2025-06-30=3", "2025-07-31=5"}},
		{"all candidates of the deal only", map[string]any{"dealContext": o.deal1, "policy": "all"}, []string{"2025-06-30=2", "2025-07-31=5"}},
	}
	for _, tc := range cases {
		if got := o.series(t, tc.body); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	apitest.WantError(t, o.c.Do("POST", "/v1/data/metric-series", map[string]any{"resource": o.company, "key": "metric:revenue", "dealContext": "deal_nope"}),
		400, "dealContext", "deal of your organization")
}

func TestEachGranularityAnswersEachBucketAtItsLastDate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	o := newMetricOrg(t, e)
	var pts []map[string]any
	for i, d := range []string{"2025-01-06", "2025-01-08", "2025-01-13", "2025-02-15", "2025-03-31", "2025-04-02", "2026-01-01"} {
		pts = append(pts, map[string]any{"date": d, "value": i})
	}
	o.write(t, pts...)
	cases := []struct {
		granularity string
		period      map[string]any
		want        []string
	}{
		{"day", nil, []string{"2025-01-06=0", "2025-01-08=1", "2025-01-13=2", "2025-02-15=3", "2025-03-31=4", "2025-04-02=5", "2026-01-01=6"}},
		{"week", nil, []string{"2025-01-08=1", "2025-01-13=2", "2025-02-15=3", "2025-04-02=5", "2026-01-01=6"}},
		{"month", nil, []string{"2025-01-13=2", "2025-02-15=3", "2025-03-31=4", "2025-04-02=5", "2026-01-01=6"}},
		{"quarter", nil, []string{"2025-03-31=4", "2025-04-02=5", "2026-01-01=6"}},
		{"year", nil, []string{"2025-04-02=5", "2026-01-01=6"}},
		{"month", map[string]any{"start": "2025-01-07", "end": "2025-03-31"}, []string{"2025-01-13=2", "2025-02-15=3", "2025-03-31=4"}},
		{"quarter", map[string]any{"end": "2025-03-30"}, []string{"2025-02-15=3"}},
		{"year", map[string]any{"start": "2025-04-02"}, []string{"2025-04-02=5", "2026-01-01=6"}},
	}
	for _, tc := range cases {
		period := map[string]any{"granularity": tc.granularity}
		for k, v := range tc.period {
			period[k] = v
		}
		if got := o.series(t, map[string]any{"period": period}); !slices.Equal(got, tc.want) {
			t.Errorf("%s over %v: %v, want %v", tc.granularity, tc.period, got, tc.want)
		}
	}
}

func TestSourcesAndMinConfidenceFilterTheCandidatesBeforeThePolicyPicks(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newMetricOrg(t, e)
	o.write(t, map[string]any{"date": "2025-05-31", "value": 1, "source": "crm", "confidence": 90})
	o.write(t, map[string]any{"date": "2025-05-31", "value": 2, "source": "web", "confidence": 40})
	o.write(t, map[string]any{"date": "2025-05-31", "value": 3, "source": "provider"})
	cases := []struct {
		name   string
		period map[string]any
		want   []string
	}{
		{"no filter", map[string]any{}, []string{"2025-05-31=3"}},
		{"sources", map[string]any{"sources": []string{"crm", "web"}}, []string{"2025-05-31=2"}},
		{"one source", map[string]any{"sources": []string{"crm"}}, []string{"2025-05-31=1"}},
		{"a source without points", map[string]any{"sources": []string{"user"}}, nil},
		{"minConfidence drops lower and unrated points", map[string]any{"minConfidence": 30}, []string{"2025-05-31=2"}},
		{"minConfidence above all but one", map[string]any{"minConfidence": 50}, []string{"2025-05-31=1"}},
		{"both", map[string]any{"minConfidence": 50, "sources": []string{"web"}}, nil},
	}
	for _, tc := range cases {
		if got := o.series(t, map[string]any{"period": tc.period}); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestASeriesReadWithAMalformedFieldIsRefusedNamingTheFormat(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newMetricOrg(t, e)
	base := func(kv ...any) map[string]any {
		b := map[string]any{"resource": o.company, "key": "metric:revenue"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(b, kv[i].(string))
				continue
			}
			b[kv[i].(string)] = kv[i+1]
		}
		return b
	}
	cases := []struct {
		name  string
		body  map[string]any
		parts []string
	}{
		{"resource without a type", base("resource", o.companyID), []string{"resource", "<resourceType>:<id>"}},
		{"resource of an unknown type", base("resource", "widgets:"+o.companyID), []string{"resource", "companies, deals, people"}},
		{"resource missing", base("resource", nil), []string{"resource", "is required"}},
		{"key without its prefix", base("key", "revenue"), []string{"key", "metric:<name>"}},
		{"key with a #", base("key", "metric:a#b"), []string{"key", "metric:<name>"}},
		{"key missing", base("key", nil), []string{"key", "is required"}},
		{"unknown policy", base("policy", "median"), []string{"policy", "latest, highest_confidence, all"}},
		{"unknown granularity", base("period", map[string]any{"granularity": "decade"}), []string{"period.granularity", "day, week, month, quarter, year"}},
		{"a start that is no date", base("period", map[string]any{"start": "2025-13-01"}), []string{"period.start", "YYYY-MM-DD"}},
		{"an end before the start", base("period", map[string]any{"start": "2025-02-01", "end": "2025-01-01"}), []string{"period.end", "period.start"}},
		{"minConfidence out of range", base("period", map[string]any{"minConfidence": 101}), []string{"period.minConfidence", "0 to 100"}},
		{"sources not strings", base("period", map[string]any{"sources": []any{1}}), []string{"period.sources[0]"}},
		{"an unknown field", base("interval", "day"), []string{"interval"}},
		{"an unknown period field", base("period", map[string]any{"from": "2025-01-01"}), []string{"period.from"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := e.As(t, o.c)
			apitest.WantError(t, c.Do("POST", "/v1/data/metric-series", tc.body), 400, tc.parts...)
		})
	}
}

func TestAPointBatchWithABadPointIsRefusedNamingThePointAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newMetricOrg(t, e)
	good := func() map[string]any {
		return map[string]any{"resource": o.company, "key": "metric:revenue", "date": "2025-01-31", "value": 1, "source": "crm"}
	}
	batch := func(i int, field string, value any) map[string]any {
		pts := []any{good(), good(), good(), good()}
		p := pts[i].(map[string]any)
		if value == nil {
			delete(p, field)
		} else {
			p[field] = value
		}
		return map[string]any{"points": pts}
	}
	many := make([]any, 101)
	for i := range many {
		many[i] = good()
	}
	cases := []struct {
		name  string
		body  any
		parts []string
	}{
		{"a date that is no date", batch(3, "date", "2025-02-30"), []string{"points[3].date", "YYYY-MM-DD"}},
		{"no value", batch(1, "value", nil), []string{"points[1].value", "is required"}},
		{"a value that is no number", batch(2, "value", "12"), []string{"points[2].value", "number"}},
		{"no source", batch(0, "source", nil), []string{"points[0].source", "is required"}},
		{"a lowercase currency", batch(2, "currency", "usd"), []string{"points[2].currency", "ISO 4217"}},
		{"confidence above 100", batch(3, "confidence", 101), []string{"points[3].confidence", "0 to 100"}},
		{"an unknown periodType", batch(1, "periodType", "week"), []string{"points[1].periodType", "day, month, quarter, year"}},
		{"a malformed resource", batch(2, "resource", "company:x"), []string{"points[2].resource", "<resourceType>:<id>"}},
		{"a malformed key", batch(1, "key", "revenue"), []string{"points[1].key", "metric:<name>"}},
		{"a resource that does not exist", batch(3, "resource", "people:per_nope"), []string{"points[3].resource", "people:per_nope"}},
		{"a deal that does not exist", batch(2, "dealId", "deal_nope"), []string{"points[2].dealId", "deal_nope"}},
		{"an unknown field", batch(1, "capturedOn", "2025-01-01"), []string{"points[1].capturedOn"}},
		{"more than 100 points", map[string]any{"points": many}, []string{"points", "at most 100"}},
		{"no points", map[string]any{"points": []any{}}, []string{"points", "is required"}},
		{"points not an array", map[string]any{"points": "x"}, []string{"points", "array"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := e.As(t, o.c)
			apitest.WantError(t, c.Do("POST", "/v1/data/metric-points", tc.body), 400, tc.parts...)
		})
	}
	t.Run("nothing of a refused batch is written", func(t *testing.T) {
		if got := o.series(t, map[string]any{"policy": "all"}); len(got) != 0 {
			t.Errorf("the series holds %v after refused batches, want nothing", got)
		}
	})
}

func TestAnotherOrganizationsRecordHasNoSeriesAndTakesNoPoints(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	a := newMetricOrg(t, e)
	b := newMetricOrg(t, e)
	a.write(t, map[string]any{"date": "2025-01-31", "value": 1})
	// The spec answers a series read 400 or 401: a record the body names
	// that is not the organization's is a 400 naming resource, whether it
	// is another organization's or nobody's.
	for _, res := range []string{a.company, "deals:" + a.deal1, "people:per_nope"} {
		r := b.c.Do("POST", "/v1/data/metric-series", map[string]any{"resource": res, "key": "metric:revenue"})
		r.Want(t, 400)
		apitest.WantExactBody(t, r, `{"error":"Invalid request body: resource must name a record of your organization; `+res+` is not one"}`)
	}
	apitest.WantError(t, b.c.Do("POST", "/v1/data/metric-points", map[string]any{"points": []any{
		map[string]any{"resource": a.company, "key": "metric:revenue", "date": "2025-01-31", "value": 9, "source": "x"}}}), 400, "points[0].resource")
	apitest.WantError(t, b.c.Do("POST", "/v1/data/metric-points", map[string]any{"points": []any{
		map[string]any{"resource": b.company, "key": "metric:revenue", "date": "2025-01-31", "value": 9, "source": "x", "dealId": a.deal1}}}), 400, "points[0].dealId")
	if got := a.series(t, map[string]any{"policy": "all"}); !slices.Equal(got, []string{"2025-01-31=1"}) {
		t.Errorf("the owner's series: %v, want only its own point", got)
	}
	if got := b.series(t, map[string]any{"policy": "all"}); len(got) != 0 {
		t.Errorf("the other organization's series: %v, want none", got)
	}
}

func TestSeriesOfDealsAndPeopleAreTheirOwn(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o := newMetricOrg(t, e)
	per := o.c.Do("POST", "/v1/people", map[string]any{"firstName": "Ada"}).Want(t, 201).Object(t)["id"].(string)
	o.write(t, map[string]any{"resource": "deals:" + o.deal1, "key": "metric:arr", "date": "2025-01-31", "value": 4},
		map[string]any{"resource": "people:" + per, "key": "metric:arr", "date": "2025-01-31", "value": 5},
		map[string]any{"key": "metric:arr", "date": "2025-01-31", "value": 6})
	for res, want := range map[string]string{"deals:" + o.deal1: "4", "people:" + per: "5", o.company: "6"} {
		got := o.c.Do("POST", "/v1/data/metric-series", map[string]any{"resource": res, "key": "metric:arr"}).Want(t, 200).Object(t)
		pts := got["points"].([]any)
		if len(pts) != 1 || fmt.Sprint(pts[0].(map[string]any)["value"]) != want {
			t.Errorf("series of %s: %v, want one point of value %s", res, pts, want)
		}
	}
}
