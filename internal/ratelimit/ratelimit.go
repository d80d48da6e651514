// Package ratelimit limits the requests of each API key and each webhook
// trigger per minute, across every instance of the service (every Lambda
// instance, every dev server on one table).
//
// Windows are fixed minutes. An instance does not write to the table for
// every request: it reserves a lease of requests from the window's counter
// item with one conditional add (store.Reserve), serves that many from
// memory, and reserves again when they are spent. A lease is up to 50
// requests while the window is far from its limit, one eighth of what is
// left as it gets close, and a single request at the end, so the
// instances together never grant more than the limit: a conditional add
// that would pass it fails. What an instance leased and did not use by the
// end of a window is lost, so near the limit a key may be refused a few
// requests early (at most one lease per instance that served it).
//
// An organization's limits are read from the table (store.RateLimitsKey)
// once a minute per instance; without its own, an organization has the
// Defaults.
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
	ScopeKey     = "key"     // an API key's requests to /v1
	ScopeWebhook = "webhook" // a trigger's accepted deliveries
)

// Limits are an organization's limits, requests per minute.
type Limits struct {
	// KeyPerMinute is what each API key of the organization may send.
	KeyPerMinute int64 `json:"keyPerMinute"`
	// WebhookPerMinute is what each webhook trigger of the organization
	// accepts (deliveries that pass the signature check).
	WebhookPerMinute int64 `json:"webhookPerMinute"`
}

// Defaults apply to an organization without limits of its own: far above
// what one client of a research platform sends, low enough that a runaway
// script or sender is stopped within a minute.
var Defaults = Limits{KeyPerMinute: 60_000, WebhookPerMinute: 6_000}

// MaxLimit bounds a configured limit.
const MaxLimit = 10_000_000

// Validate checks limits set by the operator.
func (l Limits) Validate() error {
	if l.KeyPerMinute < 1 || l.KeyPerMinute > MaxLimit {
		return apperr.Invalid("keyPerMinute", "must be from 1 to %d", MaxLimit)
	}
	if l.WebhookPerMinute < 1 || l.WebhookPerMinute > MaxLimit {
		return apperr.Invalid("webhookPerMinute", "must be from 1 to %d", MaxLimit)
	}
	return nil
}

// maxLease is the most requests one reservation takes.
const maxLease = 50

// Decision is what a limit says about one request.
type Decision struct {
	Allowed   bool
	Limit     int64         // requests per window
	Remaining int64         // requests left in the window (an estimate across instances)
	Reset     time.Duration // until the window ends
}

// Limiter counts requests against limits.
type Limiter struct {
	st  *store.Store
	now func() time.Time

	mu     sync.Mutex
	slots  map[string]*slot
	limits map[string]cachedLimits
}

type slot struct {
	mu     sync.Mutex
	window int64 // the window's start, Unix seconds
	leased int64 // requests this instance reserved in the window
	used   int64 // of those, served
	seen   int64 // the window's counter after this instance's last reservation
	full   bool  // the window's limit is reached
}

type cachedLimits struct {
	limits  Limits
	expires time.Time
}

// New returns a limiter over st.
func New(st *store.Store) *Limiter {
	return &Limiter{st: st, now: time.Now, slots: map[string]*slot{}, limits: map[string]cachedLimits{}}
}

// SetClock makes the limiter read time from now (tests).
func (l *Limiter) SetClock(now func() time.Time) { l.now = now }

// Take counts one request of id in scope against limit.
func (l *Limiter) Take(ctx context.Context, scope, id string, limit int64) (Decision, error) {
	now := l.now()
	window := now.Truncate(Window)
	d := Decision{Limit: limit, Reset: window.Add(Window).Sub(now)}
	s := l.slot(scope + "#" + id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := window.Unix(); s.window != w {
		s.window, s.leased, s.used, s.seen, s.full = w, 0, 0, 0, false
	}
	if s.used >= s.leased && !s.full {
		lease := min(max((limit-s.seen)/8, 1), maxLease)
		expires := window.Add(Window + time.Hour)
		count, ok, err := l.st.Reserve(ctx, store.RateCounterKey(scope, id, s.window), lease, limit, expires)
		if err == nil && !ok && lease > 1 {
			lease = 1
			count, ok, err = l.st.Reserve(ctx, store.RateCounterKey(scope, id, s.window), lease, limit, expires)
		}
		if err != nil {
			return d, err
		}
		s.seen = count
		if ok {
			s.leased += lease
		} else {
			s.full = true
		}
	}
	if s.used >= s.leased {
		return d, nil
	}
	s.used++
	d.Allowed = true
	d.Remaining = max(limit-s.seen+(s.leased-s.used), 0)
	return d, nil
}

func (l *Limiter) slot(key string) *slot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.slots[key]
	if !ok {
		s = &slot{}
		l.slots[key] = s
	}
	return s
}

// limitsTTL is how long an instance keeps an organization's limits.
const limitsTTL = time.Minute

// LimitsOf returns org's limits: its own, or the Defaults.
func (l *Limiter) LimitsOf(ctx context.Context, org string) (Limits, error) {
	now := l.now()
	l.mu.Lock()
	c, ok := l.limits[org]
	l.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.limits, nil
	}
	got := Defaults
	k := store.RateLimitsKey(org)
	var own Limits
	_, err := l.st.Get(ctx, k.PK, k.SK, &own)
	switch {
	case err == nil:
		got = own
	case errors.Is(err, apperr.ErrNotFound):
	default:
		return Defaults, err
	}
	l.mu.Lock()
	l.limits[org] = cachedLimits{limits: got, expires: now.Add(limitsTTL)}
	l.mu.Unlock()
	return got, nil
}

// SetLimits stores org's own limits (the operator's `admin set-limits`);
// instances apply them within a minute.
func (l *Limiter) SetLimits(ctx context.Context, org string, limits Limits) error {
	if err := limits.Validate(); err != nil {
		return err
	}
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

// Key counts a request of an API key of org; a failure to count lets the
// request through (logged): a limit must not turn a slow table into an
// outage of its own.
func (l *Limiter) Key(ctx context.Context, org, clientID string) Decision {
	return l.take(ctx, org, ScopeKey, clientID, func(ls Limits) int64 { return ls.KeyPerMinute })
}

// Webhook counts an accepted delivery to a trigger of org, as Key does.
func (l *Limiter) Webhook(ctx context.Context, org, slug string) Decision {
	return l.take(ctx, org, ScopeWebhook, slug, func(ls Limits) int64 { return ls.WebhookPerMinute })
}

func (l *Limiter) take(ctx context.Context, org, scope, id string, of func(Limits) int64) Decision {
	ls, err := l.LimitsOf(ctx, org)
	if err == nil {
		var d Decision
		if d, err = l.Take(ctx, scope, id, of(ls)); err == nil {
			return d
		}
	}
	slog.WarnContext(ctx, "rate limit not counted", "scope", scope, "err", err)
	return Decision{Allowed: true, Limit: of(ls), Remaining: of(ls)}
}

// String is the limits as JSON, as the operator CLI prints them.
func (l Limits) String() string {
	b, _ := json.Marshal(l)
	return string(b)
}
