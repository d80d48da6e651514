package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ids"
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
	// Home, when set, is the index that lists the records in id order: its
	// partition key is the collection's partition and its sort key the id.
	// Such records live under keys of their own (API keys, which
	// authentication reads by client id) and their package writes them,
	// with IndexAttrs; the collection lists them.
	Home Index
	// Load, when set, fills fields a list reads from string attributes
	// kept outside the record (such as a key's last use).
	Load func(v *T, attrs map[string]string)
	// Undecodable, when set, returns the record shown in place of a stored
	// item that cannot be decoded (Get and lists); without it lists skip
	// such items. Either way the item is logged once per process by key.
	Undecodable func(u Undecoded) *T
	// Unique fields hold a value at most one record of an organization
	// has (see Unique).
	Unique []Unique[T]
	// Feed keeps a change feed of the records (see feed.go): every write
	// also puts a feed entry in the same transaction.
	Feed bool
	// View, when set, makes a record what clients see (empty collections
	// rather than null, every declared field present): applied to every
	// record read and to every record before it is stored.
	View func(v *T)
	// Shape, when set, names the JSON form of the records (ShapeOf): they
	// are stored as clients see them and stamped with it, so GetJSON and
	// ListJSON answer their stored JSON without decoding it (encoded.go).
	Shape string
}

// Undecoded describes a stored item that cannot be decoded: what its keys
// tell, and what is wrong with it (without quoting it).
type Undecoded struct {
	Org, ID string
	// Lookups holds the item's lookup values by lookup name, as indexed
	// (a value over 512 bytes is its hash).
	Lookups map[string]string
	Problem string
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
	lists listSpec
}

// NewCollection returns the typed access for spec.
func NewCollection[T any](s *Store, spec Spec[T]) *Collection[T] {
	registerSharded(spec.Type)
	return &Collection[T]{store: s, spec: spec, lists: spec.lists()}
}

// NewID returns a new id of prefix for a record of org, in one of the
// shards org's writers use now (Store.NewID).
func (c *Collection[T]) NewID(ctx context.Context, org, prefix string) (string, error) {
	return c.store.NewID(ctx, org, prefix)
}

// ErrUnchanged, returned by an update function, ends the update without a write.
var ErrUnchanged = errors.New("unchanged")

// SortFields lists every field the collection can sort by, "id" first.
func (c *Collection[T]) SortFields() []string { return c.spec.SortFields() }

// SortFields lists every field the records of spec can be sorted by, "id"
// first.
func (spec Spec[T]) SortFields() []string {
	fields := append([]string{"id"}, spec.IDOrder...)
	for _, s := range spec.Sorts {
		fields = append(fields, s.Field)
	}
	return fields
}

// partitionOf is the partition of org's record id, and the index
// partition of its sort orders and Home: that of its shard.
func (c *Collection[T]) partitionOf(org, id string) string {
	return ShardPartition(org, c.spec.Type, ids.Shard(id))
}

// Item builds the stored item for v at the given version.
// The spec's View is applied to v first: a record is stored as clients
// see it.
func (c *Collection[T]) Item(org string, v *T, version int64) Item {
	c.view(v)
	k := RecordKey(org, c.spec.Type, c.spec.ID(v))
	return Item{PK: k.PK, SK: k.SK, Type: c.spec.Type, Doc: v, Version: version, Indexes: c.IndexAttrs(org, v), Shape: c.spec.Shape}
}

// IndexAttrs are the index attributes of v: its Home, sort and lookup keys.
func (c *Collection[T]) IndexAttrs(org string, v *T) map[string]string {
	id := c.spec.ID(v)
	ix := map[string]string{}
	part, shard := c.partitionOf(org, id), ids.Shard(id)
	if c.spec.Home.Name != "" {
		ix[c.spec.Home.PK], ix[c.spec.Home.SK] = part, id
	}
	for _, s := range c.spec.Sorts {
		ix[s.Index.PK] = part
		ix[s.Index.SK] = sortIndexKey(s.Key(v), id)
	}
	for i, l := range c.spec.Lookups {
		if k := l.Key(v); k != "" {
			n := shard
			if l.Global {
				n = globalShard(id)
			}
			ix[l.Index.PK] = lookupPK(org, c.spec.Type, c.lists.lookups[i], k, n)
			ix[l.Index.SK] = id
		}
	}
	return ix
}

// Get reads one record of org; apperr.ErrNotFound when absent. A record
// that cannot be decoded is its placeholder when the spec gives one.
func (c *Collection[T]) Get(ctx context.Context, org, id string) (*T, error) {
	v, _, err := c.get(ctx, org, id)
	return c.orPlaceholder(v, err)
}

// orPlaceholder is what Get answers for a read record: the record, or
// for one that cannot be decoded the spec's placeholder when it has one.
func (c *Collection[T]) orPlaceholder(v *T, err error) (*T, error) {
	var ue *UndecodableError
	if errors.As(err, &ue) && c.spec.Undecodable != nil {
		reportUndecodable(ue)
		p := c.placeholder(ue)
		c.view(p)
		return p, nil
	}
	return v, err
}

// placeholder is the spec's stand-in for an undecodable item.
func (c *Collection[T]) placeholder(ue *UndecodableError) *T {
	str := func(k string) string {
		v, _ := ue.raw[k].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	part, id := ue.PK, ue.SK
	if c.spec.Home.Name != "" {
		part, id = str(c.spec.Home.PK), str(c.spec.Home.SK)
	}
	org := orgOfPartition(part)
	u := Undecoded{Org: org, ID: id, Lookups: map[string]string{}, Problem: ue.Problem}
	for i, l := range c.spec.Lookups {
		n := ids.Shard(id)
		if l.Global {
			n = globalShard(id)
		}
		prefix, suffix, _ := strings.Cut(lookupPK(org, c.spec.Type, c.lists.lookups[i], "\x00", n), "\x00")
		if v := str(l.Index.PK); strings.HasPrefix(v, prefix) && strings.HasSuffix(v, suffix) && len(v) >= len(prefix)+len(suffix) {
			u.Lookups[l.Name] = v[len(prefix) : len(v)-len(suffix)]
		}
	}
	return c.spec.Undecodable(u)
}

// Repair replaces a stored record of org that cannot be decoded by its
// placeholder (Spec.Undecodable), unless the item changed since it was
// read (then apperr.ErrConflict); a record that decodes is returned as
// stored. Start-up recovery uses it so that a broken run is durably failed.
func (c *Collection[T]) Repair(ctx context.Context, org, id string) (*T, error) {
	v, _, err := c.get(ctx, org, id)
	var ue *UndecodableError
	if err == nil || !errors.As(err, &ue) || c.spec.Undecodable == nil {
		return v, err
	}
	p := c.placeholder(ue)
	it := c.Item(org, p, ue.Version+1)
	var op Op
	if ue.Version == 0 { // an item written without a version
		op, err = c.store.OverwriteOp(it)
	} else {
		op, err = c.store.ReplaceOp(it)
	}
	if err != nil {
		return nil, err
	}
	ops, err := c.withChange(org, id, p, ue.Version+1, []Op{op})
	if err != nil {
		return nil, err
	}
	if err := c.store.Transact(ctx, apperr.ConcurrentWrite("the record changed while it was repaired"), ops...); err != nil {
		return nil, err
	}
	return p, nil
}

// withChange appends to ops the change feed entry of writing v (nil: a
// delete) at version, when the collection keeps a feed.
func (c *Collection[T]) withChange(org, id string, v *T, version int64, ops []Op) ([]Op, error) {
	if !c.spec.Feed {
		return ops, nil
	}
	op, err := c.store.changeOp(org, c.spec.Type, id, v == nil, version)
	if err != nil {
		return nil, err
	}
	ops = append(ops[:len(ops):len(ops)], op)
	if v == nil { // a searchable record's embedding goes with it (vectors.go)
		ops = append(ops, c.store.deleteVectorOp(org, c.spec.Type, id))
	}
	return ops, nil
}

func (c *Collection[T]) get(ctx context.Context, org, id string) (*T, int64, error) {
	if id == "" || len(id) > MaxIDLength {
		return nil, 0, apperr.ErrNotFound
	}
	v := new(T)
	k := RecordKey(org, c.spec.Type, id)
	version, err := c.store.Get(ctx, k.PK, k.SK, v)
	if err != nil {
		return nil, 0, err
	}
	c.view(v)
	return v, version, nil
}

// Create stores a new record, together with extra operations in one
// transaction when given; apperr.ErrConflict when the id exists or an extra
// operation's condition fails.
func (c *Collection[T]) Create(ctx context.Context, org string, v *T, extra ...Op) error {
	if shard := ids.Shard(c.spec.ID(v)); shard > 0 {
		// An id in a shard org's lists do not read would be a record
		// only its id finds (a client's id, in an import that keeps ids).
		n, err := c.store.ReadShards(ctx, org)
		if err != nil {
			return err
		}
		if shard >= n {
			return apperr.Invalid("id", "%q names shard %d, and the organization's records are in %d shards", c.spec.ID(v), shard, n)
		}
	}
	op, err := c.store.CreateOp(c.Item(org, v, 1))
	if err != nil {
		return err
	}
	if extra, err = c.withChange(org, c.spec.ID(v), v, 1, extra); err != nil {
		return err
	}
	ops, claims, err := c.uniqueOps(ctx, org, c.spec.ID(v), nil, c.uniqueValues(v), append([]Op{op}, extra...))
	if err != nil {
		return err
	}
	for attempt := 1; attempt <= uniqueAttempts; attempt++ {
		if err := pauseBeforeAttempt(ctx, attempt); err != nil {
			return err
		}
		err := c.transact(ctx, org, ops, claims, nil)
		if errors.Is(err, errUniqueMoved) {
			continue
		}
		if err == nil {
			setVersion(v, 1)
		}
		return err
	}
	return errTryAgain
}

// Update applies fn to the current record and writes the result only if
// nobody changed the record meanwhile; on such a race it reads again and
// retries, so fn must be a pure function of the record it gets.
func (c *Collection[T]) Update(ctx context.Context, org, id string, fn func(*T) error) (*T, error) {
	return c.UpdateTx(ctx, org, id, func(v *T) ([]Op, error) { return nil, fn(v) })
}

// UpdateTx is Update with extra operations written in the same transaction.
func (c *Collection[T]) UpdateTx(ctx context.Context, org, id string, fn func(*T) ([]Op, error)) (*T, error) {
	return c.update(ctx, org, id, nil, fn)
}

// UpdateHeld is Update of a record its caller holds as it read or wrote
// it (its Versioned version set): the first attempt applies fn to held
// without reading the record again, and when the record changed since,
// the write fails on its version and Update's reads and retries follow.
// held is fn's to change. It saves a read where a process writes a record
// it has just written or read (a run it moves on).
func (c *Collection[T]) UpdateHeld(ctx context.Context, org string, held *T, fn func(*T) error) (*T, error) {
	return c.update(ctx, org, c.spec.ID(held), held, func(v *T) ([]Op, error) { return nil, fn(v) })
}

func (c *Collection[T]) update(ctx context.Context, org, id string, held *T, fn func(*T) ([]Op, error)) (*T, error) {
	const attempts = 5
	for range attempts {
		v, version := held, int64(0)
		if held != nil {
			version, held = versionOf(held), nil
		}
		if version <= 0 {
			var err error
			if v, version, err = c.get(ctx, org, id); err != nil {
				return nil, err
			}
		}
		if err := checkPrecondition(ctx, id, version); err != nil {
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
		if extra, err = c.withChange(org, id, v, version+1, extra); err != nil {
			return nil, err
		}
		ops, claims, err := c.uniqueOps(ctx, org, id, before, c.uniqueValues(v), append([]Op{op}, extra...))
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
		setVersion(v, version+1)
		return v, nil
	}
	return nil, apperr.ConcurrentWrite("the record was changed by other requests while this update was applied; try again")
}

var errRace = errors.New("version race")

// Delete removes a record of org; apperr.ErrNotFound when absent.
func (c *Collection[T]) Delete(ctx context.Context, org, id string, extra ...Op) error {
	if id == "" || len(id) > MaxIDLength {
		return apperr.ErrNotFound
	}
	extra, err := c.withChange(org, id, nil, 0, extra)
	if err != nil {
		return err
	}
	marker, err := c.store.DeleteMarkerOp(org, c.spec.Type, id)
	if err != nil {
		return err
	}
	extra = append(extra, marker)
	_, conditional := ctx.Value(preconditionKey{}).(Precondition)
	if len(c.spec.Unique) == 0 && !conditional {
		k := RecordKey(org, c.spec.Type, id)
		return c.store.Transact(ctx, apperr.ErrNotFound, append([]Op{c.store.DeleteOp(k.PK, k.SK)}, extra...)...)
	}
	// The record's uniqueness items go with it, and an If-Match names the
	// version to delete: read the record, and delete it only at that version.
	for range 5 {
		v, version, err := c.get(ctx, org, id)
		if err != nil {
			return err
		}
		if err := checkPrecondition(ctx, id, version); err != nil {
			return err
		}
		k := RecordKey(org, c.spec.Type, id)
		ops := append([]Op{c.store.DeleteVersionOp(k.PK, k.SK, version)}, extra...)
		ops, _, err = c.uniqueOps(ctx, org, id, c.uniqueValues(v), nil, ops)
		if err != nil {
			return err
		}
		if err := c.store.Transact(ctx, errRace, ops...); !errors.Is(err, errRace) {
			return err
		}
	}
	return apperr.ConcurrentWrite("the record was changed by other requests while it was deleted; try again")
}

// Query selects a page of records.
type Query struct {
	Limit  int    // items to return, at least 1
	Offset int    // items to skip first
	Before string // only ids less than this (the lt cursor); "" for none
	Sort   string // "" or "id" for id order, else a field of SortFields
	Desc   bool
	// Cursor continues a list after the page that returned it as Next; it
	// is bound to the list's organization, sort, direction, lt and Where.
	Cursor string
	// MaxBytes caps the page's records, counted as WireSize of their JSON
	// plus a margin each; the page ends before the record that would
	// exceed it (a page holds at least one record). 0 for no cap.
	MaxBytes int
	// Where restricts the page to one lookup value, e.g. runs of a workflow.
	Where *Where
	// Match, when set, keeps only the records it accepts, given each
	// item's stored doc (a list's filters, evaluated in memory): a page
	// fills with accepted records, reading at most MaxPageReads, and
	// Offset counts accepted records only. v is what Order compares.
	Match func(doc string) (v any, ok bool)
	// Order, when set, orders the accepted records in memory: every
	// record of the list (up to MaxPageReads) is read, matched and sorted,
	// and the page is cut from that order at Offset or at the cursor.
	// Sort must then be "" (the records are read in id order).
	Order func(a, b any) int
	// Bind names what else selects and orders the list (its filters and
	// sort keys, as the caller spells them canonically): a cursor is only
	// accepted by the list it was issued for.
	Bind string
}

// MaxOrderedBytes bounds the stored size of the records a list ordered in
// memory (Query.Order) holds (what a Lambda function's memory holds
// decoded), as MaxPageReads bounds their number: a list with more is a
// *ReadLimitError.
const MaxOrderedBytes = 64 << 20

// Where names a lookup and its value.
type Where struct{ Lookup, Value string }

// List returns one page of org's records; Next continues it.
func (c *Collection[T]) List(ctx context.Context, org string, q Query) (Page[T], error) {
	pq, err := c.pageQuery(ctx, org, q)
	if err != nil {
		return Page[T]{Items: []T{}}, err
	}
	return c.collect(ctx, pq)
}

// collect runs a page query and decodes its records. An item that cannot
// be decoded is logged once and skipped, or shown as its placeholder.
func (c *Collection[T]) collect(ctx context.Context, pq pageQuery) (Page[T], error) {
	if pq.index.KeysOnly {
		return c.collectKeys(ctx, pq)
	}
	out := Page[T]{Items: []T{}}
	pos, more, err := c.store.page(ctx, pq, func(av map[string]types.AttributeValue) bool {
		v, _, err := c.decoded(av)
		if err == nil {
			out.Items = append(out.Items, *v)
		}
		return err == nil // an undecodable item without a placeholder is skipped
	})
	out.finish(pos, pq.bind, more)
	return out, err
}

// collectKeys runs a page query of a keys-only index and reads the
// records its entries name (strongly consistent batch reads): a record
// deleted since its entry was read is left out of the page.
func (c *Collection[T]) collectKeys(ctx context.Context, pq pageQuery) (Page[T], error) {
	out := Page[T]{Items: []T{}}
	found := map[string]T{}
	keys, pos, more, err := c.store.pageOfKeys(ctx, pq, c.spec.Type, func(av map[string]types.AttributeValue) {
		if v, _, err := c.decoded(av); err == nil { // an undecodable item without a placeholder is skipped
			found[c.spec.ID(v)] = *v
		}
	})
	if err != nil {
		return out, err
	}
	var kept []string
	for i, id := range keys {
		if v, ok := found[id]; ok {
			out.Items = append(out.Items, v)
			kept = append(kept, pos[i])
		}
	}
	if len(kept) == 0 && len(pos) > 0 && more { // every record of the page was deleted: go on after them
		out.finish(pos[len(pos)-1:], pq.bind, more)
		out.pos = nil
		return out, nil
	}
	out.finish(kept, pq.bind, more)
	return out, nil
}

// FindBy returns up to limit records of org whose lookup equals value, newest first.
func (c *Collection[T]) FindBy(ctx context.Context, org, lookup, value string, limit int) ([]T, error) {
	if value == "" {
		return []T{}, nil
	}
	p, err := c.List(ctx, org, Query{Limit: limit, Desc: true, Where: &Where{Lookup: lookup, Value: value}})
	return p.Items, err
}

// FindBySortKey returns up to limit records of org whose sort key for field
// equals key exactly (such as a normalized name), oldest first. Sort keys
// are cut to about 500 bytes, so with longer keys the caller must check the
// records it gets.
func (c *Collection[T]) FindBySortKey(ctx context.Context, org, field, key string, limit int) ([]T, error) {
	for _, s := range c.spec.Sorts {
		if s.Field == field {
			pks, err := c.store.shardPartitions(ctx, org, func(n int) string { return ShardPartition(org, c.spec.Type, n) })
			if err != nil {
				return nil, err
			}
			p, err := c.collect(ctx, pageQuery{index: s.Index, pks: pks, limit: limit, prefix: sortIndexPrefix(key)})
			return p.Items, err
		}
	}
	return nil, fmt.Errorf("store: %s has no sort field %q", c.spec.Type, field)
}

func (c *Collection[T]) pageQuery(ctx context.Context, org string, q Query) (pageQuery, error) {
	return c.lists.pageQuery(ctx, c.store, org, q)
}

// listSpec is what a collection's lists need of its Spec, without its
// type parameter: the code of lists is compiled once, not once per record
// type (kilobytes of every function's bootstrap each).
type listSpec struct {
	typ     string
	home    Index
	idOrder []string
	sorts   []listIndex
	lookups []listIndex
	fields  []string // SortFields
}

// listIndex is a sort (name: its field) or a lookup of a collection.
type listIndex struct {
	name   string
	index  Index
	global bool
}

func (spec Spec[T]) lists() listSpec {
	ls := listSpec{typ: spec.Type, home: spec.Home, idOrder: spec.IDOrder, fields: spec.SortFields()}
	for _, s := range spec.Sorts {
		ls.sorts = append(ls.sorts, listIndex{name: s.Field, index: s.Index})
	}
	for _, l := range spec.Lookups {
		ls.lookups = append(ls.lookups, listIndex{name: l.Name, index: l.Index, global: l.Global})
	}
	return ls
}

// lookupPK is the index partition of the records of shard n with a
// lookup value: org's, or for a global lookup that of global shard n.
func lookupPK(org, typ string, l listIndex, value string, n int) string {
	if l.global {
		return globalLookupPartition(typ, l.name, value, n)
	}
	return lookupPartition(org, typ, n, l.name, value)
}

func (ls *listSpec) pageQuery(ctx context.Context, st *Store, org string, q Query) (pageQuery, error) {
	if len(q.Before) > MaxIDLength {
		return pageQuery{}, apperr.InvalidQuery("lt", "must be an id (at most %d characters)", MaxIDLength)
	}
	named := func(ixs []listIndex, name string) int {
		return slices.IndexFunc(ixs, func(l listIndex) bool { return l.name == name })
	}
	var lookup *listIndex
	if q.Where != nil {
		i := named(ls.lookups, q.Where.Lookup)
		if i < 0 {
			return pageQuery{}, fmt.Errorf("store: %s has no lookup %q", ls.typ, q.Where.Lookup)
		}
		lookup = &ls.lookups[i]
	}
	// Every shard of org's records, or of a global lookup.
	shards := GlobalShards
	if lookup == nil || !lookup.global {
		n, err := st.ReadShards(ctx, org)
		if err != nil {
			return pageQuery{}, err
		}
		shards = n
	}
	pks := make([]string, shards)
	for n := range pks {
		pks[n] = ShardPartition(org, ls.typ, n)
	}
	pq := pageQuery{pks: pks, index: ls.home, limit: q.Limit, offset: q.Offset, desc: q.Desc,
		before: q.Before, idIsSortKey: true, maxBytes: q.MaxBytes, match: q.Match, order: q.Order}
	if q.Order != nil && q.Sort != "" {
		return pq, fmt.Errorf("store: a list ordered in memory is read in id order, not by %q", q.Sort)
	}
	sort := "id"
	if q.Sort != "" && q.Sort != "id" && !slices.Contains(ls.idOrder, q.Sort) {
		sort = q.Sort
	}
	var where []string
	if lookup != nil {
		where = []string{q.Where.Lookup, q.Where.Value}
		pq.index = lookup.index
		for n := range pq.pks {
			pq.pks[n] = lookupPK(org, ls.typ, *lookup, q.Where.Value, n)
		}
		if sort != "id" {
			return pq, fmt.Errorf("store: a lookup partition is in id order, not by %q", q.Sort)
		}
	}
	if sort != "id" {
		i := named(ls.sorts, sort)
		if i < 0 {
			return pq, apperr.InvalidQuery("sort", "%q is not a sortable field; use one of %s", q.Sort, strings.Join(ls.fields, ", "))
		}
		pq.index, pq.idIsSortKey = ls.sorts[i].index, false
	}
	direction := "asc"
	if q.Desc {
		direction = "desc"
	}
	parts := append([]string{ls.typ, org, sort, direction, q.Before}, where...)
	if q.Bind != "" {
		parts = append(parts, "bind", q.Bind)
	}
	pq.bind = binding(parts...)
	if q.Cursor != "" {
		maxPos := MaxIDLength
		if !pq.idIsSortKey {
			maxPos = maxSortValue + len(sortSep) + MaxIDLength
		}
		after, err := decodeCursor(q.Cursor, pq.bind, maxPos)
		if err != nil {
			return pq, err
		}
		pq.after = after
		if q.Order != nil { // the cursor holds how many ordered records came before
			n, err := strconv.Atoi(after)
			if err != nil || n < 0 {
				return pq, apperr.InvalidQuery("cursor", "is not a valid cursor; pass the X-Next-Cursor header (or the Link header's URL) of the previous page unchanged")
			}
			pq.after, pq.offset = "", q.Offset+n
		}
	}
	return pq, nil
}
