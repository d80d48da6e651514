package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/steps"
)

// companyWriter lets the company steps of a workflow write through the
// company service, with the same validation as the API.
type companyWriter struct{ svc *companies.Service }

// Upsert creates the company that fields identify, or updates it.
func (w companyWriter) Upsert(ctx context.Context, org string, fields map[string]any, dryRun bool) (steps.UpsertResult, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return steps.UpsertResult{}, fmt.Errorf("company fields are not JSON: %w", err)
	}
	f, err := companies.DecodeUpdate(body)
	if err != nil {
		return steps.UpsertResult{}, err
	}
	existing, err := w.svc.Match(ctx, org, f)
	if err != nil {
		return steps.UpsertResult{}, err
	}
	if existing == nil {
		if !f.CanonicalName.Set {
			return steps.UpsertResult{}, fmt.Errorf("no company matches, and canonicalName is required to create one")
		}
		if dryRun {
			return steps.UpsertResult{Created: true, WouldCreate: plain(w.svc.New(f, companies.OriginWorkflow), fields)}, nil
		}
		c, err := w.svc.Create(ctx, org, f, companies.OriginWorkflow)
		return steps.UpsertResult{Company: c, Created: true}, err
	}
	if dryRun {
		return steps.UpsertResult{Company: existing, WouldUpdate: changes(existing, f)}, nil
	}
	c, err := w.svc.Update(ctx, org, existing.ID, f)
	return steps.UpsertResult{Company: c}, err
}

// AddTags adds tags to a company, keeping its existing ones first.
func (w companyWriter) AddTags(ctx context.Context, org, companyID string, tags []string, dryRun bool) (steps.UpsertResult, error) {
	c, err := w.svc.Get(ctx, org, companyID)
	if err != nil {
		return steps.UpsertResult{}, fmt.Errorf("company %q: %w", companyID, err)
	}
	body, _ := json.Marshal(map[string]any{"tags": append(append([]string{}, c.Tags...), tags...)})
	f, err := companies.DecodeUpdate(body)
	if err != nil {
		return steps.UpsertResult{}, err
	}
	if dryRun {
		return steps.UpsertResult{Company: c, WouldUpdate: changes(c, f)}, nil
	}
	c, err = w.svc.Update(ctx, org, companyID, f)
	return steps.UpsertResult{Company: c}, err
}

// changes lists the fields f would change on c, with their new values.
func changes(c *companies.Company, f companies.Fields) map[string]any {
	after := *c
	f.Apply(&after)
	a, b := plain(c, nil), plain(&after, nil)
	out := map[string]any{}
	for k, v := range b {
		if !reflect.DeepEqual(a[k], v) {
			out[k] = v
		}
	}
	return out
}

// plain is the record as JSON values; with only set, just the fields sent.
func plain(c *companies.Company, only map[string]any) map[string]any {
	b, _ := json.Marshal(c)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if only == nil {
		return m
	}
	out := map[string]any{}
	for k := range only {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}
