package companies

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// Fields is a set of company fields sent by a client: each absent
// (unchanged), null (cleared) or set.
type Fields struct {
	CanonicalName    jsonbody.Field[string]
	AlternativeNames jsonbody.Field[[]string]
	Website          jsonbody.Field[string]
	Description      jsonbody.Field[string]
	ShortDescription jsonbody.Field[string]
	Sector           jsonbody.Field[string]
	Industry         jsonbody.Field[string]
	Location         jsonbody.Field[Location]
	ExternalID       jsonbody.Field[string]
	Tags             jsonbody.Field[[]string]
	Custom           jsonbody.Field[map[string]any]
	CompanyType      jsonbody.Field[string]
}

// CreateFields are the fields accepted when creating a company.
var CreateFields = []string{"canonicalName", "alternativeNames", "website", "description", "shortDescription",
	"sector", "industry", "location", "externalId", "tags", "custom", "companyType"}

// UpdateFields are the fields accepted by an update: the spec's update
// fields plus location, tags and companyType, which a client can set at
// creation and so must be able to change.
var UpdateFields = CreateFields

// Limits of field values.
const (
	maxName        = 300
	maxShortText   = 200
	maxShortDesc   = 1000
	maxDescription = 20000
	maxURL         = 2048
	maxListItems   = 100
	maxTag         = 100
)

// DecodeCreate parses a create body as Def declares it: canonicalName is
// required.
func DecodeCreate(body []byte) (Fields, error) { return decode(body, true) }

// DecodeUpdate parses a partial update body as Def declares it.
func DecodeUpdate(body []byte) (Fields, error) { return decode(body, false) }

// decode reads a body with the layer (Def.Decode: unknown and read-only
// fields refused, each field's rules, errors naming the field) and turns
// the fields it sets into Fields, which Apply, matching and upserts use.
func decode(body []byte, create bool) (Fields, error) {
	m, err := Def.Decode(body, create)
	if err != nil {
		return Fields{}, err
	}
	return Fields{
		CanonicalName:    resource.DecodedText(m, "canonicalName"),
		AlternativeNames: resource.DecodedTexts(m, "alternativeNames"),
		Website:          resource.DecodedText(m, "website"),
		Description:      resource.DecodedText(m, "description"),
		ShortDescription: resource.DecodedText(m, "shortDescription"),
		Sector:           resource.DecodedText(m, "sector"),
		Industry:         resource.DecodedText(m, "industry"),
		Location:         location(m),
		ExternalID:       resource.DecodedText(m, "externalId"),
		Tags:             resource.DecodedTexts(m, "tags"),
		Custom:           resource.DecodedObject(m, "custom"),
		CompanyType:      resource.DecodedText(m, "companyType"),
	}, nil
}

// location is the decoded location; null arrives as {} (unknown).
func location(m map[string]any) jsonbody.Field[Location] {
	v, ok := m["location"]
	if !ok {
		return jsonbody.Field[Location]{}
	}
	parts, _ := v.(map[string]any)
	var loc Location
	for name, dst := range map[string]**string{"city": &loc.City, "state": &loc.State, "country": &loc.Country} {
		if s, ok := parts[name].(string); ok {
			*dst = &s
		}
	}
	return jsonbody.Field[Location]{Set: true, Value: loc}
}

// checkExternalID refuses a blank externalId: it would match nothing.
func checkExternalID(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return apperr.Invalid(field, "must not be empty; send null to clear it")
	}
	return nil
}

// checkURL accepts an absolute http(s) URL or a bare domain such as
// acme.com, which is how company websites are usually written: a host of
// dot-separated non-empty labels (or localhost), no user info, and a port,
// if any, from 1 to 65535.
func checkURL(field, s string) error {
	bad := apperr.Invalid(field, "must be a URL such as https://example.com")
	t := strings.TrimSpace(s)
	if t == "" || strings.ContainsAny(t, " \t\r\n") {
		return bad
	}
	if !strings.Contains(t, "://") {
		t = "https://" + t
	}
	u, err := url.Parse(t)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return bad
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	if host == "" || len(host) > 253 || (!strings.Contains(host, ".") && host != "localhost") {
		return bad
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return bad
		}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad
		}
	}
	return nil
}

// Apply writes the set fields into c; null clears a field.
func (f Fields) Apply(c *Company) {
	setText := func(dst **string, v jsonbody.Field[string]) {
		if !v.Set {
			return
		}
		if v.Null {
			*dst = nil
			return
		}
		s := v.Value
		*dst = &s
	}
	if f.CanonicalName.Set {
		c.CanonicalName = f.CanonicalName.Value
	}
	if f.AlternativeNames.Set {
		c.AlternativeNames = f.AlternativeNames.Value
	}
	setText(&c.Website, f.Website)
	setText(&c.Description, f.Description)
	setText(&c.ShortDescription, f.ShortDescription)
	setText(&c.Sector, f.Sector)
	setText(&c.Industry, f.Industry)
	setText(&c.ExternalID, f.ExternalID)
	setText(&c.CompanyType, f.CompanyType)
	if f.Location.Set {
		c.Location = f.Location.Value
	}
	if f.Tags.Set {
		c.Tags = f.Tags.Value
	}
	if f.Custom.Set {
		c.Custom = f.Custom.Value
	}
	c.normalize()
}

// SetNames are the JSON names of the fields f sets or clears.
func (f Fields) SetNames() []string {
	var out []string
	for name, set := range map[string]bool{"canonicalName": f.CanonicalName.Set, "alternativeNames": f.AlternativeNames.Set,
		"website": f.Website.Set, "description": f.Description.Set, "shortDescription": f.ShortDescription.Set,
		"sector": f.Sector.Set, "industry": f.Industry.Set, "location": f.Location.Set, "externalId": f.ExternalID.Set,
		"tags": f.Tags.Set, "custom": f.Custom.Set, "companyType": f.CompanyType.Set} {
		if set {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
