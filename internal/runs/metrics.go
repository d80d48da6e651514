package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sourcebase/sourcebase/internal/series"
)

// UseMetrics lets the writeMetricPoints steps of runs write through ms.
// Call it while the service is built, before it executes any run.
func (s *Service) UseMetrics(ms *series.Service) { s.executor.Metrics = metricWriter{ms} }

// metricWriter lets the writeMetricPoints step write through the metric
// service, with the same validation as POST /v1/data/metric-points.
type metricWriter struct{ svc *series.Service }

// WritePoints decodes body as the API does and writes (or checks) the points.
func (w metricWriter) WritePoints(ctx context.Context, org string, body map[string]any, dryRun bool) ([]any, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("metric points are not JSON: %w", err)
	}
	points, err := w.svc.DecodePoints(raw)
	if err != nil {
		return nil, err
	}
	written, err := w.svc.Write(ctx, org, points, dryRun)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(written))
	for i, p := range written {
		out[i] = p
	}
	return out, nil
}
