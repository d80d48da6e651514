package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/metrics"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// dataEndpoints are the routes of the data group: metric series.
func (a *API) dataEndpoints() []endpoint {
	return []endpoint{
		{routes.Route{Group: routes.Data, Method: http.MethodPost, Path: "/v1/data/metric-points"}, http.HandlerFunc(a.writeMetricPoints)},
		{routes.Route{Group: routes.Data, Method: http.MethodPost, Path: "/v1/data/metric-series", ReadOnly: true}, http.HandlerFunc(a.readMetricSeries)},
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
	reply(w, r, http.StatusOK)(s, err)
}
