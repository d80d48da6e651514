package keysapi_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// keyMetadataFields are the fields every listed key shows.
var keyMetadataFields = []string{"clientId", "name", "keyLastFour", "role", "createdAt", "lastUsedAt"}

// keysByClientID lists the caller's organization's keys.
func keysByClientID(t *testing.T, c *apitest.Client) (map[string]map[string]any, []string, *apitest.Response) {
	t.Helper()
	r := c.Do("GET", "/v1/keys", nil).Want(t, 200)
	out := map[string]map[string]any{}
	var order []string
	for _, k := range r.List(t) {
		id, _ := k["clientId"].(string)
		out[id] = k
		order = append(order, id)
	}
	return out, order, r
}

func TestAdminListsItsOrganizationsKeysAsMetadataWithoutSecrets(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	foreign := e.Org(t)
	foreign.Do("GET", "/v1/keys", nil).Want(t, 200)

	list, order, r := keysByClientID(t, admin)
	if want := []string{member.ClientID, admin.ClientID}; !slices.Equal(order, want) {
		t.Fatalf("GET /v1/keys lists %v, want this organization's keys newest first, like every list, %v", order, want)
	}
	for _, c := range []*apitest.Client{admin, member, foreign} {
		for _, secret := range []string{c.Secret, apikeys.HashSecret(c.Secret)} {
			if strings.Contains(string(r.Body), secret) {
				t.Errorf("the key list shows a secret or its hash: %s", r.Body)
			}
		}
	}
	if strings.Contains(strings.ToLower(string(r.Body)), "secret") {
		t.Errorf("the key list has a secret field: %s", r.Body)
	}
	for _, c := range []struct {
		client *apitest.Client
		role   string
	}{{admin, "admin"}, {member, "member"}} {
		k := list[c.client.ClientID]
		for _, f := range keyMetadataFields {
			if _, ok := k[f]; !ok {
				t.Errorf("key %s lacks %q: %s", c.client.ClientID, f, apitest.JSONOf(k))
			}
		}
		if got, want := k["keyLastFour"], c.client.Secret[len(c.client.Secret)-4:]; got != want {
			t.Errorf("keyLastFour = %v, want the secret's last four %q", got, want)
		}
		if k["role"] != c.role {
			t.Errorf("role = %v, want %s", k["role"], c.role)
		}
		if name, _ := k["name"].(string); name == "" {
			t.Errorf("name = %v, want the key's name", k["name"])
		}
		if _, err := time.Parse(time.RFC3339Nano, k["createdAt"].(string)); err != nil {
			t.Errorf("createdAt = %v: %v", k["createdAt"], err)
		}
	}
	if s, _ := list[admin.ClientID]["lastUsedAt"].(string); s == "" {
		t.Errorf("the admin key that made the request has lastUsedAt %v, want a time", list[admin.ClientID]["lastUsedAt"])
	}
	if got := list[member.ClientID]["lastUsedAt"]; got != nil {
		t.Errorf("a never used key has lastUsedAt %v, want null", got)
	}

	member.Do("GET", "/v1/companies", nil).Want(t, 200)
	list, _, _ = keysByClientID(t, admin)
	s, _ := list[member.ClientID]["lastUsedAt"].(string)
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		t.Errorf("after its first use a key has lastUsedAt %v, want a time", list[member.ClientID]["lastUsedAt"])
	}
}

func TestMemberKeysMayNotListOrRevokeKeys(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")

	apitest.WantError(t, member.Do("GET", "/v1/keys", nil), 403, "admin")
	apitest.WantError(t, member.Do("DELETE", "/v1/keys/"+admin.ClientID, nil), 403, "admin")
	apitest.WantError(t, member.Do("DELETE", "/v1/keys/"+member.ClientID, nil), 403, "admin")

	list, _, _ := keysByClientID(t, admin)
	if len(list) != 2 {
		t.Errorf("after a member's refused revokes the organization has %d keys, want 2", len(list))
	}
	member.Do("GET", "/v1/companies", nil).Want(t, 200)
}

func TestAdminCannotRevokeAnotherOrganizationsKey(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	foreign := e.Org(t)

	apitest.WantExactBody(t, admin.Do("DELETE", "/v1/keys/"+foreign.ClientID, nil).Want(t, 404), `{"error":"not found"}`)
	apitest.WantExactBody(t, admin.Do("DELETE", "/v1/keys/ck_doesnotexist", nil).Want(t, 404), `{"error":"not found"}`)
	foreign.Do("GET", "/v1/keys", nil).Want(t, 200)
	if list, _, _ := keysByClientID(t, foreign); len(list) != 1 {
		t.Errorf("the other organization has %d keys after the refused revoke, want 1", len(list))
	}
}

func TestRevokedKeyIsRejectedAtOnceByTheProcessThatRevokedIt(t *testing.T) {
	t.Parallel()
	// As Lambda functions, the revoking instance (keys) is not the one that
	// serves the next call: there, revocation reaches the other functions
	// after the cache window, which the next test checks across processes.
	apitest.InProcessOnly(t, "one process both revokes the key and serves the next call")
	e := apitest.New(t) // the default cache window is a full minute
	admin := e.Org(t)
	victim := e.Key(t, admin.Org, "member")
	victim.Do("GET", "/v1/companies", nil).Want(t, 200) // now cached

	r := admin.Do("DELETE", "/v1/keys/"+victim.ClientID, nil).Want(t, 204)
	if len(r.Body) != 0 {
		t.Errorf("DELETE body %q, want empty", r.Body)
	}
	apitest.WantExactBody(t, victim.Do("GET", "/v1/companies", nil).Want(t, 401), apitest.UnauthorizedBody)
	list, _, _ := keysByClientID(t, admin)
	if _, ok := list[victim.ClientID]; ok || len(list) != 1 {
		t.Errorf("after revoking, the key list is %s, want only the admin key", apitest.JSONOf(list))
	}
	apitest.WantExactBody(t, admin.Do("DELETE", "/v1/keys/"+victim.ClientID, nil).Want(t, 404), `{"error":"not found"}`)
}

func TestRevokedKeyIsRejectedByAnotherProcessAfterTheCacheWindow(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	a := apitest.NewWith(t, apitest.Options{CacheTTL: ttl})
	b := apitest.NewWith(t, apitest.Options{CacheTTL: ttl, Store: a.Store})
	admin := a.Org(t)
	victim := a.Key(t, admin.Org, "member")

	onB := b.Anonymous(t)
	onB.ClientID, onB.Secret = victim.ClientID, victim.Secret
	onB.Do("GET", "/v1/companies", nil).Want(t, 200) // cached in B

	admin.Do("DELETE", "/v1/keys/"+victim.ClientID, nil).Want(t, 204)
	apitest.WantExactBody(t, victim.Do("GET", "/v1/companies", nil).Want(t, 401), apitest.UnauthorizedBody)

	time.Sleep(ttl + 200*time.Millisecond)
	apitest.WantExactBody(t, onB.Do("GET", "/v1/companies", nil).Want(t, 401), apitest.UnauthorizedBody)
}

func TestKeyCreationIsRefusedAtThePlansCapUntilAKeyIsRevoked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := apitest.New(t)
	org, err := e.Deps.Keys.CreateOrg(ctx, "Capped", 2)
	if err != nil {
		t.Fatal(err)
	}
	admin := e.Key(t, org.ID, "admin")
	spare := e.Key(t, org.ID, "member")

	if _, err := e.Deps.Keys.CreateKey(ctx, org.ID, "one too many", "member"); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("creating a third key with a cap of 2: err = %v, want one wrapping apperr.ErrConflict", err)
	}
	if list, _, _ := keysByClientID(t, admin); len(list) != 2 {
		t.Errorf("after a refused creation the organization has %d keys, want 2", len(list))
	}

	admin.Do("DELETE", "/v1/keys/"+spare.ClientID, nil).Want(t, 204)
	k, err := e.Deps.Keys.CreateKey(ctx, org.ID, "replacement", "member")
	if err != nil {
		t.Fatalf("creating a key after revoking one: %v", err)
	}
	if _, err := e.Deps.Keys.CreateKey(ctx, org.ID, "over again", "member"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("creating a key at the cap again: err = %v, want one wrapping apperr.ErrConflict", err)
	}
	replacement := e.Anonymous(t)
	replacement.ClientID, replacement.Secret = k.ClientID, k.Secret
	replacement.Do("GET", "/v1/companies", nil).Want(t, 200)
}

func TestConcurrentKeyCreationNeverExceedsTheCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := apitest.New(t)
	const limit, tries = 3, 8
	org, err := e.Deps.Keys.CreateOrg(ctx, "Capped concurrently", limit)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, tries)
	for i := range tries {
		go func() {
			_, err := e.Deps.Keys.CreateKey(ctx, org.ID, fmt.Sprintf("key %d", i), "admin")
			errs <- err
		}()
	}
	created := 0
	for range tries {
		switch err := <-errs; {
		case err == nil:
			created++
		case !errors.Is(err, apperr.ErrConflict):
			t.Errorf("a refused creation failed with %v, want an error wrapping apperr.ErrConflict", err)
		}
	}
	if created == 0 || created > limit {
		t.Errorf("%d of %d concurrent creations succeeded with a cap of %d", created, tries, limit)
	}
	if ks, err := e.Deps.Keys.List(ctx, org.ID); err != nil || len(ks) != created {
		t.Errorf("the organization holds %d keys (err %v), want the %d created", len(ks), err, created)
	}
}

func TestTheOrganizationsLastAdminKeyCannotBeRevoked(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")

	r := admin.Do("DELETE", "/v1/keys/"+admin.ClientID, nil)
	if r.Status != 409 {
		t.Fatalf("BUG: revoking the organization's last admin key answered %d %s, want 409", r.Status, r.Body)
	}
	apitest.WantError(t, r, 409, admin.ClientID, "last admin key", "operator create another admin key")
	admin.Do("GET", "/v1/keys", nil).Want(t, 200) // still works
	// Members are not admins: the admin key is still the last one.
	apitest.WantError(t, admin.Do("DELETE", "/v1/keys/"+admin.ClientID, nil), 409, "last admin key")

	// With a second admin key either can go, not both.
	second := e.Key(t, admin.Org, "admin")
	admin.Do("DELETE", "/v1/keys/"+admin.ClientID, nil).Want(t, 204)
	apitest.WantError(t, second.Do("DELETE", "/v1/keys/"+second.ClientID, nil), 409, "last admin key")
	second.Do("DELETE", "/v1/keys/"+member.ClientID, nil).Want(t, 204)
	if list, _, _ := keysByClientID(t, second); len(list) != 1 || list[second.ClientID] == nil {
		t.Errorf("keys %s, want only the second admin key", apitest.JSONOf(list))
	}
	// The operator may revoke any key (and make new ones).
	if err := e.Deps.Keys.Revoke(context.Background(), "", second.ClientID); err != nil {
		t.Errorf("the operator revoking the last admin key: %v", err)
	}
}

// adminsOf lists the client ids of org's admin keys.
func adminsOf(t *testing.T, e *apitest.Env, org string) []string {
	t.Helper()
	ks, err := e.Deps.Keys.List(context.Background(), org)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range ks {
		if k.Role == apikeys.RoleAdmin {
			out = append(out, k.ClientID)
		}
	}
	return out
}

func TestAdminsRevokingEachOtherConcurrentlyLeaveOneAdminKey(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	ctx := context.Background()
	// Each round: n admin keys, each revoking the next one at the same time.
	for round, n := range []int{2, 2, 2, 3, 3, 4} {
		org, err := e.Deps.Keys.CreateOrg(ctx, fmt.Sprintf("Round %d", round), 0)
		if err != nil {
			t.Fatal(err)
		}
		admins := make([]*apitest.Client, n)
		for i := range admins {
			admins[i] = e.Key(t, org.ID, "admin")
		}
		e.Key(t, org.ID, "member")
		errs := make([]error, n)
		apitest.InParallel(n, func(i int) {
			errs[i] = e.Deps.Keys.Revoke(ctx, org.ID, admins[(i+1)%n].ClientID)
		})
		revoked := 0
		for _, err := range errs {
			switch {
			case err == nil:
				revoked++
			case !errors.Is(err, apperr.ErrConflict):
				t.Errorf("round %d: a refused revocation failed with %v, want a conflict", round, err)
			}
		}
		left := adminsOf(t, e, org.ID)
		if len(left) < 1 || revoked != n-len(left) {
			t.Fatalf("BUG: round %d: %d admins revoking each other concurrently revoked %d keys and left %d admin keys, want at least 1 left",
				round, n, revoked, len(left))
		}
	}
	// Through the API: two admins revoking each other, each once.
	admin := e.Org(t)
	other := e.Key(t, admin.Org, "admin")
	answers := make([]*apitest.Response, 2)
	pair := []*apitest.Client{admin, other}
	apitest.InParallel(2, func(i int) { answers[i] = e.As(t, pair[i]).Do("DELETE", "/v1/keys/"+pair[1-i].ClientID, nil) })
	ok := 0
	for _, r := range answers {
		switch r.Status {
		case 204:
			ok++
		case 409, 401: // refused, or its own key was revoked first
		default:
			t.Errorf("a revocation answered %d %s", r.Status, r.Body)
		}
	}
	if left := adminsOf(t, e, admin.Org); ok > 1 || len(left) != 2-ok {
		t.Errorf("BUG: %d revocations succeeded, %d admin keys left", ok, len(left))
	}
}

// The spec's GET /v1/keys lists every key of the organization: one page
// without a limit, however many keys the organization may hold.
func TestListingKeysWithoutALimitListsEveryKeyOfTheOrganization(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	o, err := e.Deps.Keys.CreateOrg(context.Background(), "Many keys", 150)
	if err != nil {
		t.Fatal(err)
	}
	admin := e.Key(t, o.ID, "admin")
	for range 119 {
		if _, err := e.Deps.Keys.CreateKey(context.Background(), o.ID, "ci", "member"); err != nil {
			t.Fatal(err)
		}
	}
	r := admin.Do("GET", "/v1/keys", nil).Want(t, 200)
	if got := len(r.List(t)); got != 120 {
		t.Errorf("GET /v1/keys listed %d keys, want all 120", got)
	}
	if c := r.Header.Get("X-Next-Cursor"); c != "" {
		t.Errorf("GET /v1/keys has a next page (%s); it lists every key", c)
	}
	// A page asked for is a page.
	if got := len(admin.Do("GET", "/v1/keys?limit=50", nil).Want(t, 200).List(t)); got != 50 {
		t.Errorf("limit=50 listed %d keys", got)
	}
	if _, err := e.Deps.Keys.CreateOrg(context.Background(), "Too many", 1001); err == nil {
		t.Errorf("an organization may hold more keys than a page lists")
	}
}
