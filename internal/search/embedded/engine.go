package embedded

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

// DefaultMaxDocs is how many records an Embedded engine keeps indexed in
// all: an index takes about 4 KB per record (measured: 40 MB for 10,000
// workspaces), so 60,000 records take about 240 MB, within the search
// function's memory with room for the collector. Beyond it the least
// recently used indexes are dropped (rebuilt when searched again).
const DefaultMaxDocs = 60_000

// Embedded is the search engine kept in this process: a bleve index (BM25)
// per organization and resource, built from the table on first use and
// brought up to date from the change feed before every search, so a search
// sees every write that finished before it began. A warm search that finds
// nothing changed costs one Query.
type Embedded struct {
	st      *store.Store
	maxDocs int
	keeper  *vectors.Keeper // nil: no embedding model, hybrid ranks by keywords

	mu      sync.Mutex
	indexes map[string]*list.Element // org + "\x00" + resource -> *orgIndex in lru
	lru     *list.List               // front: most recently used
}

// New returns an engine over st keeping about maxDocs records indexed
// (DefaultMaxDocs when 0); the index a search uses is always kept. With
// a keeper, it holds the records' vectors too and ranks hybrid searches
// and similar records by meaning.
func New(st *store.Store, maxDocs int, keeper *vectors.Keeper) *Embedded {
	if maxDocs <= 0 {
		maxDocs = DefaultMaxDocs
	}
	return &Embedded{st: st, maxDocs: maxDocs, keeper: keeper, indexes: map[string]*list.Element{}, lru: list.New()}
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
	gone    map[string]time.Time   // deleted ids, until their entries leave the window
	synced  time.Time              // feed entries before synced-FeedWindow are applied
	pending map[string]pendingRead // records read older than their entry (or missing): read again
	size    atomic.Int64           // len(docs), for the engine's budget
	closed  bool                   // dropped by the engine: search a new one

	keeper     *vectors.Keeper        // nil: no vectors
	vecs       map[string]vectors.Vec // the records' vectors, by id
	toEmbed    map[string]string      // records put since the last embed whose text has no vector: their text
	unembedded map[string]string      // records the provider could not embed yet (pending): their text
}

// pendingRead is a record whose feed entry names a version its read did
// not return yet: read again at the next refresh, for at most
// 2*store.FeedWindow from since.
type pendingRead struct {
	version int64
	since   time.Time
}

type entry struct {
	version int64
	raw     json.RawMessage
	stamp   string // the stored doc's shape stamp (store.Stamped)
}

// Name names the engine in a list's X-Query-Plan.
func (e *Embedded) Name() string { return "embedded" }

// Search runs r over org's records of s.
func (e *Embedded) Search(ctx context.Context, org string, s *search.Schema, r *search.Request) (*search.Result, error) {
	qv := e.keeper.SearchVector(ctx, r)
	return e.locked(ctx, org, s, qv != nil, func(x *orgIndex) (*search.Result, error) {
		if qv != nil {
			return x.hybrid(r, qv)
		}
		return x.search(r)
	})
}

// Similar answers the records of org nearest by meaning to record id.
func (e *Embedded) Similar(ctx context.Context, org string, s *search.Schema, id string, r *search.Request) (*search.Result, error) {
	if e.keeper == nil {
		return nil, search.ErrSemanticOff
	}
	return e.locked(ctx, org, s, true, func(x *orgIndex) (*search.Result, error) { return x.similar(id, r) })
}

// locked runs do on org's index of s, brought up to date, under its lock;
// with vectors, the records' vectors are brought up to date too (a
// keyword search does not wait for the model: the records whose text
// changed wait for the next search that ranks by meaning).
func (e *Embedded) locked(ctx context.Context, org string, s *search.Schema, vectors bool, do func(*orgIndex) (*search.Result, error)) (*search.Result, error) {
	var x *orgIndex
	for {
		var err error
		if x, err = e.index(org, s); err != nil {
			return nil, err
		}
		x.mu.Lock()
		if !x.closed {
			break
		}
		x.mu.Unlock() // dropped meanwhile: the next e.index makes a new one
	}
	err := x.refresh(ctx, e.st, org)
	var res *search.Result
	if err == nil {
		if vectors {
			x.embed(ctx, org)
		}
		res, err = do(x)
	}
	x.size.Store(int64(len(x.docs)))
	x.mu.Unlock()
	e.trim(x)
	return res, err
}

// trim drops the least recently used indexes, never keep, while the
// indexes hold more than the engine's budget of records.
func (e *Embedded) trim(keep *orgIndex) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var total int64
	for el := e.lru.Front(); el != nil; el = el.Next() {
		total += el.Value.(*orgIndex).size.Load()
	}
	for el := e.lru.Back(); el != nil && total > int64(e.maxDocs); {
		prev := el.Prev()
		if old := el.Value.(*orgIndex); old != keep {
			total -= old.size.Load()
			e.lru.Remove(el)
			delete(e.indexes, old.key)
			go func() { // after any search still using it
				old.mu.Lock()
				defer old.mu.Unlock()
				old.closed = true
				old.idx.Close()
			}()
		}
		el = prev
	}
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
	x := &orgIndex{key: key, schema: s, mapping: m, idx: idx, keeper: e.keeper}
	e.indexes[key] = e.lru.PushFront(x)
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
	// want: the records to read, by the version their newest entry names.
	want := map[string]pendingRead{}
	for id, p := range x.pending {
		if x.gone[id].IsZero() {
			want[id] = p
		}
	}
	for _, c := range changes {
		switch {
		case c.Deleted:
			if _, ok := x.docs[c.ID]; ok {
				delete(x.docs, c.ID)
				batch.Delete(c.ID)
			}
			x.forget(c.ID)
			delete(want, c.ID)
			x.gone[c.ID] = c.At
		case x.gone[c.ID].IsZero() && c.Version > x.docs[c.ID].version && c.Version > want[c.ID].version:
			since := want[c.ID].since
			if since.IsZero() {
				since = start
			}
			want[c.ID] = pendingRead{version: c.Version, since: since}
		}
	}
	if err := x.read(ctx, st, org, want, batch, start); err != nil {
		return err
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

// read reads the records of want (strongly consistent, store.MaxBatch at a
// time) and indexes each read at its entry's version or a later one. The
// entry of a lone write is written just ahead of its record, and
// DynamoDB does not promise that a non-transactional read sees every item
// of a transaction at the same instant either: a record read older than
// its entry, or missing, is read again at the next refresh (x.pending)
// until 2*store.FeedWindow has passed. By then the record is visible (its
// write shares a deadline with its entry), or its write failed and the
// record as read is the record as stored, or a missing one was deleted
// (its tombstone removes it) or purged with its organization.
func (x *orgIndex) read(ctx context.Context, st *store.Store, org string, want map[string]pendingRead, batch *bleve.Batch, now time.Time) error {
	x.pending = nil
	if len(want) == 0 { // a warm search with nothing new: no read, no sort
		return nil
	}
	ids := slices.Sorted(maps.Keys(want))
	for len(ids) > 0 {
		n := min(len(ids), store.MaxBatch)
		recs, err := st.GetRecords(ctx, org, x.schema.Type, ids[:n])
		if err != nil {
			return err
		}
		found := make(map[string]store.RawRecord, len(recs))
		for _, r := range recs {
			found[r.ID] = r
		}
		for _, id := range ids[:n] {
			r, ok := found[id]
			if ok && r.Version > x.docs[id].version {
				if err := x.put(batch, id, entry{version: r.Version, raw: r.Doc, stamp: r.Stamp}); err != nil {
					return err
				}
			}
			if (!ok || r.Version < want[id].version) && now.Sub(want[id].since) <= 2*store.FeedWindow {
				if x.pending == nil {
					x.pending = map[string]pendingRead{}
				}
				x.pending[id] = want[id]
			}
		}
		ids = ids[n:]
	}
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
	x.idx, x.docs, x.gone, x.pending = idx, make(map[string]entry, len(recs)), map[string]time.Time{}, nil
	// One batch: one segment, which later searches read fastest.
	batch := idx.NewBatch()
	for _, rec := range recs {
		if err := x.put(batch, rec.ID, entry{version: rec.Version, raw: rec.Doc, stamp: rec.Stamp}); err != nil {
			return err
		}
	}
	if err := idx.Batch(batch); err != nil {
		return fmt.Errorf("search: index records: %w", err)
	}
	for id := range x.vecs {
		if _, ok := x.docs[id]; !ok {
			x.forget(id)
		}
	}
	for id := range x.unembedded {
		if _, ok := x.docs[id]; !ok {
			x.forget(id)
		}
	}
	x.synced = since
	return nil
}

// put indexes one record; a record that cannot be decoded stays out of
// search, logged by id.
func (x *orgIndex) put(b *bleve.Batch, id string, e entry) error {
	var rec map[string]any
	dec := json.NewDecoder(bytes.NewReader(e.raw))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil {
		slog.Warn("a stored record cannot be indexed for search", "resource", x.schema.Resource, "id", id, "err", err.Error())
		return nil
	}
	if err := b.Index(id, document(x.schema, rec)); err != nil {
		return fmt.Errorf("search: index %s: %w", id, err)
	}
	x.docs[id] = e
	x.noteText(id, rec)
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
	if r.Before != "" {
		q.AddQuery(beforeQuery(r.Before))
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
	out := &search.Result{Total: int(res.Total), Ranking: search.RankingKeyword,
		Records: make([]json.RawMessage, 0, len(res.Hits)), Stamps: make([]string, 0, len(res.Hits))}
	for _, h := range res.Hits {
		if d, ok := x.docs[h.ID]; ok {
			out.Records = append(out.Records, d.raw)
			out.Stamps = append(out.Stamps, d.stamp)
		}
		if x.waiting(h.ID) && r.Hybrid {
			out.Semantic = search.SemanticPending // a hybrid search the model could not serve
		}
	}
	return out, nil
}

// NewEngine is New with the default number of indexes, as a search.Engine.
func NewEngine(st *store.Store, keeper *vectors.Keeper) search.Engine { return New(st, 0, keeper) }
