package opensearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	osgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
)

// Hybrid search and similar records rank by meaning with the k-NN plugin:
// each document holds its record's embedding in VectorField (knn_vector,
// HNSW by faiss over the inner product of unit vectors), put by the
// indexer, and the engine embeds a hybrid search's text with the same
// keeper. Every k-NN query filters on OrgField as the keyword queries do,
// inside the knn clause (faiss's efficient filtering: the k nearest among
// the records the filters admit, not k nearest then filtered).

// MaxK is the largest k of a k-NN query (the k-NN plugin's limit): a page
// of similar records past it is empty.
const MaxK = 10_000

// Semantic says whether the engine and the indexer rank by meaning on
// service: on a managed domain (ServiceManaged) with the k-NN plugin, not
// on OpenSearch Serverless. Serverless has the k-NN plugin only in a
// collection of type VECTORSEARCH, and such a collection refuses documents
// indexed by a custom id (an index or create action with an _id: "Document
// ID is not supported in create/index operation request"), which this
// package's documents are (DocID, replaced and deleted by id as records
// change); a SEARCH collection refuses a knn_vector mapping. On
// Serverless, hybrid ranks by keywords and similar records answer
// search.ErrSemanticOff, as with EMBEDDINGS=off.
func Semantic(service string) bool { return service == ServiceManaged }

// semanticKeeper is keeper where Semantic(service) holds (nil otherwise,
// logged once, so that a deployment sees why hybrid ranks by keywords).
func semanticKeeper(service string, keeper *vectors.Keeper) *vectors.Keeper {
	if keeper == nil || Semantic(service) {
		return keeper
	}
	slog.Warn("opensearch: OpenSearch Serverless indexes no embeddings (a VECTORSEARCH collection refuses documents by id); hybrid search ranks by keywords and similar records are off; use a managed domain (OPENSEARCH_SERVICE=es) for both", "service", service, "model", keeper.Model())
	return nil
}

// hybridWindow is how many keyword matches a hybrid search without sort
// reads, from the first, to fuse with the nearest by meaning: the page's
// end plus search.SemanticCandidates, within the index's result window.
func hybridWindow(r *search.Request) int {
	return min(r.Offset()+r.Limit+search.SemanticCandidates, search.MaxOffset+search.MaxLimit)
}

// HybridKeywordQuery is the keyword half of a hybrid search of r (which
// has text and no sort): Query's body from the first match to
// hybridWindow, with each hit's PendingField.
func HybridKeywordQuery(org string, s *search.Schema, r *search.Request) ([]byte, error) {
	body, err := keywordBody(org, s, r)
	if err != nil {
		return nil, err
	}
	body["from"], body["size"], body["_source"] = 0, hybridWindow(r), []any{PendingField}
	return json.MarshalIndent(body, "", "  ")
}

// knnClause is the k-NN query of the k records nearest to v among those
// the filter admits.
func knnClause(v []float32, k int, filter obj) obj {
	return obj{"knn": obj{VectorField: obj{"vector": v, "k": k, "filter": filter}}}
}

// KNNQuery is the meaning half of a hybrid search of r: the
// search.SemanticCandidates records nearest to qv (the embedding of r's
// text) among those r's filters admit (OrgField, the filter tree, the
// cursor).
func KNNQuery(org string, s *search.Schema, r *search.Request, qv []float32) ([]byte, error) {
	filter, err := filters(org, s, r)
	if err != nil {
		return nil, err
	}
	body := obj{
		"size":    search.SemanticCandidates,
		"_source": false,
		"query":   knnClause(qv, search.SemanticCandidates, obj{"bool": obj{"filter": filter}}),
	}
	return json.MarshalIndent(body, "", "  ")
}

// idsQuery matches the documents of the given ids.
func idsQuery(docIDs []string) obj {
	return obj{"ids": obj{"values": docIDs}}
}

// HybridSortedQuery is the page of a hybrid search of r with a sort: the
// records r's filters admit that match its text or are among near (the
// document ids KNNQuery found), in r's order.
func HybridSortedQuery(org string, s *search.Schema, r *search.Request, near []string) ([]byte, error) {
	filter, err := filters(org, s, r)
	if err != nil {
		return nil, err
	}
	var should []any
	if tq := textQuery(s, r); tq != nil {
		should = append(should, tq)
	}
	if len(near) > 0 {
		should = append(should, idsQuery(near))
	}
	b := obj{"filter": filter}
	if len(should) > 0 {
		b["should"], b["minimum_should_match"] = should, 1
	}
	body := obj{
		"query":            obj{"bool": b},
		"from":             r.Offset(),
		"size":             r.Limit,
		"track_total_hits": true,
		"_source":          []any{PendingField},
		"sort":             sortOrder(s, r),
	}
	return json.MarshalIndent(body, "", "  ")
}

// HybridCountQuery counts the records among docIDs that match r's keyword
// query (filters and text): for a hybrid search's total, the nearest by
// meaning beyond the keyword window that match its words too.
func HybridCountQuery(org string, s *search.Schema, r *search.Request, docIDs []string) ([]byte, error) {
	filter, err := filters(org, s, r)
	if err != nil {
		return nil, err
	}
	b := obj{"filter": append(filter, idsQuery(docIDs))}
	if tq := textQuery(s, r); tq != nil {
		b["must"] = []any{tq}
	}
	body := obj{"query": obj{"bool": b}, "size": 0, "track_total_hits": true}
	return json.MarshalIndent(body, "", "  ")
}

// similarFilter admits the records r's filters admit (OrgField, the
// filter tree, the cursor) but record id itself.
func similarFilter(org string, s *search.Schema, id string, r *search.Request, also ...any) (obj, error) {
	filter, err := filters(org, s, r)
	if err != nil {
		return nil, err
	}
	return obj{"bool": obj{"filter": append(filter, also...), "must_not": []any{idsQuery([]string{DocID(org, id)})}}}, nil
}

// SimilarQuery is the page of records nearest to v (record id's
// embedding) among those r's filters admit, record id left out: k is the
// page's end (at most MaxK), from the page's offset.
func SimilarQuery(org string, s *search.Schema, id string, r *search.Request, v []float32) ([]byte, error) {
	filter, err := similarFilter(org, s, id, r)
	if err != nil {
		return nil, err
	}
	body := obj{
		"from":    r.Offset(),
		"size":    r.Limit,
		"_source": false,
		"query":   knnClause(v, min(r.Offset()+r.Limit, MaxK), filter),
	}
	return json.MarshalIndent(body, "", "  ")
}

// SimilarCountQuery counts the records a similar records request of
// record id ranks: those r's filters admit that have a vector, but id.
func SimilarCountQuery(org string, s *search.Schema, id string, r *search.Request) ([]byte, error) {
	filter, err := similarFilter(org, s, id, r, obj{"exists": obj{"field": VectorField}})
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(obj{"query": filter, "size": 0, "track_total_hits": true}, "", "  ")
}

// hybrid runs r, which has text, ranking by keywords and by the inner
// product with qv: the records matching the text and the
// search.SemanticCandidates nearest by meaning, among those the filters
// admit, fused by reciprocal rank (search.Fuse), or in r's sort order.
func (e *Engine) hybrid(ctx context.Context, org string, s *search.Schema, r *search.Request, qv []float32) (*search.Result, error) {
	body, err := KNNQuery(org, s, r, qv)
	if err != nil {
		return nil, err
	}
	res, err := e.search(ctx, s, body)
	if err != nil {
		if status := errorStatus(err); status >= 400 && status < 500 {
			return nil, &knnRefused{err}
		}
		return nil, err
	}
	if res == nil {
		return emptyResult(search.RankingHybrid), nil // nothing indexed yet
	}
	near := e.hits(org, res).ids
	if len(r.Sort) > 0 {
		// The union, in the sort's order: OpenSearch sorts it.
		docIDs := make([]string, len(near))
		for i, id := range near {
			docIDs[i] = DocID(org, id)
		}
		if body, err = HybridSortedQuery(org, s, r, docIDs); err != nil {
			return nil, err
		}
		if res, err = e.search(ctx, s, body); err != nil || res == nil {
			return orEmpty(search.RankingHybrid, err)
		}
		page := e.hits(org, res)
		return e.result(ctx, org, s, page.ids, res.Hits.Total.Value, search.RankingHybrid, page.pending)
	}
	if body, err = HybridKeywordQuery(org, s, r); err != nil {
		return nil, err
	}
	if res, err = e.search(ctx, s, body); err != nil || res == nil {
		return orEmpty(search.RankingHybrid, err)
	}
	words := e.hits(org, res)
	fused := search.Fuse(words.ids, near)
	total, err := e.hybridTotal(ctx, org, s, r, res, words.ids, near)
	if err != nil {
		return nil, err
	}
	var page []string
	if off := r.Offset(); off < len(fused) {
		page = fused[off:min(off+r.Limit, len(fused))]
	}
	return e.result(ctx, org, s, page, total, search.RankingHybrid, words.pending)
}

// knnRefused is a k-NN query OpenSearch refused (a 4xx answer): the
// index has no vector field (made with EMBEDDINGS=off, or before it), or
// one of another dimension. A hybrid search then ranks by keywords.
type knnRefused struct{ err error }

func (e *knnRefused) Error() string { return "opensearch: k-NN query refused: " + e.err.Error() }
func (e *knnRefused) Unwrap() error { return e.err }

// errorStatus is the HTTP status of an OpenSearch error answer (0 when
// err is none: a transport error, say).
func errorStatus(err error) int {
	var se *osgo.StructError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// hybridTotal is the size of the union of a hybrid search's keyword
// matches (res, read up to hybridWindow, whose ids are words) and its
// nearest by meaning (near): the keyword total plus the nearest that do
// not match the words. When the window holds every keyword match, those
// are the nearest outside it; otherwise the nearest outside it are
// counted against the keyword query (HybridCountQuery).
func (e *Engine) hybridTotal(ctx context.Context, org string, s *search.Schema, r *search.Request, res *opensearchapi.SearchResp, words, near []string) (int, error) {
	total := res.Hits.Total.Value
	read := make(map[string]bool, len(words))
	for _, id := range words {
		read[id] = true
	}
	var outside []string
	for _, id := range near {
		if !read[id] {
			outside = append(outside, DocID(org, id))
		}
	}
	if len(outside) == 0 || len(res.Hits.Hits) >= total {
		return total + len(outside), nil
	}
	body, err := HybridCountQuery(org, s, r, outside)
	if err != nil {
		return 0, err
	}
	count, err := e.search(ctx, s, body)
	if err != nil {
		return 0, err
	}
	matching := 0
	if count != nil {
		matching = count.Hits.Total.Value
	}
	return total + len(outside) - min(matching, len(outside)), nil
}

// Similar answers the records of org nearest by meaning to record id of
// s (never itself), among those r's filters admit, by the inner product
// of their vectors (the cosine), with the count of those that have one.
// A record without a vector yet (its text is not embedded, or it is not
// indexed yet) has none similar for now: an empty result, pending. No
// such record is apperr.ErrNotFound; no keeper, search.ErrSemanticOff.
func (e *Engine) Similar(ctx context.Context, org string, s *search.Schema, id string, r *search.Request) (*search.Result, error) {
	if e.keeper == nil {
		return nil, search.ErrSemanticOff
	}
	doc, found, err := e.vectorOf(ctx, org, s, id)
	if err != nil {
		return nil, err
	}
	if !found {
		recs, err := e.st.GetRecords(ctx, org, s.Type, []string{id})
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, apperr.ErrNotFound
		}
		// Written, not indexed yet: it is embedded as it is indexed.
		out := emptyResult(search.RankingSemantic)
		out.Semantic = search.SemanticPending
		return out, nil
	}
	if len(doc.Vec) == 0 {
		out := emptyResult(search.RankingSemantic)
		if doc.Pending {
			out.Semantic = search.SemanticPending
		}
		return out, nil // a record without text has no meaning to compare
	}
	body, err := SimilarCountQuery(org, s, id, r)
	if err != nil {
		return nil, err
	}
	count, err := e.search(ctx, s, body)
	if err != nil || count == nil {
		return orEmpty(search.RankingSemantic, err)
	}
	total := count.Hits.Total.Value
	var page []string
	if r.Offset() < min(total, MaxK) {
		if body, err = SimilarQuery(org, s, id, r, doc.Vec); err != nil {
			return nil, err
		}
		res, err := e.search(ctx, s, body)
		if err != nil || res == nil {
			return orEmpty(search.RankingSemantic, err)
		}
		page = e.hits(org, res).ids
	}
	return e.result(ctx, org, s, page, total, search.RankingSemantic, nil)
}

// orEmpty is err, or an empty result when there is none (the index was
// removed between two queries of one search).
func orEmpty(ranking string, err error) (*search.Result, error) {
	if err != nil {
		return nil, err
	}
	return emptyResult(ranking), nil
}

// vectorDoc is what Similar reads of a record's document.
type vectorDoc struct {
	Vec     []float32 `json:"_vec"`
	Pending bool      `json:"_pending"`
}

// vectorOf reads the vector of org's record id from its document (found:
// false when it has none, or the index does not exist yet).
func (e *Engine) vectorOf(ctx context.Context, org string, s *search.Schema, id string) (vectorDoc, bool, error) {
	var doc vectorDoc
	res, err := e.c.api.Document.Get(ctx, opensearchapi.DocumentGetReq{
		Index: e.c.Index(s.Resource), DocumentID: DocID(org, id),
		Params: opensearchapi.DocumentGetParams{SourceIncludes: []string{VectorField, PendingField}},
	})
	if err != nil {
		if errorType(err) == "index_not_found_exception" || notFound(res) {
			return doc, false, nil
		}
		return doc, false, fmt.Errorf("opensearch: get %s of %s: %w", DocID(org, id), e.c.Index(s.Resource), err)
	}
	if !res.Found {
		return doc, false, nil
	}
	if len(res.Source) > 0 {
		if err := json.Unmarshal(res.Source, &doc); err != nil {
			return doc, false, fmt.Errorf("opensearch: the document %s: %w", DocID(org, id), err)
		}
	}
	return doc, true, nil
}

// notFound says whether a get answered 404 (the document does not exist).
func notFound(res *opensearchapi.DocumentGetResp) bool {
	if res == nil {
		return false
	}
	resp := res.Inspect().Response
	return resp != nil && resp.StatusCode == http.StatusNotFound
}
