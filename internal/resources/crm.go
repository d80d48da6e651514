package resources

import (
	"regexp"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// DealStatuses are the states of a deal.
var DealStatuses = []string{"open", "won", "lost", "passed", "on_hold"}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// currency is the currency of a record's money fields.
func currency() resource.Field {
	return resource.Field{Name: "currency", Kind: resource.String, MaxLen: 3, Example: "USD", Doc: "ISO 4217 code such as USD"}
}

// money checks a record's currency, which is required when its amount
// field is set; moneyRules documents it.
func money(amount string) func(rec map[string]any) error {
	return func(rec map[string]any) error {
		if c, ok := rec["currency"].(string); ok && !currencyCode.MatchString(c) {
			return apperr.Invalid("currency", "must be an ISO 4217 code of three capital letters, such as USD")
		}
		if _, hasAmount := rec[amount].(interface{ String() string }); hasAmount && rec["currency"] == nil {
			return apperr.Invalid("currency", "is required when %s is set", amount)
		}
		return nil
	}
}

func moneyRules(amount string) string {
	return "`currency` must be an ISO 4217 code of three capital letters, and is required when `" + amount + "` is set " +
		"(400 naming `currency`)."
}

// assignees are the people or teams responsible for a record.
func assignees() resource.Field {
	return resource.Field{Name: "assignees", Kind: resource.Structs, MaxItems: 50, Doc: "people and teams responsible: [{id, type}]",
		Fields: []resource.Field{
			{Name: "type", Kind: resource.Enum, Values: []string{"person", "team"}, Required: true, Doc: "person or team"},
			{Name: "id", Kind: resource.Ref, TargetBy: "type", Targets: map[string]string{"person": "people", "team": "teams"}, Required: true, Doc: "the person's or team's id"},
		}}
}

// Deals are the firm's opportunities: a company, a stage and an amount.
var Deals = declare(&resource.Def{
	Name: "deals", Singular: "deal", Type: "DEAL", IDPrefix: "deal", Function: lambdas.CRM,
	Doc:     "An opportunity of the firm with a company.",
	MCP:     true,
	Series:  true,
	OnLists: true,
	Rules:   moneyRules("amount"),
	Fields: []resource.Field{
		nameField(true),
		{Name: "companyId", Kind: resource.Ref, Target: Companies, Lookup: true, Doc: "the company; a list filter"},
		{Name: "stage", Kind: resource.String, MaxLen: 100, Doc: "the pipeline stage, in the firm's own words (sourcing, diligence, IC, ...)"},
		{Name: "status", Kind: resource.Enum, Values: DealStatuses, Default: "open", Lookup: true, Doc: "open, won, lost, passed or on_hold; a list filter"},
		{Name: "amount", Kind: resource.Number, Min: ptr(0), Doc: "the deal size, in currency"},
		currency(),
		{Name: "round", Kind: resource.String, MaxLen: 100, Doc: "the round or deal type (Series A, buyout, ...)"},
		{Name: "closeDate", Kind: resource.Date, Sort: true, Doc: "the expected or actual close date"},
		assignees(),
		externalID(),
		externalReference(),
		custom(),
		tags(),
	},
	Check: money("amount"),
})

// People are contacts: founders, executives, advisors, colleagues.
var People = declare(&resource.Def{
	Name: "people", Singular: "person", Type: "PERSON", IDPrefix: "per", Function: lambdas.CRM,
	Doc:     "A contact of the firm.",
	MCP:     true,
	Series:  true,
	OnLists: true,
	Rules:   "Each of `emails` must be an address such as `name@example.com` (400 naming `emails[i]`).",
	Fields: []resource.Field{
		{Name: "firstName", Kind: resource.String, Required: true, Doc: "the first name"},
		{Name: "lastName", Kind: resource.String, Sort: true, Doc: "the last name"},
		{Name: "emails", Kind: resource.Strings, MaxItems: 20, MaxLen: 254, Example: []any{"ada@example.com"}, Doc: "e-mail addresses"},
		{Name: "title", Kind: resource.String, Doc: "the job title"},
		{Name: "linkedinUrl", Kind: resource.URL, Doc: "the LinkedIn profile URL"},
		{Name: "phone", Kind: resource.String, MaxLen: 50, Doc: "a phone number"},
		{Name: "companyIds", Kind: resource.Refs, Target: Companies, MaxItems: 50, Doc: "the companies the person works with"},
		externalID(),
		externalReference(),
		custom(),
		tags(),
	},
	SortUpdatedAt: true,
	Check: func(rec map[string]any) error {
		list, _ := rec["emails"].([]any)
		for i, e := range list {
			if s, _ := e.(string); !resource.ValidEmail(s) {
				return apperr.Invalid(fieldIndex("emails", i), "must be an e-mail address such as name@example.com")
			}
		}
		return nil
	},
})

// Teams group the firm's people.
var Teams = declare(&resource.Def{
	Name: "teams", Singular: "team", Type: "TEAM", IDPrefix: "team", Function: lambdas.CRM,
	Doc: "A team of the firm's people.",
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, Required: true, Unique: true, Fold: true, Sort: true, Doc: "the name, unique in the organization"},
		description(),
		{Name: "memberIds", Kind: resource.Refs, Target: "people", MaxItems: 200, Doc: "the people of the team"},
	},
})

// Workspaces are the spec's workspace records.
var Workspaces = declare(&resource.Def{
	Name: "workspaces", Singular: "workspace", Type: "WORKSPACE", IDPrefix: "wsp", Function: lambdas.CRM,
	Doc: "A workspace about a company or a theme; private ones are visible to the organization's keys like all records.",
	Fields: []resource.Field{
		nameField(true),
		{Name: "source", Kind: resource.String, Search: 1, Doc: "where the workspace came from"},
		{Name: "company", Kind: resource.Ref, Target: Companies, Lookup: true, Doc: "the company the workspace is about; a list filter"},
		{Name: "isPrivate", Kind: resource.Bool, Lookup: true, Doc: "private to its creator in the application; a list filter"},
		{Name: "isPersonal", Kind: resource.Bool, Doc: "a personal workspace"},
	},
	SortUpdatedAt: true,
	Searchable:    true,
	MCP:           true,
})

// Activities are meetings, calls and notes with people and companies.
var Activities = declare(&resource.Def{
	Name: "activities", Singular: "activity", Type: "ACTIVITY", IDPrefix: "act", Function: lambdas.CRM,
	Doc: "A meeting, call, e-mail or note with people and companies.",
	Fields: []resource.Field{
		{Name: "subject", Kind: resource.String, MaxLen: 500, Required: true, Search: 3, Doc: "the subject"},
		{Name: "type", Kind: resource.String, MaxLen: 50, Required: true, Lookup: true, Search: 1, Doc: "the kind, such as Meeting, Call, Email, Note; a list filter"},
		{Name: "startedAt", Kind: resource.DateTime, Sort: true, Doc: "when it started"},
		{Name: "endedAt", Kind: resource.DateTime, Doc: "when it ended (not before startedAt)"},
		{Name: "participants", Kind: resource.Structs, MaxItems: 100, Doc: "people and companies taking part: [{id, type}]",
			Fields: []resource.Field{
				{Name: "type", Kind: resource.Enum, Values: []string{"person", "company"}, Required: true, Doc: "person or company"},
				{Name: "id", Kind: resource.Ref, TargetBy: "type", Targets: map[string]string{"person": "people", "company": Companies}, Required: true, Doc: "the id"},
			}},
		{Name: "deals", Kind: resource.Refs, Target: "deals", MaxItems: 50, Doc: "ids of the deals it concerns"},
		{Name: "relatedResources", Kind: resource.Structs, MaxItems: 100, Doc: "other records it concerns: [{id, type}]",
			Fields: []resource.Field{
				{Name: "type", Kind: resource.Enum, Values: []string{"company", "deal", "person", "document"}, Required: true, Doc: "the record's kind"},
				{Name: "id", Kind: resource.Ref, TargetBy: "type", Targets: map[string]string{"company": Companies, "deal": "deals", "person": "people", "document": "documents"}, Required: true, Doc: "the id"},
			}},
		externalReference(),
		{Name: "isPrivate", Kind: resource.Bool, Doc: "private to its participants in the application"},
	},
	Check: func(rec map[string]any) error {
		start, _ := rec["startedAt"].(string)
		end, _ := rec["endedAt"].(string)
		if start == "" || end == "" {
			return nil
		}
		s, err1 := time.Parse(time.RFC3339Nano, start)
		e, err2 := time.Parse(time.RFC3339Nano, end)
		if err1 == nil && err2 == nil && e.Before(s) {
			return apperr.Invalid("endedAt", "must not be before startedAt")
		}
		return nil
	},
	Searchable: true,
	MCP:        true,
	Rules:      "`endedAt` must not be before `startedAt` (400 naming `endedAt`).",
})

// FundStrategies are the investment strategies of a fund.
var FundStrategies = []string{"buyout", "growth", "venture", "credit", "real_estate", "infrastructure", "secondaries", "fund_of_funds", "other"}

// Funds are investment funds: the firm's own vehicles, or those of other
// managers it tracks, with the deals they hold.
var Funds = declare(&resource.Def{
	Name: "funds", Singular: "fund", Type: "FUND", IDPrefix: "fnd", Function: lambdas.CRM,
	Doc:        "An investment fund: the firm's own or another manager's, with its vintage, size, strategy and deals.",
	Searchable: true,
	MCP:        true,
	OnLists:    true,
	Rules:      moneyRules("size"),
	Fields: []resource.Field{
		nameField(true),
		{Name: "vintageYear", Kind: resource.Int, Min: ptr(1900), Max: ptr(2100), Sort: true, Doc: "the vintage: the year of the first close or first investment"},
		{Name: "size", Kind: resource.Number, Min: ptr(0), Doc: "the committed capital (target size while raising), in currency"},
		currency(),
		{Name: "strategy", Kind: resource.Enum, Values: FundStrategies, Lookup: true, Search: 1, Doc: "the investment strategy; a list filter"},
		{Name: "managerCompanyId", Kind: resource.Ref, Target: Companies, Lookup: true, Doc: "the manager (general partner), a company; a list filter"},
		{Name: "dealIds", Kind: resource.Refs, Target: "deals", MaxItems: 200, Doc: "the deals the fund made or holds"},
	},
	Check: money("size"),
})
