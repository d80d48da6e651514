package embedded

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// DefaultMaxIndexes is how many organization-and-resource indexes an
// Embedded engine keeps; the least recently used is dropped beyond it.
const DefaultMaxIndexes = 64

// Embedded is the search engine kept in this process: a bleve index (BM25)
// per organization and resource, built from the table on first use and
// brought up to date from the change feed before every search, so a search
// sees every write that finished before it began. A warm search that finds
// nothing changed costs one Query.
type Embedded struct {
	st         *store.Store
	maxIndexes int

	mu      sync.Mutex
	indexes map[string]*list.Element // org + "\x00" + resource -> *orgIndex in lru
	lru     *list.List               // front: most recently used
}

// New returns an engine over st keeping at most maxIndexes
// indexes (DefaultMaxIndexes when 0).
func New(st *store.Store, maxIndexes int) *Embedded {
	if maxIndexes <= 0 {
		maxIndexes = DefaultMaxIndexes
	}
	return &Embedded{st: st, maxIndexes: maxIndexes, indexes: map[string]*list.Element{}, lru: list.New()}
}

// newIndex is an index kept in memory only, of bleve's scorch type (whose
// scoring has BM25; bleve's NewMemOnly is the older upsidedown type).
func newIndex(m *mapping.IndexMappingImpl) (bleve.Index, error) {
	return bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
}

// orgIndex is one organization's records of one resource.
type orgIndex struct {
	key     string
	mu      sync.Mutex
	schema  *search.Schema
	mapping *mapping.IndexMappingImpl
	idx     bleve.Index
	docs    map[string]entry
	gone    map[string]time.Time // deleted ids, until their entries leave the window
	synced  time.Time            // feed entries before synced-FeedWindow are applied
}

type entry struct {
	version int64
	raw     json.RawMessage
}

// Search runs r over org's records of s.
func (e *Embedded) Search(ctx context.Context, org string, s *search.Schema, r *search.Request) (*search.Result, error) {
	x, err := e.index(org, s)
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.refresh(ctx, e.st, org); err != nil {
		return nil, err
	}
	return x.search(r)
}

// index returns the index of org and s, made empty if new.
func (e *Embedded) index(org string, s *search.Schema) (*orgIndex, error) {
	key := org + "\x00" + s.Resource
	e.mu.Lock()
	defer e.mu.Unlock()
	if el, ok := e.indexes[key]; ok {
		e.lru.MoveToFront(el)
		return el.Value.(*orgIndex), nil
	}
	m, err := newMapping(s)
	if err != nil {
		return nil, err
	}
	idx, err := newIndex(m)
	if err != nil {
		return nil, fmt.Errorf("search: new index: %w", err)
	}
	x := &orgIndex{key: key, schema: s, mapping: m, idx: idx}
	e.indexes[key] = e.lru.PushFront(x)
	for e.lru.Len() > e.maxIndexes {
		old := e.lru.Remove(e.lru.Back()).(*orgIndex)
		delete(e.indexes, old.key)
		go func() { // after any search still using it
			old.mu.Lock()
			defer old.mu.Unlock()
			old.idx.Close()
		}()
	}
	return x, nil
}

// refresh applies the feed since the last refresh, or builds the index
// from the records when it is new or its feed position has expired.
func (x *orgIndex) refresh(ctx context.Context, st *store.Store, org string) error {
	start := time.Now()
	if x.docs == nil || start.Sub(x.synced) > store.FeedRetention-store.FeedWindow {
		if err := x.rebuild(ctx, st, org, start); err != nil {
			return err
		}
	}
	changes, err := st.Changes(ctx, org, x.schema.Type, x.synced.Add(-store.FeedWindow))
	if err != nil {
		return err
	}
	batch := x.idx.NewBatch()
	for _, c := range changes {
		switch {
		case c.Deleted:
			if _, ok := x.docs[c.ID]; ok {
				delete(x.docs, c.ID)
				batch.Delete(c.ID)
			}
			x.gone[c.ID] = c.At
		case x.gone[c.ID].IsZero() && c.Version > x.docs[c.ID].version:
			if err := x.put(batch, c.ID, c.Version, c.Doc); err != nil {
				return err
			}
		}
	}
	if batch.Size() > 0 {
		if err := x.idx.Batch(batch); err != nil {
			return fmt.Errorf("search: index changes: %w", err)
		}
	}
	for id, at := range x.gone {
		if start.Sub(at) > 2*store.FeedWindow {
			delete(x.gone, id)
		}
	}
	x.synced = start
	return nil
}

// rebuild replaces the index by the records as stored at since.
func (x *orgIndex) rebuild(ctx context.Context, st *store.Store, org string, since time.Time) error {
	recs, err := st.Records(ctx, org, x.schema.Type)
	if err != nil {
		return err
	}
	idx, err := newIndex(x.mapping)
	if err != nil {
		return fmt.Errorf("search: new index: %w", err)
	}
	x.idx.Close()
	x.idx, x.docs, x.gone = idx, make(map[string]entry, len(recs)), map[string]time.Time{}
	// One batch: one segment, which later searches read fastest.
	batch := idx.NewBatch()
	for _, rec := range recs {
		if err := x.put(batch, rec.ID, rec.Version, rec.Doc); err != nil {
			return err
		}
	}
	if err := idx.Batch(batch); err != nil {
		return fmt.Errorf("search: index records: %w", err)
	}
	x.synced = since
	return nil
}

// put indexes one record; a record that cannot be decoded stays out of
// search, logged by id.
func (x *orgIndex) put(b *bleve.Batch, id string, version int64, raw json.RawMessage) error {
	var rec map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil {
		slog.Warn("a stored record cannot be indexed for search", "resource", x.schema.Resource, "id", id, "err", err.Error())
		return nil
	}
	if err := b.Index(id, document(x.schema, rec)); err != nil {
		return fmt.Errorf("search: index %s: %w", id, err)
	}
	x.docs[id] = entry{version: version, raw: raw}
	return nil
}

// search runs r on the index as it is.
func (x *orgIndex) search(r *search.Request) (*search.Result, error) {
	q := bleve.NewConjunctionQuery()
	if tq := textQuery(x.schema, x.mapping, r); tq != nil {
		q.AddQuery(tq)
	}
	if r.Filter != nil {
		q.AddQuery(filterQuery(x.schema, r.Filter))
	}
	if len(q.Conjuncts) == 0 {
		q.AddQuery(bleve.NewMatchAllQuery())
	}
	req := bleve.NewSearchRequestOptions(q, r.Limit, r.Offset(), false)
	req.SortByCustom(sortOrder(x.schema, r))
	res, err := x.idx.Search(req)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := &search.Result{Total: int(res.Total), Ranking: search.RankingKeyword, Records: make([]json.RawMessage, 0, len(res.Hits))}
	for _, h := range res.Hits {
		if d, ok := x.docs[h.ID]; ok {
			out.Records = append(out.Records, d.raw)
		}
	}
	return out, nil
}

// NewEngine is New with the default number of indexes, as a search.Engine.
func NewEngine(st *store.Store) search.Engine { return New(st, 0) }
