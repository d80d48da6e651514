package recordsapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 45, item 8: an object of a body, at any depth and free-form ones
// included, that names a member twice is a 400 naming it (I-JSON), on
// every route that reads a body; nothing is written.
func TestABodyRepeatingAMemberNameIs400NamingIt(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	const msg = " appears more than once in its object; send each member name once (I-JSON, RFC 7493 §2.3: which of the two a client reads is undefined)"
	tests := []struct {
		name, method, path, body, param string
	}{
		{"a record's field", "POST", "/v1/companies", `{"canonicalName":"A","canonicalName":"B"}`, "canonicalName"},
		{"an escaped repeat", "POST", "/v1/companies", `{"canonicalName":"A","canonical\u004eame":"B"}`, "canonicalName"},
		{"a member of custom", "POST", "/v1/companies", `{"canonicalName":"A","custom":{"x":1,"y":{"x":0},"x":2}}`, "custom.x"},
		{"a batch operation's data", "POST", "/v1/companies/batch",
			`{"operations":[{"op":"create","data":{"canonicalName":"A"}},{"op":"create","data":{"canonicalName":"B","sector":"x","sector":"y"}}]}`,
			"operations[1].data.sector"},
		{"a batch's own member", "POST", "/v1/companies/batch", `{"operations":[],"operations":[{"op":"create","data":{"canonicalName":"A"}}]}`, "operations"},
		{"an upsert", "PUT", "/v1/companies?match=externalId", `{"canonicalName":"A","externalId":"e1","externalId":"e2"}`, "externalId"},
		{"a webhook endpoint", "POST", "/v1/webhook-endpoints", `{"url":"https://example.com/a","url":"https://example.com/b","eventTypes":["*"]}`, "url"},
		{"a workflow", "POST", "/v1/workflows", `{"name":"W","name":"V","steps":[]}`, "name"},
		{"an import", "POST", "/v1/imports", `{"resource":"companies","format":"csv","format":"ndjson"}`, "format"},
	}
	for _, tc := range tests {
		r := c.Do(tc.method, tc.path, tc.body)
		if r.Status != 400 {
			t.Errorf("%s: %s %s %s: status %d, want 400; body %s", tc.name, tc.method, tc.path, tc.body, r.Status, r.Body)
			continue
		}
		want := `{"error":"Invalid request body: ` + tc.param + msg + `"}`
		if got := strings.TrimSuffix(string(r.Body), "\n"); got != want {
			t.Errorf("%s: body %s, want %s", tc.name, got, want)
		}
		apitest.WantParam(t, r, tc.param)
	}
	apitest.WantNoCompanies(t, c)

	// The same names in sibling or nested objects are not repeats.
	c.Do("POST", "/v1/companies", `{"canonicalName":"Acme","custom":{"canonicalName":"x","a":{"canonicalName":1},"b":[{"a":1},{"a":2}]}}`).Want(t, 201)
}

// Issue 45, item 9: a query parameter given more than once is a 400 naming
// it, on every route; given once it works.
func TestAQueryParameterGivenTwiceIs400NamingIt(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	tests := []struct{ method, path, body, param string }{
		{"PUT", "/v1/companies?match=externalId&match=id", `{"canonicalName":"A","externalId":"e1"}`, "match"},
		{"GET", "/v1/companies?limit=1&limit=2", "", "limit"},
		{"GET", "/v1/events?limit=1&limit=1", "", "limit"},
		{"GET", "/v1/companies?filter[sector]=a&filter[sector]=b", "", "filter[sector]"},
		{"GET", "/v1/keys?limit=5&limit=6", "", "limit"},
		{"POST", "/v1/companies?x=1&x=2", `{"canonicalName":"A"}`, "x"},
	}
	for _, tc := range tests {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		r := c.Do(tc.method, tc.path, body)
		if r.Status != 400 {
			t.Errorf("%s %s: status %d, want 400; body %s", tc.method, tc.path, r.Status, r.Body)
			continue
		}
		if want := `{"error":"Invalid query parameter: ` + tc.param + ` is given 2 times; give it once"}`; strings.TrimSuffix(string(r.Body), "\n") != want {
			t.Errorf("%s %s: body %s, want %s", tc.method, tc.path, r.Body, want)
		}
		apitest.WantParam(t, r, tc.param)
	}
	apitest.WantNoCompanies(t, c)
	c.Do("PUT", "/v1/companies?match=externalId", `{"canonicalName":"A","externalId":"e1"}`).Want(t, 201)
	c.Do("GET", "/v1/companies?limit=1", nil).Want(t, 200)
}

// Issue 45, item 12: a body whose Content-Type is not JSON is a 415 on
// every JSON route, imports and exports included; application/json with
// parameters, no Content-Type at all and curl's default are read as JSON.
func TestABodyThatIsNotJSONByItsContentTypeIs415(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	imp := `{"resource":"companies","format":"csv"}`
	for _, tc := range []struct{ method, path, body, ctype string }{
		{"POST", "/v1/imports", imp, "text/plain"},
		{"POST", "/v1/exports", `{"resource":"companies","format":"csv"}`, "text/plain; charset=utf-8"},
		{"POST", "/v1/companies", `{"canonicalName":"A"}`, "multipart/form-data"},
		{"PUT", "/v1/companies?match=externalId", `{"canonicalName":"A","externalId":"e"}`, "text/csv"},
		{"POST", "/v1/companies/batch", `{"operations":[]}`, "multipart/form-data; boundary=x"},
		{"POST", "/v1/workflows", `{"name":"W","steps":[]}`, "not a media type"},
		{"POST", "/v1/companies", `{"canonicalName":"A"}`, "application/merge-patch+json"},
	} {
		r := c.Do(tc.method, tc.path, tc.body, "Content-Type", tc.ctype)
		if r.Status != 415 {
			t.Errorf("%s %s as %s: status %d, want 415; body %s", tc.method, tc.path, tc.ctype, r.Status, r.Body)
			continue
		}
		if got := r.Header.Get("X-Error-Code"); got != "unsupported_media_type" {
			t.Errorf("%s %s as %s: X-Error-Code %q, want unsupported_media_type", tc.method, tc.path, tc.ctype, got)
		}
		apitest.WantExactBody(t, r, `{"error":"Content-Type must be 'application/json'"}`)
	}
	apitest.WantNoCompanies(t, c)
	if list := c.Do("GET", "/v1/imports", nil).Want(t, 200).List(t); len(list) != 0 {
		t.Errorf("a refused import was created: %s", apitest.JSONOf(list))
	}
	c.Do("POST", "/v1/companies", `{"canonicalName":"As UTF-8"}`, "Content-Type", "application/json; charset=utf-8").Want(t, 201)
	// A body without a Content-Type, or with curl's default one (-d), is
	// read as JSON. Sent past the contract check, as the OpenAPI document
	// names application/json.
	for _, ctype := range []string{"", "application/x-www-form-urlencoded"} {
		req, err := http.NewRequest("POST", c.Base+"/v1/companies", strings.NewReader(`{"canonicalName":"Sent as `+ctype+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("x-service-client-id", c.ClientID)
		req.Header.Set("x-service-api-key", c.Secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 201 {
			t.Errorf("a body with Content-Type %q: status %d, want 201", ctype, res.StatusCode)
		}
	}
}
