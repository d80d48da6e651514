package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/series"
	"github.com/sourcebase/sourcebase/internal/steps"
)

// DryIDPrefix marks the placeholder id of a record a dry run would have
// created ("dry_cmp_…"): later steps of the dry run can use it, and no
// stored record ever has it.
const DryIDPrefix = series.DryIDPrefix

// companyWriter lets the company steps of a workflow write through the
// company service, with the same validation as the API.
type companyWriter struct {
	svc *companies.Service
	// enrich, when set, makes the enrichable attributes an upsert sets
	// candidates (source workflow) instead of overwriting them.
	enrich *enrichment.Service
}

// Upsert creates the company that fields identify (by externalId, then
// website, then canonicalName: companies.Service.Match), or updates it,
// converging under concurrency as every upsert of the service does
// (resource.Upsert): parallel upserts of one externalId make one company
// and every one of them succeeds.
func (w companyWriter) Upsert(ctx context.Context, org string, fields map[string]any, dryRun bool) (steps.UpsertResult, error) {
	f, err := decodeFields(fields)
	if err != nil {
		return steps.UpsertResult{}, err
	}
	res, created, err := resource.Upsert(ctx, "externalId",
		func(ctx context.Context) (string, error) {
			c, err := w.svc.Match(ctx, org, f)
			if c == nil || err != nil {
				return "", err
			}
			return c.ID, nil
		},
		func(ctx context.Context) (steps.UpsertResult, error) { return w.create(ctx, org, f, fields, dryRun) },
		func(ctx context.Context, id string) (steps.UpsertResult, error) {
			return w.update(ctx, org, id, f, dryRun)
		})
	res.Created = created
	return res, err
}

// decodeFields reads the fields of an upsertCompany step as the API
// reads an update body (companies.Def: read-only and unknown fields
// refused, each field's rules).
func decodeFields(fields map[string]any) (companies.Fields, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return companies.Fields{}, fmt.Errorf("company fields are not JSON: %w", err)
	}
	return companies.DecodeUpdate(body)
}

// CheckUpsert refuses, when a workflow is saved, the fields of an
// upsertCompany step that Upsert would refuse on every run: a name the
// update body refuses (companies.Def.CheckNames: read-only, unknown),
// even one a path sets, and a value known before the run that
// decodeFields refuses. Enrichable attributes the body accepts are
// accepted: a run makes them workflow candidates.
func (w companyWriter) CheckUpsert(fields steps.Known) error {
	if err := companies.Def.CheckNames(fields.Names, false); err != nil {
		return err
	}
	_, err := decodeFields(fields.Values)
	return err
}

// CheckTags refuses, when a workflow is saved, tags of a tagCompany
// step that AddTags would refuse on every company: the company's tags
// only come before them.
func (w companyWriter) CheckTags(tags []string) error {
	_, err := tagFields(tags)
	return err
}

// tagFields is the update that gives a company tags.
func tagFields(tags []string) (companies.Fields, error) {
	return decodeFields(map[string]any{"tags": tags})
}

// create makes the company f describes (a workflow's: origin workflow).
func (w companyWriter) create(ctx context.Context, org string, f companies.Fields, fields map[string]any, dryRun bool) (steps.UpsertResult, error) {
	if !f.CanonicalName.Set {
		return steps.UpsertResult{}, fmt.Errorf("no company matches, and canonicalName is required to create one")
	}
	if dryRun {
		// The record it would create, under a placeholder id, so that
		// later steps ($.steps.<id>.company.id) evaluate as for real.
		c, err := w.svc.New(ctx, org, f, companies.OriginWorkflow)
		if err != nil {
			return steps.UpsertResult{}, err
		}
		c.ID = DryIDPrefix + c.ID
		return steps.UpsertResult{Company: c, WouldCreate: plain(c, fields)}, nil
	}
	var c *companies.Company
	var err error
	if w.enrich != nil {
		// The values it is made with are workflow candidates, written
		// in the same transaction as the company.
		c, err = w.enrich.CreateCompany(ctx, w.svc, org, f, steps.RunID(ctx))
	} else {
		c, err = w.svc.Create(ctx, org, f, companies.OriginWorkflow)
	}
	return steps.UpsertResult{Company: c}, err
}

// update applies f to the company with id.
func (w companyWriter) update(ctx context.Context, org, id string, f companies.Fields, dryRun bool) (steps.UpsertResult, error) {
	if dryRun {
		existing, err := w.svc.Get(ctx, org, id)
		if err != nil {
			return steps.UpsertResult{}, err
		}
		return steps.UpsertResult{Company: existing, WouldUpdate: changes(existing, f)}, nil
	}
	if w.enrich != nil {
		c, err := w.enrich.UpsertCompany(ctx, w.svc, org, id, f, steps.RunID(ctx))
		return steps.UpsertResult{Company: c}, err
	}
	c, err := w.svc.Update(ctx, org, id, f)
	return steps.UpsertResult{Company: c}, err
}

// AddTags adds tags to a company, keeping its existing ones first.
func (w companyWriter) AddTags(ctx context.Context, org, companyID string, tags []string, dryRun bool) (steps.UpsertResult, error) {
	if dryRun && strings.HasPrefix(companyID, DryIDPrefix) {
		// A company an earlier step of this dry run would have created:
		// nothing to read, it would get just these tags.
		f, err := tagFields(tags)
		if err != nil {
			return steps.UpsertResult{}, err
		}
		placeholder := &companies.Company{ID: companyID}
		companies.Fields{}.Apply(placeholder) // empty lists and objects, as stored
		return steps.UpsertResult{Company: map[string]any{"id": companyID}, WouldUpdate: changes(placeholder, f)}, nil
	}
	c, err := w.svc.Get(ctx, org, companyID)
	if err != nil {
		return steps.UpsertResult{}, fmt.Errorf("company %q: %w", companyID, err)
	}
	f, err := tagFields(append(append([]string{}, c.Tags...), tags...))
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
