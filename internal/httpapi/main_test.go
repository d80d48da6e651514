package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// key is a client id and secret pair.
type key struct{ clientID, secret string }

// server is a router over a fresh table, with real API keys: an admin key
// and a member key of one organization.
type server struct {
	*httptest.Server
	st            *store.Store
	org           string
	admin, member key
	authn         func(http.Handler) http.Handler
}

// otherOrg makes another organization in s's table and returns its admin key.
func (s *server) otherOrg(t *testing.T) key {
	t.Helper()
	ks := apikeys.New(s.st)
	org, err := ks.CreateOrg(context.Background(), "Other", 0)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ks.CreateKey(context.Background(), org.ID, "admin", apikeys.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	return key{k.ClientID, k.Secret}
}

// newServer serves NewRouter(table, handlers, Authenticate(...), creates...)
// over HTTP, with keys checked against a fresh table.
func newServer(t *testing.T, table []routes.Route, handlers map[string]http.Handler, creates ...func(http.Handler) http.Handler) *server {
	t.Helper()
	s := newEnv(t)
	s.serve(t, httpapi.NewRouter(table, handlers, s.authn, creates...))
	return s
}

// newEnv is a fresh table with an organization, its keys and Authenticate
// over them, not yet served.
func newEnv(t *testing.T) *server {
	t.Helper()
	st := testenv.Store(t)
	ks := apikeys.New(st)
	ctx := context.Background()
	org, err := ks.CreateOrg(ctx, "Acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ks.CreateKey(ctx, org.ID, "admin", apikeys.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	member, err := ks.CreateKey(ctx, org.ID, "member", apikeys.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	return &server{st: st, org: org.ID, authn: httpapi.Authenticate(auth.New(ks, time.Minute), nil, nil),
		admin: key{admin.ClientID, admin.Secret}, member: key{member.ClientID, member.Secret}}
}

// serve serves h over HTTP until the test ends.
func (s *server) serve(t *testing.T, h http.Handler) {
	s.Server = httptest.NewServer(h)
	t.Cleanup(s.Close)
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

// errorMessage is the {"error": ...} message of the answer ("" if none).
func (a answer) errorMessage(t *testing.T) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &e); err != nil {
		t.Fatalf("answer %d is not JSON: %q", a.status, a.body)
	}
	return e.Error
}

// do sends a request with k's credentials (none when k is zero), its path
// exactly as written (unclean paths included), and header's name-value
// pairs.
func (s *server) do(t *testing.T, k key, method, path string, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// Opaque: the path goes on the request line as written ("//", "%2e").
	req.URL.Opaque = path
	if strings.Contains(path, "?") {
		p, q, _ := strings.Cut(path, "?")
		req.URL.Opaque, req.URL.RawQuery = p, q
	}
	if k.clientID != "" {
		req.Header.Set(httpapi.HeaderClientID, k.clientID)
		req.Header.Set(httpapi.HeaderAPIKey, k.secret)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout: testenv.Scaled(30 * time.Second)}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: string(b)}
}
