// Package companies holds the company record, the validation of its create
// and update fields, and the service that stores companies per organization.
package companies

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/fold"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Origins of a company record.
const (
	OriginUser     = "user"     // made through the API
	OriginWorkflow = "workflow" // made by a workflow run
)

// CompanyTypes are the accepted values of companyType.
var CompanyTypes = []string{"operating", "investor", "lender", "investment_bank", "advisor", "sponsor", "service_provider"}

// Location of a company; unknown parts are omitted, so an unknown location is {}.
type Location struct {
	City    *string `json:"city,omitempty"`
	State   *string `json:"state,omitempty"`
	Country *string `json:"country,omitempty"`
}

// ExternalReference points at the record in another system; {} when none.
type ExternalReference struct {
	Source string `json:"source,omitempty"`
	ID     string `json:"id,omitempty"`
}

// Assignee is a person or team assigned to the company.
type Assignee struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// Candidate is one discovered value behind a reconciled attribute.
type Candidate struct {
	Value        string     `json:"value"`
	Source       string     `json:"source"`
	Confidence   float64    `json:"confidence"`
	Pinned       bool       `json:"pinned"`
	DiscoveredAt clock.Time `json:"discoveredAt"`
}

// Company is the full company record of the spec. Fields not yet known are
// null; arrays are [] and objects {} rather than null.
type Company struct {
	store.Versioned
	ID                      string                 `json:"id"`
	CanonicalName           string                 `json:"canonicalName"`
	AlternativeNames        []string               `json:"alternativeNames"`
	Website                 *string                `json:"website"`
	LinkedinURL             *string                `json:"linkedinUrl"`
	Description             *string                `json:"description"`
	ShortDescription        *string                `json:"shortDescription"`
	Sector                  *string                `json:"sector"`
	Subsector               *string                `json:"subsector"`
	Industry                *string                `json:"industry"`
	Location                Location               `json:"location"`
	CompanyType             *string                `json:"companyType"`
	Origin                  string                 `json:"origin"`
	ExternalID              *string                `json:"externalId"`
	ExternalReference       ExternalReference      `json:"externalReference"`
	Tags                    []string               `json:"tags"`
	Assignees               []Assignee             `json:"assignees"`
	Custom                  map[string]any         `json:"custom"`
	EmployeeCount           *int64                 `json:"employeeCount"`
	OwnershipStatus         *string                `json:"ownershipStatus"`
	LastValuation           *float64               `json:"lastValuation"`
	LastAmountRaised        *float64               `json:"lastAmountRaised"`
	TotalMoneyRaised        *float64               `json:"totalMoneyRaised"`
	LastRoundDate           *string                `json:"lastRoundDate"`
	LastFinancials          map[string]any         `json:"lastFinancials"`
	Enrichment              map[string][]Candidate `json:"enrichment"`
	LastEnrichedAt          *clock.Time            `json:"lastEnrichedAt"`
	LastEnrichmentStartedAt *clock.Time            `json:"lastEnrichmentStartedAt"`
	CreatedAt               clock.Time             `json:"createdAt"`
	UpdatedAt               clock.Time             `json:"updatedAt"`
}

// normalize replaces nil collections with empty ones, so clients never see
// null where an array or object is expected.
func (c *Company) normalize() {
	if c.AlternativeNames == nil {
		c.AlternativeNames = []string{}
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	if c.Assignees == nil {
		c.Assignees = []Assignee{}
	}
	if c.Custom == nil {
		c.Custom = map[string]any{}
	}
	if c.LastFinancials == nil {
		c.LastFinancials = map[string]any{}
	}
	if c.Enrichment == nil {
		c.Enrichment = map[string][]Candidate{}
	}
}

// nameKey is the sort key of a name: folded (fold.Text), so that names
// sort ignoring case and diacritics, "Émile" with "emile", as every list
// plan and search engine orders them.
func nameKey(name string) string { return fold.Text(strings.TrimSpace(name)) }

// lowerNameKey is the sort key of a name stored before sort keys were
// folded (lower case only): such a company keeps it until written again.
func lowerNameKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// sameName reports whether two names are the same to Match: equal
// ignoring case (not diacritics: "Müller" and "Muller" are two names).
func sameName(a, b string) bool { return lowerNameKey(a) == lowerNameKey(b) }

// WebsiteKey reduces a website to its host without "www.", so that
// "https://www.Acme.com/about" and "acme.com" find the same company.
func WebsiteKey(website string) string {
	s := strings.TrimSpace(website)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), "www.")
}

// sortTime formats a time so that string order is time order.
func sortTime(t clock.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// FieldNames lists the fields of the company record, in order.
func FieldNames() []string {
	t := reflect.TypeOf(Company{})
	var out []string
	for i := range t.NumField() {
		if tag := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]; tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// SetEnriched sets reconciled attribute values by their JSON names (null
// clears one), the enrichment field and lastEnrichedAt.
func (c *Company) SetEnriched(values map[string]json.RawMessage, candidates map[string][]Candidate, at clock.Time) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, v := range values {
		if v == nil {
			v = json.RawMessage("null")
		}
		m[k] = v
	}
	b, err = json.Marshal(m)
	if err != nil {
		return err
	}
	var next Company
	if err := json.Unmarshal(b, &next); err != nil {
		return err
	}
	next.Versioned = c.Versioned
	next.Enrichment = candidates
	next.LastEnrichedAt = at.Ptr()
	*c = next
	c.normalize()
	return nil
}
