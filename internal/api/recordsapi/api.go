// Package recordsapi serves every kind of record through the same
// operations — create, list (GET, and POST …/query), get, update, delete,
// search, upsert and batch — from each kind's declaration: companies,
// workflows and their runs, and every declared resource (package
// resources). What a kind does of its own is in its service (kinds.go),
// not in a handler; the operations of workflows and runs that are not
// generic (a trigger's secret, starting, renaming and retrying a run, a
// webhook delivery) are here too, beside their kinds.
package recordsapi

import (
	"reflect"
	"slices"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Deps are the services the records' handlers use.
type Deps struct {
	Store      *store.Store
	Companies  *companies.Service
	Workflows  *workflows.Service
	Runs       *runs.Service
	Enrichment *enrichment.Service
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
	return Deps{Store: d.Store, Companies: d.Companies, Workflows: d.Workflows, Runs: d.Runs,
		Enrichment: d.Enrichment, Resources: d.Resources, Search: d.Search, Limits: d.Limits, Present: d.Present}
}

// Operations are the operations of every kind of record: companies',
// workflows', runs', then each declared resource's.
func Operations() []operation.Operation {
	return slices.Concat(append([][]operation.Operation{CompanyOperations(), WorkflowOperations(), RunOperations()}, DeclaredOperations()...)...)
}

// CompanyOperations are the operations of companies (recordOperations).
func CompanyOperations() []operation.Operation { return KindOperations(companyKind()) }

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
	out["WebhookTrigger"] = openapi.TypeOf(reflect.TypeFor[workflows.WebhookTrigger]())
	for _, d := range kinds.Searchable() {
		out[openapi.SchemaName(d)+"Search"] = listspec.SearchSchema(search.SchemaOf(d))
	}
	out["SearchPredicate"] = listspec.PredicateSchema()
	listspec.FilterComponents(out)
	out["SearchMetadata"] = openapi.TypeOf(reflect.TypeFor[SearchMetadata]())
	batchComponents(out)
}

// BulkDefs are the kinds with batch writes and upserts, which bulk jobs
// import and export: companies, then the declared resources.
func BulkDefs() []*resource.Def {
	var out []*resource.Def
	for _, k := range append([]Kind[store.JSON]{companyKind()}, declaredKinds()...) {
		out = append(out, k.Def)
	}
	return out
}

// WorkflowOperations are the generic operations of workflows (with MCP
// tools list_workflows and get_workflow).
func WorkflowOperations() []operation.Operation {
	k := Kind[workflows.Workflow]{Def: workflows.Def}
	k.Reads, k.Writes = Records(func(a Based) interface {
		Reader[workflows.Workflow]
		Writer
	} {
		return workflowRecords{a.(*API).d.Workflows}
	})
	return KindOperations(k)
}

// RunOperations are the generic list and get of workflow runs (with MCP
// tools list_workflow_runs and get_workflow_run).
func RunOperations() []operation.Operation {
	return KindOperations(Kind[runs.Run]{Def: runs.Def, Reads: func(a Based) Reader[runs.Run] { return runRecords{a.(*API).d.Runs} }})
}
