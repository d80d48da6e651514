package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
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
	maps, err := completed(list, steps.RunID(ctx))
	if err != nil {
		return nil, err
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

// completed are the values of a step as AddValues writes them: each an
// object, whose source defaults to workflow and a workflow value's
// sourceId to runID.
func completed(list []any, runID string) ([]map[string]any, error) {
	maps := make([]map[string]any, len(list))
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, apperr.Invalid(fmt.Sprintf("values[%d]", i), "must be an object")
		}
		c := make(map[string]any, len(m)+2)
		for k, x := range m {
			c[k] = x
		}
		if _, ok := c["source"]; !ok {
			c["source"] = enrichment.SourceWorkflow
		}
		if _, ok := c["sourceId"]; !ok && c["source"] == enrichment.SourceWorkflow {
			c["sourceId"] = runID
		}
		maps[i] = c
	}
	return maps, nil
}

// savedRunID stands for the id of a run when a workflow is saved: every
// run id decodes alike.
const savedRunID = "run_saved"

// CheckValues refuses, when a workflow is saved, values of an
// addEnrichment step that AddValues would refuse on every run: values of
// a type without enrichment, and values that do not decode as AddValues
// decodes them. A value some part of which a path sets is known only at
// run time, but for a literal property.
func (w enrichmentWriter) CheckValues(resourceType string, values []any) error {
	if _, ok := w.svc.Type(resourceType); !ok {
		return apperr.Invalid("resourceType", "%q has no enrichment values; a run answers not found", resourceType)
	}
	if steps.IsLiteral(values) {
		return w.decode(resourceType, values)
	}
	for i, v := range values {
		if err := w.checkValue(resourceType, v); err != nil {
			return valueAt(i, err)
		}
	}
	return nil
}

// checkValue checks one value of a step, some of whose values a path
// sets, as values[0] of a list of one.
func (w enrichmentWriter) checkValue(resourceType string, v any) error {
	m, ok := v.(map[string]any)
	if !ok || steps.IsLiteral(m) {
		return w.decode(resourceType, []any{v})
	}
	p, known := m["property"]
	if !known || !steps.IsLiteral(p) {
		return nil
	}
	// Decoding checks a value's property before its other parts: an
	// error about it holds whatever the run resolves them to.
	err := w.decode(resourceType, []any{map[string]any{"property": p}})
	var inv *apperr.InvalidError
	if errors.As(err, &inv) && inv.Field == "values[0].property" {
		return err
	}
	return nil
}

// decode decodes values (no path in them) as AddValues does.
func (w enrichmentWriter) decode(resourceType string, values []any) error {
	maps, err := completed(values, savedRunID)
	if err != nil {
		return err
	}
	_, err = w.svc.DecodeValues(resourceType, maps)
	return err
}

// valueAt is err about values[0] of a list of one as about values[i].
func valueAt(i int, err error) error {
	var inv *apperr.InvalidError
	if !errors.As(err, &inv) {
		return err
	}
	if rest, ok := strings.CutPrefix(inv.Field, "values[0]"); ok {
		return apperr.Invalid(fmt.Sprintf("values[%d]%s", i, rest), "%s", inv.Message)
	}
	return err
}
