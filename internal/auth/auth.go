// Package auth verifies API keys. A verified key is cached in memory for a
// bounded window (at most a minute), so a warm request costs no table read
// and a revoked key stops working within that window. A key of a
// suspended organization is refused (403 organization_suspended); its
// organization's status is read with the key and cached as long, so a
// suspension (or its end) takes effect within the same window.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/store"
)

// MaxCacheTTL bounds how long a revoked key can keep working.
const MaxCacheTTL = 60 * time.Second

// touchTimeout bounds the best-effort write of a key's last use.
const touchTimeout = 2 * time.Second

// ErrUnauthenticated: missing, unknown or wrong credentials.
var ErrUnauthenticated = errors.New("invalid api key or clientId")

// Principal is the verified caller.
type Principal struct {
	OrgID    string
	ClientID string
	Role     string
}

// IsAdmin reports whether the caller may manage keys.
func (p Principal) IsAdmin() bool { return p.Role == apikeys.RoleAdmin }

type ctxKey struct{}

// WithPrincipal returns ctx carrying p; the writes made with it are p's
// key's (store.ActorAPIKey), as the change history records them.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	ctx = store.WithActor(ctx, store.Actor{Type: store.ActorAPIKey, ID: p.ClientID})
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the caller; ok is false on unauthenticated paths.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}

// Authenticator verifies client id and secret pairs.
type Authenticator struct {
	keys *apikeys.Service
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]entry
}

type entry struct {
	principal Principal
	hash      [sha256.Size]byte
	expires   time.Time
	// suspended: the key's organization was suspended by an operator
	// when the key was read (apikeys.Status).
	suspended bool
}

// ParseCacheTTL reads API_KEY_CACHE_TTL: a Go duration from 0 (no cache)
// to MaxCacheTTL; empty means MaxCacheTTL.
func ParseCacheTTL(s string) (time.Duration, error) {
	if s == "" {
		return MaxCacheTTL, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("API_KEY_CACHE_TTL: %q is not a Go duration such as 30s", s)
	}
	if d < 0 || d > MaxCacheTTL {
		return 0, fmt.Errorf("API_KEY_CACHE_TTL: %s is outside 0s..%s", d, MaxCacheTTL)
	}
	return d, nil
}

// New returns an Authenticator caching verified keys for ttl.
func New(k *apikeys.Service, ttl time.Duration) *Authenticator {
	return &Authenticator{keys: k, ttl: ttl, now: time.Now, cache: map[string]entry{}}
}

// Authenticate verifies the pair and returns the caller.
func (a *Authenticator) Authenticate(ctx context.Context, clientID, secret string) (Principal, error) {
	if clientID == "" || secret == "" || len(clientID) > 128 || len(secret) > 256 {
		return Principal{}, ErrUnauthenticated
	}
	presented := sha256.Sum256([]byte(secret))
	now := a.now()

	a.mu.Lock()
	e, ok := a.cache[clientID]
	a.mu.Unlock()
	if ok && now.Before(e.expires) {
		if subtle.ConstantTimeCompare(presented[:], e.hash[:]) != 1 {
			return Principal{}, ErrUnauthenticated
		}
		if e.suspended {
			return Principal{}, apikeys.SuspendedError(e.principal.OrgID)
		}
		return e.principal, nil
	}

	k, err := a.keys.Lookup(ctx, clientID)
	if errors.Is(err, apperr.ErrNotFound) {
		a.Forget(clientID)
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		// Never a guess either way: a table that does not answer keeps its
		// kind (apperr.ErrUnavailable, a 503), anything else is a 500.
		return Principal{}, fmt.Errorf("look up API key: %w", err)
	}
	stored, err := hex.DecodeString(k.SecretHash)
	if err != nil || subtle.ConstantTimeCompare(presented[:], stored) != 1 {
		return Principal{}, ErrUnauthenticated
	}
	p := Principal{OrgID: k.OrganizationID, ClientID: k.ClientID, Role: k.Role}
	// A suspended organization's keys are refused (403); its status is
	// read with the key, and cached as long.
	org, err := a.keys.Status(ctx, k.OrganizationID)
	if err != nil {
		return Principal{}, fmt.Errorf("read the API key's organization: %w", err)
	}
	if org.Suspended {
		if a.ttl > 0 {
			e := entry{principal: p, expires: now.Add(a.ttl), suspended: true}
			copy(e.hash[:], stored)
			a.mu.Lock()
			a.cache[clientID] = e
			a.mu.Unlock()
		}
		return Principal{}, apikeys.SuspendedError(k.OrganizationID)
	}
	if a.ttl > 0 {
		e := entry{principal: p, expires: now.Add(a.ttl)}
		copy(e.hash[:], stored)
		a.mu.Lock()
		a.cache[clientID] = e
		a.mu.Unlock()
	}
	// lastUsedAt is refreshed once per cache window, not on every request,
	// and only best effort: a slow table must not hold the request for it.
	touchCtx, cancel := context.WithTimeout(ctx, touchTimeout)
	defer cancel()
	if err := a.keys.Touch(touchCtx, clientID, now); err != nil && !errors.Is(err, apperr.ErrNotFound) {
		slog.WarnContext(ctx, "record API key use", "clientId", clientID, "err", err)
	}
	return p, nil
}

// Forget drops a key from this process's cache (after revoking it here).
func (a *Authenticator) Forget(clientID string) {
	a.mu.Lock()
	delete(a.cache, clientID)
	a.mu.Unlock()
}
