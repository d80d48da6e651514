package apitest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// As returns a client with c's credentials that reports to t, so that a
// parallel subtest can use a key made by its parent.
func (e *Env) As(t testing.TB, c *Client) *Client {
	t.Helper()
	b := e.Anonymous(t)
	b.Org, b.ClientID, b.Secret = c.Org, c.ClientID, c.Secret
	return b
}

// WantError fails unless r has status, its X-Error-Code (ErrorCode) and
// an {"error": ...} body whose message contains every one of parts; it
// returns the message.
func WantError(t testing.TB, r *Response, status int, parts ...string) string {
	t.Helper()
	r.Want(t, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if err := ErrorCode(r.Status, r.Header); err != nil {
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

// WantExactBody fails unless the body is exactly want (one trailing
// newline allowed).
func WantExactBody(t testing.TB, r *Response, want string) {
	t.Helper()
	if got := strings.TrimSuffix(string(r.Body), "\n"); got != want {
		t.Errorf("body %q, want exactly %q", got, want)
	}
}

// CreateCompany posts body to /v1/companies and returns the created
// record.
func CreateCompany(t testing.TB, c *Client, body any) map[string]any {
	t.Helper()
	return c.Do(http.MethodPost, "/v1/companies", body).Want(t, http.StatusCreated).Object(t)
}

// IDOf returns the id of a record.
func IDOf(t testing.TB, rec map[string]any) string {
	t.Helper()
	id, ok := rec["id"].(string)
	if !ok || id == "" {
		t.Fatalf("record has no id: %v", rec)
	}
	return id
}

// IDsOf returns the ids of the records, in order.
func IDsOf(t testing.TB, recs []map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, IDOf(t, r))
	}
	return out
}

// Clone deep-copies a decoded JSON object.
func Clone(t testing.TB, m map[string]any) map[string]any {
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

// JSONOf renders v for failure messages.
func JSONOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// UnauthorizedBody is the exact answer (401) to missing or wrong
// credentials: it names neither which header was wrong nor whether the
// client id exists.
const UnauthorizedBody = `{"error":"invalid api key or clientId"}`

// InParallel calls f(0..n-1) at once and waits for all of them.
func InParallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}
