package companies

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Name is the resource name of companies: their path segment, and how
// references to companies name them.
const Name = "companies"

// Def declares the company record on the resource layer: every field of
// Company, in its JSON order, with the rules of a create or update body.
// Bodies are decoded from it (DecodeCreate, DecodeUpdate) and
// docs/resources.md documents it; the records themselves are still stored
// by Service, whose matching and upserts are the companies' own.
var Def = &resource.Def{
	Name: Name, Singular: "company", Type: store.TypeCompany, IDPrefix: "cmp", Function: lambdas.Companies,
	Doc: "A company the firm tracks: made through the API (`origin` `user`) or by a workflow run (`origin` `workflow`, " +
		"upserted by `externalId`, then `website`, then `canonicalName`).",
	SortUpdatedAt: true,
	MCP:           true,
	Series:        true,
	Searchable:    true,
	Similar:       true,
	Fields: []resource.Field{
		{Name: "canonicalName", Kind: resource.String, MaxLen: maxName, Required: true, Sort: true, Search: 3, Doc: "the company's name"},
		{Name: "alternativeNames", Kind: resource.Strings, MaxLen: maxName, MaxItems: maxListItems, Search: 2, Doc: "other names it is known by"},
		{Name: "website", Kind: resource.String, MaxLen: maxURL, Verbatim: true, Lookup: true, Example: "https://example.com",
			Validate: func(path string, v any) error { s, _ := v.(string); return checkURL(path, s) },
			Rule:     "an http(s) URL or a bare domain such as `acme.com`",
			Doc:      "the company's website; a list filter matched by host (scheme, `www.` and path ignored, case-insensitive)"},
		{Name: "linkedinUrl", Kind: resource.URL, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the LinkedIn page, set by enrichment"},
		{Name: "description", Kind: resource.Text, MaxLen: maxDescription, Verbatim: true, Search: 1, Doc: "a description"},
		{Name: "shortDescription", Kind: resource.Text, MaxLen: maxShortDesc, Verbatim: true, Search: 1.5, Doc: "a short description"},
		{Name: "sector", Kind: resource.String, MaxLen: maxShortText, Verbatim: true, Search: 1, Doc: "the sector, in the firm's words"},
		{Name: "subsector", Kind: resource.String, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the subsector, set by enrichment"},
		{Name: "industry", Kind: resource.String, MaxLen: maxShortText, Verbatim: true, Search: 1, Doc: "the industry, in the firm's words"},
		{Name: "location", Kind: resource.Struct, Doc: "where it is: {city, state, country}, unknown parts left out",
			Fields: []resource.Field{
				{Name: "city", Kind: resource.String, MaxLen: maxShortText, Verbatim: true, Omitted: true, Doc: "the city"},
				{Name: "state", Kind: resource.String, MaxLen: maxShortText, Verbatim: true, Omitted: true, Doc: "the state or region"},
				{Name: "country", Kind: resource.String, MaxLen: maxShortText, Verbatim: true, Omitted: true, Doc: "the country"},
			}},
		{Name: "companyType", Kind: resource.Enum, Values: CompanyTypes, Doc: "what kind of company it is"},
		{Name: "origin", Kind: resource.Enum, Values: []string{OriginUser, OriginWorkflow}, ReadOnly: true, Import: resource.ImportKept, Always: true, Doc: "how the record was made"},
		{Name: "externalId", Kind: resource.String, MaxLen: maxShortText, Verbatim: true, Unique: true, Lookup: true,
			Validate: func(path string, v any) error { s, _ := v.(string); return checkExternalID(path, s) },
			Rule:     "not blank",
			Doc:      "the caller's own identifier, unique in the organization; a list filter"},
		{Name: "externalReference", Kind: resource.Struct, ReadOnly: true, Doc: "the record in another system: {source, id}",
			Fields: []resource.Field{{Name: "source", Kind: resource.String, ReadOnly: true, Omitted: true, Doc: "the other system"}, {Name: "id", Kind: resource.String, ReadOnly: true, Omitted: true, Doc: "the id there"}}},
		{Name: "tags", Kind: resource.Strings, MaxLen: maxTag, MaxItems: maxListItems, Search: 1, Doc: "labels"},
		{Name: "assignees", Kind: resource.Structs, ReadOnly: true, Doc: "people and teams responsible: [{id, type}]",
			Fields: []resource.Field{{Name: "id", Kind: resource.String, ReadOnly: true, Always: true, Doc: "the person's or team's id"}, {Name: "type", Kind: resource.String, ReadOnly: true, Always: true, Doc: "person or team"}}},
		{Name: "custom", Kind: resource.Object, Doc: "free-form JSON object"},
		{Name: "employeeCount", Kind: resource.Int, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the number of employees"},
		{Name: "ownershipStatus", Kind: resource.String, ReadOnly: true, Import: resource.ImportCandidate, Doc: "private, public, PE-backed, ..."},
		{Name: "lastValuation", Kind: resource.Number, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the last known valuation"},
		{Name: "lastAmountRaised", Kind: resource.Number, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the amount of the last round"},
		{Name: "totalMoneyRaised", Kind: resource.Number, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the total raised"},
		{Name: "lastRoundDate", Kind: resource.Date, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the date of the last round"},
		{Name: "lastFinancials", Kind: resource.Object, ReadOnly: true, Import: resource.ImportCandidate, Doc: "the last known financials"},
		{Name: "enrichment", Kind: resource.Object, ReadOnly: true, Import: resource.ImportCandidate,
			Doc: "the candidate values found for each enriched attribute, by attribute name: the best ranked first, at most 10 " +
				"(`GET /v1/enrichments/resources/companies/{id}` lists them all)",
			Members: &resource.Field{Name: "{attribute}", Kind: resource.Structs, ReadOnly: true, Doc: "the attribute's candidates, in rank order",
				Fields: []resource.Field{
					{Name: "value", Kind: resource.Text, ReadOnly: true, Always: true,
						Doc: "the value as text: a string as it is, another value as compact JSON; cut to 2,000 characters (ending in `…`)"},
					{Name: "source", Kind: resource.String, ReadOnly: true, Always: true,
						Doc: "where it was found: `user`, `document`, `provider`, `import`, `workflow` or `web`"},
					{Name: "confidence", Kind: resource.Number, ReadOnly: true, Always: true, Doc: "how sure the source is, 0 to 100"},
					{Name: "pinned", Kind: resource.Bool, ReadOnly: true, Doc: "a pinned candidate wins its attribute"},
					{Name: "discoveredAt", Kind: resource.DateTime, ReadOnly: true, Always: true, Doc: "when it was found (the value's `capturedOn`)"},
				}}},
		{Name: "lastEnrichedAt", Kind: resource.DateTime, ReadOnly: true, Import: resource.ImportIgnored,
			ImportNote: "lastEnrichedAt is when the import reconciles the candidates it adds", Doc: "when enrichment last finished"},
		{Name: "lastEnrichmentStartedAt", Kind: resource.DateTime, ReadOnly: true, Import: resource.ImportIgnored,
			ImportNote: "lastEnrichmentStartedAt is when an enrichment of the organization starts", Doc: "when enrichment last started"},
	},
}
