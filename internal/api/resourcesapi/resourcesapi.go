// Package resourcesapi serves the declared resources (package resources:
// deals, people, documents, lists, …) through the generic operations of a
// kind of record (recordsapi.KindOperations), each over its resource
// service.
package resourcesapi

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// API serves the declared resources' routes.
type API struct {
	*recordsapi.Base
	resources *resource.Registry
}

// New returns the API over the generic operations' base and the
// declared resources' services.
func New(b *recordsapi.Base, reg *resource.Registry) *API { return &API{Base: b, resources: reg} }

// Feature is the declared resources, served over a process's services
// (the registry of package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("resources", Operations, recordsapi.WrittenSchemasOf(resources.All()...), func(d service.Deps) *API {
	return New(recordsapi.NewBase(d.Store, d.Search, d.Limits, d.Present), d.Resources)
})

// Operations are the operations of every declared resource, each kind's
// in turn.
func Operations() []operation.Operation {
	var out [][]operation.Operation
	for _, k := range declaredKinds() {
		out = append(out, recordsapi.KindOperations(k))
	}
	return slices.Concat(out...)
}

// declaredKinds are the kinds of every declared resource (package resources).
func declaredKinds() []recordsapi.Kind[store.JSON] {
	var out []recordsapi.Kind[store.JSON]
	for _, d := range resources.All() {
		k := recordsapi.Kind[store.JSON]{Def: d, Bulk: true}
		k.Reads, k.Writes = recordsapi.Records(func(a recordsapi.Based) interface {
			recordsapi.Reader[store.JSON]
			recordsapi.Writer
		} {
			svc, ok := a.(*API).resources.Service(d.Name)
			if !ok {
				panic("api: no service for declared resource " + d.Name)
			}
			return declaredRecords{svc}
		})
		out = append(out, k)
	}
	return out
}

// declaredRecords are a declared resource's service (resource.Service).
type declaredRecords struct{ svc *resource.Service }

func (s declaredRecords) Create(ctx context.Context, org string, body []byte) (any, error) {
	return s.svc.Create(ctx, org, body)
}

func (s declaredRecords) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[store.JSON], error) {
	return s.svc.ListJSON(ctx, org, q, filter, value)
}

func (s declaredRecords) Get(ctx context.Context, org, id string) (any, error) {
	return s.svc.GetJSON(ctx, org, id)
}

func (s declaredRecords) Update(ctx context.Context, org, id string, body []byte) (any, error) {
	return s.svc.Update(ctx, org, id, body)
}

func (s declaredRecords) Upsert(ctx context.Context, org, field string, body []byte) (any, bool, error) {
	return s.svc.Upsert(ctx, org, field, body)
}

func (s declaredRecords) Delete(ctx context.Context, org, id string) error {
	return s.svc.Delete(ctx, org, id)
}

func (s declaredRecords) Present(stored []byte, stamp string) (json.RawMessage, error) {
	return s.svc.Present(stored, stamp)
}

func (s declaredRecords) GetByIDs(ctx context.Context, org, segment string) ([]resource.Record, error) {
	return s.svc.GetByIDs(ctx, org, segment)
}

// JobKinds are the declared resources as bulk jobs move them, over a
// process's services (jobsapi.Targets adds the companies).
func JobKinds(d service.Deps) []recordsapi.JobKind {
	a := Feature.API(d).(*API)
	var out []recordsapi.JobKind
	for _, k := range declaredKinds() {
		out = append(out, recordsapi.JobKind{Kind: k, API: a, Owner: func(ctx context.Context, org, field, value string) (string, error) {
			svc, ok := a.resources.Service(k.Def.Name)
			if !ok {
				return "", nil
			}
			return svc.UniqueOwner(ctx, org, field, value)
		}})
	}
	return out
}
