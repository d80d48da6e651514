package httpapi_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// table is a route table of two functions: "things" (served here) and
// "other" (whose routes another function serves).
var table = []routes.Route{
	{Function: "things", Method: "GET", Path: routes.HealthPath},
	{Function: "things", Method: "GET", Path: routes.OpenAPIPath},
	{Function: "things", Method: "GET", Path: "/v1/things"},
	{Function: "things", Method: "POST", Path: "/v1/things", Idempotent: true},
	{Function: "things", Method: "GET", Path: "/v1/things/{id}"},
	{Function: "things", Method: "PATCH", Path: "/v1/things/{id}"},
	{Function: "things", Method: "DELETE", Path: "/v1/things/{id}"},
	{Function: "things", Method: "POST", Path: "/v1/things/search", ReadOnly: true},
	{Function: "things", Method: "GET", Path: "/v1/files/{name...}"},
	{Function: "things", Method: "GET", Path: "/v1/slugs/{slug}", MaxParam: 8},
	{Function: "things", Method: "POST", Path: "/v1/things/{id}/rotate", Admin: "rotating a thing", Idempotent: true},
	{Function: "things", Method: "GET", Path: "/v1/panics"},
	{Function: "other", Method: "GET", Path: "/v1/others"},
	{Function: "other", Method: "PUT", Path: "/v1/others/{id}"},
}

// handlersOf are handlers for the routes of group: each answers 200 naming
// its pattern (X-Handled-By) and its path parameters, and counts its runs.
func handlersOf(group string, runs *atomic.Int64) map[string]http.Handler {
	out := map[string]http.Handler{}
	for _, rt := range routes.Of(table, group) {
		pattern := rt.Pattern()
		out[pattern] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if runs != nil {
				runs.Add(1)
			}
			if pattern == "GET /v1/panics" {
				panic("a handler failed")
			}
			if r.PathValue("id") == "missing" {
				httpapi.ErrorBody(w, http.StatusNotFound, "not found")
				return
			}
			w.Header().Set("X-Handled-By", pattern)
			p, _ := auth.FromContext(r.Context())
			httpapi.Data(w, http.StatusOK, map[string]string{"id": r.PathValue("id"), "name": r.PathValue("name"),
				"slug": r.PathValue("slug"), "org": p.OrgID})
		})
	}
	return out
}

// marked is a creates middleware that marks the answers it wraps.
func marked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Through-Creates", "yes")
		next.ServeHTTP(w, r)
	})
}

func TestAKnownPathWithAnotherMethodIs405WithEveryMethodOfItsRoutes(t *testing.T) {
	t.Parallel()
	s := newServer(t, table, handlersOf("things", nil))
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/v1/things", "GET, POST"},
		{"PUT", "/v1/things/abc", "DELETE, GET, PATCH"},
		// A literal route beside a wildcard one: both paths match.
		{"PUT", "/v1/things/search", "DELETE, GET, PATCH, POST"},
		{"POST", "/v1/files/a/b/c", "GET"},
		// The whole table decides, routes of other functions included.
		{"DELETE", "/v1/others", "GET"},
		{"GET", "/v1/others/x", "PUT"},
	} {
		a := s.do(t, s.admin, c.method, c.path, "")
		if a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q (%s)", c.method, c.path, a.status, a.header.Get("Allow"), c.allow, a.body)
			continue
		}
		if msg := a.errorMessage(t); !strings.Contains(msg, c.method) || !strings.Contains(msg, c.allow) {
			t.Errorf("%s %s: 405 says %q", c.method, c.path, msg)
		}
	}
}

func TestNoSuchEndpointTellsItselfApartFromARecordNotFound(t *testing.T) {
	t.Parallel()
	s := newServer(t, table, handlersOf("things", nil))
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/v1/nothing", "no such endpoint: GET /v1/nothing"},
		{"GET", "/v1/things/a/b", "no such endpoint: GET /v1/things/a/b"},
		{"GET", "/elsewhere", "no such endpoint: GET /elsewhere"},
		// A route of another function answers as an unknown one.
		{"GET", "/v1/others", "no such endpoint: GET /v1/others"},
		// The handler's own "not found" is a missing record.
		{"GET", "/v1/things/missing", "not found"},
	} {
		a := s.do(t, s.admin, c.method, c.path, "")
		if a.status != http.StatusNotFound || a.errorMessage(t) != c.want {
			t.Errorf("%s %s: %d %s, want 404 %q", c.method, c.path, a.status, a.body, c.want)
		}
		if ct := a.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
	}
	// A long unknown path is quoted cut short.
	long := "/v1/" + strings.Repeat("x", 1000)
	if a := s.do(t, s.admin, "GET", long, ""); a.status != 404 || len(a.errorMessage(t)) > 300 {
		t.Errorf("a long unknown path: %d, message of %d bytes", a.status, len(a.errorMessage(t)))
	}
}

func TestUncleanPathsAreNoSuchEndpointNeverARedirect(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	s := newServer(t, table, handlersOf("things", &runs))
	for _, p := range []string{"/v1/things/", "/v1//things", "/v1/things/./abc", "/v1/things/x/../abc",
		"/v1/files/a//b", "/v1/files/a/./b", "/healthz/", "/./healthz"} {
		a := s.do(t, s.admin, "GET", p, "")
		if a.status != http.StatusNotFound || a.errorMessage(t) != "no such endpoint: GET "+p {
			t.Errorf("GET %s: %d %s (Location %q), want 404 no such endpoint", p, a.status, a.body, a.header.Get("Location"))
		}
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("handlers ran %d times for unclean paths", n)
	}
}

func TestEscapedDotsAreAPlainParameterNeverARedirect(t *testing.T) {
	t.Parallel()
	s := newServer(t, table, handlersOf("things", nil))
	// %2e is not a dot segment of the path as sent: the handler gets the
	// decoded value as any other parameter (an id no record has).
	for p, id := range map[string]string{"/v1/things/%2e%2e": `"id":".."`, "/v1/things/%2E": `"id":"."`, "/v1/files/a/%2e%2e/b": `"name":"a/../b"`} {
		a := s.do(t, s.admin, "GET", p, "")
		if a.status != http.StatusOK || !strings.Contains(a.body, id) {
			t.Errorf("GET %s: %d %s (Location %q), want 200 with %s", p, a.status, a.body, a.header.Get("Location"), id)
		}
	}
}

func TestEveryV1PathButTheDocumentNeedsCredentialsKnownOrNot(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	s := newServer(t, table, handlersOf("things", &runs))
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/things"}, {"GET", "/v1/nothing"}, {"DELETE", "/v1/things"}, {"GET", "/v1/things/"},
		{"GET", "/v1"}, {"GET", "/v1/others"}, {"GET", "/v1/things/" + strings.Repeat("a", 300)},
	} {
		for _, k := range []key{{}, {s.admin.clientID, "wrong"}, {"ck_unknown", s.admin.secret}} {
			a := s.do(t, k, c.method, c.path, "")
			if a.status != http.StatusUnauthorized || a.errorMessage(t) != "invalid api key or clientId" {
				t.Errorf("%s %s with %q: %d %s, want 401", c.method, c.path, k.clientID, a.status, a.body)
			}
		}
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("handlers ran %d times without credentials", n)
	}
	// The document and the health check need none; outside /v1 nothing does.
	for _, p := range []string{routes.OpenAPIPath, routes.HealthPath} {
		if a := s.do(t, key{}, "GET", p, ""); a.status != 200 {
			t.Errorf("GET %s without credentials: %d %s", p, a.status, a.body)
		}
	}
	if a := s.do(t, key{}, "GET", "/elsewhere", ""); a.status != 404 {
		t.Errorf("GET /elsewhere without credentials: %d", a.status)
	}
	// With them the caller reaches the handler, which sees the principal.
	a := s.do(t, s.member, "GET", "/v1/things/abc", "")
	if a.status != 200 || !strings.Contains(a.body, `"org":"`+s.org+`"`) || !strings.Contains(a.body, `"id":"abc"`) {
		t.Errorf("GET /v1/things/abc: %d %s", a.status, a.body)
	}
}

func TestAPathParameterLongerThanAnyIDIsNotFoundBeforeTheHandler(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	s := newServer(t, table, handlersOf("things", &runs))
	longest := strings.Repeat("a", store.MaxIDLength)
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/v1/things/" + longest, 200},
		{"/v1/things/" + longest + "a", 404},
		{"/v1/files/" + longest, 200},
		{"/v1/files/" + longest + "b", 404},
		// A route's own bound.
		{"/v1/slugs/12345678", 200},
		{"/v1/slugs/123456789", 404},
	} {
		before := runs.Load()
		a := s.do(t, s.admin, "GET", c.path, "")
		if a.status != c.status {
			t.Errorf("GET %s: %d %s, want %d", c.path[:min(len(c.path), 40)], a.status, a.body, c.status)
			continue
		}
		ran := runs.Load() != before
		if c.status == 404 && (ran || a.errorMessage(t) != "not found") {
			t.Errorf("GET %s...: the handler ran %v, answer %s", c.path[:30], ran, a.body)
		}
	}
	// Escaped bytes count once decoded: %41 is one byte of an id.
	if a := s.do(t, s.admin, "GET", "/v1/things/"+strings.Repeat("%41", store.MaxIDLength), ""); a.status != 200 {
		t.Errorf("an id of %d escaped bytes: %d %s", store.MaxIDLength, a.status, a.body)
	}
}

func TestCreatesWrapOnlyAuthenticatedPostsThatChangeSomething(t *testing.T) {
	t.Parallel()
	s := newServer(t, table, handlersOf("things", nil), marked)
	for _, c := range []struct {
		method, path string
		through      bool
	}{
		{"POST", "/v1/things", true},
		{"POST", "/v1/things/search", false}, // read-only
		{"GET", "/v1/things", false},
		{"PATCH", "/v1/things/a", false},
		{"POST", "/v1/things/a/rotate", true},
	} {
		a := s.do(t, s.admin, c.method, c.path, "{}")
		if a.status != 200 {
			t.Errorf("%s %s: %d %s", c.method, c.path, a.status, a.body)
			continue
		}
		if got := a.header.Get("X-Through-Creates") == "yes"; got != c.through {
			t.Errorf("%s %s went through creates: %v, want %v", c.method, c.path, got, c.through)
		}
	}
}

func TestAnAdminRouteRefusesAMemberKeyBeforeTheCreatesAndTheHandler(t *testing.T) {
	t.Parallel()
	var runs, creates atomic.Int64
	counting := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			creates.Add(1)
			next.ServeHTTP(w, r)
		})
	}
	s := newServer(t, table, handlersOf("things", &runs), counting)
	a := s.do(t, s.member, "POST", "/v1/things/a/rotate", "{}", httpapi.HeaderIdempotencyKey, "k1")
	if a.status != http.StatusForbidden || a.errorMessage(t) != "rotating a thing requires an admin key" {
		t.Errorf("a member key: %d %s", a.status, a.body)
	}
	if runs.Load() != 0 || creates.Load() != 0 {
		t.Errorf("for a refused member key the handler ran %d times, the creates %d", runs.Load(), creates.Load())
	}
	if a := s.do(t, s.admin, "POST", "/v1/things/a/rotate", "{}"); a.status != 200 || creates.Load() != 1 {
		t.Errorf("an admin key: %d %s, creates ran %d times", a.status, a.body, creates.Load())
	}
	// Other routes take member keys.
	if a := s.do(t, s.member, "POST", "/v1/things", "{}"); a.status != 200 {
		t.Errorf("a member's create: %d %s", a.status, a.body)
	}
}

func TestAPanickingHandlerAnswers500AndEveryAnswerHasARequestID(t *testing.T) {
	t.Parallel()
	s := newServer(t, table, handlersOf("things", nil))
	a := s.do(t, s.admin, "GET", "/v1/panics", "")
	if a.status != 500 || a.errorMessage(t) != "internal error" {
		t.Errorf("a panic: %d %s", a.status, a.body)
	}
	if a.header.Get("X-Request-Id") == "" {
		t.Error("a 500 without X-Request-Id")
	}
	// A plain request id is kept, so that a request can be traced; any
	// other is replaced.
	if a := s.do(t, key{}, "GET", "/v1/nothing", "", "X-Request-Id", "trace-42_a.b"); a.header.Get("X-Request-Id") != "trace-42_a.b" {
		t.Errorf("a plain request id came back as %q", a.header.Get("X-Request-Id"))
	}
	for _, id := range []string{"has space", "quote\"", strings.Repeat("x", 65)} {
		got := s.do(t, key{}, "GET", "/v1/nothing", "", "X-Request-Id", id).header.Get("X-Request-Id")
		if got == id || got == "" {
			t.Errorf("request id %q came back as %q", id, got)
		}
	}
}
