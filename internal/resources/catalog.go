package resources

import (
	"regexp"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// Industries are the top of the classification: industry > sector > subsector.
var Industries = &resource.Def{
	Name: "industries", Singular: "industry", Type: "INDUSTRY", IDPrefix: "ind", Group: Catalog,
	Doc: "The top level of the organization's classification of companies.",
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, Required: true, Unique: true, Fold: true, Sort: true, Doc: "the name, unique in the organization (case-insensitive)"},
		description(),
		externalReference(),
	},
}

// Sectors belong to an industry (the spec's sector record).
var Sectors = &resource.Def{
	Name: "sectors", Singular: "sector", Type: "SECTOR", IDPrefix: "sec", Group: Catalog,
	Doc: "A sector of an industry.",
	Fields: []resource.Field{
		{Name: "industryId", Kind: resource.Ref, Target: "industries", Required: true, Lookup: true, Restrict: true,
			Doc: "the industry; an industry with sectors cannot be deleted"},
		name(true),
		externalReference(),
	},
}

// Subsectors belong to a sector.
var Subsectors = &resource.Def{
	Name: "subsectors", Singular: "subsector", Type: "SUBSECTOR", IDPrefix: "sub", Group: Catalog,
	Doc: "A subsector of a sector.",
	Fields: []resource.Field{
		{Name: "sectorId", Kind: resource.Ref, Target: "sectors", Required: true, Lookup: true, Restrict: true,
			Doc: "the sector; a sector with subsectors cannot be deleted"},
		name(true),
		externalReference(),
	},
}

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Tags label records; a tag's name is unique in the organization.
var Tags = &resource.Def{
	Name: "tags", Singular: "tag", Type: "TAG", IDPrefix: "tag", Group: Catalog,
	Doc: "A label of the organization; names are unique (case-insensitive).",
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, MaxLen: 100, Required: true, Unique: true, Fold: true, Sort: true, Lookup: true,
			Doc: "the name, unique in the organization (case-insensitive); a list filter"},
		{Name: "color", Kind: resource.String, MaxLen: 7, Example: "#1f77b4", Doc: "a color as #RRGGBB"},
		description(),
	},
	Check: func(rec map[string]any) error {
		if c, ok := rec["color"].(string); ok && !hexColor.MatchString(c) {
			return apperr.Invalid("color", "must be a color as #RRGGBB, such as #1f77b4")
		}
		return nil
	},
}
