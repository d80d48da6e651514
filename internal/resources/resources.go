// Package resources declares the simple resources of the service on the
// resource layer: their fields, rules, references, filters and sort
// fields. Behaviour of their own (a score's finalScore, a list's columns)
// is in the Def hooks next to each declaration.
package resources

import (
	"sync"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Resource groups: one Lambda function each (named in package fn).
const (
	Catalog   = fn.Catalog
	CRM       = fn.CRM
	Documents = fn.Documents
	Scoring   = fn.Scoring
)

// Groups lists the resource groups of the declared resources.
var Groups = []string{Catalog, CRM, Documents, Scoring}

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

// All lists every declared resource.
func All() []*resource.Def {
	return []*resource.Def{
		Industries, Sectors, Subsectors, Tags,
		Deals, People, Teams, Workspaces, Activities,
		DocumentsDef, Lists,
		Frameworks, Screenings, Scores,
	}
}

// NewRegistry builds the services of every declared resource over st.
// companies is how references to companies are checked, and companyFields
// the fields a company list's columns may show.
func NewRegistry(st *store.Store, companies resource.External, companyFields []string) *resource.Registry {
	columnsOnce.Do(func() { listColumnFields(companyFields) })
	return resource.NewRegistry(st, All(), map[string]resource.External{Companies: companies})
}

var columnsOnce sync.Once

// Routes are the routes of every declared resource: create, list, get,
// update (partial PUT) and delete.
func Routes() []Route {
	var out []Route
	for _, d := range All() {
		base := "/v1/" + d.Name
		get := Route{Group: d.Group, Method: "GET", Path: base + "/{id}", Def: d}
		if d.MultiGet {
			get.MaxParam = resource.MaxMultiGetSegment
		}
		out = append(out,
			Route{Group: d.Group, Method: "POST", Path: base, Def: d}, Route{Group: d.Group, Method: "GET", Path: base, Def: d},
			get, Route{Group: d.Group, Method: "PUT", Path: base + "/{id}", Def: d},
			Route{Group: d.Group, Method: "DELETE", Path: base + "/{id}", Def: d})
	}
	return out
}

// Route is one route of a declared resource.
type Route struct {
	Group, Method, Path string
	Def                 *resource.Def
	MaxParam            int // the longest path parameter accepted; 0 for an id's
}
