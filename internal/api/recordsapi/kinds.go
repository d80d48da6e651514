package recordsapi

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// The services of the kinds written outside the resource layer, as the
// generic operations call them (records): each decodes a body by its
// kind's declaration and calls the domain service, which owns what the
// write does beyond the record (enrichment, purges, triggers).

// companyRecords are companies: a create is a user's (origin user); an
// update of an enrichable attribute pins the user's value and a delete
// purges the company's candidates, in the enrichment service
// (enrichment.Service.UpdateCompany, DeleteCompany).
type companyRecords struct{ a *API }

func (c companyRecords) Create(ctx context.Context, org string, body []byte) (any, error) {
	rest, in, origin, err := c.importParts(ctx, body)
	if err != nil {
		return nil, err
	}
	return c.create(ctx, org, rest, in, origin)
}

// create creates a company from body with the candidate values in, made
// by origin (a user's when "").
func (c companyRecords) create(ctx context.Context, org string, body []byte, in []enrichment.Input, origin string) (any, error) {
	f, err := companies.DecodeCreate(body)
	if err != nil {
		return nil, err
	}
	if origin == "" {
		origin = companies.OriginUser
	}
	return c.a.d.Enrichment.CreateCompanyWith(ctx, c.a.d.Companies, org, f, origin, in)
}

// update applies the update f to company id with the candidate values in;
// origin, when set, must be the company's (an update cannot change it).
func (c companyRecords) update(ctx context.Context, org, id string, f companies.Fields, in []enrichment.Input, origin string) (any, error) {
	var check func(*companies.Company) error
	if origin != "" {
		check = func(co *companies.Company) error {
			if co.Origin != origin {
				return apperr.Invalid("origin", "is %q, and the company was made by %q: an import sets origin when it creates a company, and cannot change it", origin, co.Origin)
			}
			return nil
		}
	}
	return c.a.d.Enrichment.UpdateCompanyWith(ctx, c.a.d.Companies, org, id, f, f.SetNames(), in, check)
}

// importParts splits a company body an import writes (resource.ImportOf)
// into the body of the company's own fields, the candidate values of its
// reconciled fields (resource.ImportCandidate: enrichment.ImportInputs)
// and its origin (resource.ImportKept). Any other body is left as it is,
// for the decoder, which refuses those fields as read-only.
func (c companyRecords) importParts(ctx context.Context, body []byte) ([]byte, []enrichment.Input, string, error) {
	job, ok := resource.ImportOf(ctx)
	if !ok {
		return body, nil, "", nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body, nil, "", nil // not an object: the decoder says so
	}
	members := map[string]json.RawMessage{}
	for _, name := range companies.Def.ImportFields(resource.ImportCandidate) {
		if v, ok := m[name]; ok {
			members[name] = v
			delete(m, name)
		}
	}
	origin := ""
	if raw, ok := m["origin"]; ok {
		delete(m, "origin")
		f, _ := companies.Def.Field("origin")
		if string(raw) != "null" {
			if json.Unmarshal(raw, &origin) != nil || !slices.Contains(f.Values, origin) {
				return nil, nil, "", apperr.Invalid("origin", "must be one of %s", strings.Join(f.Values, ", "))
			}
		}
	}
	in, err := c.a.d.Enrichment.ImportInputs(companies.Name, job, members)
	if err != nil {
		return nil, nil, "", err
	}
	rest, err := json.Marshal(m)
	return rest, in, origin, err
}

// Upsert is PUT /v1/companies?match=externalId: the company with the
// body's externalId, created as a user's (Create) or updated as a user's
// update (Update, pinning enrichable values), converging under
// concurrency like a workflow's upsert (resource.Upsert).
func (c companyRecords) Upsert(ctx context.Context, org, field string, body []byte) (any, bool, error) {
	f, err := companies.Def.MatchField("match", field)
	if err != nil {
		return nil, false, err
	}
	body, in, origin, err := c.importParts(ctx, body)
	if err != nil {
		return nil, false, err
	}
	value, err := resource.MatchValue(body, f)
	if err != nil {
		return nil, false, err
	}
	up, err := companies.DecodeUpdate(body)
	if err != nil {
		return nil, false, err
	}
	return resource.Upsert(ctx, f.Name,
		func(ctx context.Context) (string, error) { return c.a.d.Companies.ByExternalID(ctx, org, value) },
		func(ctx context.Context) (any, error) { return c.create(ctx, org, body, in, origin) },
		func(ctx context.Context, id string) (any, error) { return c.update(ctx, org, id, up, in, origin) })
}

func (c companyRecords) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[store.JSON], error) {
	return c.a.d.Companies.ListJSON(ctx, org, q, filter, value)
}

func (c companyRecords) Get(ctx context.Context, org, id string) (any, error) {
	return c.a.d.Companies.GetJSON(ctx, org, id)
}

func (c companyRecords) Update(ctx context.Context, org, id string, body []byte) (any, error) {
	body, in, origin, err := c.importParts(ctx, body)
	if err != nil {
		return nil, err
	}
	f, err := companies.DecodeUpdate(body)
	if err != nil {
		return nil, err
	}
	return c.update(ctx, org, id, f, in, origin)
}

func (c companyRecords) Delete(ctx context.Context, org, id string) error {
	return c.a.d.Enrichment.DeleteCompany(ctx, c.a.d.Companies, org, id)
}

func (c companyRecords) Present(stored []byte, stamp string) (json.RawMessage, error) {
	return c.a.d.Companies.Present(stored, stamp)
}

// workflowRecords are workflows with their webhook triggers
// (workflows.Service).
type workflowRecords struct{ svc *workflows.Service }

func (s workflowRecords) Create(ctx context.Context, org string, body []byte) (any, error) {
	in, err := workflows.DecodeCreate(body)
	if err != nil {
		return nil, err
	}
	return s.svc.Create(ctx, org, in)
}

func (s workflowRecords) List(ctx context.Context, org string, q store.Query, _, _ string) (store.Page[workflows.Workflow], error) {
	return s.svc.List(ctx, org, q) // workflows have no lookup filters: the list parser refused any
}

func (s workflowRecords) Get(ctx context.Context, org, id string) (any, error) {
	return s.svc.Get(ctx, org, id)
}

func (s workflowRecords) Update(ctx context.Context, org, id string, body []byte) (any, error) {
	in, err := workflows.DecodeUpdate(body)
	if err != nil {
		return nil, err
	}
	return s.svc.Update(ctx, org, id, in)
}

func (s workflowRecords) Delete(ctx context.Context, org, id string) error {
	return s.svc.Delete(ctx, org, id)
}

// runRecords are workflow runs, only listed and read by the generic
// operations (runs.Service): runs are started, renamed and retried by
// operations of their own (RunOperations).
type runRecords struct{ svc *runs.Service }

func (s runRecords) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[runs.Run], error) {
	return s.svc.ListBy(ctx, org, q, filter, value)
}

func (s runRecords) Get(ctx context.Context, org, id string) (any, error) {
	return s.svc.Get(ctx, org, id)
}
