package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apitest"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// as returns a client with c's credentials that reports to t, so a
// parallel subtest can use a key made by its parent.
func as(t *testing.T, e *apitest.Env, c *apitest.Client) *apitest.Client {
	t.Helper()
	b := e.Anonymous(t)
	b.Org, b.ClientID, b.Secret = c.Org, c.ClientID, c.Secret
	return b
}

// wantError fails unless r has status, its X-Error-Code (apitest.ErrorCode)
// and an {"error": ...} body whose message contains every one of parts.
func wantError(t *testing.T, r *apitest.Response, status int, parts ...string) string {
	t.Helper()
	r.Want(t, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if err := apitest.ErrorCode(r.Status, r.Header); err != nil {
		t.Error(err)
	}
	msg := r.Error(t)
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not contain %q", msg, p)
		}
	}
	return msg
}

// wantExactBody fails unless the body is exactly want (one trailing
// newline allowed).
func wantExactBody(t *testing.T, r *apitest.Response, want string) {
	t.Helper()
	if got := strings.TrimSuffix(string(r.Body), "\n"); got != want {
		t.Errorf("body %q, want exactly %q", got, want)
	}
}

// createCompany posts body and returns the created record.
func createCompany(t *testing.T, c *apitest.Client, body any) map[string]any {
	t.Helper()
	return c.Do("POST", "/v1/companies", body).Want(t, 201).Object(t)
}

// idOf returns the id of a record.
func idOf(t *testing.T, rec map[string]any) string {
	t.Helper()
	id, ok := rec["id"].(string)
	if !ok || id == "" {
		t.Fatalf("record has no id: %v", rec)
	}
	return id
}

// idsOf returns the ids of the records, in order.
func idsOf(t *testing.T, recs []map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, idOf(t, r))
	}
	return out
}

// clone deep-copies a decoded JSON object.
func clone(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonOf renders v for failure messages.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// overTheItemLimit is a company body under the 1 MiB body limit and within
// every field's limit, but over DynamoDB's 400 KB item limit as stored:
// U+2028 (three bytes sent) is stored as the six bytes \u2028 (between
// other characters: it is a space, trimmed at the ends).
func overTheItemLimit() map[string]any {
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprint(i) + strings.Repeat("\u2028", 289) + "."
	}
	return map[string]any{"canonicalName": "Huge", "alternativeNames": names,
		"description": "." + strings.Repeat("\u2028", 19_998) + ".", "shortDescription": "." + strings.Repeat("\u2028", 998) + ".",
		"custom": map[string]any{"blob": strings.Repeat("x", 120<<10)}}
}
