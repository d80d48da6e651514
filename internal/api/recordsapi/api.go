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
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

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

// SchemasOf are the component schemas of the kinds ks (a feature's
// Schemas): each kind's record and listed record, its search body and
// batch shapes, and the shapes every list and search shares (filters, a
// search's predicates and metadata).
func SchemasOf(ks ...*resource.Def) func(out map[string]openapi.Schema) {
	return func(out map[string]openapi.Schema) {
		for _, d := range ks {
			out[openapi.SchemaName(d)] = openapi.Record(d, openapi.Output)
			out[listspec.ListedSchemaName(d)] = listspec.ListedSchema(d)
			if d.Searchable {
				out[openapi.SchemaName(d)+"Search"] = listspec.SearchSchema(search.SchemaOf(d))
			}
			if slices.Contains(kinds.Bulk(), d) {
				for _, v := range batchVariants(d) {
					out[v.name] = v.schema
				}
			}
		}
		out["SearchPredicate"] = listspec.PredicateSchema()
		listspec.FilterComponents(out)
		out["SearchMetadata"] = openapi.TypeOf(reflect.TypeFor[SearchMetadata]())
	}
}
