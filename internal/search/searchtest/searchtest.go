// Package searchtest holds what the tests of every search engine share:
// a searchable resource with every kind of field, so that each engine is
// tested on the same declarations.
package searchtest

import "github.com/sourcebase/sourcebase/internal/resource"

// Notes are a searchable resource declared for tests: every field type, a
// nested object and an array of objects.
var Notes = &resource.Def{
	Name: "notes", Singular: "note", Type: "NOTE", IDPrefix: "nte", Function: "test", Searchable: true,
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, Required: true, Search: 3, Sort: true},
		{Name: "body", Kind: resource.Text, Search: 1},
		{Name: "source", Kind: resource.String},
		{Name: "stage", Kind: resource.Enum, Values: []string{"new", "won", "lost"}},
		{Name: "size", Kind: resource.Int},
		{Name: "score", Kind: resource.Number},
		{Name: "closedOn", Kind: resource.Date},
		{Name: "isPrivate", Kind: resource.Bool},
		{Name: "tags", Kind: resource.Strings, Search: 1},
		{Name: "location", Kind: resource.Struct, Fields: []resource.Field{{Name: "city", Kind: resource.String}}},
		{Name: "contacts", Kind: resource.Structs, Fields: []resource.Field{{Name: "email", Kind: resource.Email}}},
	},
}
