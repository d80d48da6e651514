package keysapi_test

import (
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestBadCredentialsAre401WithTheExactSpecBody(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	warm := e.Org(t)                    // used before the bad requests: verified from the cache
	cold := e.Key(t, warm.Org, "admin") // never used successfully: verified from the table
	foreign := e.Org(t)                 // a key of another organization
	warm.Do("GET", "/v1/companies", nil).Want(t, 200)

	creds := []struct {
		name             string
		clientID, secret string
	}{
		{"no credential headers", "", ""},
		{"only the client id", warm.ClientID, ""},
		{"only the secret", "", warm.Secret},
		{"wrong secret of a cached key", warm.ClientID, warm.Secret + "x"},
		{"wrong secret of an uncached key", cold.ClientID, "x" + cold.Secret},
		{"unknown client id", "ck_doesnotexist", warm.Secret},
		{"client id of one key with the secret of another", warm.ClientID, cold.Secret},
		{"client id of one key with the secret of another org's key", cold.ClientID, foreign.Secret},
		{"secret and client id swapped", warm.Secret, warm.ClientID},
		{"overlong client id", strings.Repeat("c", 200), warm.Secret},
		{"overlong secret", warm.ClientID, strings.Repeat("s", 300)},
	}
	requests := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/companies", nil},
		{"POST", "/v1/companies", map[string]any{"canonicalName": "Sneaky"}},
		{"GET", "/v1/keys", nil},
	}
	for _, cr := range creds {
		for _, rq := range requests {
			t.Run(cr.name+" "+rq.method+" "+rq.path, func(t *testing.T) {
				t.Parallel()
				c := e.Anonymous(t)
				c.ClientID, c.Secret = cr.clientID, cr.secret
				r := c.Do(rq.method, rq.path, rq.body).Want(t, 401)
				apitest.WantExactBody(t, r, apitest.UnauthorizedBody)
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
			})
		}
	}
	t.Cleanup(func() {
		// Failed attempts neither lock out nor poison the real keys, and
		// no unauthenticated create was stored.
		for _, c := range []*apitest.Client{warm, cold} {
			if list := c.Do("GET", "/v1/companies", nil).Want(t, 200).List(t); len(list) != 0 {
				t.Errorf("unauthenticated creates stored companies: %s", apitest.JSONOf(list))
			}
		}
	})
}

func TestCredentialHeaderNamesAreCaseInsensitive(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	anon := e.Anonymous(t)
	anon.Do("GET", "/v1/companies", nil, "X-SERVICE-CLIENT-ID", c.ClientID, "x-Service-Api-Key", c.Secret).Want(t, 200)
}

func TestAValidKeyReachesItsOrganizationsData(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	created := apitest.CreateCompany(t, member, map[string]any{"canonicalName": "Shared"})
	got := apitest.IDsOf(t, admin.Do("GET", "/v1/companies", nil).Want(t, 200).List(t))
	if len(got) != 1 || got[0] != apitest.IDOf(t, created) {
		t.Errorf("an admin key of the same organization lists %v, want the member's company %s", got, apitest.IDOf(t, created))
	}
}
