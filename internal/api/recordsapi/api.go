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
}

// API serves the records' routes.
type API struct{ d Deps }

// New returns the API over d.
func New(d Deps) *API { return &API{d: d} }

// Feature is every kind of record, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("records", Operations, Schemas, func(d service.Deps) *API { return New(DepsOf(d)) })

// DepsOf are the services of a process that the records' handlers use.
func DepsOf(d service.Deps) Deps {
	return Deps{Store: d.Store, Companies: d.Companies, Workflows: d.Workflows, Runs: d.Runs,
		Enrichment: d.Enrichment, Resources: d.Resources, Search: d.Search, Limits: d.Limits}
}

// Operations are the operations of every kind of record: companies',
// workflows', runs', then each declared resource's.
func Operations() []operation.Operation {
	return slices.Concat(append([][]operation.Operation{CompanyOperations(), WorkflowOperations(), RunOperations()}, DeclaredOperations()...)...)
}

// CompanyOperations are the operations of companies (recordOperations).
func CompanyOperations() []operation.Operation { return recordOperations(companyKind()) }

// DeclaredOperations are the operations of every declared resource, each
// kind's in turn.
func DeclaredOperations() [][]operation.Operation {
	var out [][]operation.Operation
	for _, k := range declaredKinds() {
		out = append(out, recordOperations(k))
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
	for _, k := range append([]kind[store.JSON]{companyKind()}, declaredKinds()...) {
		out = append(out, k.def)
	}
	return out
}

// WorkflowOperations are the generic operations of workflows (with MCP
// tools list_workflows and get_workflow).
func WorkflowOperations() []operation.Operation {
	k := kind[workflows.Workflow]{def: workflows.Def}
	k.reads, k.writes = records(func(a *API) interface {
		reader[workflows.Workflow]
		writer
	} {
		return workflowRecords{a.d.Workflows}
	})
	return recordOperations(k)
}

// RunOperations are the generic list and get of workflow runs (with MCP
// tools list_workflow_runs and get_workflow_run).
func RunOperations() []operation.Operation {
	return recordOperations(kind[runs.Run]{def: runs.Def, reads: func(a *API) reader[runs.Run] { return runRecords{a.d.Runs} }})
}
