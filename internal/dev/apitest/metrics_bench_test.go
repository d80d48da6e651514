package apitest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// seedSeries writes a 5-year daily series of metric:revenue (1,826 dates,
// 3 candidates each: 5,478 points) on a company and returns its client,
// the series read body and the call counter.
func seedSeries(tb testing.TB) (*apitest.Client, map[string]any, *testenv.CountingTransport) {
	tb.Helper()
	calls := &testenv.CountingTransport{}
	env := apitest.NewWith(tb, apitest.Options{Transport: calls})
	c := env.Org(tb)
	id := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Series Co", "companyType": "operating"}).
		Want(tb, http.StatusCreated).Object(tb)["id"].(string)
	res := "companies:" + id
	var batch []any
	flush := func() {
		if len(batch) > 0 {
			c.Do("POST", "/v1/data/metric-points", map[string]any{"points": batch}).Want(tb, http.StatusCreated)
			batch = nil
		}
	}
	start := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := start; d.Before(start.AddDate(5, 0, 0)); d = d.AddDate(0, 0, 1) {
		for i, src := range []string{"crm", "provider", "web"} {
			batch = append(batch, map[string]any{"resource": res, "key": "metric:revenue", "date": d.Format(time.DateOnly),
				"value": float64(d.YearDay()*10 + i), "source": src, "confidence": 50 + 10*i, "unit": "USD", "currency": "USD"})
			if len(batch) == 100 {
				flush()
			}
		}
	}
	flush()
	body := map[string]any{"resource": res, "key": "metric:revenue", "policy": "highest_confidence",
		"period": map[string]any{"start": "2021-01-01", "end": "2025-12-31", "granularity": "month"}}
	return c, body, calls
}

// BenchmarkReadFiveYearDailySeriesMonthly reads the seeded series by
// month: 60 points out of 5,478 candidates, in one paged Query (the
// point items are about 300 bytes, so DynamoDB's 1 MB pages make that
// Query two calls), plus the read of the company the series belongs to.
func BenchmarkReadFiveYearDailySeriesMonthly(b *testing.B) {
	c, body, calls := seedSeries(b)
	c.Do("POST", "/v1/data/metric-series", body).Want(b, http.StatusOK)
	calls.Reset()
	for b.Loop() {
		pts := c.Do("POST", "/v1/data/metric-series", body).Want(b, http.StatusOK).Object(b)["points"].([]any)
		if len(pts) != 60 {
			b.Fatalf("read %d monthly points, want 60", len(pts))
		}
	}
	b.ReportMetric(float64(calls.Count())/float64(b.N), "ddbcalls/op")
}

func TestAFiveYearDailySeriesIsReadInOnePagedQuery(t *testing.T) {
	testenv.Long(t, "seeds 5,478 points through the API; internal/api's metric-series tests read series in the edit loop")
	t.Parallel()
	c, body, calls := seedSeries(t)
	c.Do("POST", "/v1/data/metric-series", body).Want(t, http.StatusOK)
	calls.Reset()
	pts := c.Do("POST", "/v1/data/metric-series", body).Want(t, http.StatusOK).Object(t)["points"].([]any)
	if len(pts) != 60 {
		t.Fatalf("read %d monthly points, want 60", len(pts))
	}
	last := pts[59].(map[string]any)
	if last["date"] != "2025-12-31" || last["source"] != "web" {
		t.Errorf("the last month answers %v, want 2025-12-31 from web (the highest confidence)", last)
	}
	// One paged Query: 5,478 items of about 300 bytes are under 2 MB, so
	// at most 3 pages. (Only Query calls count: an API key cache fill or a
	// rate limit lease can fall due during the request.)
	if n := calls.CountOf("Query"); n < 1 || n > 3 {
		t.Errorf("the read made %d Query calls, want one paged Query (1 to 3 pages)", n)
	}

	// Every candidate of five years is more than a response holds.
	all := map[string]any{"resource": body["resource"], "key": body["key"], "policy": "all"}
	r := c.Do("POST", "/v1/data/metric-series", all).Want(t, http.StatusBadRequest)
	if msg := r.Error(t); !strings.Contains(msg, "period") || !strings.Contains(msg, "5000 points") {
		t.Errorf("a read of 5,478 points answers %q, want a 400 naming period and the 5000-point limit", msg)
	}
	all["period"] = map[string]any{"start": "2025-01-01"}
	if pts := c.Do("POST", "/v1/data/metric-series", all).Want(t, http.StatusOK).Object(t)["points"].([]any); len(pts) != 365*3 {
		t.Errorf("every candidate of 2025: %d points, want %d", len(pts), 365*3)
	}
}
