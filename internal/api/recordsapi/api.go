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

	"github.com/sourcebase/sourcebase/internal/api/recordsapi/batch"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Base is what every kind's generic operations use, whichever feature
// serves the kind: the table, the search engine, the rate limits, and how
// a record of any kind is presented (a list's expand= reads related
// records of other kinds). A feature's API embeds one (NewBase).
type Base struct {
	Store  *store.Store
	Search search.Engine
	Limits *ratelimit.Limiter
	// present presents a stored record of a kind as GET answers it.
	present func(d *resource.Def) (resource.Presenter, bool)
}

// NewBase is the Base over the table, the search engine (nil: none in
// this process), the rate limits (nil: none) and how a record of any kind
// is presented (service.Deps.Present).
func NewBase(st *store.Store, engine search.Engine, limits *ratelimit.Limiter, present func(d *resource.Def) (resource.Presenter, bool)) *Base {
	return &Base{Store: st, Search: engine, Limits: limits, present: present}
}

// RecordsBase is b: a feature's API that embeds a Base is a Based.
func (b *Base) RecordsBase() *Base { return b }

// Based is the API of a feature that serves kinds of record through the
// generic operations (KindOperations): its handlers read the Base, and
// the kind's Reads and Writes the feature's own services.
type Based interface{ RecordsBase() *Base }

// SchemasOf are the component schemas of the kinds ks (a feature's
// Schemas): each kind's record and listed record, its search body, and
// the shapes every list and search shares (filters, a search's
// predicates and metadata).
func SchemasOf(ks ...*resource.Def) func(out map[string]openapi.Schema) { return schemasOf(false, ks) }

// WrittenSchemasOf are SchemasOf of kinds with batch writes, with their
// batch operations' shapes.
func WrittenSchemasOf(ks ...*resource.Def) func(out map[string]openapi.Schema) {
	return schemasOf(true, ks)
}

func schemasOf(written bool, ks []*resource.Def) func(out map[string]openapi.Schema) {
	return func(out map[string]openapi.Schema) {
		for _, d := range ks {
			out[openapi.SchemaName(d)] = openapi.Record(d, openapi.Output)
			out[listspec.ListedSchemaName(d)] = listspec.ListedSchema(d)
			if d.Searchable {
				out[openapi.SchemaName(d)+"Search"] = listspec.SearchSchema(search.SchemaOf(d))
			}
			if written {
				batch.Schemas(d, out)
			}
		}
		out["SearchPredicate"] = listspec.PredicateSchema()
		listspec.FilterComponents(out)
		meta := openapi.TypeOf(reflect.TypeFor[SearchMetadata]())
		props := meta["properties"].(openapi.Schema)
		props["ranking"] = openapi.Schema{"type": "string", "enum": []any{search.RankingKeyword, search.RankingHybrid, search.RankingSemantic},
			"description": "how the results are ranked: `keyword` (BM25, or no text), `hybrid` (keyword and meaning fused), `semantic` (similar records, by meaning)"}
		props["semantic"] = openapi.Schema{"type": "string", "enum": []any{search.SemanticPending},
			"description": "`pending` when a record of the page (or the record whose similar records were asked) has no embedding yet: found by keyword now, by meaning once it is embedded"}
		out["SearchMetadata"] = meta
	}
}
