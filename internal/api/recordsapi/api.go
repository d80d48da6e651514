// Package recordsapi serves every kind of record through the same
// operations — create, list (GET, and POST …/query), get, update, delete,
// search, upsert and batch — from each kind's declaration (Kind,
// KindOperations), over the API of the feature that serves the kind (a
// Based: companiesapi, workflowsapi, and this package's own for the
// declared resources of package resources). What a kind does of its own
// is in its service, not in a handler.
package recordsapi

import (
	"reflect"
	"slices"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Deps are the services the records' handlers use.
type Deps struct {
	Store *store.Store
	// Resources serves the declared resources (package resources).
	Resources *resource.Registry
	// Search answers the search routes and the lists that filter or sort
	// by what no index serves; nil in a function that serves neither.
	Search search.Engine
	// Limits counts a batch's operations and a webhook's deliveries
	// against their rate limits; nil: no limits.
	Limits *ratelimit.Limiter
	// Present presents a stored record of any kind (service.Deps.Present).
	Present func(d *resource.Def) (service.Presenter, bool)
}

// API serves the records' routes.
type API struct {
	*Base
	d Deps
}

// New returns the API over d.
func New(d Deps) *API {
	return &API{Base: &Base{Store: d.Store, Search: d.Search, Limits: d.Limits, present: d.Present}, d: d}
}

// Base is what every kind's generic operations use, whichever feature
// serves the kind: the table, the search engine, the rate limits, and how
// a record of any kind is presented (a list's expand= reads related
// records of other kinds). A feature's API embeds one (BaseOf).
type Base struct {
	Store  *store.Store
	Search search.Engine
	Limits *ratelimit.Limiter
	// present presents a stored record of a kind as GET answers it.
	present func(d *resource.Def) (service.Presenter, bool)
}

// BaseOf is the Base of a process's services.
func BaseOf(d service.Deps) *Base {
	return &Base{Store: d.Store, Search: d.Search, Limits: d.Limits, present: d.Present}
}

// RecordsBase is b: a feature's API that embeds a Base is a Based.
func (b *Base) RecordsBase() *Base { return b }

// Based is the API of a feature that serves kinds of record through the
// generic operations (KindOperations): its handlers read the Base, and
// the kind's Reads and Writes the feature's own services.
type Based interface{ RecordsBase() *Base }

// Feature is every kind of record, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("records", Operations, Schemas, func(d service.Deps) *API { return New(DepsOf(d)) })

// DepsOf are the services of a process that the records' handlers use.
func DepsOf(d service.Deps) Deps {
	return Deps{Store: d.Store, Resources: d.Resources, Search: d.Search, Limits: d.Limits, Present: d.Present}
}

// Operations are the operations of every declared resource, each kind's
// in turn (companies, workflows and runs are served by their own
// features through KindOperations).
func Operations() []operation.Operation { return slices.Concat(DeclaredOperations()...) }

// DeclaredOperations are the operations of every declared resource, each
// kind's in turn.
func DeclaredOperations() [][]operation.Operation {
	var out [][]operation.Operation
	for _, k := range declaredKinds() {
		out = append(out, KindOperations(k))
	}
	return out
}

// Schemas adds the records' component schemas to out: each kind's record
// and listed record, its search body, filter and batch shapes, and the
// search answer's metadata.
func Schemas(out map[string]openapi.Schema) {
	for _, d := range kinds.All() {
		out[openapi.SchemaName(d)] = openapi.Record(d, openapi.Output)
		out[listspec.ListedSchemaName(d)] = listspec.ListedSchema(d)
	}
	for _, d := range kinds.Searchable() {
		out[openapi.SchemaName(d)+"Search"] = listspec.SearchSchema(search.SchemaOf(d))
	}
	out["SearchPredicate"] = listspec.PredicateSchema()
	listspec.FilterComponents(out)
	out["SearchMetadata"] = openapi.TypeOf(reflect.TypeFor[SearchMetadata]())
	batchComponents(out)
}
