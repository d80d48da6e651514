package api_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestAKnownPathWithAnotherMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	id := apitest.IDOf(t, apitest.CreateCompany(t, admin, map[string]any{"canonicalName": "Acme"}))

	cases := []struct {
		method, path, allow string
	}{
		{"PATCH", "/v1/companies/" + id, "DELETE, GET, PUT"},
		{"POST", "/v1/companies/" + id, "DELETE, GET, PUT"},
		{"DELETE", "/v1/companies", "GET, POST, PUT"},
		{"PATCH", "/v1/companies", "GET, POST, PUT"},
		{"POST", "/v1/keys", "GET"},
		{"GET", "/v1/keys/" + admin.ClientID, "DELETE"},
		{"POST", "/healthz", "GET"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			r := e.As(t, admin).Do(tc.method, tc.path, map[string]any{"canonicalName": "Changed"})
			apitest.WantError(t, r, 405, tc.method)
			if got := r.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
	got := admin.Do("GET", "/v1/companies/"+id, nil).Want(t, 200).Object(t)
	if got["canonicalName"] != "Acme" {
		t.Errorf("a refused method changed the company: %s", apitest.JSONOf(got))
	}
}

func TestAnUnknownPathIs404JSONNamingTheEndpoint(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	for _, path := range []string{"/v1/nothing", "/nothing", "/v1/companies/x/y", "/v2/companies", "/"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			r := e.As(t, admin).Do("GET", path, nil)
			apitest.WantError(t, r, 404)
			apitest.WantExactBody(t, r, `{"error":"no such endpoint: GET `+path+`"}`)
		})
	}
}

func TestABodyOver1MiBIs413(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	id := apitest.IDOf(t, apitest.CreateCompany(t, admin, map[string]any{"canonicalName": "Acme"}))
	big := `{"canonicalName":"Acme","description":"` + strings.Repeat("x", 1<<20) + `"}`

	for _, tc := range []struct{ method, path string }{
		{"POST", "/v1/companies"},
		{"PUT", "/v1/companies/" + id},
	} {
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			apitest.WantError(t, e.As(t, admin).Do(tc.method, tc.path, big), 413, "1 MiB")
		})
	}
}

func TestABodyOfExactly1MiBIsAcceptedAndOneByteMoreIs413(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	obj := `{"canonicalName":"Acme"}`
	exact := obj + strings.Repeat(" ", 1<<20-len(obj)) // trailing whitespace is allowed
	c.Do("POST", "/v1/companies", exact).Want(t, 201)
	apitest.WantError(t, c.Do("POST", "/v1/companies", exact+" "), 413, "1 MiB")
}

func TestInputsNearTheTablesKeySizeLimitsNeverCause500(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	longID := strings.Repeat("a", 1100) // over DynamoDB's 1024-byte sort key limit
	cases := []struct {
		name, method, path string
		body               any
		want               []int  // acceptable statuses
		bug                string // where the 500 comes from
	}{
		{"GET of an overlong company id", "GET", "/v1/companies/" + longID, nil, []int{404},
			"store.Collection.get sends the id as the sort key unchecked; DynamoDB answers ValidationException"},
		{"PUT of an overlong company id", "PUT", "/v1/companies/" + longID, map[string]any{"description": "x"}, []int{404},
			"store.Collection.UpdateTx -> get sends the id as the sort key unchecked"},
		{"DELETE of an overlong company id", "DELETE", "/v1/companies/" + longID, nil, []int{404},
			"store.Collection.Delete sends the id as the sort key unchecked"},
		{"DELETE of an overlong key id", "DELETE", "/v1/keys/" + longID, nil, []int{404}, ""},
		{"overlong lt cursor", "GET", "/v1/companies?lt=" + longID, nil, []int{200, 400},
			"store.page puts lt into the key condition unchecked; DynamoDB rejects a range key over 1024 bytes"},
		{"canonicalName of 300 four-byte characters", "POST", "/v1/companies",
			map[string]any{"canonicalName": strings.Repeat("\U0001F600", 300)}, []int{201, 400},
			"the 300-character rule allows 1200 bytes, but the gsi1sk (name + id) must stay under 1024 bytes"},
		{"bare-domain website of 2044 characters", "POST", "/v1/companies",
			map[string]any{"canonicalName": "Acme", "website": strings.Repeat("a", 2040) + ".com"}, []int{201, 400},
			"checkURL allows 2048 characters, but the website lookup partition key (gsi4pk) must stay under 2048 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.As(t, admin).Do(tc.method, tc.path, tc.body)
			if !slices.Contains(tc.want, r.Status) {
				t.Errorf("BUG: %s %.60s... answered %d %s, want one of %v (cause: %s)",
					tc.method, tc.path, r.Status, strings.TrimSpace(string(r.Body)), tc.want, tc.bug)
			}
		})
	}
}

func TestARecordOverTheTablesItemLimitIs413Not500(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	body := overTheItemLimit()
	apitest.WantError(t, c.Do("POST", "/v1/workflows", body), 413)
	if list := c.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 0 {
		t.Errorf("a refused create stored %s", apitest.JSONOf(list))
	}
}

func TestTheRequestIDIsEchoedOrGenerated(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	cases := []struct {
		name, sent string
		echoed     bool
	}{
		{"plain id is echoed", "req-abc_123.4", true},
		{"no id gets one", "", false},
		{"id with spaces is replaced", "abc def", false},
		{"overlong id is replaced", strings.Repeat("a", 65), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var headers []string
			if tc.sent != "" {
				headers = []string{"X-Request-Id", tc.sent}
			}
			for _, c := range []*apitest.Client{e.As(t, admin), e.Anonymous(t)} { // success and 401 alike
				got := c.Do("GET", "/v1/companies", nil, headers...).Header.Get("X-Request-Id")
				if tc.echoed && got != tc.sent {
					t.Errorf("X-Request-Id %q, want the sent %q", got, tc.sent)
				}
				if !tc.echoed && (got == "" || got == tc.sent) {
					t.Errorf("X-Request-Id %q, want a generated id (sent %q)", got, tc.sent)
				}
			}
		})
	}
}

func TestHealthzAnswers200WithoutCredentials(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	r := e.Anonymous(t).Do("GET", "/healthz", nil).Want(t, 200)
	apitest.WantExactBody(t, r, `{"status":"ok"}`)
}

// Answers are JSON for API clients, not HTML: an error naming a format
// with < and > (and a batch's per-operation error) carries them as they
// are, not as \u003c and \u003e.
func TestErrorTextsKeepAnglesAndAmpersandsAsWritten(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	res := c.Do("POST", "/v1/data/metric-points", `{"points":[{"resource":"nope","key":"metric:revenue","date":"2026-01-01","value":1,"source":"crm"}]}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), "<resourceType>:<id>") || strings.Contains(string(res.Body), `\u003c`) {
		t.Errorf("%d %s", res.Status, res.Body)
	}
	res = c.Do("POST", "/v1/companies/batch", `{"operations":[{"op":"create","data":{"canonicalName":"A & <B>","website":7}}]}`)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"status":400`) || strings.Contains(string(res.Body), `\u00`) {
		t.Errorf("batch: %d %s", res.Status, res.Body)
	}
	created := c.Do("POST", "/v1/companies", `{"canonicalName":"A & <B>"}`)
	if created.Status != 201 || !strings.Contains(string(created.Body), `"canonicalName":"A & <B>"`) {
		t.Errorf("create: %d %s", created.Status, created.Body)
	}
	if got := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, created.Data(t).(map[string]any)), nil); !strings.Contains(string(got.Body), `"canonicalName":"A & <B>"`) {
		t.Errorf("read back: %d %s", got.Status, got.Body)
	}
}

// Every action a member key is refused (a route's Admin) is named where
// the docs list the 403s: docs/errors.md's status table and its code table
// (apperr's description of forbidden).
func TestTheErrorsPageNamesEveryActionThatNeedsAnAdminKey(t *testing.T) {
	page, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	_, statusTable, _ := strings.Cut(string(page), "| `403` |")
	statusTable, _, _ = strings.Cut(statusTable, "\n")
	_, codeTable, _ := strings.Cut(string(page), "| `forbidden` | `403` |")
	codeTable, _, _ = strings.Cut(codeTable, "\n")
	seen := map[string]bool{}
	for _, r := range api.Routes() {
		if r.Admin == "" || seen[r.Admin] {
			continue
		}
		seen[r.Admin] = true
		if !strings.Contains(statusTable, "`"+r.Admin+" requires an admin key`") {
			t.Errorf("docs/errors.md's 403 row does not show %q", r.Admin+" requires an admin key")
		}
		if !strings.Contains(codeTable, r.Admin) {
			t.Errorf("docs/errors.md's forbidden code (apperr) does not name %q", r.Admin)
		}
	}
	if len(seen) < 3 {
		t.Errorf("only %d admin actions: %v", len(seen), seen)
	}
}
