package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/routes"
)

var idempotentRoutes = []routes.Route{
	{Function: "things", Method: "POST", Path: "/v1/things", Idempotent: true},
	{Function: "things", Method: "POST", Path: "/v1/widgets", Idempotent: true},
	{Function: "things", Method: "POST", Path: "/v1/flaky", Idempotent: true},
	{Function: "things", Method: "POST", Path: "/v1/fragile", Idempotent: true},
	{Function: "things", Method: "POST", Path: "/v1/things/search", ReadOnly: true},
}

// idempotentServer serves idempotentRoutes through Idempotency over a real
// table. Creates answer 201 with the run's number; /v1/flaky answers 500
// on its first run, /v1/fragile panics on its first run.
func idempotentServer(t *testing.T) (*server, *atomic.Int64) {
	t.Helper()
	var runs atomic.Int64
	create := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		body, err := httpapi.ReadBody(w, r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.Header().Set("Location", fmt.Sprintf("/v1/things/run_%d", n))
		w.Header().Set("X-Not-Kept", "x")
		httpapi.Data(w, http.StatusCreated, map[string]any{"run": n, "sent": string(body)})
	})
	var flaky, fragile atomic.Int64
	handlers := map[string]http.Handler{
		"POST /v1/things":        create,
		"POST /v1/widgets":       create,
		"POST /v1/things/search": create,
		"POST /v1/flaky": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if flaky.Add(1) == 1 {
				httpapi.ErrorBody(w, http.StatusInternalServerError, "internal error")
				return
			}
			create(w, r)
		}),
		"POST /v1/fragile": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fragile.Add(1) == 1 {
				panic("the first run fails")
			}
			create(w, r)
		}),
	}
	s := newEnv(t)
	s.serve(t, httpapi.NewRouter(idempotentRoutes, handlers, s.authn, httpapi.Idempotency(s.st)))
	return s, &runs
}

func TestARepeatedIdempotencyKeyReplaysTheFirstAnswerWithoutRunningAgain(t *testing.T) {
	t.Parallel()
	s, runs := idempotentServer(t)
	first := s.do(t, s.admin, "POST", "/v1/things", `{"name":"a"}`, httpapi.HeaderIdempotencyKey, "key-1")
	if first.status != 201 || first.header.Get(httpapi.HeaderReplayed) != "" {
		t.Fatalf("the first request: %d %s, replayed %q", first.status, first.body, first.header.Get(httpapi.HeaderReplayed))
	}
	for i := range 2 {
		again := s.do(t, s.admin, "POST", "/v1/things", `{"name":"a"}`, httpapi.HeaderIdempotencyKey, "key-1")
		if again.status != 201 || again.body != first.body || again.header.Get(httpapi.HeaderReplayed) != "true" {
			t.Errorf("repeat %d: %d %s, replayed %q", i, again.status, again.body, again.header.Get(httpapi.HeaderReplayed))
		}
		// The kept headers come back; others do not.
		if again.header.Get("Location") != first.header.Get("Location") || again.header.Get("Content-Type") != "application/json" ||
			again.header.Get("X-Not-Kept") != "" {
			t.Errorf("repeat %d: headers %v", i, again.header)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
	// The key is the organization's for this method and path: another
	// path, another key or no key runs again; another organization's key
	// is the same (the member key is of the same organization).
	if a := s.do(t, s.admin, "POST", "/v1/widgets", `{"name":"a"}`, httpapi.HeaderIdempotencyKey, "key-1"); a.status != 201 || a.header.Get(httpapi.HeaderReplayed) != "" {
		t.Errorf("the key on another path: %d, replayed %q", a.status, a.header.Get(httpapi.HeaderReplayed))
	}
	if a := s.do(t, s.member, "POST", "/v1/things", `{"name":"a"}`, httpapi.HeaderIdempotencyKey, "key-1"); a.header.Get(httpapi.HeaderReplayed) != "true" {
		t.Errorf("the key from another key of the organization: %d, replayed %q", a.status, a.header.Get(httpapi.HeaderReplayed))
	}
	s.do(t, s.admin, "POST", "/v1/things", `{"name":"a"}`, httpapi.HeaderIdempotencyKey, "key-2")
	s.do(t, s.admin, "POST", "/v1/things", `{"name":"a"}`)
	if n := runs.Load(); n != 4 {
		t.Errorf("the handler ran %d times, want 4", n)
	}
	// Another organization's same key is another key.
	other := s.otherOrg(t)
	if a := s.do(t, other, "POST", "/v1/things", `{"name":"a"}`, httpapi.HeaderIdempotencyKey, "key-1"); a.status != 201 || a.header.Get(httpapi.HeaderReplayed) != "" {
		t.Errorf("another organization's key-1: %d, replayed %q", a.status, a.header.Get(httpapi.HeaderReplayed))
	}
}

func TestAnIdempotencyKeyReusedWithAnotherBodyIs422(t *testing.T) {
	t.Parallel()
	s, runs := idempotentServer(t)
	s.do(t, s.admin, "POST", "/v1/things", `{"name":"a"}`, httpapi.HeaderIdempotencyKey, "k")
	a := s.do(t, s.admin, "POST", "/v1/things", `{"name":"b"}`, httpapi.HeaderIdempotencyKey, "k")
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.errorMessage(t), "different request body") {
		t.Errorf("another body: %d %s", a.status, a.body)
	}
	// Bodies are compared byte for byte.
	if a := s.do(t, s.admin, "POST", "/v1/things", `{"name": "a"}`, httpapi.HeaderIdempotencyKey, "k"); a.status != 422 {
		t.Errorf("the same JSON written otherwise: %d", a.status)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
}

func TestAnInvalidIdempotencyKeyIs400BeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	s, runs := idempotentServer(t)
	for name, header := range map[string][]string{
		"empty":      {httpapi.HeaderIdempotencyKey, ""},
		"too long":   {httpapi.HeaderIdempotencyKey, strings.Repeat("k", httpapi.MaxIdempotencyKey+1)},
		"not ASCII":  {httpapi.HeaderIdempotencyKey, "clé"},
		"a control":  {httpapi.HeaderIdempotencyKey, "a\tb"},
		"sent twice": {httpapi.HeaderIdempotencyKey, "a", httpapi.HeaderIdempotencyKey, "a"},
	} {
		a := s.do(t, s.admin, "POST", "/v1/things", `{}`, header...)
		if a.status != 400 || !strings.Contains(a.errorMessage(t), "Idempotency-Key") {
			t.Errorf("%s: %d %s", name, a.status, a.body)
		}
	}
	if a := s.do(t, s.admin, "POST", "/v1/things", `{}`, httpapi.HeaderIdempotencyKey, strings.Repeat("k", httpapi.MaxIdempotencyKey)); a.status != 201 {
		t.Errorf("the longest key: %d %s", a.status, a.body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
}

func TestAReadOnlyPostKeepsNoIdempotencyAnswer(t *testing.T) {
	t.Parallel()
	s, runs := idempotentServer(t)
	for range 2 {
		if a := s.do(t, s.admin, "POST", "/v1/things/search", `{}`, httpapi.HeaderIdempotencyKey, "k"); a.status != 201 || a.header.Get(httpapi.HeaderReplayed) != "" {
			t.Errorf("a search with a key: %d, replayed %q", a.status, a.header.Get(httpapi.HeaderReplayed))
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the search ran %d times", n)
	}
}

func TestAServerErrorOrAPanicIsNotKeptAndFreesTheKey(t *testing.T) {
	t.Parallel()
	s, runs := idempotentServer(t)
	for _, path := range []string{"/v1/flaky", "/v1/fragile"} {
		if a := s.do(t, s.admin, "POST", path, `{}`, httpapi.HeaderIdempotencyKey, "k"); a.status != 500 {
			t.Fatalf("%s: the first run answered %d %s", path, a.status, a.body)
		}
		a := s.do(t, s.admin, "POST", path, `{}`, httpapi.HeaderIdempotencyKey, "k")
		if a.status != 201 || a.header.Get(httpapi.HeaderReplayed) != "" {
			t.Errorf("%s: the retry answered %d %s, replayed %q", path, a.status, a.body, a.header.Get(httpapi.HeaderReplayed))
		}
		if b := s.do(t, s.admin, "POST", path, `{}`, httpapi.HeaderIdempotencyKey, "k"); b.status != 201 || b.body != a.body || b.header.Get(httpapi.HeaderReplayed) != "true" {
			t.Errorf("%s: after the success, %d %s, replayed %q", path, b.status, b.body, b.header.Get(httpapi.HeaderReplayed))
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the successful runs: %d", n)
	}
}

func TestParallelDuplicatesRunOnceAndAllGetTheFirstAnswer(t *testing.T) {
	t.Parallel()
	s, runs := idempotentServer(t)
	const n = 6
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = s.do(t, s.admin, "POST", "/v1/things", `{"name":"same"}`, httpapi.HeaderIdempotencyKey, "together")
		}()
	}
	wg.Wait()
	replayed := 0
	for i, a := range answers {
		if a.status != 201 || a.body != answers[0].body {
			t.Errorf("request %d: %d %s", i, a.status, a.body)
		}
		if a.header.Get(httpapi.HeaderReplayed) == "true" {
			replayed++
		}
	}
	if runs.Load() != 1 || replayed != n-1 {
		t.Errorf("the handler ran %d times; %d of %d answers replayed", runs.Load(), replayed, n)
	}
}

func TestABodyOverTheLimitWithAKeyIs413AndClaimsNothing(t *testing.T) {
	t.Parallel()
	s, runs := idempotentServer(t)
	big := `"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"`
	if a := s.do(t, s.admin, "POST", "/v1/things", big, httpapi.HeaderIdempotencyKey, "big"); a.status != 413 {
		t.Errorf("a large body: %d %s", a.status, a.body)
	}
	if a := s.do(t, s.admin, "POST", "/v1/things", `{}`, httpapi.HeaderIdempotencyKey, "big"); a.status != 201 || a.header.Get(httpapi.HeaderReplayed) != "" {
		t.Errorf("the key after a refused body: %d %s", a.status, a.body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
}
