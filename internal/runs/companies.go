package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/metrics"
	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/store"
)

// DryIDPrefix marks the placeholder id of a record a dry run would have
// created ("dry_cmp_…"): later steps of the dry run can use it, and no
// stored record ever has it.
const DryIDPrefix = metrics.DryIDPrefix

// upsertAttempts bounds how often an upsert that lost a race to a
// concurrent writer starts over.
const upsertAttempts = 8

// companyWriter lets the company steps of a workflow write through the
// company service, with the same validation as the API.
type companyWriter struct {
	svc *companies.Service
	// enrich, when set, makes the enrichable attributes an upsert sets
	// candidates (source workflow) instead of overwriting them.
	enrich *enrichment.Service
}

// Upsert creates the company that fields identify, or updates it. Under
// concurrency it converges: when another writer creates the company first
// (its externalId is taken), that company is updated instead, and a write
// that lost a version race starts over, so parallel upserts of one
// externalId make one company and every one of them succeeds.
func (w companyWriter) Upsert(ctx context.Context, org string, fields map[string]any, dryRun bool) (steps.UpsertResult, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return steps.UpsertResult{}, fmt.Errorf("company fields are not JSON: %w", err)
	}
	f, err := companies.DecodeUpdate(body)
	if err != nil {
		return steps.UpsertResult{}, err
	}
	for attempt := 1; ; attempt++ {
		res, err := w.upsert(ctx, org, f, fields, dryRun)
		var taken *store.UniqueError
		if err == nil || !errors.Is(err, apperr.ErrConflict) || errors.As(err, &taken) || attempt == upsertAttempts {
			return res, err
		}
		// Lost a race with another writer: wait a little, then match again.
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}

func (w companyWriter) upsert(ctx context.Context, org string, f companies.Fields, fields map[string]any, dryRun bool) (steps.UpsertResult, error) {
	existing, err := w.svc.Match(ctx, org, f)
	if err != nil {
		return steps.UpsertResult{}, err
	}
	if existing == nil {
		if !f.CanonicalName.Set {
			return steps.UpsertResult{}, fmt.Errorf("no company matches, and canonicalName is required to create one")
		}
		if dryRun {
			// The record it would create, under a placeholder id, so that
			// later steps ($.steps.<id>.company.id) evaluate as for real.
			c := w.svc.New(f, companies.OriginWorkflow)
			c.ID = DryIDPrefix + c.ID
			return steps.UpsertResult{Created: true, Company: c, WouldCreate: plain(c, fields)}, nil
		}
		var c *companies.Company
		if w.enrich != nil {
			// The values it is made with are workflow candidates, written
			// in the same transaction as the company.
			c, err = w.enrich.CreateCompany(ctx, w.svc, org, f, steps.RunID(ctx))
		} else {
			c, err = w.svc.Create(ctx, org, f, companies.OriginWorkflow)
		}
		var taken *store.UniqueError
		if !errors.As(err, &taken) {
			return steps.UpsertResult{Company: c, Created: err == nil}, err
		}
		// Another writer created the company with this externalId since
		// Match looked: update that one.
		if existing, err = w.svc.Get(ctx, org, taken.OwnerID); err != nil {
			if errors.Is(err, apperr.ErrNotFound) {
				return steps.UpsertResult{}, apperr.Conflict("company %s was deleted during the upsert", taken.OwnerID)
			}
			return steps.UpsertResult{}, err
		}
	}
	if dryRun {
		return steps.UpsertResult{Company: existing, WouldUpdate: changes(existing, f)}, nil
	}
	if w.enrich != nil {
		c, err := w.enrich.UpsertCompany(ctx, w.svc, org, existing.ID, f, steps.RunID(ctx))
		return steps.UpsertResult{Company: c}, err
	}
	c, err := w.svc.Update(ctx, org, existing.ID, f)
	return steps.UpsertResult{Company: c}, err
}

// AddTags adds tags to a company, keeping its existing ones first.
func (w companyWriter) AddTags(ctx context.Context, org, companyID string, tags []string, dryRun bool) (steps.UpsertResult, error) {
	if dryRun && strings.HasPrefix(companyID, DryIDPrefix) {
		// A company an earlier step of this dry run would have created:
		// nothing to read, it would get just these tags.
		body, _ := json.Marshal(map[string]any{"tags": tags})
		f, err := companies.DecodeUpdate(body)
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
