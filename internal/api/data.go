package api

import (
	"encoding/json"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/metrics"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// dataEndpoints are the routes of the data group: metric series.
func (a *API) dataEndpoints() []endpoint {
	return []endpoint{
		{routes.Route{Group: fn.Data, Method: http.MethodPost, Path: "/v1/data/metric-points"}, http.HandlerFunc(a.writeMetricPoints)},
		{routes.Route{Group: fn.Data, Method: http.MethodPost, Path: "/v1/data/metric-series", ReadOnly: true}, http.HandlerFunc(a.readMetricSeries)},
	}
}

// writeMetricPoints stores a batch of points: 201 {data: [point]}.
func (a *API) writeMetricPoints(w http.ResponseWriter, r *http.Request) {
	points, ok := decodeBody(w, r, metrics.DecodePoints)
	if !ok {
		return
	}
	reply(w, r, http.StatusCreated)(a.d.Metrics.Write(r.Context(), principal(r).OrgID, points, false))
}

// readMetricSeries answers {data: {resource, key, points}}.
func (a *API) readMetricSeries(w http.ResponseWriter, r *http.Request) {
	q, ok := decodeBody(w, r, metrics.DecodeQuery)
	if !ok {
		return
	}
	s, _, err := a.d.Metrics.Read(r.Context(), principal(r).OrgID, q)
	if n, budget, ok := fits(r, s); err == nil && !ok {
		err = apperr.Invalid("period", "holds %d bytes of points, more than the %d one answer may take; "+
			"narrow the period, use a coarser granularity or another policy", n, budget)
	}
	reply(w, r, http.StatusOK)(s, err)
}

// fits measures the answer {"data": v} against the request's byte budget
// (httpapi.Budget, counted as Lambda carries it): its size, the budget and
// whether it fits. An answer of many values without pages (a metric
// series, the records of a multi-get) is refused when it does not.
func fits(r *http.Request, v any) (n, budget int, ok bool) {
	b, _ := json.Marshal(v)
	n, budget = store.WireSize(b)+len(`{"data":}`+"\n"), httpapi.Budget(r.Context())
	return n, budget, n <= budget
}
