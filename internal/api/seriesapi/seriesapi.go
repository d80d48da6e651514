// Package metricsapi serves metric series: writing dated points of a
// record's metrics and reading a series of them (package series).
package seriesapi

import (
	"net/http"
	"reflect"
	"strconv"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/series"
)

// API serves the metric series' routes.
type API struct{ series *series.Service }

// New returns the API over the metric series.
func New(m *series.Service) *API { return &API{series: m} }

// Feature is the metric series, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("series", Operations, Schemas, func(d service.Deps) *API { return New(d.Series) })

// Operations are metric series: writing points, reading a series.
func Operations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(lambdas.Data, http.MethodPost, "/v1/data/metric-points", (*API).writeMetricPoints).InTopic("metrics").Answers(routes.AnswerWritten).Doc(func(op *openapi.Operation) {
			op.Summary, op.Status = "Write metric points", http.StatusCreated
			op.Description = "Up to " + strconv.Itoa(series.MaxBatch) + " candidate points in one write; see docs/metrics.md."
			op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"points"},
				"properties": openapi.Schema{"points": openapi.Schema{"type": "array", "minItems": 1, "maxItems": series.MaxBatch, "items": openapi.Ref("MetricPointInput")}}}
			op.Data, op.Errors = operation.ArrayOf("StoredMetricPoint"), []int{404}
		}),
		operation.Declare(lambdas.Data, http.MethodPost, "/v1/data/metric-series", (*API).readMetricSeries).InTopic("metrics").Safe().Answers(routes.AnswerMeasured).
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
	points, ok := httpapi.DecodeBody(w, r, a.series.DecodePoints)
	if !ok {
		return
	}
	httpapi.Reply(w, r, http.StatusCreated)(a.series.Write(r.Context(), httpapi.Caller(r).OrgID, points, false))
}

// readMetricSeries answers {data: {resource, key, points}}.
func (a *API) readMetricSeries(w http.ResponseWriter, r *http.Request) {
	q, ok := httpapi.DecodeBody(w, r, a.series.DecodeQuery)
	if !ok {
		return
	}
	s, _, err := a.series.Read(r.Context(), httpapi.Caller(r).OrgID, q)
	if n, budget, ok := httpapi.Fits(r, s); err == nil && !ok {
		err = apperr.Invalid("period", "holds %d bytes of points, more than the %d one answer may take; "+
			"narrow the period, use a coarser granularity or another policy", n, budget)
	}
	httpapi.Reply(w, r, http.StatusOK)(s, err)
}

// pointInput is the schema of a point to write.
func pointInput() openapi.Schema {
	str := func(d string) openapi.Schema { return openapi.Schema{"type": "string", "description": d} }
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"resource", "key", "date", "value", "source"},
		"properties": openapi.Schema{
			"resource":   str(series.ResourceFormat(resources.SeriesKinds())),
			"key":        str(series.KeyFormat),
			"date":       openapi.Schema{"type": "string", "format": "date"},
			"value":      openapi.Schema{"type": "number"},
			"unit":       operation.NullableString(openapi.Schema{"maxLength": 50}),
			"currency":   operation.NullableString(openapi.Schema{"pattern": "^[A-Z]{3}$", "description": "an ISO 4217 code"}),
			"source":     openapi.Schema{"type": "string", "minLength": 1, "maxLength": 100},
			"confidence": openapi.Schema{"type": []any{"number", "null"}, "minimum": 0, "maximum": 100},
			"dealId":     operation.NullableString(openapi.Schema{"description": "the deal the point belongs to"}),
			"periodType": openapi.Schema{"type": []any{"string", "null"}, "enum": append(operation.Enums(series.PeriodTypes), nil)},
		}}
}

// seriesQuery is the schema of a read of a series.
func seriesQuery() openapi.Schema {
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"resource", "key"},
		"properties": openapi.Schema{
			"resource":    openapi.Schema{"type": "string", "description": series.ResourceFormat(resources.SeriesKinds())},
			"key":         openapi.Schema{"type": "string", "description": series.KeyFormat},
			"dealContext": operation.NullableString(openapi.Schema{"description": "a deal id: its points take precedence over general points"}),
			"policy":      openapi.Schema{"type": []any{"string", "null"}, "enum": append(operation.Enums(series.Policies), nil)},
			"period": openapi.Schema{"type": []any{"object", "null"}, "additionalProperties": false, "properties": openapi.Schema{
				"start":         openapi.Schema{"type": []any{"string", "null"}, "format": "date"},
				"end":           openapi.Schema{"type": []any{"string", "null"}, "format": "date"},
				"granularity":   openapi.Schema{"type": []any{"string", "null"}, "enum": append(operation.Enums(series.Granularities), nil)},
				"sources":       openapi.Schema{"type": []any{"array", "null"}, "items": openapi.Schema{"type": "string"}, "maxItems": 50},
				"minConfidence": openapi.Schema{"type": []any{"number", "null"}, "minimum": 0, "maximum": 100},
			}},
		}}
}

// Schemas adds the metric series' component schemas to out.
func Schemas(out map[string]openapi.Schema) {
	out["MetricPoint"] = openapi.TypeOf(reflect.TypeFor[series.SeriesPoint]())
	out["StoredMetricPoint"] = openapi.TypeOf(reflect.TypeFor[series.Point]())
	series := openapi.TypeOf(reflect.TypeFor[series.Series]())
	series["properties"].(openapi.Schema)["points"] = operation.ArrayOf("MetricPoint")
	out["MetricSeries"] = series
	out["MetricPointInput"] = pointInput()
	out["MetricSeriesQuery"] = seriesQuery()
}
