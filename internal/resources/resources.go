// Package resources declares the simple resources of the service on the
// resource layer: their fields, rules, references, filters and sort
// fields. Behaviour of their own (a score's finalScore, a list's columns)
// is in the Def hooks next to each declaration.
package resources

import (
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Functions are the functions that serve the declared resources, in the order of their declarations.
var Functions = []string{lambdas.Catalog, lambdas.CRM, lambdas.Documents, lambdas.Scoring}

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

// declare adds d to the declared resources. A resource declared with it,
// in a file of this package, needs nothing else written by hand: from the
// declaration come its routes and their handlers, its OpenAPI operations
// and schemas, its topic in the reference (its Name; Title and Section
// when the defaults, the Name capitalized and "Records", do not fit), its
// section of docs/resources.md, its event types, its search schema
// (Searchable), its MCP tools (MCP), its place on lists (OnLists), its
// metric series (Series), its function's routes and IAM policy in the
// deployment model, the CDK stack and the SAM template, and the contract
// and performance tests' samples. `make generate` then rewrites the
// committed files made from it (docs/architecture.md, "Adding a
// resource").
//
// declare panics, naming the declaration's file and what to change, when
// d lacks a name, singular, type, id prefix or function, when its function
// serves no HTTP routes (routes.Functions), or when another kind of record
// has its name, type or id prefix.
func declare(d *resource.Def) *resource.Def {
	d.File = declaringFile()
	bad := func(format string, args ...any) {
		panic(fmt.Sprintf("resources: %s (%s): ", d.Name, d.File) + fmt.Sprintf(format, args...))
	}
	if d.Name == "" || d.Singular == "" || d.Type == "" || d.IDPrefix == "" || d.Function == "" {
		bad("a declaration needs a Name (the plural, its path: /v1/<Name>), a Singular, a Type (its items' type in the table, such as DEAL), " +
			"an IDPrefix and a Function (package fn)")
	}
	if !slices.Contains(routes.Served, d.Function) {
		bad("Function %q serves no HTTP routes: use one of %q (package fn), or add the function to routes.Functions in internal/routes/functions.go", d.Function, routes.Served)
	}
	for _, o := range append([]*resource.Def{companies.Def}, declared...) {
		if o.Name == d.Name || o.Type == d.Type || o.IDPrefix == d.IDPrefix {
			bad("%s (%s) has the same Name, Type or IDPrefix (%s, %s, %s): give this declaration its own", o.Name, o.Where(), o.Name, o.Type, o.IDPrefix)
		}
	}
	declared = append(declared, d)
	return d
}

// declaringFile is the file, from the repository root, whose package-level
// declaration called declare (through helpers such as subdivision): the
// one the package's initialization runs.
func declaringFile() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	file := ""
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, packagePath+".") {
			file = f.File
		}
		if !more || strings.HasPrefix(f.Function, packagePath+".init") {
			break
		}
	}
	return "internal/resources/" + path.Base(filepath.ToSlash(file))
}

// packagePath is this package's import path.
const packagePath = "github.com/sourcebase/sourcebase/internal/resources"

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
