// Package keys manages organizations and their API keys: creation by the
// operator, listing and revocation by an organization's admins, and lookup
// by client id for authentication. Only a SHA-256 hash of a key's secret is
// stored; the secret itself is shown once, when the key is created.
package apikeys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Managing is what the admin-only routes of the keys do, as their 403
// names it ("managing API keys requires an admin key"); member keys never
// see the keys' events either (history.Kind.AdminOnly).
const Managing = "managing API keys"

// Roles a key can have.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// DefaultKeyLimit is the number of keys an organization may hold unless
// the operator sets another limit (the plan's cap).
const DefaultKeyLimit = 25

// MaxKeyLimit bounds the limit the operator sets: a list's largest page
// (GET /v1/keys lists every key of an organization in one page).
const MaxKeyLimit = 1000

// Organization is a tenant: every record belongs to exactly one.
type Organization struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	KeyLimit  int64      `json:"keyLimit"`
	CreatedAt clock.Time `json:"createdAt"`
}

// Key is an API key's metadata as stored. SecretHash never leaves the service.
type Key struct {
	ClientID       string      `json:"clientId"`
	Name           string      `json:"name"`
	KeyLastFour    string      `json:"keyLastFour"`
	Role           string      `json:"role"`
	OrganizationID string      `json:"organizationId"`
	CreatedAt      clock.Time  `json:"createdAt"`
	LastUsedAt     *clock.Time `json:"lastUsedAt"`
	SecretHash     string      `json:"secretHash,omitempty" openapi:"-"` // never answered (Public clears it)
}

// Public returns the metadata a client may see.
func (k Key) Public() Key {
	k.SecretHash = ""
	return k
}

// Created is a new key with its secret: the only time the secret exists
// outside the caller's hands.
type Created struct {
	ClientID       string `json:"clientId"`
	Secret         string `json:"secret"`
	KeyLastFour    string `json:"keyLastFour"`
	Role           string `json:"role"`
	Name           string `json:"name"`
	OrganizationID string `json:"organizationId"`
}

const (
	attrKeyCount   = "keyCount"
	attrKeyLimit   = "keyLimit"
	attrLastUsedAt = "lastUsedAt"
)

// listing pages an organization's keys like every list: a key lives under
// its client id (authentication reads it in one GetItem) and is listed in
// id order through GSI1 and by name through GSI2, each partitioned by
// organization. createdAt is the id order (client ids are time-ordered).
// SortFields are the fields a list of keys can be sorted by.
func SortFields() []string { return listing.SortFields() }

var listing = store.Spec[Key]{
	Type:    store.TypeAPIKey,
	ID:      func(k *Key) string { return k.ClientID },
	IDOrder: []string{"createdAt"},
	Home:    store.GSI1,
	Sorts:   []store.Sort[Key]{{Field: "name", Index: store.GSI2, Key: func(k *Key) string { return strings.ToLower(k.Name) }}},
	Load:    func(k *Key, attrs map[string]string) { k.LastUsedAt = parseTime(attrs[attrLastUsedAt]) },
}

// Service stores organizations and keys in the table.
type Service struct {
	st   *store.Store
	keys *store.Collection[Key]
	now  func() clock.Time
}

// New returns the service over st.
func New(st *store.Store) *Service {
	return &Service{st: st, keys: store.NewCollection(st, listing),
		now: clock.Now}
}

// CreateOrg creates an organization; keyLimit <= 0 means DefaultKeyLimit.
func (s *Service) CreateOrg(ctx context.Context, name string, keyLimit int64) (Organization, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return Organization{}, apperr.Invalid("name", "must be 1 to 200 characters")
	}
	if keyLimit <= 0 {
		keyLimit = DefaultKeyLimit
	}
	if keyLimit > MaxKeyLimit {
		return Organization{}, apperr.Invalid("keyLimit", "must be at most %d", MaxKeyLimit)
	}
	o := Organization{ID: ids.New("org"), Name: name, KeyLimit: keyLimit, CreatedAt: s.now()}
	ok := store.OrgKey(o.ID)
	err := s.st.Create(ctx, store.Item{PK: ok.PK, SK: ok.SK, Type: store.TypeOrg, Doc: o,
		Numbers: map[string]int64{attrKeyCount: 0, attrKeyLimit: keyLimit}})
	return o, err
}

// attrEventRetentionDays is the organization's retention of its change
// history, in days, set by its operator (unset: the events package's
// default, 90 days).
const attrEventRetentionDays = "eventRetentionDays"

// MaxEventRetentionDays bounds an organization's retention of its events.
const MaxEventRetentionDays = 3650

// attrEventBridge is "true" when the organization's events are also
// published to the deployment's EventBridge bus (its operator's setting).
const attrEventBridge = "eventBridge"

// settings are the string attributes of org's item (its operator's
// settings); none for an unknown organization.
func (s *Service) settings(ctx context.Context, org string) (map[string]string, error) {
	var o Organization
	ok := store.OrgKey(org)
	it, err := s.st.GetItem(ctx, ok.PK, ok.SK, &o)
	if errors.Is(err, apperr.ErrNotFound) {
		return map[string]string{}, nil
	}
	return it.Strings, err
}

// EventRetention is how long org's events are kept: 0 when its operator
// set none (the default applies).
func (s *Service) EventRetention(ctx context.Context, org string) (time.Duration, error) {
	attrs, err := s.settings(ctx, org)
	if err != nil {
		return 0, err
	}
	days, _ := strconv.Atoi(attrs[attrEventRetentionDays])
	return time.Duration(days) * 24 * time.Hour, nil
}

// EventBridge reports whether org's events are also published to the
// deployment's EventBridge bus.
func (s *Service) EventBridge(ctx context.Context, org string) (bool, error) {
	attrs, err := s.settings(ctx, org)
	return attrs[attrEventBridge] == "true", err
}

// SetEventBridge has org's events published to the deployment's
// EventBridge bus, or no longer.
func (s *Service) SetEventBridge(ctx context.Context, org string, on bool) error {
	ok := store.OrgKey(org)
	return s.st.SetStrings(ctx, ok.PK, ok.SK, map[string]string{attrEventBridge: strconv.FormatBool(on)})
}

// SetEventRetention sets how many days org's events are kept (events
// already kept keep the expiry they were written with).
func (s *Service) SetEventRetention(ctx context.Context, org string, days int) error {
	if days < 1 || days > MaxEventRetentionDays {
		return apperr.Invalid("eventRetentionDays", "must be from 1 to %d", MaxEventRetentionDays)
	}
	ok := store.OrgKey(org)
	return s.st.SetStrings(ctx, ok.PK, ok.SK, map[string]string{attrEventRetentionDays: strconv.Itoa(days)})
}

// GetOrg reads an organization.
func (s *Service) GetOrg(ctx context.Context, id string) (Organization, error) {
	var o Organization
	ok := store.OrgKey(id)
	it, err := s.st.GetItem(ctx, ok.PK, ok.SK, &o)
	if err == nil && it.Strings[attrDeletedAt] != "" {
		return Organization{}, apperr.ErrNotFound // deleted: its tombstone
	}
	return o, err
}

// CreateKey makes a key for org. The organization's key count and the key
// are written in one transaction, so the plan's cap holds under concurrency.
func (s *Service) CreateKey(ctx context.Context, org, name, role string) (Created, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return Created{}, apperr.Invalid("name", "must be 1 to 200 characters")
	}
	if role == "" {
		role = RoleMember
	}
	if role != RoleAdmin && role != RoleMember {
		return Created{}, apperr.Invalid("role", "must be admin or member")
	}
	o, err := s.GetOrg(ctx, org)
	if errors.Is(err, apperr.ErrNotFound) {
		return Created{}, apperr.Invalid("org", "names no existing organization (%s)", org)
	}
	if err != nil {
		return Created{}, err
	}
	secret := newSecret()
	k := Key{
		ClientID:       ids.New("ck"),
		Name:           name,
		KeyLastFour:    secret[len(secret)-4:],
		Role:           role,
		OrganizationID: o.ID,
		CreatedAt:      s.now(),
		SecretHash:     HashSecret(secret),
	}
	kk, ok := store.APIKeyKey(k.ClientID), store.OrgKey(org)
	put, err := s.st.CreateOp(store.Item{PK: kk.PK, SK: kk.SK, Type: store.TypeAPIKey, Doc: k,
		Indexes: s.keys.IndexAttrs(org, &k)})
	if err != nil {
		return Created{}, err
	}
	count := s.st.CounterOp(ok.PK, ok.SK, attrKeyCount, 1, attrKeyLimit)
	if err := s.st.Transact(ctx, apperr.Conflict("organization %s has reached its limit of %d API keys; revoke unused keys first", org, o.KeyLimit), put, count); err != nil {
		return Created{}, err
	}
	return Created{ClientID: k.ClientID, Secret: secret, KeyLastFour: k.KeyLastFour, Role: k.Role, Name: k.Name, OrganizationID: k.OrganizationID}, nil
}

// Lookup reads a key by client id, with its secret hash and last use.
// An id no key can have (empty, or longer than any id) is not found.
func (s *Service) Lookup(ctx context.Context, clientID string) (Key, error) {
	if clientID == "" || len(clientID) > store.MaxIDLength {
		return Key{}, apperr.ErrNotFound
	}
	var k Key
	kk := store.APIKeyKey(clientID)
	it, err := s.st.GetItem(ctx, kk.PK, kk.SK, &k)
	if err != nil {
		return Key{}, err
	}
	k.LastUsedAt = parseTime(it.Strings[attrLastUsedAt])
	if it.Strings[store.GSI2.PK] == "" {
		// A key made before keys were sortable by name: index it now, once.
		if err := s.st.SetStrings(ctx, kk.PK, kk.SK, s.keys.IndexAttrs(k.OrganizationID, &k)); err != nil && !errors.Is(err, apperr.ErrNotFound) {
			slog.WarnContext(ctx, "index API key by name", "clientId", clientID, "err", err)
		}
	}
	return k, nil
}

// Touch records that a key was used at t. Keys are verified from the table
// at most once per cache window, so lastUsedAt is exact to that window.
func (s *Service) Touch(ctx context.Context, clientID string, t time.Time) error {
	kk := store.APIKeyKey(clientID)
	return s.st.SetStrings(ctx, kk.PK, kk.SK, map[string]string{attrLastUsedAt: t.UTC().Format(time.RFC3339Nano)})
}

// Page returns a page of org's keys without secret hashes; q sorts by id
// (createdAt) or name.
func (s *Service) Page(ctx context.Context, org string, q store.Query) (store.Page[Key], error) {
	p, err := s.keys.List(ctx, org, q)
	return store.MapPage(p, (*Key).Public), err
}

// List returns every key of org, oldest first, without secret hashes.
func (s *Service) List(ctx context.Context, org string) ([]Key, error) {
	out := []Key{}
	q := store.Query{Limit: 1000}
	for {
		p, err := s.Page(ctx, org, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if p.Next == "" {
			return out, nil
		}
		q.Cursor = p.Next
	}
}

// Revoke deletes a key. With org set (an organization's admin), only a key
// of that organization can be revoked (another organization's key is not
// found), and not the organization's last admin key (a conflict, 409);
// with org empty (the operator) any key can.
//
// The last admin key is kept by a condition of the revoking transaction,
// not by a count read before it: an admin key is deleted together with a
// condition check that another admin key of the organization exists when
// the transaction commits. DynamoDB serializes transactions over the same
// items, so two admins revoking each other at once cannot both succeed:
// whichever commits second finds the other key gone. The other admin keys
// are found by listing the organization's keys (an index, eventually
// consistent): a key the listing still shows after its revocation fails the
// check and the next one is tried; an admin key made an instant earlier may
// not be listed yet, which refuses the revocation (409) until it is.
func (s *Service) Revoke(ctx context.Context, org, clientID string) error {
	k, err := s.Lookup(ctx, clientID)
	if err != nil {
		return err
	}
	if org != "" && k.OrganizationID != org {
		return apperr.ErrNotFound
	}
	kk, ok := store.APIKeyKey(clientID), store.OrgKey(k.OrganizationID)
	del, count := s.st.DeleteOp(kk.PK, kk.SK), s.st.CounterOp(ok.PK, ok.SK, attrKeyCount, -1, "")
	marker, err := s.st.DeleteMarkerOp(k.OrganizationID, store.TypeAPIKey, clientID) // who revoked it, for its event
	if err != nil {
		return err
	}
	if org == "" || k.Role != RoleAdmin {
		return s.st.Transact(ctx, apperr.ErrNotFound, del, count, marker)
	}
	for attempt := 1; ; attempt++ {
		others, err := s.otherAdmins(ctx, org, clientID)
		if err != nil {
			return err
		}
		conflicted := false
		for _, other := range others {
			ak := store.APIKeyKey(other)
			err := s.st.Transact(ctx, errConditionFailed, del, count, marker, s.st.ExistsOp(ak.PK, ak.SK))
			switch {
			case err == nil:
				return nil
			case errors.Is(err, errConditionFailed):
				// The key itself is gone (revoked meanwhile: not found), or
				// the other admin key is: try the next one.
				if _, err := s.Lookup(ctx, clientID); err != nil {
					return err
				}
			case errors.Is(err, apperr.ErrConflict):
				conflicted = true // a concurrent transaction on these keys
			default:
				return err
			}
		}
		if !conflicted || attempt == revokeAttempts {
			if conflicted {
				return apperr.ConcurrentWrite("the organization's keys are being changed by another request; try again")
			}
			return lastAdmin(clientID)
		}
		if err := pause(ctx, attempt); err != nil {
			return err
		}
	}
}

// lastAdmin refuses to revoke the organization's last admin key (409).
func lastAdmin(clientID string) error {
	return apperr.Conflict("%s is the organization's last admin key: revoking it would leave no key that can manage keys; "+
		"have the operator create another admin key first, then revoke this one", clientID)
}

// errConditionFailed marks a revoking transaction whose condition failed.
var errConditionFailed = errors.New("condition failed")

// revokeAttempts bounds the rounds of a revocation that met concurrent
// transactions on the same keys.
const revokeAttempts = 4

// pause waits a short random time before another round: up to 50 ms·2^n.
func pause(ctx context.Context, attempt int) error {
	t := time.NewTimer(time.Duration(mrand.Int64N(int64(50*time.Millisecond) << attempt)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// otherAdmins are the client ids of org's admin keys other than clientID,
// as the listing shows them.
func (s *Service) otherAdmins(ctx context.Context, org, clientID string) ([]string, error) {
	all, err := s.List(ctx, org)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range all {
		if k.Role == RoleAdmin && k.ClientID != clientID {
			out = append(out, k.ClientID)
		}
	}
	return out, nil
}

// HashSecret is the stored form of a secret.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// newSecret returns 256 bits from crypto/rand, URL-safe.
func newSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return "sk_" + base64.RawURLEncoding.EncodeToString(b)
}

func parseTime(s string) *clock.Time {
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil
	}
	return clock.Of(t).Ptr()
}

// An organization's status, set by its operator (package admin) on its
// item: suspended (every key and webhook trigger refused, deliveries
// paused, data kept) and being deleted (suspended, and what its deletion
// leaves in the table's stream makes no events). A deleted organization's
// item is a tombstone: the time of its deletion, expiring after
// TombstoneTTL, so that the stream's late records make no events either.
const (
	attrSuspendedAt = "suspendedAt"
	attrDeletingAt  = "deletingAt"
	attrDeletedAt   = "deletedAt"
)

// TombstoneTTL is how long a deleted organization's tombstone is kept:
// beyond the 24 hours a DynamoDB stream keeps its records.
const TombstoneTTL = 48 * time.Hour

// Status is an organization's status.
type Status struct {
	// Exists is false for an id of no organization (or a deleted one).
	Exists bool `json:"exists"`
	// Suspended: its keys and triggers are refused, its deliveries wait.
	Suspended bool `json:"suspended"`
	// Deleting: its deletion began (it is suspended too) or ended.
	Deleting bool `json:"deleting"`
	// SuspendedAt is when it was suspended ("" when it is not).
	SuspendedAt string `json:"suspendedAt,omitempty"`
	// DeletingAt is when its deletion began ("" when it did not).
	DeletingAt string `json:"deletingAt,omitempty"`
}

// Status reads org's status from its item (one strongly consistent
// GetItem).
func (s *Service) Status(ctx context.Context, org string) (Status, error) {
	if org == "" {
		return Status{}, nil
	}
	var o Organization
	ok := store.OrgKey(org)
	it, err := s.st.GetItem(ctx, ok.PK, ok.SK, &o)
	if errors.Is(err, apperr.ErrNotFound) {
		return Status{}, nil
	}
	if err != nil {
		return Status{}, err
	}
	if it.Strings[attrDeletedAt] != "" {
		return Status{Suspended: true, Deleting: true, SuspendedAt: it.Strings[attrSuspendedAt], DeletingAt: it.Strings[attrDeletedAt]}, nil
	}
	deleting := it.Strings[attrDeletingAt] != ""
	return Status{Exists: true, Suspended: it.Strings[attrSuspendedAt] != "" || deleting, Deleting: deleting,
		SuspendedAt: it.Strings[attrSuspendedAt], DeletingAt: it.Strings[attrDeletingAt]}, nil
}

// Suspend suspends org (again: its suspension keeps its first time).
func (s *Service) Suspend(ctx context.Context, org string) error {
	st, err := s.Status(ctx, org)
	if err != nil || st.SuspendedAt != "" {
		return err
	}
	ok := store.OrgKey(org)
	return s.st.SetStrings(ctx, ok.PK, ok.SK, map[string]string{attrSuspendedAt: s.now().Format(time.RFC3339Nano)})
}

// Resume ends org's suspension; an organization being deleted stays
// suspended (a conflict).
func (s *Service) Resume(ctx context.Context, org string) error {
	st, err := s.Status(ctx, org)
	if err != nil {
		return err
	}
	if st.Deleting {
		return apperr.Conflict("organization %s is being deleted: finish its deletion (delete-org) rather than resume it", org)
	}
	ok := store.OrgKey(org)
	return s.st.SetStrings(ctx, ok.PK, ok.SK, map[string]string{attrSuspendedAt: ""})
}

// MarkDeleting suspends org and marks its deletion begun.
func (s *Service) MarkDeleting(ctx context.Context, org string) error {
	now := s.now().Format(time.RFC3339Nano)
	attrs := map[string]string{attrDeletingAt: now}
	st, err := s.Status(ctx, org)
	if err != nil || st.DeletingAt != "" {
		return err
	}
	if st.SuspendedAt == "" {
		attrs[attrSuspendedAt] = now
	}
	ok := store.OrgKey(org)
	return s.st.SetStrings(ctx, ok.PK, ok.SK, attrs)
}

// Tombstone replaces org's item with its tombstone: its id and the time
// of its deletion, expiring after TombstoneTTL (the last step of its
// deletion).
func (s *Service) Tombstone(ctx context.Context, org string) error {
	ok := store.OrgKey(org)
	now := s.now()
	put, err := s.st.OverwriteOp(store.Item{PK: ok.PK, SK: ok.SK, Type: store.TypeOrg, Doc: Organization{ID: org, CreatedAt: now},
		Strings: map[string]string{attrDeletedAt: now.Format(time.RFC3339Nano)},
		Numbers: map[string]int64{store.AttrExpires: now.Add(TombstoneTTL).Unix()}})
	if err != nil {
		return err
	}
	return s.st.Transact(ctx, nil, put)
}

// IsTombstone reports whether item is a deleted organization's tombstone.
func IsTombstone(item store.Image) bool {
	return store.KeyOf(item) == store.OrgKey(store.OwnerOf(item)) && store.ImageString(item, attrDeletedAt) != ""
}

// StatusCache is org statuses read at most once per TTL by this process:
// for the paths that check every request (webhook triggers, the events
// function, deliveries) without a read each.
type StatusCache struct {
	keys *Service
	ttl  time.Duration
	now  func() time.Time

	mu sync.Mutex
	m  map[string]cachedStatus
}

type cachedStatus struct {
	st      Status
	expires time.Time
}

// maxCachedStatuses bounds a StatusCache: past it, expired entries go.
const maxCachedStatuses = 10_000

// Cached is a StatusCache of s keeping statuses for ttl (0: none kept).
func (s *Service) Cached(ttl time.Duration) *StatusCache {
	return &StatusCache{keys: s, ttl: ttl, now: time.Now, m: map[string]cachedStatus{}}
}

// Status is org's status as read at most the cache's TTL ago.
func (c *StatusCache) Status(ctx context.Context, org string) (Status, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[org]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.st, nil
	}
	st, err := c.keys.Status(ctx, org)
	if err != nil || c.ttl <= 0 {
		return st, err
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedStatuses {
		for k, v := range c.m {
			if !now.Before(v.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCachedStatuses {
			clear(c.m)
		}
	}
	c.m[org] = cachedStatus{st: st, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return st, nil
}

// Suspended reports whether org is suspended (or being deleted).
func (c *StatusCache) Suspended(ctx context.Context, org string) (bool, error) {
	st, err := c.Status(ctx, org)
	return st.Suspended, err
}

// SuspendedError is the refusal of a suspended organization's key or
// trigger.
func SuspendedError(org string) error {
	return apperr.OrganizationSuspended("organization %s is suspended by the service's operator: its API keys and webhook triggers are refused until the operator resumes it", org)
}
