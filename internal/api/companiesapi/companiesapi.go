// Package companiesapi serves companies through the generic operations
// of a kind of record (recordsapi.KindOperations): created by users
// (origin user) and upserted by workflow runs and imports, a write of an
// enrichable attribute and a delete going through enrichment.
package companiesapi

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// API serves the companies' routes.
type API struct {
	*recordsapi.Base
	companies  *companies.Service
	enrichment *enrichment.Service
}

// New returns the API over the generic operations' base, the companies
// and the enrichment their writes go through.
func New(b *recordsapi.Base, cs *companies.Service, es *enrichment.Service) *API {
	return &API{Base: b, companies: cs, enrichment: es}
}

// Feature is the companies, served over a process's services (the
// registry of package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("companies", Operations, recordsapi.WrittenSchemasOf(companies.Def), func(d service.Deps) *API {
	return New(recordsapi.NewBase(d.Store, d.Search, d.Limits, d.Present), d.Companies, d.Enrichment)
})

// Operations are the generic operations of companies, with their batch
// writes, upsert by externalId and search.
func Operations() []operation.Operation { return recordsapi.KindOperations(Kind()) }

// Kind is companies as the generic operations serve them (companyRecords).
func Kind() recordsapi.Kind[store.JSON] {
	k := recordsapi.Kind[store.JSON]{Def: companies.Def, Bulk: true}
	k.Reads, k.Writes = recordsapi.Records(func(a recordsapi.Based) interface {
		recordsapi.Reader[store.JSON]
		recordsapi.Writer
	} {
		return companyRecords{a.(*API)}
	})
	return k
}

// JobKinds are the companies as bulk jobs move them, over a process's
// services: an upsert matches them by externalId.
func JobKinds(d service.Deps) []recordsapi.JobKind {
	a := Feature.API(d).(*API)
	return []recordsapi.JobKind{{Kind: Kind(), API: a, Owner: func(ctx context.Context, org, _, value string) (string, error) {
		return a.companies.ByExternalID(ctx, org, value)
	}}}
}

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
	return c.a.enrichment.CreateCompanyWith(ctx, c.a.companies, org, f, origin, in)
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
	return c.a.enrichment.UpdateCompanyWith(ctx, c.a.companies, org, id, f, f.SetNames(), in, check)
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
	in, err := c.a.enrichment.ImportInputs(companies.Name, job, members)
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
		func(ctx context.Context) (string, error) { return c.a.companies.ByExternalID(ctx, org, value) },
		func(ctx context.Context) (any, error) { return c.create(ctx, org, body, in, origin) },
		func(ctx context.Context, id string) (any, error) { return c.update(ctx, org, id, up, in, origin) })
}

func (c companyRecords) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[store.JSON], error) {
	return c.a.companies.ListJSON(ctx, org, q, filter, value)
}

func (c companyRecords) Get(ctx context.Context, org, id string) (any, error) {
	return c.a.companies.GetJSON(ctx, org, id)
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
	return c.a.enrichment.DeleteCompany(ctx, c.a.companies, org, id)
}

func (c companyRecords) Present(stored []byte, stamp string) (json.RawMessage, error) {
	return c.a.companies.Present(stored, stamp)
}
