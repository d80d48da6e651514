package embedded

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
)

// The embedded engine holds each record's embedding vector beside its
// index entry (orgIndex.vecs) and ranks by meaning with an exact search:
// the cosine of the query's vector with every vector the filters admit.
// Measured on 2 cores, warm, the change feed's read included: among
// 10,000 companies a page of similar records takes about 6 ms
// (BenchmarkSimilar; the cosines themselves about 1 ms) and a hybrid
// search 8 to 18 ms (BenchmarkHybridSearch; ranked by keywords alone, 2
// to 3 ms), so no approximate index (HNSW) is needed within the records
// a process holds (DefaultMaxDocs).

// noteText notes the text of record id as put in the index: the record
// needs a vector when its text changed since its vector was made.
func (x *orgIndex) noteText(id string, rec map[string]any) {
	if x.keeper == nil {
		return
	}
	text := search.SemanticText(x.schema, rec)
	if text == "" {
		delete(x.vecs, id)
		delete(x.unembedded, id)
		delete(x.toEmbed, id) // an earlier text put in the same refresh
		return
	}
	if v, ok := x.vecs[id]; ok && v.Hash == x.keeper.Hash(text) {
		delete(x.toEmbed, id) // back to the text of its vector within one refresh
		return
	}
	if x.toEmbed == nil {
		x.toEmbed = map[string]string{}
	}
	x.toEmbed[id] = text
}

// waiting reports whether record id has text but no vector for it yet:
// the provider could not embed it, or no search has asked for vectors
// since its text changed.
func (x *orgIndex) waiting(id string) bool {
	_, failed := x.unembedded[id]
	_, changed := x.toEmbed[id]
	return failed || changed
}

// forget drops the vector of a deleted record.
func (x *orgIndex) forget(id string) {
	delete(x.vecs, id)
	delete(x.unembedded, id)
	delete(x.toEmbed, id)
}

// embed makes the vectors of the records whose text changed, and of
// those that could not be embedded before: what the provider cannot
// embed now stays pending (found by keyword) until a later refresh.
func (x *orgIndex) embed(ctx context.Context, org string) {
	if x.keeper == nil || len(x.toEmbed)+len(x.unembedded) == 0 {
		return
	}
	docs := make([]vectors.Doc, 0, len(x.toEmbed)+len(x.unembedded))
	for id, text := range x.toEmbed {
		docs = append(docs, vectors.Doc{ID: id, Text: text})
	}
	for id, text := range x.unembedded {
		if _, ok := x.toEmbed[id]; !ok {
			docs = append(docs, vectors.Doc{ID: id, Text: text})
		}
	}
	texts := make(map[string]string, len(docs))
	for _, d := range docs {
		texts[d.ID] = d.Text
	}
	got, pending := x.keeper.Ensure(ctx, org, x.schema.Type, docs)
	if x.vecs == nil {
		x.vecs = make(map[string]vectors.Vec, len(got))
	}
	for id, v := range got {
		x.vecs[id] = v
	}
	x.toEmbed = nil
	x.unembedded = make(map[string]string, len(pending))
	for _, id := range pending {
		delete(x.vecs, id) // an older text's vector would rank it by what it no longer says
		x.unembedded[id] = texts[id]
	}
}

// ids are the ids of the records q matches, in the order of sort
// (unsorted when nil), all of them.
func (x *orgIndex) ids(q query.Query, order []string) ([]string, int, error) {
	req := bleve.NewSearchRequestOptions(q, max(len(x.docs), 1), 0, false)
	if order != nil {
		req.SortBy(order)
	} else {
		req.SortBy([]string{"_id"})
	}
	res, err := x.idx.Search(req)
	if err != nil {
		return nil, 0, fmt.Errorf("search: %w", err)
	}
	out := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		out = append(out, h.ID)
	}
	return out, int(res.Total), nil
}

// filtered is the query of r's filter and cursor alone (every record when
// it has neither).
func (x *orgIndex) filtered(r *search.Request) query.Query {
	q := bleve.NewConjunctionQuery()
	if r.Filter != nil {
		q.AddQuery(filterQuery(x.schema, r.Filter))
	}
	if r.Before != "" {
		q.AddQuery(beforeQuery(r.Before))
	}
	if len(q.Conjuncts) == 0 {
		return bleve.NewMatchAllQuery()
	}
	return q
}

// nearest ranks the records q admits by the cosine of their vectors
// with v, leaving out skip, and keeps the first n (all when n < 0); count
// is how many it ranked. The zero vector (a text with no word the model
// knows: a search for a name, a record with only a name) means nothing:
// no record is near it, and a record of the zero vector is near none.
func (x *orgIndex) nearest(q query.Query, v []float32, skip string, n int) (near []search.Similarity, count int, err error) {
	if isZero(v) {
		return nil, 0, nil
	}
	var sims []search.Similarity
	add := func(id string, vec vectors.Vec) {
		if id == skip || len(vec.Values) != len(v) {
			return
		}
		if score := search.Dot(v, vec.Values); score != 0 || !isZero(vec.Values) {
			sims = append(sims, search.Similarity{ID: id, Score: score})
		}
	}
	if _, all := q.(*query.MatchAllQuery); all {
		// Every record: no need to ask bleve, whose collection of every
		// id, sorted, took several times the cosines' time.
		sims = make([]search.Similarity, 0, len(x.vecs))
		for id, vec := range x.vecs {
			if _, ok := x.docs[id]; ok {
				add(id, vec)
			}
		}
	} else {
		ids, _, err := x.ids(q, nil)
		if err != nil {
			return nil, 0, err
		}
		sims = make([]search.Similarity, 0, len(ids))
		for _, id := range ids {
			if vec, ok := x.vecs[id]; ok {
				add(id, vec)
			}
		}
	}
	return best(sims, n), len(sims), nil
}

// best is search.Nearest(sims, n), selecting the first n with a heap
// before sorting them rather than sorting every record: a page of similar
// records, or a hybrid search's candidates, among thousands.
func best(sims []search.Similarity, n int) []search.Similarity {
	if n < 0 || n >= len(sims)/2 {
		return search.Nearest(sims, n)
	}
	// before: a ranks before b in search.Nearest's order.
	before := func(a, b search.Similarity) bool {
		return a.Score > b.Score || a.Score == b.Score && a.ID > b.ID
	}
	// h is a heap of the best n so far, the last of them at its root.
	h := make([]search.Similarity, 0, n)
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && before(h[c], h[c+1]) {
				c++
			}
			if !before(h[i], h[c]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for _, s := range sims {
		switch {
		case len(h) < n:
			h = append(h, s)
			for i := len(h) - 1; i > 0 && before(h[(i-1)/2], h[i]); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case n > 0 && before(s, h[0]):
			h[0] = s
			down(0)
		}
	}
	return search.Nearest(h, n)
}

// isZero reports whether every component of v is 0.
func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// hybrid runs r, which has text, ranking by keywords and by the cosine
// with the text's vector qv: the records matching the text and the
// search.SemanticCandidates nearest by meaning, among those the filters
// admit, fused by reciprocal rank (search.Fuse), or in r's sort order.
func (x *orgIndex) hybrid(r *search.Request, qv []float32) (*search.Result, error) {
	admitted := x.filtered(r)
	near, _, err := x.nearest(admitted, qv, "", search.SemanticCandidates)
	if err != nil {
		return nil, err
	}
	nearIDs := make([]string, len(near))
	for i, s := range near {
		nearIDs[i] = s.ID
	}
	keyword := bleve.NewConjunctionQuery(admitted)
	if tq := textQuery(x.schema, x.mapping, r); tq != nil {
		keyword.AddQuery(tq)
	}
	var page []string
	total := 0
	if len(r.Sort) > 0 {
		// The union, in the sort's order: bleve sorts it.
		either := bleve.NewDisjunctionQuery(keyword)
		if len(nearIDs) > 0 {
			either.AddQuery(bleve.NewDocIDQuery(nearIDs))
		}
		req := bleve.NewSearchRequestOptions(either, r.Limit, r.Offset(), false)
		req.SortByCustom(sortOrder(x.schema, r))
		res, err := x.idx.Search(req)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		for _, h := range res.Hits {
			page = append(page, h.ID)
		}
		total = int(res.Total)
	} else {
		req := bleve.NewSearchRequestOptions(keyword, max(len(x.docs), 1), 0, false)
		req.SortByCustom(sortOrder(x.schema, r))
		res, err := x.idx.Search(req)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		words := make([]string, 0, len(res.Hits))
		for _, h := range res.Hits {
			words = append(words, h.ID)
		}
		fused := search.Fuse(words, nearIDs)
		total = len(fused)
		if off := r.Offset(); off < len(fused) {
			page = fused[off:min(off+r.Limit, len(fused))]
		}
	}
	out := x.result(page, total, search.RankingHybrid)
	return out, nil
}

// result is the page of records ids, marked pending when one of them
// has text but no vector yet.
func (x *orgIndex) result(ids []string, total int, ranking string) *search.Result {
	out := &search.Result{Total: total, Ranking: ranking, Records: make([]json.RawMessage, 0, len(ids)), Stamps: make([]string, 0, len(ids))}
	for _, id := range ids {
		d, ok := x.docs[id]
		if !ok {
			continue
		}
		out.Records = append(out.Records, d.raw)
		out.Stamps = append(out.Stamps, d.stamp)
		if x.waiting(id) {
			out.Semantic = search.SemanticPending
		}
	}
	return out
}

// similar answers the records nearest by meaning to record id (never
// itself) among those r's filters admit, by cosine, then newest first.
func (x *orgIndex) similar(id string, r *search.Request) (*search.Result, error) {
	if _, ok := x.docs[id]; !ok {
		return nil, apperr.ErrNotFound
	}
	v, ok := x.vecs[id]
	if !ok {
		res := x.result(nil, 0, search.RankingSemantic)
		if x.waiting(id) {
			res.Semantic = search.SemanticPending
		}
		return res, nil
	}
	near, total, err := x.nearest(x.filtered(r), v.Values, id, r.Offset()+r.Limit)
	if err != nil {
		return nil, err
	}
	var page []string
	if off := r.Offset(); off < len(near) {
		for _, s := range near[off:] {
			page = append(page, s.ID)
		}
	}
	return x.result(page, total, search.RankingSemantic), nil
}
