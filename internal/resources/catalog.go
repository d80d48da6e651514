package resources

import (
	"regexp"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// classification is the section of the API reference that lists the
// catalog's resources.
const classification = "Classification"

// Industries are the top of the classification: industry > sector > subsector.
var Industries = declare(&resource.Def{
	Name: "industries", Singular: "industry", Type: "INDUSTRY", IDPrefix: "ind", Function: lambdas.Catalog, Section: classification,
	Doc: "The top level of the organization's classification of companies.",
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, Required: true, Unique: true, Fold: true, Sort: true, Doc: "the name, unique in the organization (case-insensitive)"},
		description(),
		externalReference(),
	},
})

// Sectors belong to an industry (the spec's sector record).
var Sectors = subdivision("sectors", "sector", "SECTOR", "sec", "industryId", "industries", "A sector of an industry.")

// Subsectors belong to a sector.
var Subsectors = subdivision("subsectors", "subsector", "SUBSECTOR", "sub", "sectorId", "sectors", "A subsector of a sector.")

// subdivision declares a level of the classification below another: a
// name, the parent (which cannot be deleted while it has children) and an
// external reference.
func subdivision(name, singular, typ, prefix, parentField, parent, doc string) *resource.Def {
	return declare(&resource.Def{
		Name: name, Singular: singular, Type: typ, IDPrefix: prefix, Function: lambdas.Catalog, Section: classification, Doc: doc,
		Fields: []resource.Field{
			{Name: parentField, Kind: resource.Ref, Target: parent, Required: true, Lookup: true, Restrict: true,
				Doc: "the parent; a list filter; the parent cannot be deleted while it has " + name},
			nameField(true),
			externalReference(),
		},
	})
}

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Tags label records; a tag's name is unique in the organization.
var Tags = declare(&resource.Def{
	Name: "tags", Singular: "tag", Type: "TAG", IDPrefix: "tag", Function: lambdas.Catalog, Section: classification,
	Doc:   "A label of the organization; names are unique (case-insensitive).",
	Rules: "`color`, when set, must be a hex color such as `#1f77b4` (400 naming `color`).",
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, MaxLen: 100, Required: true, Unique: true, Fold: true, Sort: true, Lookup: true,
			Doc: "the name, unique in the organization (case-insensitive); a list filter"},
		{Name: "color", Kind: resource.String, MaxLen: 7, Example: "#1f77b4", Doc: "a color: # and six hex digits, such as #1f77b4"},
		description(),
	},
	Check: func(rec map[string]any) error {
		if c, ok := rec["color"].(string); ok && !hexColor.MatchString(c) {
			return apperr.Invalid("color", "must be a color: # and six hex digits, such as #1f77b4")
		}
		return nil
	},
})
