package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// calls counts the DynamoDB operations a client makes, by name, once per
// operation (an SDK retry is not another call).
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) option(o *dynamodb.Options) {
	o.APIOptions = append(append([]func(*middleware.Stack) error(nil), o.APIOptions...), func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("CountCalls", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.n[middleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

// reset returns the counts so far and zeroes them.
func (c *calls) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// counted is a store over a fresh table whose calls are counted.
func counted(t *testing.T) (*store.Store, *calls) {
	t.Helper()
	c := &calls{n: map[string]int{}}
	return testenv.StoreOn(t, dynamodb.New(testenv.Client(t, nil).Options(), c.option)), c
}

// clock is a fixed time, five seconds into a minute, that a test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Now().Truncate(time.Minute).Add(5 * time.Second)} }

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

// instance is a limiter over st reading c: one instance of the service.
func instance(st *store.Store, c *clock) *ratelimit.Limiter {
	l := ratelimit.New(st)
	l.SetClock(c.Now)
	return l
}

func set(t *testing.T, l *ratelimit.Limiter, org string, ls ratelimit.Limits) {
	t.Helper()
	if err := l.SetLimits(context.Background(), org, ls); err != nil {
		t.Fatal(err)
	}
}

// want takes n requests of key clientID of org and checks each is allowed
// (or refused by the limit of scope) with the limit given.
func want(t *testing.T, l *ratelimit.Limiter, org, clientID string, n int, allowed bool, scope string, limit int64) {
	t.Helper()
	for i := range n {
		d := l.Key(context.Background(), org, clientID)
		if d.Allowed != allowed || d.Scope != scope || d.Limit != limit {
			t.Fatalf("request %d of %s: %+v, want allowed %v by the %s limit of %d", i+1, clientID, d, allowed, scope, limit)
		}
		if !allowed && d.Remaining != 0 {
			t.Fatalf("request %d of %s refused with %d remaining", i+1, clientID, d.Remaining)
		}
	}
}

func TestTheKeysOfAnOrganizationShareItsLimit(t *testing.T) {
	t.Parallel()
	st, _ := counted(t)
	l := instance(st, newClock())
	set(t, l, "org_a", ratelimit.Limits{KeyPerMinute: 10, OrganizationPerMinute: 15, WebhookPerMinute: 10})

	// The key's limit is the tighter while it has fewer requests left.
	d := l.Key(context.Background(), "org_a", "ck_1")
	if !d.Allowed || d.Scope != ratelimit.ScopeKey || d.Limit != 10 || d.Remaining != 9 {
		t.Fatalf("first request: %+v, want the key's limit of 10 with 9 left", d)
	}
	want(t, l, "org_a", "ck_1", 9, true, ratelimit.ScopeKey, 10)
	want(t, l, "org_a", "ck_1", 1, false, ratelimit.ScopeKey, 10)
	// A second key has its own 10 but the organization only 5 left: the
	// organization's limit is the tighter, then refuses.
	d = l.Key(context.Background(), "org_a", "ck_2")
	if !d.Allowed || d.Scope != ratelimit.ScopeOrganization || d.Limit != 15 || d.Remaining != 4 {
		t.Fatalf("second key's first request: %+v, want the organization's limit of 15 with 4 left", d)
	}
	want(t, l, "org_a", "ck_2", 4, true, ratelimit.ScopeOrganization, 15)
	want(t, l, "org_a", "ck_2", 3, false, ratelimit.ScopeOrganization, 15)
	want(t, l, "org_a", "ck_3", 3, false, ratelimit.ScopeOrganization, 15)
	// Another organization's keys go on.
	want(t, l, "org_b", "ck_4", 1, true, ratelimit.ScopeKey, ratelimit.Defaults.KeyPerMinute)
}

func TestARequestTheOrganizationRefusesDoesNotSpendItsKeysBudget(t *testing.T) {
	t.Parallel()
	st, _ := counted(t)
	l := instance(st, newClock())
	set(t, l, "org_a", ratelimit.Limits{KeyPerMinute: 5, OrganizationPerMinute: 6, WebhookPerMinute: 10})
	want(t, l, "org_a", "ck_other", 5, true, ratelimit.ScopeKey, 5)
	want(t, l, "org_a", "ck_1", 1, true, ratelimit.ScopeOrganization, 6)
	want(t, l, "org_a", "ck_1", 20, false, ratelimit.ScopeOrganization, 6)
	// With room in the organization, the key has the 4 it did not spend.
	set(t, l, "org_a", ratelimit.Limits{KeyPerMinute: 5, OrganizationPerMinute: 100, WebhookPerMinute: 10})
	want(t, l, "org_a", "ck_1", 4, true, ratelimit.ScopeKey, 5)
	want(t, l, "org_a", "ck_1", 1, false, ratelimit.ScopeKey, 5)
}

func TestKeysOfAnOrganizationOnTwoInstancesTogetherGetNoMoreThanItsLimit(t *testing.T) {
	t.Parallel()
	st, _ := counted(t)
	c := newClock()
	set(t, ratelimit.New(st), "org_a", ratelimit.Limits{KeyPerMinute: 25, OrganizationPerMinute: 30, WebhookPerMinute: 10})
	instances := []*ratelimit.Limiter{instance(st, c), instance(st, c)}
	var mu sync.Mutex
	granted := map[string]int{}
	var wg sync.WaitGroup
	for _, l := range instances {
		for _, key := range []string{"ck_1", "ck_2", "ck_1", "ck_2"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 30 {
					if d := l.Key(context.Background(), "org_a", key); d.Allowed {
						mu.Lock()
						granted[key]++
						mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	// 240 requests of two keys of 25 each, in an organization of 30: never
	// more than 30, at most one lease per instance below it.
	if n := granted["ck_1"] + granted["ck_2"]; n > 30 || n < 28 || granted["ck_1"] > 25 || granted["ck_2"] > 25 {
		t.Errorf("two instances granted %v, want 28 to 30 together", granted)
	}
}

func TestARaisedLimitAdmitsRefusedKeysOnEveryInstanceWhileARefusedFloodBarelyReadsTheTable(t *testing.T) {
	t.Parallel()
	st, n := counted(t)
	c := newClock()
	a, b := instance(st, c), instance(st, c)
	operator := ratelimit.New(st) // the admin function: another process
	set(t, operator, "org_a", ratelimit.Limits{KeyPerMinute: 4, WebhookPerMinute: 10})
	for _, l := range []*ratelimit.Limiter{a, b} {
		want(t, l, "org_a", "ck_1", 2, true, ratelimit.ScopeKey, 4)
	}
	for _, l := range []*ratelimit.Limiter{a, b} {
		want(t, l, "org_a", "ck_1", 1, false, ratelimit.ScopeKey, 4)
	}

	// Refused floods within a second of reading the limits cost nothing;
	// later ones read them once a RecheckEvery per instance.
	n.reset()
	for _, l := range []*ratelimit.Limiter{a, b} {
		want(t, l, "org_a", "ck_1", 100, false, ratelimit.ScopeKey, 4)
	}
	if got := n.reset(); len(got) != 0 {
		t.Errorf("200 refused requests within a second made the calls %v, want none", got)
	}
	c.add(ratelimit.RecheckEvery)
	for _, l := range []*ratelimit.Limiter{a, b} {
		want(t, l, "org_a", "ck_1", 100, false, ratelimit.ScopeKey, 4)
	}
	if got := n.reset(); got["GetItem"] != 2 || len(got) != 1 {
		t.Errorf("100 refused requests on each of two instances a second later made the calls %v, want GetItem 2 (one per instance)", got)
	}

	// The operator raises the limit: the key's next request after
	// RecheckEvery is admitted on both instances, within the new limit
	// together.
	set(t, operator, "org_a", ratelimit.Limits{KeyPerMinute: 8, WebhookPerMinute: 10})
	c.add(ratelimit.RecheckEvery)
	granted := 0
	for range 10 {
		for _, l := range []*ratelimit.Limiter{a, b} {
			if l.Key(context.Background(), "org_a", "ck_1").Allowed {
				granted++
			}
		}
	}
	if granted != 4 {
		t.Errorf("after raising the limit from 4 to 8, the two instances granted %d more requests, want 4", granted)
	}

	// A raised organization limit admits at once too.
	set(t, operator, "org_b", ratelimit.Limits{KeyPerMinute: 10, OrganizationPerMinute: 1, WebhookPerMinute: 10})
	want(t, a, "org_b", "ck_2", 1, true, ratelimit.ScopeOrganization, 1)
	want(t, a, "org_b", "ck_3", 1, false, ratelimit.ScopeOrganization, 1)
	set(t, operator, "org_b", ratelimit.Limits{KeyPerMinute: 10, OrganizationPerMinute: 100, WebhookPerMinute: 10})
	c.add(ratelimit.RecheckEvery)
	want(t, a, "org_b", "ck_3", 1, true, ratelimit.ScopeKey, 10)
}

func TestALoweredLimitAppliesToTheLeaseAnInstanceHolds(t *testing.T) {
	t.Parallel()
	st, _ := counted(t)
	l := instance(st, newClock())
	set(t, l, "org_a", ratelimit.Limits{KeyPerMinute: 100, WebhookPerMinute: 10})
	// The first lease is an eighth of 100: 12 requests, 10 of them served.
	want(t, l, "org_a", "ck_1", 10, true, ratelimit.ScopeKey, 100)
	set(t, l, "org_a", ratelimit.Limits{KeyPerMinute: 5, WebhookPerMinute: 10})
	want(t, l, "org_a", "ck_1", 1, false, ratelimit.ScopeKey, 5)
	// The 2 leased and not served were given back: the window counts the
	// 10 served, so raised to 14 it admits 4 more.
	set(t, l, "org_a", ratelimit.Limits{KeyPerMinute: 14, WebhookPerMinute: 10})
	want(t, l, "org_a", "ck_1", 4, true, ratelimit.ScopeKey, 14)
	want(t, l, "org_a", "ck_1", 1, false, ratelimit.ScopeKey, 14)
}

func TestLimitsStoredWithoutTheOrganizationLimitGetItsDefault(t *testing.T) {
	t.Parallel()
	st, _ := counted(t)
	l := instance(st, newClock())
	ctx := context.Background()
	for org, doc := range map[string]string{
		"org_old":   `{"keyPerMinute":300,"webhookPerMinute":20}`,
		"org_large": `{"keyPerMinute":500000,"webhookPerMinute":20}`,
	} {
		k := store.RateLimitsKey(org)
		testenv.PutRaw(t, st, map[string]string{store.AttrPK: k.PK, store.AttrSK: k.SK, store.AttrType: store.TypeLimits, store.AttrDoc: doc})
	}
	for org, want := range map[string]ratelimit.Limits{
		"org_old":   {KeyPerMinute: 300, OrganizationPerMinute: ratelimit.Defaults.OrganizationPerMinute, WebhookPerMinute: 20},
		"org_large": {KeyPerMinute: 500000, OrganizationPerMinute: 500000, WebhookPerMinute: 20},
		"org_none":  ratelimit.Defaults,
	} {
		if got, err := l.LimitsOf(ctx, org); err != nil || got != want {
			t.Errorf("limits of %s: %+v, %v; want %+v", org, got, err, want)
		}
	}
	want(t, l, "org_old", "ck_1", 1, true, ratelimit.ScopeKey, 300)

	// Set without it, it is stored with its default; out of range, refused.
	set(t, l, "org_set", ratelimit.Limits{KeyPerMinute: 7, WebhookPerMinute: 8})
	if got, _ := instance(st, newClock()).LimitsOf(ctx, "org_set"); got.OrganizationPerMinute != ratelimit.Defaults.OrganizationPerMinute {
		t.Errorf("limits set without the organization's: %+v", got)
	}
	for _, n := range []int64{-1, ratelimit.MaxLimit + 1} {
		err := l.SetLimits(ctx, "org_set", ratelimit.Limits{KeyPerMinute: 7, OrganizationPerMinute: n, WebhookPerMinute: 8})
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.Field != "organizationPerMinute" {
			t.Errorf("organizationPerMinute %d: %v, want it refused naming the field", n, err)
		}
	}
}

// A long-lived instance keeps the slots of the current window only: the
// keys it served in past windows are dropped once it holds enough slots.
func TestAnInstanceDropsTheSlotsOfPastWindows(t *testing.T) {
	t.Parallel()
	st, _ := counted(t)
	c := newClock()
	l := instance(st, c)
	ratelimit.SetMinPrune(l, 5)
	take := func(key string) {
		t.Helper()
		if d, err := l.Take(context.Background(), ratelimit.ScopeKey, key, 100); err != nil || !d.Allowed {
			t.Fatalf("take %s: %+v, %v", key, d, err)
		}
	}
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		take(k)
	}
	c.add(time.Minute)
	take("k1") // its slot moves to the new window
	if n := l.Slots(); n != 5 {
		t.Fatalf("%d slots before the prune, want 5", n)
	}
	take("k6") // a sixth slot: the past window's four go
	if n := l.Slots(); n != 2 {
		t.Errorf("%d slots after the prune, want 2 (k1 and k6, of the current window)", n)
	}
	// The dropped keys count afresh in the current window.
	take("k2")
	if n := l.Slots(); n != 3 {
		t.Errorf("%d slots, want 3", n)
	}
}

// gate holds every UpdateItem (a lease's reservation) while closed.
type gate struct {
	mu     sync.Mutex
	closed chan struct{} // nil when open
	held   chan struct{} // receives once per reservation held
}

func (g *gate) option(o *dynamodb.Options) {
	o.APIOptions = append(append([]func(*middleware.Stack) error(nil), o.APIOptions...), func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("Gate", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			g.mu.Lock()
			closed := g.closed
			g.mu.Unlock()
			if closed != nil && middleware.GetOperationName(ctx) == "UpdateItem" {
				g.held <- struct{}{}
				<-closed
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

func TestFarFromItsLimitAKeysRequestsAreServedWhileItsNextLeaseIsReserved(t *testing.T) {
	t.Parallel()
	g := &gate{held: make(chan struct{}, 10)}
	st := testenv.StoreOn(t, dynamodb.New(testenv.Client(t, nil).Options(), g.option))
	l := instance(st, newClock())
	// The first lease (50) and the organization's: reserved as needed.
	want(t, l, "org_a", "ck_1", 1, true, ratelimit.ScopeKey, ratelimit.Defaults.KeyPerMinute)
	g.mu.Lock()
	g.closed = make(chan struct{})
	g.mu.Unlock()
	// Once half of each lease is used, the next is reserved, and held by
	// the gate: the requests of the rest of the leases are still served.
	done := make(chan struct{})
	go func() {
		defer close(done)
		want(t, l, "org_a", "ck_1", 49, true, ratelimit.ScopeKey, ratelimit.Defaults.KeyPerMinute)
	}()
	select {
	case <-done:
	case <-time.After(testenv.Scaled(30 * time.Second)):
		t.Fatal("requests within a lease waited for the reservation of the next one")
	}
	select {
	case <-g.held: // the reservation runs on its own: it may reach the gate after the requests
	case <-time.After(testenv.Scaled(30 * time.Second)):
		t.Error("no reservation of the next lease was started while the lease lasted")
	}
	g.mu.Lock()
	close(g.closed)
	g.closed = nil
	g.mu.Unlock()
	want(t, l, "org_a", "ck_1", 100, true, ratelimit.ScopeKey, ratelimit.Defaults.KeyPerMinute)
}

func TestABusyInstanceReservesLargerLeasesAndAnIdleOneKeepsThemSmall(t *testing.T) {
	t.Parallel()
	st, n := counted(t)
	c := newClock()
	l := instance(st, c)
	// 5,000 requests within a second: leases of 50, 100, ... 1,600.
	want(t, l, "org_a", "ck_1", 5000, true, ratelimit.ScopeKey, ratelimit.Defaults.KeyPerMinute)
	waitForReservations(t, l, "org_a", "ck_1")
	if got := n.reset()["UpdateItem"]; got > 2*9 {
		t.Errorf("5,000 requests in a second made %d reservations (key and organization), want at most 18", got)
	}
	// An instance serving a request every two seconds keeps leases of 50.
	c.add(time.Minute)
	for range 3 {
		want(t, l, "org_a", "ck_2", 50, true, ratelimit.ScopeKey, ratelimit.Defaults.KeyPerMinute)
		c.add(2 * time.Second)
	}
	waitForReservations(t, l, "org_a", "ck_2")
	if got := n.reset()["UpdateItem"]; got < 2*3 {
		t.Errorf("150 requests two seconds apart per 50 made %d reservations, want leases of 50 (at least 6)", got)
	}
}

// waitForReservations lets a reservation started ahead of need land, so
// that the calls counted are all made.
func waitForReservations(t *testing.T, l *ratelimit.Limiter, org, clientID string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scaled(30 * time.Second))
	for l.Reserving(ratelimit.ScopeKey, clientID) || l.Reserving(ratelimit.ScopeOrganization, org) {
		if time.Now().After(deadline) {
			t.Fatal("a reservation did not end")
		}
		time.Sleep(time.Millisecond)
	}
}
