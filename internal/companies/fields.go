package companies

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/input"
)

// Fields is a set of company fields sent by a client: each absent
// (unchanged), null (cleared) or set.
type Fields struct {
	CanonicalName    input.Field[string]
	AlternativeNames input.Field[[]string]
	Website          input.Field[string]
	Description      input.Field[string]
	ShortDescription input.Field[string]
	Sector           input.Field[string]
	Industry         input.Field[string]
	Location         input.Field[Location]
	ExternalID       input.Field[string]
	Tags             input.Field[[]string]
	Custom           input.Field[map[string]any]
	CompanyType      input.Field[string]
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

// DecodeCreate parses a create body: canonicalName is required.
func DecodeCreate(body []byte) (Fields, error) {
	f, err := decode(body)
	if err != nil {
		return f, err
	}
	if !f.CanonicalName.Set {
		return f, apperr.Invalid("canonicalName", "is required")
	}
	return f, nil
}

// DecodeUpdate parses a partial update body.
func DecodeUpdate(body []byte) (Fields, error) { return decode(body) }

func decode(body []byte) (Fields, error) {
	o, err := input.ParseObject(body, CreateFields...)
	if err != nil {
		return Fields{}, err
	}
	return fieldsOf(o)
}

func fieldsOf(o *input.Object) (f Fields, err error) {
	text := func(name string, t input.Text) input.Field[string] {
		if err != nil {
			return input.Field[string]{}
		}
		var v input.Field[string]
		v, err = o.String(name, t)
		return v
	}
	if f.CanonicalName, err = o.String("canonicalName", input.Text{Min: 1, Max: maxName, Trim: true}); err != nil {
		return f, err
	}
	if f.CanonicalName.Null {
		return f, apperr.Invalid("canonicalName", "must not be null")
	}
	if f.AlternativeNames, err = o.Strings("alternativeNames", input.Text{Min: 1, Max: maxName, Trim: true}, maxListItems); err != nil {
		return f, err
	}
	// Descriptions are the only multi-line texts; every other text is one line.
	f.Website = text("website", input.Text{Max: maxURL})
	f.Description = text("description", input.Text{Max: maxDescription, MultiLine: true})
	f.ShortDescription = text("shortDescription", input.Text{Max: maxShortDesc, MultiLine: true})
	f.Sector = text("sector", input.Text{Max: maxShortText})
	f.Industry = text("industry", input.Text{Max: maxShortText})
	f.ExternalID = text("externalId", input.Text{Max: maxShortText})
	if err != nil {
		return f, err
	}
	if f.Website.Set && !f.Website.Null {
		if err := checkURL("website", f.Website.Value); err != nil {
			return f, err
		}
	}
	if f.ExternalID.Set && !f.ExternalID.Null {
		if err := checkExternalID("externalId", f.ExternalID.Value); err != nil {
			return f, err
		}
	}
	if f.Location, err = location(o); err != nil {
		return f, err
	}
	if f.Tags, err = o.Strings("tags", input.Text{Min: 1, Max: maxTag, Trim: true}, maxListItems); err != nil {
		return f, err
	}
	// custom is at most input.MaxDepth levels and input.MaxFreeBytes.
	if f.Custom, err = o.FreeObject("custom"); err != nil {
		return f, err
	}
	f.CompanyType, err = o.Enum("companyType", CompanyTypes...)
	return f, err
}

func location(o *input.Object) (input.Field[Location], error) {
	lo, err := o.Object("location", "city", "state", "country")
	if err != nil || !lo.Set || lo.Null {
		return input.Field[Location]{Set: lo.Set, Null: lo.Null}, err
	}
	var loc Location
	for name, dst := range map[string]**string{"city": &loc.City, "state": &loc.State, "country": &loc.Country} {
		v, err := lo.Value.String(name, input.Text{Max: maxShortText})
		if err != nil {
			return input.Field[Location]{}, err
		}
		if v.Set && !v.Null {
			s := v.Value
			*dst = &s
		}
	}
	return input.Field[Location]{Set: true, Value: loc}, nil
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
	setText := func(dst **string, v input.Field[string]) {
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
