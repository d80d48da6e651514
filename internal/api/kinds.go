package api

import (
	"context"
	"encoding/json"

	"github.com/sourcebase/sourcebase/internal/companies"
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
	f, err := companies.DecodeCreate(body)
	if err != nil {
		return nil, err
	}
	return c.a.d.Companies.Create(ctx, org, f, companies.OriginUser)
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
		func(ctx context.Context) (any, error) { return c.Create(ctx, org, body) },
		func(ctx context.Context, id string) (any, error) {
			return c.a.d.Enrichment.UpdateCompany(ctx, c.a.d.Companies, org, id, up, up.SetNames())
		})
}

func (c companyRecords) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[store.JSON], error) {
	return c.a.d.Companies.ListJSON(ctx, org, q, filter, value)
}

func (c companyRecords) Get(ctx context.Context, org, id string) (any, error) {
	return c.a.d.Companies.GetJSON(ctx, org, id)
}

func (c companyRecords) Update(ctx context.Context, org, id string, body []byte) (any, error) {
	f, err := companies.DecodeUpdate(body)
	if err != nil {
		return nil, err
	}
	return c.a.d.Enrichment.UpdateCompany(ctx, c.a.d.Companies, org, id, f, f.SetNames())
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
// operations of their own (runOperations).
type runRecords struct{ svc *runs.Service }

func (s runRecords) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[runs.Run], error) {
	return s.svc.ListBy(ctx, org, q, filter, value)
}

func (s runRecords) Get(ctx context.Context, org, id string) (any, error) {
	return s.svc.Get(ctx, org, id)
}
