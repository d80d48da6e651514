package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/metrics"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// dataOperations are metric series: writing points, reading a series.
func dataOperations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(fn.Data, http.MethodPost, "/v1/data/metric-points", (*API).writeMetricPoints).InTopic("metrics").Answers(routes.AnswerWritten).Doc(func(op *openapi.Operation) {
			op.Summary, op.Status = "Write metric points", http.StatusCreated
			op.Description = "Up to " + itoa(metrics.MaxBatch) + " candidate points in one write; see docs/metrics.md."
			op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"points"},
				"properties": openapi.Schema{"points": openapi.Schema{"type": "array", "minItems": 1, "maxItems": metrics.MaxBatch, "items": openapi.Ref("MetricPointInput")}}}
			op.Data, op.Errors = arrayOf("StoredMetricPoint"), []int{404}
		}),
		operation.Declare(fn.Data, http.MethodPost, "/v1/data/metric-series", (*API).readMetricSeries).InTopic("metrics").Safe().Answers(routes.AnswerMeasured).
			AsTool("read_metric_series", "Read a metric series of a record (resource companies:<id>, key metric:<name>) over a period, "+
				"bucketed by granularity and picked by a policy (latest, highest_confidence, all).").
			Doc(func(op *openapi.Operation) {
				op.Summary = "Read a metric series"
				op.Description = "One series of a record over a period, bucketed and picked by a policy; see docs/metrics.md."
				op.Body, op.Data = openapi.Ref("MetricSeriesQuery"), openapi.Ref("MetricSeries")
			}),
	}
}

// writeMetricPoints stores a batch of points: 201 {data: [point]}.
func (a *API) writeMetricPoints(w http.ResponseWriter, r *http.Request) {
	points, ok := httpapi.DecodeBody(w, r, a.d.Metrics.DecodePoints)
	if !ok {
		return
	}
	httpapi.Reply(w, r, http.StatusCreated)(a.d.Metrics.Write(r.Context(), httpapi.Caller(r).OrgID, points, false))
}

// readMetricSeries answers {data: {resource, key, points}}.
func (a *API) readMetricSeries(w http.ResponseWriter, r *http.Request) {
	q, ok := httpapi.DecodeBody(w, r, a.d.Metrics.DecodeQuery)
	if !ok {
		return
	}
	s, _, err := a.d.Metrics.Read(r.Context(), httpapi.Caller(r).OrgID, q)
	if n, budget, ok := fits(r, s); err == nil && !ok {
		err = apperr.Invalid("period", "holds %d bytes of points, more than the %d one answer may take; "+
			"narrow the period, use a coarser granularity or another policy", n, budget)
	}
	httpapi.Reply(w, r, http.StatusOK)(s, err)
}

// fits measures the answer {"data": v} against the request's byte budget
// (httpapi.Budget, counted as Lambda carries it): its size, the budget and
// whether it fits. An answer of many values without pages (a metric
// series, the records of a multi-get) is refused when it does not.
func fits(r *http.Request, v any) (n, budget int, ok bool) {
	b, _ := httpapi.Marshal(v)
	n, budget = store.WireSize(b)+len(`{"data":}`+"\n"), httpapi.Budget(r.Context())
	return n, budget, n <= budget
}
