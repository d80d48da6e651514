package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// sortSep separates a sort value from the id in a sort index key. It sorts
// before every other character, so "abc" orders before "abc d".
const sortSep = "\x00"

// DynamoDB limits key attributes (sort keys to 1024 bytes, partition keys to
// 2048). Sort values are cut to maxSortValue bytes, which orders by their
// first ~500 bytes; long lookup values are replaced by their hash, which
// keeps exact-match lookups exact. Ids longer than MaxIDLength cannot exist.
const (
	maxSortValue = 512
	maxLookupLen = 512
	MaxIDLength  = 256
)

// sortValue cuts v to maxSortValue bytes on a character boundary.
func sortValue(v string) string {
	if len(v) <= maxSortValue {
		return v
	}
	cut := maxSortValue
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}

// lookupValue keeps short values readable and hashes long ones.
func lookupValue(v string) string {
	if len(v) <= maxLookupLen {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Spec describes one organization-owned record type: its item type, how to
// read its id, which fields it can be sorted by and which exact-match
// lookups it supports. Each sort field and lookup uses one generic GSI.
type Spec[T any] struct {
	Type string
	ID   func(*T) string
	// IDOrder lists fields whose order is the id order (createdAt: ids are
	// time-ordered), served by the table itself.
	IDOrder []string
	Sorts   []Sort[T]
	Lookups []Lookup[T]
	// Unique fields hold a value at most one record of an organization
	// has (see Unique).
	Unique []Unique[T]
}

// Sort makes a field sortable: Index holds, per organization, the items
// keyed by Key(v) and then id.
type Sort[T any] struct {
	Field string
	Index Index
	Key   func(*T) string
}

// Lookup indexes items by an exact value (externalId, workflowId, ...);
// items with an empty value stay out of the index. Within one value items
// are ordered by id, so a lookup partition pages like the main one.
type Lookup[T any] struct {
	Name  string
	Index Index
	Key   func(*T) string
	// Global lookups span organizations (such as runs left unfinished,
	// found at start-up); they are never exposed to a client.
	Global bool
}

// Collection is the typed access to one record type of the table.
type Collection[T any] struct {
	store *Store
	spec  Spec[T]
}

// NewCollection returns the typed access for spec.
func NewCollection[T any](s *Store, spec Spec[T]) *Collection[T] {
	return &Collection[T]{store: s, spec: spec}
}

// ErrUnchanged, returned by an update function, ends the update without a write.
var ErrUnchanged = errors.New("unchanged")

// SortFields lists every field the collection can sort by, "id" first.
func (c *Collection[T]) SortFields() []string {
	fields := append([]string{"id"}, c.spec.IDOrder...)
	for _, s := range c.spec.Sorts {
		fields = append(fields, s.Field)
	}
	return fields
}

// Partition is the collection's partition key value for org.
func (c *Collection[T]) Partition(org string) string { return OrgPartition(org, c.spec.Type) }

func (c *Collection[T]) lookupPartition(org, name, value string) string {
	return c.Partition(org) + "#" + name + "=" + value
}

func (c *Collection[T]) lookupPK(org string, l Lookup[T], value string) string {
	value = lookupValue(value)
	if l.Global {
		return "GLOBAL#" + c.spec.Type + "#" + l.Name + "=" + value
	}
	return c.lookupPartition(org, l.Name, value)
}

// Item builds the stored item for v at the given version.
func (c *Collection[T]) Item(org string, v *T, version int64) Item {
	id := c.spec.ID(v)
	ix := map[string]string{}
	for _, s := range c.spec.Sorts {
		ix[s.Index.PK] = c.Partition(org)
		ix[s.Index.SK] = sortValue(s.Key(v)) + sortSep + id
	}
	for _, l := range c.spec.Lookups {
		if k := l.Key(v); k != "" {
			ix[l.Index.PK] = c.lookupPK(org, l, k)
			ix[l.Index.SK] = id
		}
	}
	return Item{PK: c.Partition(org), SK: id, Type: c.spec.Type, Doc: v, Version: version, Indexes: ix}
}

// Get reads one record of org; apperr.ErrNotFound when absent.
func (c *Collection[T]) Get(ctx context.Context, org, id string) (*T, error) {
	v, _, err := c.get(ctx, org, id)
	return v, err
}

func (c *Collection[T]) get(ctx context.Context, org, id string) (*T, int64, error) {
	if id == "" || len(id) > MaxIDLength {
		return nil, 0, apperr.ErrNotFound
	}
	v := new(T)
	version, err := c.store.Get(ctx, c.Partition(org), id, v)
	if err != nil {
		return nil, 0, err
	}
	return v, version, nil
}

// Create stores a new record, together with extra operations in one
// transaction when given; apperr.ErrConflict when the id exists or an extra
// operation's condition fails.
func (c *Collection[T]) Create(ctx context.Context, org string, v *T, extra ...types.TransactWriteItem) error {
	op, err := c.store.CreateOp(c.Item(org, v, 1))
	if err != nil {
		return err
	}
	ops, claims, err := c.uniqueOps(ctx, org, c.spec.ID(v), nil, c.uniqueValues(v), append([]types.TransactWriteItem{op}, extra...))
	if err != nil {
		return err
	}
	for attempt := 1; attempt <= uniqueAttempts; attempt++ {
		if err := pauseBeforeAttempt(ctx, attempt); err != nil {
			return err
		}
		if err := c.transact(ctx, org, ops, claims, nil); !errors.Is(err, errUniqueMoved) {
			return err
		}
	}
	return errTryAgain
}

// Update applies fn to the current record and writes the result only if
// nobody changed the record meanwhile; on such a race it reads again and
// retries, so fn must be a pure function of the record it gets.
func (c *Collection[T]) Update(ctx context.Context, org, id string, fn func(*T) error) (*T, error) {
	return c.UpdateTx(ctx, org, id, func(v *T) ([]types.TransactWriteItem, error) { return nil, fn(v) })
}

// UpdateTx is Update with extra operations written in the same transaction.
func (c *Collection[T]) UpdateTx(ctx context.Context, org, id string, fn func(*T) ([]types.TransactWriteItem, error)) (*T, error) {
	const attempts = 5
	for range attempts {
		v, version, err := c.get(ctx, org, id)
		if err != nil {
			return nil, err
		}
		before := c.uniqueValues(v)
		extra, err := fn(v)
		if errors.Is(err, ErrUnchanged) {
			return v, nil
		}
		if err != nil {
			return nil, err
		}
		op, err := c.store.ReplaceOp(c.Item(org, v, version+1))
		if err != nil {
			return nil, err
		}
		ops, claims, err := c.uniqueOps(ctx, org, id, before, c.uniqueValues(v), append([]types.TransactWriteItem{op}, extra...))
		if err != nil {
			return nil, err
		}
		err = c.transact(ctx, org, ops, claims, errRace)
		if errors.Is(err, errUniqueMoved) {
			err = pauseBeforeAttempt(ctx, 2)
		}
		if errors.Is(err, errRace) || errors.Is(err, errUniqueMoved) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, apperr.Conflict("the record was changed by other requests while this update was applied; try again")
}

var errRace = errors.New("version race")

// Delete removes a record of org; apperr.ErrNotFound when absent.
func (c *Collection[T]) Delete(ctx context.Context, org, id string, extra ...types.TransactWriteItem) error {
	if id == "" || len(id) > MaxIDLength {
		return apperr.ErrNotFound
	}
	if len(c.spec.Unique) == 0 {
		return c.store.Transact(ctx, apperr.ErrNotFound, append([]types.TransactWriteItem{c.store.DeleteOp(c.Partition(org), id)}, extra...)...)
	}
	// The record's uniqueness items go with it: read which it holds, and
	// delete it only at that version.
	for range 5 {
		v, version, err := c.get(ctx, org, id)
		if err != nil {
			return err
		}
		ops := append([]types.TransactWriteItem{c.store.DeleteVersionOp(c.Partition(org), id, version)}, extra...)
		ops, _, err = c.uniqueOps(ctx, org, id, c.uniqueValues(v), nil, ops)
		if err != nil {
			return err
		}
		if err := c.store.Transact(ctx, errRace, ops...); !errors.Is(err, errRace) {
			return err
		}
	}
	return apperr.Conflict("the record was changed by other requests while it was deleted; try again")
}

// Query selects a page of records.
type Query struct {
	Limit  int    // items to return, at least 1
	Offset int    // items to skip first
	Before string // only ids less than this (the lt cursor); "" for none
	Sort   string // "" or "id" for id order, else a field of SortFields
	Desc   bool
	// Where restricts the page to one lookup value, e.g. runs of a workflow.
	Where *Where
}

// Where names a lookup and its value.
type Where struct{ Lookup, Value string }

// List returns one page of org's records.
func (c *Collection[T]) List(ctx context.Context, org string, q Query) ([]T, error) {
	pq, err := c.pageQuery(org, q)
	if err != nil {
		return nil, err
	}
	return c.collect(ctx, pq)
}

// collect runs a page query and decodes its records.
func (c *Collection[T]) collect(ctx context.Context, pq pageQuery) ([]T, error) {
	out := []T{}
	err := c.store.page(ctx, pq, func(it Item) error {
		var v T
		if _, err := decode(it.raw, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// FindBy returns up to limit records of org whose lookup equals value, newest first.
func (c *Collection[T]) FindBy(ctx context.Context, org, lookup, value string, limit int) ([]T, error) {
	if value == "" {
		return []T{}, nil
	}
	return c.List(ctx, org, Query{Limit: limit, Desc: true, Where: &Where{Lookup: lookup, Value: value}})
}

// FindBySortKey returns up to limit records of org whose sort key for field
// equals key exactly (such as a normalized name), oldest first. Sort keys
// are cut to about 500 bytes, so with longer keys the caller must check the
// records it gets.
func (c *Collection[T]) FindBySortKey(ctx context.Context, org, field, key string, limit int) ([]T, error) {
	for _, s := range c.spec.Sorts {
		if s.Field == field {
			return c.collect(ctx, pageQuery{index: s.Index, pk: c.Partition(org), limit: limit, prefix: sortValue(key) + sortSep})
		}
	}
	return nil, fmt.Errorf("store: %s has no sort field %q", c.spec.Type, field)
}

func (c *Collection[T]) pageQuery(org string, q Query) (pageQuery, error) {
	if len(q.Before) > MaxIDLength {
		return pageQuery{}, apperr.InvalidQuery("lt", "must be an id (at most %d characters)", MaxIDLength)
	}
	pq := pageQuery{pk: c.Partition(org), limit: q.Limit, offset: q.Offset, desc: q.Desc, before: q.Before, idIsSortKey: true}
	if q.Where != nil {
		for _, l := range c.spec.Lookups {
			if l.Name == q.Where.Lookup {
				pq.index, pq.pk = l.Index, c.lookupPK(org, l, q.Where.Value)
			}
		}
		if pq.index.Name == "" {
			return pq, fmt.Errorf("store: %s has no lookup %q", c.spec.Type, q.Where.Lookup)
		}
	}
	if q.Sort == "" || q.Sort == "id" {
		return pq, nil
	}
	for _, f := range c.spec.IDOrder {
		if f == q.Sort {
			return pq, nil
		}
	}
	if q.Where != nil {
		return pq, apperr.InvalidQuery("sort", "%q is not available on this list; sort by id", q.Sort)
	}
	for _, s := range c.spec.Sorts {
		if s.Field == q.Sort {
			pq.index, pq.idIsSortKey = s.Index, false
			return pq, nil
		}
	}
	return pq, apperr.InvalidQuery("sort", "%q is not a sortable field; use one of %s", q.Sort, strings.Join(c.SortFields(), ", "))
}
