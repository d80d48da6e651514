// Package resources declares the simple resources of the service on the
// resource layer: their fields, rules, references, filters and sort
// fields. Behaviour of their own (a score's finalScore, a list's columns)
// is in the Def hooks next to each declaration.
package resources

import (
	"fmt"
	"slices"
	"sync"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Functions are the functions that serve the declared resources, in the order of their declarations.
var Functions = []string{fn.Catalog, fn.CRM, fn.Documents, fn.Scoring}

// Companies is the name companies are referenced by (they are built
// outside the layer).
const Companies = companies.Name

// Field constructors for the shapes many resources share.
func nameField(sortable bool) resource.Field {
	return resource.Field{Name: "name", Kind: resource.String, Required: true, Sort: sortable, Search: 3, Doc: "the name"}
}

func externalReference() resource.Field {
	return resource.Field{Name: "externalReference", Kind: resource.Struct, Doc: "the record in another system: {source, id}",
		Fields: []resource.Field{{Name: "source", Kind: resource.String, Doc: "the other system"}, {Name: "id", Kind: resource.String, MaxLen: 256, Doc: "the id there"}}}
}

func externalID() resource.Field {
	return resource.Field{Name: "externalId", Kind: resource.String, MaxLen: 256, Unique: true,
		Doc: "the caller's own identifier, unique in the organization"}
}

func custom() resource.Field {
	return resource.Field{Name: "custom", Kind: resource.Object, Doc: "free-form JSON object"}
}

func tags() resource.Field {
	return resource.Field{Name: "tags", Kind: resource.Strings, MaxLen: 100, Doc: "labels"}
}

func description() resource.Field {
	return resource.Field{Name: "description", Kind: resource.Text, MaxLen: 5000, Doc: "a description"}
}

// declared are the declared resources, in the order of their
// declarations: package-level variables are initialized in the order of
// the files (sorted by name), then of the declarations in each file, so
// catalog.go's come first, then crm.go's, documents.go's, scoring.go's.
var declared []*resource.Def

// declare adds d to the declared resources: a resource declared with it
// has its routes, its OpenAPI operations and schemas, its documentation,
// its search schema (Searchable), its MCP tools (MCP), its place on lists
// (OnLists), its CDK and SAM routes and its function's IAM policy, and the
// contract and performance tests' samples, with nothing else to list.
func declare(d *resource.Def) *resource.Def {
	for _, o := range declared {
		if o.Name == d.Name || o.Type == d.Type || o.IDPrefix == d.IDPrefix {
			panic(fmt.Sprintf("resources: %s declared twice, or with the type or id prefix of %s", d.Name, o.Name))
		}
	}
	declared = append(declared, d)
	return d
}

// SeriesKinds are the kinds of record that hold metric series (their Def's
// Series), by name: companies, then the declared resources in order.
func SeriesKinds() []string {
	var out []string
	for _, d := range append([]*resource.Def{companies.Def}, All()...) {
		if d.Series {
			out = append(out, d.Name)
		}
	}
	return out
}

// All lists every declared resource, in the order of their declarations.
func All() []*resource.Def { return slices.Clone(declared) }

// NewRegistry builds the services of every declared resource over st.
// companies is how references to companies are checked, and companyFields
// the fields a company list's columns may show.
func NewRegistry(st *store.Store, companies resource.External, companyFields []string) *resource.Registry {
	columnsOnce.Do(func() { listColumnFields(companyFields) })
	return resource.NewRegistry(st, All(), map[string]resource.External{Companies: companies})
}

var columnsOnce sync.Once
