package auth

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a time a test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixture is an organization with an admin and a member key in a fresh
// table, and an Authenticator over it with a cache of ttl on a clock.
type fixture struct {
	st            *store.Store
	ks            *apikeys.Service
	a             *Authenticator
	clock         *clock
	org           string
	admin, member apikeys.Created
}

func newFixture(t *testing.T, ttl time.Duration) *fixture {
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
	member, err := ks.CreateKey(ctx, org.ID, "member", "")
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Now()}
	a := New(ks, ttl)
	a.now = c.Now
	return &fixture{st: st, ks: ks, a: a, clock: c, org: org.ID, admin: admin, member: member}
}

func TestAValidPairIsItsOrganizationsPrincipalWithItsRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	ctx := context.Background()
	p, err := f.a.Authenticate(ctx, f.admin.ClientID, f.admin.Secret)
	if err != nil || p != (Principal{OrgID: f.org, ClientID: f.admin.ClientID, Role: apikeys.RoleAdmin}) || !p.IsAdmin() {
		t.Errorf("the admin key: %+v, %v", p, err)
	}
	p, err = f.a.Authenticate(ctx, f.member.ClientID, f.member.Secret)
	if err != nil || p.Role != apikeys.RoleMember || p.IsAdmin() || p.OrgID != f.org {
		t.Errorf("the member key: %+v, %v", p, err)
	}
	// A verified key records its use.
	k, err := f.ks.Lookup(ctx, f.admin.ClientID)
	if err != nil || k.LastUsedAt == nil || k.LastUsedAt.Time.Sub(f.clock.Now()).Abs() > time.Millisecond {
		t.Errorf("lastUsedAt after a use: %v, %v", k.LastUsedAt, err)
	}
	// The principal travels in a context.
	if got, ok := FromContext(WithPrincipal(ctx, p)); !ok || got != p {
		t.Errorf("FromContext: %+v %v", got, ok)
	}
	if _, ok := FromContext(ctx); ok {
		t.Error("a context without a principal has one")
	}
}

func TestEveryBadPairIsTheSameUnauthenticatedError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	ctx := context.Background()
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	for name, pair := range map[string][2]string{
		"no client id":                {"", f.admin.Secret},
		"no secret":                   {f.admin.ClientID, ""},
		"an unknown client id":        {"ck_01unknown", f.admin.Secret},
		"a client id no key can have": {string(long[:129]), f.admin.Secret},
		"another key's secret":        {f.admin.ClientID, f.member.Secret},
		"the secret cut short":        {f.admin.ClientID, f.admin.Secret[:len(f.admin.Secret)-1]},
		"the secret with one more":    {f.admin.ClientID, f.admin.Secret + "x"},
		"the secret's hash":           {f.admin.ClientID, apikeys.HashSecret(f.admin.Secret)},
		"a secret too long to check":  {f.admin.ClientID, string(long) + f.admin.Secret},
	} {
		if _, err := f.a.Authenticate(ctx, pair[0], pair[1]); err != ErrUnauthenticated {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A wrong secret of a cached key is refused as well: the cache keeps
	// the hash, not a verdict.
	if _, err := f.a.Authenticate(ctx, f.admin.ClientID, f.admin.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Authenticate(ctx, f.admin.ClientID, f.member.Secret); err != ErrUnauthenticated {
		t.Errorf("a wrong secret of a cached key: %v", err)
	}
	if _, err := f.a.Authenticate(ctx, f.admin.ClientID, f.admin.Secret); err != nil {
		t.Errorf("the right secret after a wrong one: %v", err)
	}
}

func TestARevokedKeyWorksAtMostTheCacheTTLElsewhereAndNotAtAllAfterForget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := context.Background()
	other := New(f.ks, 30*time.Second) // another process, with its own cache
	other.now = f.clock.Now
	for _, a := range []*Authenticator{f.a, other} {
		if _, err := a.Authenticate(ctx, f.member.ClientID, f.member.Secret); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.ks.Revoke(ctx, f.org, f.member.ClientID); err != nil {
		t.Fatal(err)
	}
	f.a.Forget(f.member.ClientID) // the process that revoked it
	if _, err := f.a.Authenticate(ctx, f.member.ClientID, f.member.Secret); err != ErrUnauthenticated {
		t.Errorf("the revoking process after Forget: %v", err)
	}
	// The other process still holds it in its cache, within the window.
	f.clock.add(29 * time.Second)
	if _, err := other.Authenticate(ctx, f.member.ClientID, f.member.Secret); err != nil {
		t.Errorf("another process within the cache window: %v", err)
	}
	f.clock.add(time.Second)
	if _, err := other.Authenticate(ctx, f.member.ClientID, f.member.Secret); err != ErrUnauthenticated {
		t.Errorf("another process at the end of the window: %v", err)
	}
}

func TestWithoutACacheEveryRequestReadsTheTable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	ctx := context.Background()
	if _, err := f.a.Authenticate(ctx, f.member.ClientID, f.member.Secret); err != nil {
		t.Fatal(err)
	}
	if err := f.ks.Revoke(ctx, "", f.member.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Authenticate(ctx, f.member.ClientID, f.member.Secret); err != ErrUnauthenticated {
		t.Errorf("a revoked key with no cache: %v", err)
	}
}

func TestAKeyIsReadFromTheTableOncePerCacheWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	ctx := context.Background()
	touched := func() time.Time {
		k, err := f.ks.Lookup(ctx, f.admin.ClientID)
		if err != nil || k.LastUsedAt == nil {
			t.Fatalf("lookup: %+v %v", k, err)
		}
		return k.LastUsedAt.Time
	}
	start := f.clock.Now()
	if _, err := f.a.Authenticate(ctx, f.admin.ClientID, f.admin.Secret); err != nil {
		t.Fatal(err)
	}
	f.clock.add(59 * time.Second)
	if _, err := f.a.Authenticate(ctx, f.admin.ClientID, f.admin.Secret); err != nil {
		t.Fatal(err)
	}
	if got := touched(); got.Sub(start).Abs() > time.Millisecond {
		t.Errorf("a cached verification touched the key: last use %v, first use %v", got, start)
	}
	f.clock.add(time.Second)
	if _, err := f.a.Authenticate(ctx, f.admin.ClientID, f.admin.Secret); err != nil {
		t.Fatal(err)
	}
	if got := touched(); got.Sub(f.clock.Now()).Abs() > time.Millisecond {
		t.Errorf("after the window: last use %v, want %v", got, f.clock.Now())
	}
}

func TestATableThatDoesNotAnswerIsAnErrorNotAVerdict(t *testing.T) {
	t.Parallel()
	// A store whose table does not exist: every read fails.
	st := store.New(testenv.Client(t, nil), "no-such-table")
	a := New(apikeys.New(st), time.Minute)
	_, err := a.Authenticate(context.Background(), "ck_01abc", "sk_secret")
	if err == nil || errors.Is(err, ErrUnauthenticated) || errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("a failing table: %v, want an error that is neither 401 nor 404", err)
	}
}

func TestParseCacheTTLAcceptsZeroToAMinute(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]time.Duration{"": MaxCacheTTL, "0s": 0, "0": 0, "30s": 30 * time.Second, "1m": time.Minute, "250ms": 250 * time.Millisecond} {
		if got, err := ParseCacheTTL(s); err != nil || got != want {
			t.Errorf("ParseCacheTTL(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"61s", "2m", "-1s", "30", "soon"} {
		if _, err := ParseCacheTTL(s); err == nil {
			t.Errorf("ParseCacheTTL(%q) accepted", s)
		}
	}
}
