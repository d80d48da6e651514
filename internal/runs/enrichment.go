package runs

import (
	"context"
	"fmt"

	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/steps"
)

// UseEnrichment lets the addEnrichment steps of runs write through es.
// Call it while the service is built, before it executes any run.
// The upsertCompany steps then write enrichable attributes as candidates.
func (s *Service) UseEnrichment(es *enrichment.Service) {
	s.executor.Enrichment = enrichmentWriter{es}
	if cw, ok := s.executor.Companies.(companyWriter); ok {
		cw.enrich = es
		s.executor.Companies = cw
	}
}

// enrichmentWriter lets the addEnrichment step write through the
// enrichment service, with the validation of the API's writes.
type enrichmentWriter struct{ svc *enrichment.Service }

// AddValues completes each value's source (default workflow) and a
// workflow value's sourceId (default the run id), then checks and writes
// them; a dry run checks that the record exists and writes nothing.
func (w enrichmentWriter) AddValues(ctx context.Context, org, resourceType, resourceID string, values any, dryRun bool) ([]any, error) {
	list, ok := values.([]any)
	if !ok {
		return nil, fmt.Errorf("values must be an array of enrichment values")
	}
	maps := make([]map[string]any, len(list))
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("values[%d] must be an object", i)
		}
		c := make(map[string]any, len(m)+2)
		for k, x := range m {
			c[k] = x
		}
		if _, ok := c["source"]; !ok {
			c["source"] = enrichment.SourceWorkflow
		}
		if _, ok := c["sourceId"]; !ok && c["source"] == enrichment.SourceWorkflow {
			c["sourceId"] = steps.RunID(ctx)
		}
		maps[i] = c
	}
	in, err := w.svc.DecodeValues(resourceType, maps)
	if err != nil {
		return nil, err
	}
	var written []enrichment.Value
	if dryRun {
		written, err = w.svc.Check(ctx, org, resourceType, resourceID, in)
	} else {
		written, err = w.svc.Add(ctx, org, resourceType, resourceID, in)
	}
	if err != nil {
		return nil, err
	}
	out := make([]any, len(written))
	for i, v := range written {
		out[i] = v
	}
	return out, nil
}
