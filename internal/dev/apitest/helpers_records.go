package apitest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/store"
)

// PageAll follows X-Next-Cursor from path and returns every record.
func PageAll(t testing.TB, c *Client, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	next := path
	for pages := 0; next != ""; pages++ {
		if pages > 200 {
			t.Fatalf("paging %s did not end", path)
		}
		r := c.Do("GET", next, nil).Want(t, 200)
		out = append(out, r.List(t)...)
		next = ""
		if cur := r.Header.Get("X-Next-Cursor"); cur != "" {
			next = path + sep + "cursor=" + url.QueryEscape(cur)
		}
	}
	return out
}

// ListIDs lists companies with query and returns their ids in order.
func ListIDs(t testing.TB, c *Client, query string) []string {
	t.Helper()
	return IDsOf(t, c.Do("GET", "/v1/companies?"+query, nil).Want(t, 200).List(t))
}

// WantNoCompanies fails unless the organization has no companies.
func WantNoCompanies(t testing.TB, c *Client) {
	t.Helper()
	if list := c.Do("GET", "/v1/companies", nil).Want(t, 200).List(t); len(list) != 0 {
		t.Errorf("a refused body stored %d companies: %.300s", len(list), JSONOf(list))
	}
}

// StatusCounts counts the responses by status.
func StatusCounts(rs []*Response) map[int]int {
	out := map[int]int{}
	for _, r := range rs {
		out[r.Status]++
	}
	return out
}

// WantStatuses fails unless a batch's results have the statuses want, in
// order, each at its index.
func WantStatuses(t testing.TB, results []map[string]any, want ...int) {
	t.Helper()
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d: %s", len(results), len(want), JSONOf(results))
	}
	for i, r := range results {
		if int(Num(r["status"])) != want[i] || int(Num(r["index"])) != i {
			t.Errorf("result %d: %s, want status %d", i, JSONOf(r), want[i])
		}
	}
}

// Searched runs a search of resource (POST /v1/<resource>/search, with
// query as its query string when not empty) and returns the values of
// field in order, and the metadata.
func Searched(t testing.TB, c *Client, resource, query string, body any, field string) ([]string, map[string]any) {
	t.Helper()
	return SearchPage(t, c, "/v1/"+resource+"/search", query, body, field)
}

// SearchPage POSTs body to path (a search, similar records: query as its
// query string when not empty), wants 200, and returns the values of field
// of the page's records in order, and the metadata.
func SearchPage(t testing.TB, c *Client, path, query string, body any, field string) ([]string, map[string]any) {
	t.Helper()
	if query != "" {
		path += "?" + query
	}
	r := c.Do("POST", path, body).Want(t, 200)
	var out []string
	for _, rec := range r.List(t) {
		out = append(out, fmt.Sprint(rec[field]))
	}
	var env struct {
		Metadata map[string]any `json:"metadata"`
	}
	r.Decode(t, &env)
	return out, env.Metadata
}

// WantNames fails unless a search of resource with body finds the records
// named want, in order, and counts as many (metadata.totalCount). A
// company's name is its canonicalName, an activity's its subject.
func WantNames(t testing.TB, c *Client, resource string, body any, want ...string) {
	t.Helper()
	field := "name"
	switch resource {
	case "companies":
		field = "canonicalName"
	case "activities":
		field = "subject"
	}
	got, meta := Searched(t, c, resource, "", body, field)
	if !slices.Equal(got, want) {
		t.Errorf("%s search %v: %v, want %v", resource, body, got, want)
	}
	if meta["totalCount"] != float64(len(want)) {
		t.Errorf("%s search %v: totalCount %v, want %d", resource, body, meta["totalCount"], len(want))
	}
}

// WantParam fails unless the error answer names param in X-Error-Param.
func WantParam(t testing.TB, r *Response, param string) {
	t.Helper()
	if got := r.Header.Get("X-Error-Param"); got != param {
		t.Errorf("X-Error-Param %q, want %q", got, param)
	}
}

// Limited is an in-process service whose limiter reads a fixed clock, set
// to the start of a minute, so that no test crosses a window; it returns
// the clock, which the caller may move.
func Limited(t testing.TB) (*Env, *time.Time) {
	t.Helper()
	InProcessOnly(t, "it sets the rate limiter's clock and the organization's limits")
	e := New(t)
	now := time.Now().Truncate(time.Minute).Add(5 * time.Second)
	e.Deps.Limits.SetClock(func() time.Time { return now })
	return e, &now
}

// SetLimits sets the rate limits of the organization org.
func SetLimits(t testing.TB, e *Env, org string, l ratelimit.Limits) {
	t.Helper()
	if err := e.Deps.Limits.SetLimits(context.Background(), org, l); err != nil {
		t.Fatal(err)
	}
}

// FaultTimeouts are short storage deadlines, which keep the tests of a
// stalled or failing table quick; the mechanism is the one the service
// runs with (store.ClientOptions). Scaled, so that a healthy call on a
// busy machine still answers within them.
func FaultTimeouts() store.Timeouts {
	return store.Timeouts{Call: testenv.Scaled(3 * time.Second), Attempt: testenv.Scaled(time.Second)}
}

// Frozen is a transport's answer that never comes: it holds each request
// until its context ends.
func Frozen(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}
