package resources

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// Documents declares documents: files about a company or a deal.
var Documents = declare(&resource.Def{
	Name: "documents", Singular: "document", Type: "DOCUMENT", IDPrefix: "doc", Function: lambdas.Documents,
	Doc:        "A file about a company or a deal: its metadata and where the file is kept. GET /v1/documents/ids=<id>,<id>,... reads up to 100 at once.",
	MultiGet:   true,
	Searchable: true,
	Similar:    true,
	MCP:        true,
	OnLists:    true,
	Fields: []resource.Field{
		nameField(true),
		{Name: "type", Kind: resource.String, MaxLen: 100, Search: 1, Doc: "the kind of document, such as pitch_deck, financials, memo"},
		{Name: "companyId", Kind: resource.Ref, Target: Companies, Lookup: true, Doc: "the company; a list filter"},
		{Name: "dealId", Kind: resource.Ref, Target: "deals", Lookup: true, Doc: "the deal; a list filter"},
		{Name: "mimeType", Kind: resource.String, MaxLen: 255, Doc: "the media type, such as application/pdf"},
		{Name: "size", Kind: resource.Int, Min: ptr(0), Doc: "the size in bytes"},
		{Name: "url", Kind: resource.URL, Doc: "where the file can be fetched"},
		{Name: "storageKey", Kind: resource.String, MaxLen: 1024, Doc: "where the file is kept in the firm's storage"},
		{Name: "source", Kind: resource.String, MaxLen: 100, Search: 1, Doc: "where the document came from (upload, crm, email, ...)"},
	},
})

// ListResourceTypes maps a list's resourceType to the fields its columns
// may show.
var ListResourceTypes = map[string][]string{}

// listColumnFields fills ListResourceTypes once every declaration exists:
// the fields of the declared resources OnLists, and companyFields for
// companies.
func listColumnFields(companyFields []string) {
	ListResourceTypes[companySingular] = companyFields
	for _, def := range onLists() {
		var names []string
		for _, f := range def.AllFields() {
			names = append(names, f.Name)
		}
		ListResourceTypes[def.Singular] = names
	}
}

// companySingular is a list's resourceType of companies (built outside the
// layer, always on lists).
const companySingular = "company"

// onLists are the declared resources whose records lists hold (OnLists).
func onLists() []*resource.Def {
	var out []*resource.Def
	for _, d := range declared {
		if d.OnLists {
			out = append(out, d)
		}
	}
	return out
}

// init completes the declaration of lists once every resource is
// declared: a list's resourceType is companies' or the Singular of a
// declared resource OnLists.
func init() {
	types, plurals := []string{companySingular}, []string{Companies}
	for _, d := range onLists() {
		types, plurals = append(types, d.Singular), append(plurals, d.Name)
	}
	for i := range Lists.Fields {
		if Lists.Fields[i].Name == "resourceType" {
			Lists.Fields[i].Values = types
		}
	}
	Lists.Doc = fmt.Sprintf("A saved list of records of one type (%s or %s) with the columns to show.",
		strings.Join(plurals[:len(plurals)-1], ", "), plurals[len(plurals)-1])
}

// Lists are saved lists of records of one type, with their columns.
var Lists = declare(&resource.Def{
	Name: "lists", Singular: "list", Type: "LIST", IDPrefix: "lst", Function: lambdas.Documents,
	Doc: "A saved list of records of one type with the columns to show.", // completed by init
	Rules: "Each column's `field` must be a field of the list's `resourceType` records, at most once " +
		"(400 naming `columns[i].field` and listing the fields).",
	Fields: []resource.Field{
		nameField(true),
		{Name: "resourceType", Kind: resource.Enum, Required: true, Immutable: true, // Values: set by init
			Doc: "the type of the list's records; set at creation"},
		{Name: "columns", Kind: resource.Structs, MaxItems: 100, Doc: "the columns in order: [{field, label, width, visible}]",
			Example: []any{map[string]any{"field": "id", "label": "Id", "width": 120, "visible": true}},
			Fields: []resource.Field{
				{Name: "field", Kind: resource.String, Required: true, Doc: "a field of the list's resourceType"},
				{Name: "label", Kind: resource.String, Doc: "the column's title"},
				{Name: "width", Kind: resource.Int, Min: ptr(20), Max: ptr(2000), Doc: "the width in pixels"},
				{Name: "visible", Kind: resource.Bool, Default: true, Doc: "shown (true) or hidden"},
			}},
	},
	SortUpdatedAt: true,
	Check: func(rec map[string]any) error {
		typ, _ := rec["resourceType"].(string)
		fields := ListResourceTypes[typ]
		cols, _ := rec["columns"].([]any)
		seen := map[string]int{}
		for i, c := range cols {
			m, _ := c.(map[string]any)
			f, _ := m["field"].(string)
			if !slices.Contains(fields, f) {
				return apperr.Invalid(fmt.Sprintf("columns[%d].field", i), "must be a field of %s records; %q is not (fields: %s)", typ, f, strings.Join(fields, ", "))
			}
			if j, dup := seen[f]; dup {
				return apperr.Invalid(fmt.Sprintf("columns[%d].field", i), "repeats columns[%d]; each field is one column", j)
			}
			seen[f] = i
		}
		return nil
	},
})
