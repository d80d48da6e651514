package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

// rawGet sends method path exactly as written (no path cleaning, no
// redirects followed) with the client's credentials.
func rawDo(t *testing.T, c *apitest.Client, method, path string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.Base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = "" // keep the path as given below
	req.URL.RawPath = ""
	req.URL.Path = path
	if c.ClientID != "" {
		req.Header.Set("x-service-client-id", c.ClientID)
		req.Header.Set("x-service-api-key", c.Secret)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, strings.TrimSpace(string(b))
}

func TestEveryV1PathWithoutCredentialsIs401KnownOrNot(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	anon := e.Anonymous(t)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/nothing"},
		{"POST", "/v1/foo"},
		{"GET", "/v1"},
		{"GET", "/v1/companies/x/y"},
		{"DELETE", "/v1/companies"},
		{"GET", "/v1/../v1/keys"},
		{"GET", "/v1/companies/" + strings.Repeat("a", 3000)},
	} {
		t.Run(tc.method+" "+tc.path[:min(len(tc.path), 40)], func(t *testing.T) {
			t.Parallel()
			status, _, body := rawDo(t, anon, tc.method, tc.path)
			if status != 401 || body != `{"error":"invalid api key or clientId"}` {
				t.Fatalf("got %d %s, want 401 with the spec's body", status, body)
			}
		})
	}
}

func TestAnUnknownRouteTellsItselfApartFromAMissingRecord(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	status, _, body := rawDo(t, c, "POST", "/v1/foo")
	if status != 404 || body != `{"error":"no such endpoint: POST /v1/foo"}` {
		t.Fatalf("unknown route: %d %s", status, body)
	}
	status, _, body = rawDo(t, c, "GET", "/v1/companies/cmp_missing")
	if status != 404 || body != `{"error":"not found"}` {
		t.Fatalf("missing record: %d %s", status, body)
	}
}

func TestUncleanPathsAnswerJSON404InsteadOfARedirect(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, p := range []string{
		"/v1/companies/../keys", "/v1//companies", "/v1/./companies", "/v1/companies/", "//v1/companies",
		"/v1/companies/.", "/healthz/..", "/webhooks//workflows/x", "/webhooks/workflows/../../healthz",
	} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			status, h, body := rawDo(t, c, "GET", p)
			if status != 404 || !strings.HasPrefix(body, `{"error":"no such endpoint: `) {
				t.Fatalf("got %d %s (Location %q), want a JSON 404", status, body, h.Get("Location"))
			}
			if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestEveryPathIdLongerThanAnyIdIsNotFound(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	long := strings.Repeat("k", 2048)
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/v1/keys/" + long},
		{"GET", "/v1/companies/" + long},
		{"GET", "/v1/workflows/" + long + "/runs"},
		{"POST", "/v1/workflow-runs/" + long + "/retry"},
		{"PATCH", "/v1/workflow-runs/" + long},
		// A webhook's overlong slug is answered as a wrong secret (webhook_test.go).
	} {
		t.Run(tc.method+" "+tc.path[:20], func(t *testing.T) {
			t.Parallel()
			status, _, body := rawDo(t, c, tc.method, tc.path)
			if status != 404 || body != `{"error":"not found"}` {
				t.Fatalf("got %d %s, want 404 not found", status, body)
			}
		})
	}
}

// TestOneGroupsFunctionAnswersOtherGroupsPathsLikeTheWholeService is what
// API Gateway's $default route relies on: the function it reaches answers
// a request no route matched (a wrong method, an unknown path) as the
// whole service does, after authentication.
func TestOneGroupsFunctionAnswersOtherGroupsPathsLikeTheWholeService(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	srv := httptest.NewServer(api.Handler(e.Deps, lambdas.Keys))
	defer srv.Close()
	keysOnly := *c
	keysOnly.Base = srv.URL
	r := keysOnly.Do("PATCH", "/v1/companies", nil).Want(t, 405)
	if allow := r.Header.Get("Allow"); allow != "GET, POST, PUT" {
		t.Errorf("Allow %q, want GET, POST, PUT", allow)
	}
	if msg := keysOnly.Do("GET", "/v1/companies", nil).Want(t, 404).Error(t); msg != "no such endpoint: GET /v1/companies" {
		t.Errorf("a route of another group: %q", msg)
	}
	keysOnly.Do("GET", "/v1/keys", nil).Want(t, 200)
	noKey := keysOnly
	noKey.ClientID, noKey.Secret = "", ""
	noKey.Do("PATCH", "/v1/companies", nil).Want(t, 401)
}
