package companiesapi_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// companyRecordFields is every field of the spec's company record.
var companyRecordFields = []string{
	"id", "canonicalName", "alternativeNames", "website", "linkedinUrl", "description",
	"shortDescription", "sector", "subsector", "industry", "location", "companyType", "origin",
	"externalId", "externalReference", "tags", "assignees", "custom", "employeeCount",
	"ownershipStatus", "lastValuation", "lastAmountRaised", "totalMoneyRaised", "lastRoundDate",
	"lastFinancials", "enrichment", "lastEnrichedAt", "lastEnrichmentStartedAt", "createdAt", "updatedAt",
}

// specCompanyTypes are the values of companyType the spec lists.
var specCompanyTypes = []string{"operating", "investor", "lender", "investment_bank", "advisor", "sponsor", "service_provider"}

// fullCompany is a create body with every create field set, in the types
// JSON decodes to, so it compares with a decoded record.
func fullCompany() map[string]any {
	return map[string]any{
		"canonicalName":    "Acme Corp",
		"alternativeNames": []any{"Acme", "ACME Inc."},
		"website":          "https://acme.example.com",
		"description":      "Acme makes everything a coyote could want.",
		"shortDescription": "Makes everything.",
		"sector":           "Industrials",
		"industry":         "Manufacturing",
		"location":         map[string]any{"city": "Oslo", "state": "Oslo", "country": "Norway"},
		"externalId":       "crm-42",
		"tags":             []any{"portfolio", "watch"},
		"custom":           map[string]any{"tier": "gold", "score": 7.5, "nested": map[string]any{"ok": true}, "list": []any{1.0, "two"}},
		"companyType":      "investment_bank",
	}
}

// wantRecordShape fails unless rec has exactly the spec's record fields,
// with the defaults of a record nothing has enriched yet.
func wantRecordShape(t *testing.T, rec map[string]any) {
	t.Helper()
	for _, f := range companyRecordFields {
		if _, ok := rec[f]; !ok {
			t.Errorf("record lacks field %q: %s", f, apitest.JSONOf(rec))
		}
	}
	for f := range rec {
		if !slices.Contains(companyRecordFields, f) {
			t.Errorf("record has field %q, which the spec does not name", f)
		}
	}
	for _, f := range []string{"linkedinUrl", "subsector", "employeeCount", "ownershipStatus", "lastValuation",
		"lastAmountRaised", "totalMoneyRaised", "lastRoundDate", "lastEnrichedAt", "lastEnrichmentStartedAt"} {
		if rec[f] != nil {
			t.Errorf("%s = %v, want null while unknown", f, rec[f])
		}
	}
	for f, want := range map[string]any{
		"assignees":         []any{},
		"externalReference": map[string]any{},
		"lastFinancials":    map[string]any{},
		"enrichment":        map[string]any{},
		"origin":            "user",
	} {
		if !reflect.DeepEqual(rec[f], want) {
			t.Errorf("%s = %s, want %s", f, apitest.JSONOf(rec[f]), apitest.JSONOf(want))
		}
	}
	if id, _ := rec["id"].(string); id == "" {
		t.Errorf("id = %v, want a non-empty string", rec["id"])
	}
	for _, f := range []string{"createdAt", "updatedAt"} {
		s, _ := rec[f].(string)
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			t.Errorf("%s = %v, want an ISO 8601 date-time", f, rec[f])
		}
	}
}

func timeOf(t *testing.T, rec map[string]any, field string) time.Time {
	t.Helper()
	s, _ := rec[field].(string)
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s = %v: %v", field, rec[field], err)
	}
	return ts
}

func TestCreateCompanyWithEveryFieldReturnsTheFullRecordAndGetReturnsTheSame(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)

	in := fullCompany()
	got := apitest.CreateCompany(t, c, in)
	wantRecordShape(t, got)
	for f, v := range in {
		if !reflect.DeepEqual(got[f], v) {
			t.Errorf("%s = %s, want %s as sent", f, apitest.JSONOf(got[f]), apitest.JSONOf(v))
		}
	}
	if got["createdAt"] != got["updatedAt"] {
		t.Errorf("a new record has createdAt %v and updatedAt %v, want equal", got["createdAt"], got["updatedAt"])
	}

	one := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, got), nil).Want(t, 200).Object(t)
	if !reflect.DeepEqual(one, got) {
		t.Errorf("GET returned\n%s\nwant the created record\n%s", apitest.JSONOf(one), apitest.JSONOf(got))
	}
	list := c.Do("GET", "/v1/companies", nil).Want(t, 200).List(t)
	if len(list) != 1 || !reflect.DeepEqual(list[0], got) {
		t.Errorf("list returned %s, want just the created record", apitest.JSONOf(list))
	}
}

func TestCreateCompanyWithOnlyCanonicalNameFillsEveryOtherFieldWithEmptyDefaults(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)

	got := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Bare Inc"})
	wantRecordShape(t, got)
	want := map[string]any{
		"canonicalName": "Bare Inc", "alternativeNames": []any{}, "website": nil, "description": nil,
		"shortDescription": nil, "sector": nil, "industry": nil, "location": map[string]any{},
		"externalId": nil, "tags": []any{}, "custom": map[string]any{}, "companyType": nil,
	}
	for f, v := range want {
		if !reflect.DeepEqual(got[f], v) {
			t.Errorf("%s = %s, want %s", f, apitest.JSONOf(got[f]), apitest.JSONOf(v))
		}
	}
	one := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, got), nil).Want(t, 200).Object(t)
	if !reflect.DeepEqual(one, got) {
		t.Errorf("GET returned\n%s\nwant the created record\n%s", apitest.JSONOf(one), apitest.JSONOf(got))
	}
}

func TestCreateCompanyAcceptsValidVariants(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)

	type variant struct {
		name  string
		body  any
		check map[string]any // fields of the record to compare
	}
	cases := []variant{
		{"partial location shows only the given keys", map[string]any{"canonicalName": "A", "location": map[string]any{"city": "Oslo"}},
			map[string]any{"location": map[string]any{"city": "Oslo"}}},
		{"location with a null part omits it", map[string]any{"canonicalName": "A", "location": map[string]any{"country": "Norway", "city": nil}},
			map[string]any{"location": map[string]any{"country": "Norway"}}},
		{"empty location is {}", map[string]any{"canonicalName": "A", "location": map[string]any{}},
			map[string]any{"location": map[string]any{}}},
		{"null optional fields are null", map[string]any{"canonicalName": "A", "website": nil, "tags": nil, "custom": nil, "location": nil},
			map[string]any{"website": nil, "tags": []any{}, "custom": map[string]any{}, "location": map[string]any{}}},
		{"bare domain website", map[string]any{"canonicalName": "A", "website": "acme.com"}, map[string]any{"website": "acme.com"}},
		{"http website with a path", map[string]any{"canonicalName": "A", "website": "http://www.acme.co.uk/about"},
			map[string]any{"website": "http://www.acme.co.uk/about"}},
		{"canonicalName of 300 characters", map[string]any{"canonicalName": strings.Repeat("n", 300)},
			map[string]any{"canonicalName": strings.Repeat("n", 300)}},
		{"trailing whitespace after the object", `{"canonicalName":"A"}` + "\n\t ", map[string]any{"canonicalName": "A"}},
		{"empty arrays and objects", map[string]any{"canonicalName": "A", "tags": []any{}, "alternativeNames": []any{}, "custom": map[string]any{}},
			map[string]any{"tags": []any{}, "alternativeNames": []any{}, "custom": map[string]any{}}},
	}
	for _, ct := range specCompanyTypes {
		cases = append(cases, variant{"companyType " + ct, map[string]any{"canonicalName": "A", "companyType": ct},
			map[string]any{"companyType": ct}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			got := apitest.CreateCompany(t, c, tc.body)
			wantRecordShape(t, got)
			for f, v := range tc.check {
				if !reflect.DeepEqual(got[f], v) {
					t.Errorf("%s = %s, want %s", f, apitest.JSONOf(got[f]), apitest.JSONOf(v))
				}
			}
		})
	}
}

// invalidCompanyBody is a body that POST and PUT must reject with 400.
type invalidCompanyBody struct {
	name       string
	fields     map[string]any // sent on PUT; on POST merged over a valid canonicalName
	raw        *string        // the whole body as sent, instead of fields
	createOnly bool           // the rule holds on create only
	omitName   bool           // POST without canonicalName
	want       string         // what the message must say after "Invalid request body: "
}

func rawBody(s string) *string { return &s }

func invalidCompanyBodies() []invalidCompanyBody {
	cases := []invalidCompanyBody{
		{name: "missing canonicalName", fields: map[string]any{"website": "acme.com"}, createOnly: true, omitName: true,
			want: "canonicalName is required"},
		{name: "canonicalName a number", fields: map[string]any{"canonicalName": 42}, want: "canonicalName must be a string, not a number"},
		{name: "canonicalName an array", fields: map[string]any{"canonicalName": []any{"Acme"}}, want: "canonicalName must be a string, not an array"},
		{name: "canonicalName empty", fields: map[string]any{"canonicalName": ""}, want: "canonicalName must not be empty"},
		{name: "canonicalName whitespace only", fields: map[string]any{"canonicalName": " \t\n "}, want: "canonicalName must not be empty"},
		{name: "canonicalName too long", fields: map[string]any{"canonicalName": strings.Repeat("n", 301)},
			want: "canonicalName must be at most 300 characters"},
		{name: "canonicalName null", fields: map[string]any{"canonicalName": nil}, want: "canonicalName is required and cannot be null"},

		{name: "website a number", fields: map[string]any{"website": 42}, want: "website must be a string, not a number"},
		{name: "description a boolean", fields: map[string]any{"description": true}, want: "description must be a string, not a boolean"},
		{name: "shortDescription an array", fields: map[string]any{"shortDescription": []any{"x"}}, want: "shortDescription must be a string, not an array"},
		{name: "sector an object", fields: map[string]any{"sector": map[string]any{"name": "x"}}, want: "sector must be a string, not an object"},
		{name: "industry a number", fields: map[string]any{"industry": 1.5}, want: "industry must be a string, not a number"},
		{name: "externalId a boolean", fields: map[string]any{"externalId": false}, want: "externalId must be a string, not a boolean"},
		{name: "externalId empty", fields: map[string]any{"externalId": "  "}, want: "externalId must not be empty"},
		{name: "description too long", fields: map[string]any{"description": strings.Repeat("d", 20001)}, want: "description must be at most 20000 characters"},
		{name: "shortDescription too long", fields: map[string]any{"shortDescription": strings.Repeat("d", 1001)}, want: "shortDescription must be at most 1000 characters"},
		{name: "sector too long", fields: map[string]any{"sector": strings.Repeat("s", 201)}, want: "sector must be at most 200 characters"},

		{name: "website with spaces", fields: map[string]any{"website": "not a url"}, want: "website must be a URL"},
		{name: "website without a dot", fields: map[string]any{"website": "acme"}, want: "website must be a URL"},
		{name: "website ftp", fields: map[string]any{"website": "ftp://acme.com"}, want: "website must be a URL"},
		{name: "website scheme only", fields: map[string]any{"website": "https://"}, want: "website must be a URL"},
		{name: "website empty", fields: map[string]any{"website": ""}, want: "website must be a URL"},

		{name: "alternativeNames a string", fields: map[string]any{"alternativeNames": "Acme"}, want: "alternativeNames must be an array of strings, not a string"},
		{name: "alternativeNames an object", fields: map[string]any{"alternativeNames": map[string]any{}}, want: "alternativeNames must be an array of strings, not an object"},
		{name: "alternativeNames element a number", fields: map[string]any{"alternativeNames": []any{"Acme", 1}}, want: "alternativeNames[1] must be a string, not a number"},
		{name: "alternativeNames element empty", fields: map[string]any{"alternativeNames": []any{"Acme", ""}}, want: "alternativeNames[1] must not be empty"},
		{name: "alternativeNames element whitespace", fields: map[string]any{"alternativeNames": []any{"   "}}, want: "alternativeNames[0] must not be empty"},
		{name: "tags a string", fields: map[string]any{"tags": "portfolio"}, want: "tags must be an array of strings, not a string"},
		{name: "tags element a boolean", fields: map[string]any{"tags": []any{true}}, want: "tags[0] must be a string, not a boolean"},
		{name: "tags element null", fields: map[string]any{"tags": []any{"a", nil}}, want: "tags[1] must"},
		{name: "tags element empty", fields: map[string]any{"tags": []any{""}}, want: "tags[0] must not be empty"},
		{name: "tags too many", fields: map[string]any{"tags": manyTags(101)}, want: "tags must have at most 100 items"},

		{name: "location a string", fields: map[string]any{"location": "Oslo"}, want: "location must be an object, not a string"},
		{name: "location an array", fields: map[string]any{"location": []any{"Oslo"}}, want: "location must be an object, not an array"},
		{name: "location unknown key", fields: map[string]any{"location": map[string]any{"city": "Oslo", "zip": "0150"}},
			want: "location.zip is not an accepted field"},
		{name: "location.city a number", fields: map[string]any{"location": map[string]any{"city": 5}}, want: "location.city must be a string, not a number"},
		{name: "location.country an object", fields: map[string]any{"location": map[string]any{"country": map[string]any{}}},
			want: "location.country must be a string, not an object"},

		{name: "custom an array", fields: map[string]any{"custom": []any{1}}, want: "custom must be an object, not an array"},
		{name: "custom a string", fields: map[string]any{"custom": "x"}, want: "custom must be an object, not a string"},
		{name: "companyType not in the enum", fields: map[string]any{"companyType": "startup"}, want: "companyType must be one of operating, investor"},
		{name: "companyType in another case", fields: map[string]any{"companyType": "Operating"}, want: "companyType must be one of"},
		{name: "companyType a number", fields: map[string]any{"companyType": 3}, want: "companyType must be a string, not a number"},

		{name: "unknown top-level field", fields: map[string]any{"foundedYear": 1999}, want: "foundedYear is not an accepted field"},
		{name: "id is read-only", fields: map[string]any{"id": "cmp_x"}, want: "id is read-only; the service sets it"},
		{name: "origin is read-only", fields: map[string]any{"origin": "user"}, want: "origin is read-only; the service sets it"},

		{name: "body not JSON", raw: rawBody(`{canonicalName: Acme}`), want: "Invalid request body: the body is not valid JSON: invalid character"},
		{name: "body truncated JSON", raw: rawBody(`{"canonicalName": "Acme"`), want: "Invalid request body: the body is not valid JSON: it ends unexpectedly"},
		{name: "body a JSON array", raw: rawBody(`[{"canonicalName":"Acme"}]`), want: "Invalid request body: the body must be a JSON object, not an array"},
		{name: "body a JSON string", raw: rawBody(`"Acme"`), want: "Invalid request body: the body must be a JSON object, not a string"},
		{name: "body null", raw: rawBody(`null`), want: "Invalid request body: the body must be a JSON object, not null"},
		{name: "body empty", raw: rawBody(``), want: "Invalid request body: the body is empty; send a JSON object"},
		{name: "body whitespace", raw: rawBody(" \n\t"), want: "Invalid request body: the body is empty; send a JSON object"},
		{name: "second object after the body", raw: rawBody(`{"canonicalName":"Acme"} {"canonicalName":"Other"}`), want: "Invalid request body: the body must hold a single JSON object, but more data follows it"},
		{name: "garbage after the body", raw: rawBody(`{"canonicalName":"Acme"}x`), want: "Invalid request body: the body must hold a single JSON object, but more data follows it"},
	}
	return cases
}

func TestANullArrayElementIsReportedAsNullNotAsEmpty(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, field := range []string{"tags", "alternativeNames"} {
		msg := apitest.WantError(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme", field: []any{"a", nil}}), 400, field+"[1]")
		if want := field + "[1] must be a string, not null"; !strings.Contains(msg, want) {
			t.Errorf("BUG (internal/jsonbody/jsonbody.go, Object.Strings): a null element is unmarshalled into \"\" "+
				"and reported as empty; error %q, want it to say %q", msg, want)
		}
	}
}

func TestCustomRoundTripsNumbersExactly(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	// 2^53 − 1 is the largest integer every client reads exactly (larger
	// ones are refused: numbers_test.go).
	r := c.Do("POST", "/v1/companies", `{"canonicalName":"Acme","custom":{"crmId":9007199254740991,"ratio":0.1,"n":-5}}`).Want(t, 201)
	id := apitest.IDOf(t, r.Object(t))
	for _, r := range []*apitest.Response{r, c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200)} {
		if !strings.Contains(string(r.Body), `"crmId":9007199254740991`) {
			t.Errorf("custom.crmId 9007199254740991 came back altered: %.60s", r.Body[strings.Index(string(r.Body), `"custom"`):])
		}
	}

	// More digits than a double keeps: a client reads it rounded, the
	// service keeps it as sent.
	long := c.Do("POST", "/v1/companies", `{"canonicalName":"Acme","custom":{"x":3.14159265358979323846264338e300}}`).Want(t, 201)
	if !strings.Contains(string(long.Body), `"custom":{"x":3.14159265358979323846264338e300}`) {
		t.Errorf("custom.x 3.14159265358979323846264338e300 came back altered: %s", long.Body)
	}
}

func manyTags(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("tag%d", i)
	}
	return out
}

// createBody is the POST body of a case: its fields over a valid name.
func (c invalidCompanyBody) createBody() any {
	if c.raw != nil {
		return *c.raw
	}
	body := map[string]any{}
	if !c.omitName {
		body["canonicalName"] = "Acme"
	}
	for k, v := range c.fields {
		body[k] = v
	}
	return body
}

func (c invalidCompanyBody) updateBody() any {
	if c.raw != nil {
		return *c.raw
	}
	return c.fields
}

func TestCreateCompanyRejectsEveryInvalidBodyWith400NamingTheField(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	admin := e.Org(t)
	t.Cleanup(func() {
		if list := admin.Do("GET", "/v1/companies", nil).Want(t, 200).List(t); len(list) != 0 {
			t.Errorf("rejected creates stored %d companies: %s", len(list), apitest.JSONOf(list))
		}
	})
	for _, tc := range invalidCompanyBodies() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			r := c.Do("POST", "/v1/companies", tc.createBody())
			msg := apitest.WantError(t, r, 400, tc.want)
			if !strings.HasPrefix(msg, "Invalid request body: ") {
				t.Errorf("error %q does not start with %q", msg, "Invalid request body: ")
			}
		})
	}
}

func TestUpdateCompanyRejectsEveryInvalidBodyWith400AndLeavesTheRecordUnchanged(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	for _, tc := range invalidCompanyBodies() {
		if tc.createOnly {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.Org(t) // externalId is unique per organization: one organization per case
			before := apitest.CreateCompany(t, c, fullCompany())
			path := "/v1/companies/" + apitest.IDOf(t, before)
			msg := apitest.WantError(t, c.Do("PUT", path, tc.updateBody()), 400, tc.want)
			if !strings.HasPrefix(msg, "Invalid request body: ") {
				t.Errorf("error %q does not start with %q", msg, "Invalid request body: ")
			}
			after := c.Do("GET", path, nil).Want(t, 200).Object(t)
			if !reflect.DeepEqual(after, before) {
				t.Errorf("a rejected update changed the record:\nbefore %s\nafter  %s", apitest.JSONOf(before), apitest.JSONOf(after))
			}
		})
	}
}

func TestUpdateCompanyIsPartialAbsentKeepsNullClearsValueSets(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)

	cases := []struct {
		name    string
		body    any
		changes map[string]any // fields of the record expected to differ from the created one
	}{
		{"one field changes, the others stay", map[string]any{"description": "New description."},
			map[string]any{"description": "New description."}},
		{"canonicalName changes", map[string]any{"canonicalName": "Acme Renamed"},
			map[string]any{"canonicalName": "Acme Renamed"}},
		{"null clears optional text fields", map[string]any{"website": nil, "description": nil, "shortDescription": nil,
			"sector": nil, "industry": nil, "externalId": nil, "companyType": nil},
			map[string]any{"website": nil, "description": nil, "shortDescription": nil, "sector": nil, "industry": nil,
				"externalId": nil, "companyType": nil}},
		{"null clears arrays to []", map[string]any{"alternativeNames": nil, "tags": nil},
			map[string]any{"alternativeNames": []any{}, "tags": []any{}}},
		{"null clears objects to {}", map[string]any{"location": nil, "custom": nil},
			map[string]any{"location": map[string]any{}, "custom": map[string]any{}}},
		{"a location replaces the whole location", map[string]any{"location": map[string]any{"country": "Sweden"}},
			map[string]any{"location": map[string]any{"country": "Sweden"}}},
		{"arrays and custom are replaced, not merged", map[string]any{"tags": []any{"new"}, "custom": map[string]any{"k": "v"}},
			map[string]any{"tags": []any{"new"}, "custom": map[string]any{"k": "v"}}},
		{"companyType and website change", map[string]any{"companyType": "lender", "website": "acme.org"},
			map[string]any{"companyType": "lender", "website": "acme.org"}},
		{"an empty object changes nothing", map[string]any{}, nil},
		{"the current values change nothing", map[string]any{"canonicalName": "Acme Corp", "tags": []any{"portfolio", "watch"},
			"location": map[string]any{"city": "Oslo", "state": "Oslo", "country": "Norway"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.Org(t) // externalId is unique per organization: one organization per case
			before := apitest.CreateCompany(t, c, fullCompany())
			path := "/v1/companies/" + apitest.IDOf(t, before)
			time.Sleep(5 * time.Millisecond) // so a change shows in updatedAt, which has millisecond precision

			got := c.Do("PUT", path, tc.body).Want(t, 200).Object(t)
			wantRecordShape(t, got)
			want := apitest.Clone(t, before)
			for f, v := range tc.changes {
				want[f] = v
			}
			want["updatedAt"] = got["updatedAt"]
			if !reflect.DeepEqual(got, want) {
				t.Errorf("PUT %s returned\n%s\nwant\n%s", apitest.JSONOf(tc.body), apitest.JSONOf(got), apitest.JSONOf(want))
			}
			if got["createdAt"] != before["createdAt"] {
				t.Errorf("createdAt changed from %v to %v", before["createdAt"], got["createdAt"])
			}
			updatedBefore, updatedAfter := timeOf(t, before, "updatedAt"), timeOf(t, got, "updatedAt")
			if len(tc.changes) == 0 && !updatedAfter.Equal(updatedBefore) {
				t.Errorf("an update that changed nothing moved updatedAt from %v to %v", updatedBefore, updatedAfter)
			}
			if len(tc.changes) > 0 && !updatedAfter.After(updatedBefore) {
				t.Errorf("an update that changed the record left updatedAt at %v (was %v)", updatedAfter, updatedBefore)
			}

			one := c.Do("GET", path, nil).Want(t, 200).Object(t)
			if !reflect.DeepEqual(one, got) {
				t.Errorf("GET after PUT returned\n%s\nwant the PUT response\n%s", apitest.JSONOf(one), apitest.JSONOf(got))
			}
		})
	}
}

func TestUpdateOfAnUnknownCompanyIs404(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	apitest.WantExactBody(t, c.Do("PUT", "/v1/companies/cmp_doesnotexist", map[string]any{"description": "x"}).Want(t, 404),
		`{"error":"not found"}`)
	apitest.WantExactBody(t, c.Do("GET", "/v1/companies/cmp_doesnotexist", nil).Want(t, 404), `{"error":"not found"}`)
}

func TestDeleteCompanyAnswers204ThenTheCompanyIsGone(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	keep := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Keep"})
	gone := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Gone"})
	path := "/v1/companies/" + apitest.IDOf(t, gone)

	r := c.Do("DELETE", path, nil).Want(t, 204)
	if len(r.Body) != 0 {
		t.Errorf("DELETE body %q, want empty", r.Body)
	}
	apitest.WantExactBody(t, c.Do("GET", path, nil).Want(t, 404), `{"error":"not found"}`)
	apitest.WantExactBody(t, c.Do("DELETE", path, nil).Want(t, 404), `{"error":"not found"}`)
	apitest.WantExactBody(t, c.Do("PUT", path, map[string]any{"description": "x"}).Want(t, 404), `{"error":"not found"}`)
	if got := apitest.IDsOf(t, c.Do("GET", "/v1/companies", nil).Want(t, 200).List(t)); !slices.Equal(got, []string{apitest.IDOf(t, keep)}) {
		t.Errorf("list after delete = %v, want only %s", got, apitest.IDOf(t, keep))
	}
}

func TestAnotherOrganizationsCompanyIsNotFoundAndUntouched(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.Org(t)
	other := e.Org(t)
	theirs := apitest.CreateCompany(t, owner, fullCompany())
	mine := apitest.CreateCompany(t, other, map[string]any{"canonicalName": "Mine"})
	path := "/v1/companies/" + apitest.IDOf(t, theirs)

	cases := []struct {
		method string
		body   any
	}{
		{"GET", nil},
		{"PUT", map[string]any{"canonicalName": "Hijacked", "website": nil}},
		{"PUT", map[string]any{}},
		{"DELETE", nil},
	}
	for _, tc := range cases {
		apitest.WantExactBody(t, other.Do(tc.method, path, tc.body).Want(t, 404), `{"error":"not found"}`)
	}

	after := owner.Do("GET", path, nil).Want(t, 200).Object(t)
	if !reflect.DeepEqual(after, theirs) {
		t.Errorf("another organization's requests changed the record:\nbefore %s\nafter  %s", apitest.JSONOf(theirs), apitest.JSONOf(after))
	}
	if got := apitest.IDsOf(t, other.Do("GET", "/v1/companies", nil).Want(t, 200).List(t)); !slices.Equal(got, []string{apitest.IDOf(t, mine)}) {
		t.Errorf("the other organization lists %v, want only its own %s", got, apitest.IDOf(t, mine))
	}
	if got := apitest.IDsOf(t, owner.Do("GET", "/v1/companies", nil).Want(t, 200).List(t)); !slices.Equal(got, []string{apitest.IDOf(t, theirs)}) {
		t.Errorf("the owner lists %v, want only its own %s", got, apitest.IDOf(t, theirs))
	}
}

func TestAnOrganizationWithoutCompaniesListsAnEmptyArray(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	r := c.Do("GET", "/v1/companies", nil).Want(t, 200)
	apitest.WantExactBody(t, r, `{"data":[]}`)
}

// pick returns the ids at the given positions.
func pick(ids []string, at ...int) []string {
	out := make([]string, len(at))
	for i, n := range at {
		out[i] = ids[n]
	}
	return out
}

func TestListCompaniesOrdersAndPages(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	admin := e.Org(t)

	// Created in this order; case-insensitive name order is 1, 4, 2, 0, 3,
	// which differs from byte order (Alpha, Echo, bravo, charlie, delta).
	names := []string{"delta", "Alpha", "charlie", "Echo", "bravo"}
	var ids []string
	for _, n := range names {
		ids = append(ids, apitest.IDOf(t, apitest.CreateCompany(t, admin, map[string]any{"canonicalName": n})))
	}
	if got, want := apitest.ListIDs(t, admin, "sort=updatedAt"), pick(ids, 4, 3, 2, 1, 0); !slices.Equal(got, want) {
		t.Fatalf("sort=updatedAt before any update = %v, want newest first %v", got, want)
	}
	time.Sleep(5 * time.Millisecond)
	admin.Do("PUT", "/v1/companies/"+ids[1], map[string]any{"description": "touched"}).Want(t, 200)

	cases := []struct {
		name  string
		query string
		want  []int
	}{
		{"default is id descending, newest first", "", []int{4, 3, 2, 1, 0}},
		{"direction=desc", "direction=desc", []int{4, 3, 2, 1, 0}},
		{"direction=asc", "direction=asc", []int{0, 1, 2, 3, 4}},
		{"sort=id direction=asc", "sort=id&direction=asc", []int{0, 1, 2, 3, 4}},
		{"sort=createdAt follows the id", "sort=createdAt", []int{4, 3, 2, 1, 0}},
		{"sort=createdAt direction=asc", "sort=createdAt&direction=asc", []int{0, 1, 2, 3, 4}},
		{"sort=canonicalName asc is case-insensitive", "sort=canonicalName&direction=asc", []int{1, 4, 2, 0, 3}},
		{"sort=canonicalName desc is case-insensitive", "sort=canonicalName&direction=desc", []int{3, 0, 2, 4, 1}},
		{"sort=updatedAt shows the updated record first", "sort=updatedAt", []int{1, 4, 3, 2, 0}},
		{"sort=updatedAt asc shows the updated record last", "sort=updatedAt&direction=asc", []int{0, 2, 3, 4, 1}},
		{"page 1 of 2", "limit=2&page=1", []int{4, 3}},
		{"page 2 of 2", "limit=2&page=2", []int{2, 1}},
		{"page 3 of 2 is shorter", "limit=2&page=3", []int{0}},
		{"page past the end is empty", "limit=2&page=4", []int{}},
		{"ascending page 2", "limit=2&page=2&direction=asc", []int{2, 3}},
		{"name-sorted page 2", "sort=canonicalName&direction=asc&limit=2&page=2", []int{2, 0}},
		{"lt cursor returns older ids", "limit=2&lt=" + ids[3], []int{2, 1}},
		{"lt cursor at the oldest is empty", "lt=" + ids[0], []int{}},
		{"limit=0 is clamped to 1", "limit=0", []int{4}},
		{"limit=-3 is clamped to 1", "limit=-3", []int{4}},
		{"limit=5000 is clamped to 1000", "limit=5000", []int{4, 3, 2, 1, 0}},
		{"limit=1000", "limit=1000", []int{4, 3, 2, 1, 0}},
		{"page=100 is allowed", "page=100", []int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got, want := apitest.ListIDs(t, e.As(t, admin), tc.query), pick(ids, tc.want...); !slices.Equal(got, want) {
				t.Errorf("GET /v1/companies?%s = %v, want %v", tc.query, got, want)
			}
		})
	}
}

func TestOffsetPagingVisitsEveryCompanyOnceUntilAShortPage(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprintf("Company %d", i)})))
	}
	var seen []string
	pages := 0
	for page := 1; ; page++ {
		got := apitest.ListIDs(t, c, fmt.Sprintf("limit=2&page=%d", page))
		pages++
		seen = append(seen, got...)
		if len(got) < 2 {
			break
		}
	}
	slices.Reverse(ids)
	if pages != 3 || !slices.Equal(seen, ids) {
		t.Errorf("offset paging took %d pages and saw %v, want 3 pages and %v", pages, seen, ids)
	}
}

func TestCursorPagingIsStableWhileCompaniesAreCreated(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprintf("Company %d", i)})))
	}

	var seen, inserted []string
	query := "limit=2"
	for pages := 1; ; pages++ {
		if pages > 5 {
			t.Fatalf("cursor paging did not end; saw %v", seen)
		}
		got := apitest.ListIDs(t, c, query)
		seen = append(seen, got...)
		if len(got) < 2 {
			break
		}
		// A record created between two pages is newer than the cursor.
		inserted = append(inserted, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprintf("Inserted %d", pages)})))
		query = "limit=2&lt=" + got[len(got)-1]
	}

	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(seen, want) {
		t.Errorf("cursor paging saw %v, want every original company once, newest first: %v", seen, want)
	}
	for _, id := range inserted {
		if slices.Contains(seen, id) {
			t.Errorf("a company created during paging (%s) appeared in a later page", id)
		}
	}
	slices.Reverse(inserted)
	if got := apitest.ListIDs(t, c, "limit=2"); !slices.Equal(got, inserted) {
		t.Errorf("a fresh first page = %v, want the companies created during paging %v", got, inserted)
	}
}

func TestListCompaniesRejectsInvalidQueryParameters(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	apitest.CreateCompany(t, admin, map[string]any{"canonicalName": "Acme"})

	cases := []struct{ query, param string }{
		{"page=0", "page"},
		{"page=101", "page"},
		{"page=-1", "page"},
		{"page=abc", "page"},
		{"page=1.5", "page"},
		{"direction=sideways", "direction"},
		{"sort=tags", "sort"}, // an array: not single-valued
		{"sort=secretHash", "sort"},
		{"sort=canonicalName,website,sector,industry", "sort"},
		{"filter[website][gt]=a", "filter[website][gt]"},
		{"limit=abc", "limit"},
		{"limit=2.5", "limit"},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			t.Parallel()
			r := e.As(t, admin).Do("GET", "/v1/companies?"+tc.query, nil)
			apitest.WantError(t, r, 400, "Invalid query parameter: "+tc.param+" ")
		})
	}
}
