// Package vectors keeps the embedding vectors of searchable records for
// hybrid search and similar records: it embeds a record's text
// (search.SemanticText) when the text changes, through the configured
// embed.Provider, and, for a provider that costs a call (Bedrock), keeps
// each vector in the table (store.PutVector) so that a record is embedded
// again only when its text changes, not each time an index is rebuilt.
// Both engines use it: the embedded engine as it refreshes an index from
// the change feed, the OpenSearch indexer as it indexes the stream.
package vectors

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Defaults of a Keeper.
const (
	// DefaultBudget bounds the time one Ensure spends embedding: what is
	// left waits for the next (and is pending meanwhile), so a search
	// that finds thousands of new records to embed is not held for
	// minutes. Titan's calls (about 50 ms, 8 at once) embed about 300
	// texts in it; the local model, all.
	DefaultBudget = 2 * time.Second
	// DefaultCooldown is how long a Keeper leaves the provider alone after
	// it failed: the records wait (pending, found by keyword) and hybrid
	// searches rank by keywords, instead of every search paying for a
	// model that is down or throttled.
	DefaultCooldown = 30 * time.Second
	// BatchSize is how many texts one Provider.Embed call gets.
	BatchSize = 64
	// putsInFlight bounds the PutVector calls at once.
	putsInFlight = 8
)

// Keeper embeds records' texts and keeps their vectors.
type Keeper struct {
	Provider embed.Provider
	// Store keeps the vectors when Persist is set.
	Store *store.Store
	// Persist keeps each vector in the table and reads it back instead of
	// embedding a text again: for a provider whose calls cost money and
	// time (Bedrock). The local model embeds faster than a read.
	Persist bool
	// Budget bounds the embedding of one Ensure (DefaultBudget when 0),
	// calls in flight included: a model that stalls holds no search
	// longer.
	Budget time.Duration
	// Cooldown is DefaultCooldown unless set; negative: none (every
	// Ensure asks the provider).
	Cooldown time.Duration

	downUntil atomic.Int64 // unix nanoseconds: the provider failed, leave it alone until then
}

// New is a Keeper of p's vectors (persisted in st when persist).
func New(p embed.Provider, st *store.Store, persist bool) *Keeper {
	return &Keeper{Provider: p, Store: st, Persist: persist}
}

// Model names the provider and its model (embed.Provider's Name).
func (k *Keeper) Model() string { return k.Provider.Name() }

// Hash is the hash of a text as k's model embeds it: a vector made of
// another text or by another model never passes for its embedding.
func (k *Keeper) Hash(text string) string {
	h := sha256.New()
	h.Write([]byte(k.Provider.Name()))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Doc is a record to embed: its id and text (search.SemanticText).
type Doc struct {
	ID   string
	Text string
}

// Vec is a record's vector and the hash of the text it was made of.
type Vec struct {
	Hash   string
	Values []float32
}

// Ensure returns the vectors of docs (by id), and the ids it could not
// embed now (the provider failed, or the budget ran out): those are
// pending, searchable by keyword, and the caller asks again later. A doc
// with no text needs no vector and is in neither. Ensure never fails a
// search: errors are logged (by count and model, never a text).
func (k *Keeper) Ensure(ctx context.Context, org, typ string, docs []Doc) (map[string]Vec, []string) {
	out := make(map[string]Vec, len(docs))
	var need []Doc
	hashes := make(map[string]string, len(docs))
	for _, d := range docs {
		if d.Text == "" {
			continue
		}
		hashes[d.ID] = k.Hash(d.Text)
		need = append(need, d)
	}
	if k.Persist && len(need) > 0 {
		ids := make([]string, len(need))
		for i, d := range need {
			ids[i] = d.ID
		}
		stored, err := k.Store.Vectors(ctx, org, typ, ids)
		if err != nil {
			slog.Warn("vectors: the stored vectors could not be read; embedding the records again", "type", typ, "records", len(ids), "err", err.Error())
		}
		rest := need[:0]
		for _, d := range need {
			if v, ok := stored[d.ID]; ok && v.Hash == hashes[d.ID] && v.Model == k.Model() && len(v.Values) == k.Provider.Dimensions() {
				out[d.ID] = Vec{Hash: v.Hash, Values: v.Values}
				continue
			}
			rest = append(rest, d)
		}
		need = rest
	}
	budget := cmp.Or(k.Budget, DefaultBudget)
	deadline := time.Now().Add(budget)
	ectx, cancel := context.WithDeadline(ctx, deadline) // the calls in flight too
	defer cancel()
	var pending []string
	var fresh []Doc
	for len(need) > 0 {
		n := min(len(need), BatchSize)
		batch := need[:n]
		need = need[n:]
		if ectx.Err() != nil || k.resting() {
			pending = appendIDs(pending, batch)
			continue
		}
		texts := make([]string, n)
		for i, d := range batch {
			texts[i] = d.Text
		}
		vecs, err := k.Provider.Embed(ectx, texts)
		if err != nil {
			if ectx.Err() == nil || len(fresh) == 0 {
				// The provider failed, or stalled from the first call: not
				// a backlog that outlasted the budget.
				k.rest()
			}
			slog.Warn("vectors: embedding failed; the records stay searchable by keyword and are embedded again later", "model", k.Model(), "records", n, "err", err.Error())
			pending = appendIDs(pending, batch)
			continue
		}
		for i, d := range batch {
			out[d.ID] = Vec{Hash: hashes[d.ID], Values: vecs[i]}
		}
		fresh = append(fresh, batch...)
	}
	if k.Persist && len(fresh) > 0 {
		k.put(ctx, org, typ, fresh, out)
	}
	return out, pending
}

// put keeps the new vectors; a vector that cannot be put is still used
// (and embedded again by the next process that needs it).
func (k *Keeper) put(ctx context.Context, org, typ string, docs []Doc, vecs map[string]Vec) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, putsInFlight)
	var mu sync.Mutex
	failed := 0
	for _, d := range docs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			v := vecs[d.ID]
			if err := k.Store.PutVector(ctx, org, typ, d.ID, store.Vector{Model: k.Model(), Hash: v.Hash, Values: v.Values}); err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed > 0 {
		slog.Warn("vectors: some vectors could not be kept; they are embedded again when next needed", "type", typ, "failed", failed)
	}
}

// Query embeds the text of a search: nil when the model knows none of
// its words (a zero vector, as close to every record as to none), so
// that the search ranks by keywords alone.
func (k *Keeper) Query(ctx context.Context, text string) ([]float32, error) {
	if k.resting() {
		return nil, errResting
	}
	budget := cmp.Or(k.Budget, DefaultBudget)
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	vecs, err := k.Provider.Embed(ctx, []string{text})
	if err != nil {
		k.rest()
		return nil, err
	}
	for _, x := range vecs[0] {
		if x != 0 {
			return vecs[0], nil
		}
	}
	return nil, nil
}

// SearchVector is the vector of r's text for a hybrid search: nil, so
// that the search ranks by keywords, when there is no keeper, r is not
// hybrid or has no text, the model knows none of its words, or the
// provider fails (logged).
func (k *Keeper) SearchVector(ctx context.Context, r *search.Request) []float32 {
	if k == nil || !r.Hybrid || r.Text == "" {
		return nil
	}
	v, err := k.Query(ctx, r.Text)
	if err != nil {
		slog.Warn("search: the hybrid search's text could not be embedded; ranking by keywords", "model", k.Model(), "err", err.Error())
		return nil
	}
	return v
}

// errResting: the provider failed a moment ago (Cooldown).
var errResting = errors.New("the embedding provider failed recently; left alone for its cooldown")

// rest leaves the provider alone for the cooldown.
func (k *Keeper) rest() {
	k.downUntil.Store(time.Now().Add(cmp.Or(k.Cooldown, DefaultCooldown)).UnixNano())
}

// resting reports whether the provider failed within the cooldown.
func (k *Keeper) resting() bool { return time.Now().UnixNano() < k.downUntil.Load() }

func appendIDs(ids []string, docs []Doc) []string {
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	return ids
}
