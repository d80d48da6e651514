// Package ratelimit limits the requests of each API key, of each
// organization's keys together, and of each webhook trigger per minute,
// across every instance of the service (every Lambda instance, every dev
// server on one table).
//
// Windows are fixed minutes. An instance does not write to the table for
// every request: it reserves a lease of requests from the window's counter
// item with one conditional add (store.Reserve), serves that many from
// memory, and reserves again: far from the limit while half of the lease
// is left (no request waits for the write), near it when the lease is
// spent (the requests waiting for it do not hold the slot). A lease is
// about a second of the instance's requests while the window is far from
// its limit (50, doubled while a lease lasts less than a second, up to
// 1,600), one eighth of what is left as it gets close, and a single
// request at the end, so the instances together never grant more than the
// limit: a conditional add that would pass it fails. What an instance
// leased and did not use by the end of a window is lost, so near the limit
// a key may be refused a few requests early (at most one lease per
// instance that served it, about a second of its traffic).
//
// A request of an API key counts against two limits: its key's and its
// organization's (all its keys together), each with its own counter and
// leases. The key is counted first; a request the organization's limit
// refuses gives its key's request back (in memory: the key's lease stays
// with the instance for the key's next request), so a refusal spends
// neither budget. The answer reports the tighter of the two.
//
// An organization's limits are read from the table (store.RateLimitsKey)
// once a minute per instance; without its own, an organization has the
// Defaults. A refused request re-reads them when they were read more than
// RecheckEvery ago (once per organization per instance at a time), so a
// limit the operator raises admits the keys it refused within a second on
// every instance; a refused flood costs at most one read a second per
// organization per instance and no write.
package ratelimit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Window is the span a limit counts requests over.
const Window = time.Minute

// Scopes of a limit.
const (
	ScopeKey          = "key"          // an API key's requests to /v1
	ScopeOrganization = "organization" // the requests of all API keys of an organization together
	ScopeWebhook      = "webhook"      // a trigger's accepted deliveries
)

// Limits are an organization's limits, requests per minute.
type Limits struct {
	// KeyPerMinute is what each API key of the organization may send.
	KeyPerMinute int64 `json:"keyPerMinute"`
	// OrganizationPerMinute is what all API keys of the organization may
	// send together. 0 (limits stored before it existed, or set without
	// it) means its default: the larger of Defaults.OrganizationPerMinute
	// and KeyPerMinute, so that no key is cut below the limit the operator
	// gave it.
	OrganizationPerMinute int64 `json:"organizationPerMinute"`
	// WebhookPerMinute is what each webhook trigger of the organization
	// accepts (deliveries that pass the signature check).
	WebhookPerMinute int64 `json:"webhookPerMinute"`
}

// Defaults apply to an organization without limits of its own: far above
// what one client of a research platform sends, low enough that a runaway
// script or sender is stopped within a minute. The organization's limit is
// two keys' worth: one key may use its whole limit, and 25 keys do not
// get 25 times it.
var Defaults = Limits{KeyPerMinute: 60_000, OrganizationPerMinute: 120_000, WebhookPerMinute: 6_000}

// MaxLimit bounds a configured limit.
const MaxLimit = 10_000_000

// Validate checks limits set by the operator (an OrganizationPerMinute of
// 0 is the default, see Limits).
func (l Limits) Validate() error {
	if l.KeyPerMinute < 1 || l.KeyPerMinute > MaxLimit {
		return apperr.Invalid("keyPerMinute", "must be from 1 to %d", MaxLimit)
	}
	if l.OrganizationPerMinute < 0 || l.OrganizationPerMinute > MaxLimit {
		return apperr.Invalid("organizationPerMinute", "must be from 1 to %d", MaxLimit)
	}
	if l.WebhookPerMinute < 1 || l.WebhookPerMinute > MaxLimit {
		return apperr.Invalid("webhookPerMinute", "must be from 1 to %d", MaxLimit)
	}
	return nil
}

// complete gives what l leaves unset (0) its default: limits stored before
// a field existed stay readable.
func (l Limits) complete() Limits {
	if l.KeyPerMinute == 0 {
		l.KeyPerMinute = Defaults.KeyPerMinute
	}
	if l.WebhookPerMinute == 0 {
		l.WebhookPerMinute = Defaults.WebhookPerMinute
	}
	if l.OrganizationPerMinute == 0 {
		l.OrganizationPerMinute = max(Defaults.OrganizationPerMinute, l.KeyPerMinute)
	}
	return l
}

// of is the limit of scope.
func (l Limits) of(scope string) int64 {
	switch scope {
	case ScopeKey:
		return l.KeyPerMinute
	case ScopeOrganization:
		return l.OrganizationPerMinute
	default:
		return l.WebhookPerMinute
	}
}

// Lease sizes: a reservation takes baseLease requests, or twice the last
// lease when that lasted less than a second, up to maxLease: an instance
// holds about a second of its own traffic, so a busy one writes a few
// times a second rather than for every 50 requests, and an idle one (a
// Lambda instance among many) no more than it used to. Near the limit, a
// lease is one eighth of what the window has left.
const (
	baseLease = 50
	maxLease  = 1600
)

// Decision is what a limit says about one request.
type Decision struct {
	Allowed bool
	// Scope is the limit decided by (ScopeKey, ScopeOrganization,
	// ScopeWebhook): the one that refused, or of two that allowed, the
	// tighter (fewer requests remaining).
	Scope     string
	Limit     int64         // requests per window
	Remaining int64         // requests left in the window (an estimate across instances)
	Reset     time.Duration // until the window ends
}

// tighter is the decision of two allowing ones with fewer requests left.
func tighter(a, b Decision) Decision {
	if b.Remaining < a.Remaining || b.Remaining == a.Remaining && b.Limit < a.Limit {
		return b
	}
	return a
}

// Limiter counts requests against limits.
type Limiter struct {
	st  *store.Store
	now func() time.Time

	mu      sync.Mutex
	slots   map[string]*slot
	limits  map[string]cachedLimits
	pruneAt int // the number of slots at which the next new one prunes
	// minPrune is the fewest slots the limiter keeps before it prunes
	// those of past windows (and limits read more than limitsTTL ago), so
	// that an instance serving many keys over a long life keeps memory for
	// the current window's only (defaultMinPrune).
	minPrune int
}

const defaultMinPrune = 10_000

type slot struct {
	mu      sync.Mutex
	window  int64     // the window's start, Unix seconds
	limit   int64     // the limit the window was last counted against
	leased  int64     // requests this instance reserved in the window
	used    int64     // of those, served
	seen    int64     // the window's counter after this instance's last reservation
	full    bool      // the window's limit is reached
	lease   int64     // the size of the last lease reserved
	leaseAt time.Time // when it was asked for
	refill  *refill
	key     store.Key // the window's counter item, made once per window
}

type cachedLimits struct {
	limits  Limits
	read    time.Time // when they were read from the table
	reading bool      // a refused request is reading them again
}

// New returns a limiter over st.
func New(st *store.Store) *Limiter {
	return &Limiter{st: st, now: time.Now, slots: map[string]*slot{}, limits: map[string]cachedLimits{}, minPrune: defaultMinPrune}
}

// SetClock makes the limiter read time from now (tests).
func (l *Limiter) SetClock(now func() time.Time) { l.now = now }

// Take counts one request of id in scope against limit.
func (l *Limiter) Take(ctx context.Context, scope, id string, limit int64) (Decision, error) {
	return l.count(ctx, scope, id, limit, l.now())
}

// count is Take at now. A limit other than the one the window was counted
// against applies at once: a higher one lets a slot refused at the lower
// one reserve again; for a lower one this instance gives back to the
// counter what it leased and did not serve, so that the window counts
// what was served here, and its next request reserves against the lower
// limit.
func (l *Limiter) count(ctx context.Context, scope, id string, limit int64, now time.Time) (Decision, error) {
	window := now.Truncate(Window)
	d := Decision{Scope: scope, Limit: limit, Reset: window.Add(Window).Sub(now)}
	s := l.slot(scope+"#"+id, now)
	s.mu.Lock()
	if w := window.Unix(); s.window != w {
		// A reservation still in flight for the past window lands in it.
		s.window, s.limit, s.leased, s.used, s.seen, s.full, s.lease, s.refill = w, limit, 0, 0, 0, false, 0, nil
		s.key = store.RateCounterKey(scope, id, w)
	}
	k, expires := s.key, window.Add(Window+time.Hour)
	switch {
	case limit > s.limit:
		s.full = false
	case limit < s.limit && s.leased > s.used:
		// A negative add always passes its condition (room = MaxLimit +
		// what is given back, and no counter exceeds MaxLimit).
		if count, _, err := l.st.Reserve(ctx, k, s.used-s.leased, MaxLimit, expires); err != nil {
			slog.WarnContext(ctx, "rate limit lease not given back", "scope", scope, "err", err)
		} else {
			s.seen = count
		}
		s.leased = s.used
	}
	s.limit = limit
	for {
		if s.used < s.leased {
			s.used++
			d.Allowed = true
			d.Remaining = max(limit-s.seen+(s.leased-s.used), 0)
			if s.refill == nil && !s.full && s.leased-s.used <= s.lease/2 && (limit-s.seen)/8 >= baseLease {
				// Far from the limit: the next lease, while this one lasts.
				// Near it, leases are small and reserved only when needed,
				// so that no instance holds requests another could serve.
				l.reserve(ctx, s, k, limit, expires, now)
			}
			s.mu.Unlock()
			return d, nil
		}
		if s.full {
			s.mu.Unlock()
			return d, nil
		}
		r := s.refill
		if r == nil {
			r = l.reserve(ctx, s, k, limit, expires, now)
		}
		s.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return d, ctx.Err()
		}
		if r.err != nil {
			return d, r.err
		}
		s.mu.Lock()
	}
}

// refill is a reservation in flight; err is set before done is closed.
type refill struct {
	done chan struct{}
	err  error
}

// reserve starts reserving the slot's next lease (s.mu is held): up to
// what the last lease's life asks for (see baseLease), one eighth of what
// the window has left, or when that does not fit, one. The call is made
// without the slot's lock, so the requests of a key never queue behind a
// write to the table: far from the limit, the next lease is reserved while
// half of the current one is left, and a request waits only when none is.
func (l *Limiter) reserve(ctx context.Context, s *slot, k store.Key, limit int64, expires, now time.Time) *refill {
	r := &refill{done: make(chan struct{})}
	s.refill = r
	size := int64(baseLease)
	if s.lease > 0 && now.Sub(s.leaseAt) < time.Second {
		size = min(2*s.lease, maxLease)
	}
	s.leaseAt = now
	window, lease := s.window, min(max((limit-s.seen)/8, 1), size)
	ctx = context.WithoutCancel(ctx) // outlives the request that started it; the store call has its deadline
	go func() {
		defer close(r.done)
		count, ok, err := l.st.Reserve(ctx, k, lease, limit, expires)
		if err == nil && !ok && lease > 1 {
			lease = 1
			count, ok, err = l.st.Reserve(ctx, k, lease, limit, expires)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		r.err = err
		if s.refill == r {
			s.refill = nil
		}
		if err != nil || s.window != window {
			return
		}
		s.seen = count
		if ok {
			s.leased += lease
			s.lease = lease
		} else {
			s.full = true
		}
	}()
	return r
}

// giveBack undoes a request count counted at now in the same window: the
// request it allowed was refused by another limit.
func (l *Limiter) giveBack(scope, id string, now time.Time) {
	s := l.slot(scope+"#"+id, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window == now.Truncate(Window).Unix() && s.used > 0 {
		s.used--
	}
}

// slot is key's counting slot, made at its first request. Making one when
// the limiter holds pruneAt slots first prunes those of windows before
// now's (a slot in use is left alone), then waits until it holds twice as
// many as are left: the cost is amortized over the slots made.
func (l *Limiter) slot(key string, now time.Time) *slot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.slots[key]
	if !ok {
		if len(l.slots) >= max(l.pruneAt, l.minPrune) {
			l.prune(now)
		}
		s = &slot{}
		l.slots[key] = s
	}
	return s
}

// prune drops the slots of past windows and the limits read more than
// limitsTTL ago (read again when next needed); l.mu is held.
func (l *Limiter) prune(now time.Time) {
	window := now.Truncate(Window).Unix()
	for k, s := range l.slots {
		if !s.mu.TryLock() {
			continue
		}
		if s.window < window {
			delete(l.slots, k)
		}
		s.mu.Unlock()
	}
	for org, c := range l.limits {
		if !c.reading && now.Sub(c.read) > limitsTTL {
			delete(l.limits, org)
		}
	}
	l.pruneAt = 2 * len(l.slots)
}

// limitsTTL is how long an instance keeps an organization's limits.
const limitsTTL = time.Minute

// RecheckEvery is how old an organization's limits must be for a refused
// request to read them again: a raised limit reaches keys refused under
// the old one within it, and a flood of refused requests reads the limits
// at most once per RecheckEvery per organization per instance.
const RecheckEvery = time.Second

// LimitsOf returns org's limits: its own, or the Defaults.
func (l *Limiter) LimitsOf(ctx context.Context, org string) (Limits, error) {
	now := l.now()
	l.mu.Lock()
	c, ok := l.limits[org]
	l.mu.Unlock()
	if ok && now.Before(c.read.Add(limitsTTL)) {
		return c.limits, nil
	}
	got, err := l.read(ctx, org)
	if err != nil {
		return Defaults, err
	}
	l.mu.Lock()
	l.limits[org] = cachedLimits{limits: got, read: now}
	l.mu.Unlock()
	return got, nil
}

// read reads org's limits from the table.
func (l *Limiter) read(ctx context.Context, org string) (Limits, error) {
	k := store.RateLimitsKey(org)
	var own Limits
	_, err := l.st.Get(ctx, k.PK, k.SK, &own)
	switch {
	case err == nil:
		return own.complete(), nil
	case errors.Is(err, apperr.ErrNotFound):
		return Defaults, nil
	default:
		return Defaults, err
	}
}

// recheck reads org's limits again for a request refused under had, when
// they were read RecheckEvery ago or more and no other request is reading
// them; it returns the limits and whether they differ from had.
func (l *Limiter) recheck(ctx context.Context, org string, had Limits, now time.Time) (Limits, bool) {
	l.mu.Lock()
	c, ok := l.limits[org]
	if ok && c.limits != had {
		l.mu.Unlock()
		return c.limits, true // read since, by another request
	}
	if ok && (c.reading || now.Sub(c.read) < RecheckEvery) {
		l.mu.Unlock()
		return had, false
	}
	c.limits, c.reading = had, true
	l.limits[org] = c
	l.mu.Unlock()

	got, err := l.read(ctx, org)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		slog.WarnContext(ctx, "rate limits not read again", "err", err)
		c.reading = false
		l.limits[org] = c
		return had, false
	}
	l.limits[org] = cachedLimits{limits: got, read: now}
	return got, got != had
}

// SetLimits stores org's own limits (the operator's `admin set-limits`);
// an OrganizationPerMinute of 0 is stored as its default. This instance
// applies them at once; the others when they next read them: within
// RecheckEvery for a request they refuse, within a minute otherwise.
func (l *Limiter) SetLimits(ctx context.Context, org string, limits Limits) error {
	if err := limits.Validate(); err != nil {
		return err
	}
	limits = limits.complete()
	k := store.RateLimitsKey(org)
	op, err := l.st.PutOp(store.Item{PK: k.PK, SK: k.SK, Type: store.TypeLimits, Doc: limits})
	if err != nil {
		return err
	}
	if err := l.st.Transact(ctx, nil, op); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.limits, org)
	l.mu.Unlock()
	return nil
}

// Key counts a request of an API key of org against both the key's limit
// and the organization's, and decides by the one that refuses, or, when
// both allow, reports the tighter. A failure to count lets the request
// through (logged): a limit must not turn a slow table into an outage of
// its own.
func (l *Limiter) Key(ctx context.Context, org, clientID string) Decision {
	return l.decide(ctx, org, ScopeKey, clientID)
}

// Charge counts n more requests of an API key of org, as Key counts one,
// for work a request did beyond its own (the records a list read and did
// not return: store.Work). It stops at the first one refused: the work is
// done, and the key's next requests are refused until the window ends.
func (l *Limiter) Charge(ctx context.Context, org, clientID string, n int64) Decision {
	var d Decision
	for range n {
		if d = l.decide(ctx, org, ScopeKey, clientID); !d.Allowed {
			break
		}
	}
	return d
}

// Webhook counts an accepted delivery to a trigger of org against the
// trigger's limit (not the organization's: a sender's deliveries do not
// spend the budget of the organization's API clients), as Key does.
func (l *Limiter) Webhook(ctx context.Context, org, slug string) Decision {
	return l.decide(ctx, org, ScopeWebhook, slug)
}

// decide counts a request of id in scope of org; a refused one is counted
// once more when the organization's limits, read again, have changed.
func (l *Limiter) decide(ctx context.Context, org, scope, id string) Decision {
	now := l.now()
	ls, err := l.LimitsOf(ctx, org)
	if err != nil {
		slog.WarnContext(ctx, "rate limit not counted", "scope", scope, "err", err)
		return Decision{Allowed: true, Scope: scope, Limit: ls.of(scope), Remaining: ls.of(scope)}
	}
	d := l.counts(ctx, org, scope, id, ls, now)
	if !d.Allowed {
		if fresh, changed := l.recheck(ctx, org, ls, now); changed {
			d = l.counts(ctx, org, scope, id, fresh, now)
		}
	}
	return d
}

// counts counts a request against its limit and, for an API key, its
// organization's; a request the organization refuses is given back to
// the key.
func (l *Limiter) counts(ctx context.Context, org, scope, id string, ls Limits, now time.Time) Decision {
	d, ok := l.countOpen(ctx, scope, id, ls.of(scope), now)
	if !ok || !d.Allowed || scope != ScopeKey {
		return d
	}
	o, ok := l.countOpen(ctx, ScopeOrganization, org, ls.OrganizationPerMinute, now)
	if !ok {
		return d
	}
	if !o.Allowed {
		l.giveBack(scope, id, now)
		return o
	}
	return tighter(d, o)
}

// countOpen is count letting the request through when the table fails;
// ok is false then.
func (l *Limiter) countOpen(ctx context.Context, scope, id string, limit int64, now time.Time) (Decision, bool) {
	d, err := l.count(ctx, scope, id, limit, now)
	if err != nil {
		slog.WarnContext(ctx, "rate limit not counted", "scope", scope, "err", err)
		return Decision{Allowed: true, Scope: scope, Limit: limit, Remaining: limit, Reset: d.Reset}, false
	}
	return d, true
}

// String is the limits as JSON, as the operator CLI prints them.
func (l Limits) String() string {
	b, _ := json.Marshal(l)
	return string(b)
}
