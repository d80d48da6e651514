package recordsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// searchOperationOf is POST /v1/<name>/search of the searchable kind k,
// served by the search function (the only one with a search engine); with
// MCP set, the search is the kind's MCP tool.
func searchOperationOf[T any](k Kind[T]) operation.Operation {
	d, s := k.Def, search.SchemaOf(k.Def)
	op := operation.Declare(lambdas.Search, http.MethodPost, "/v1/"+d.Name+"/search", func(a Based, w http.ResponseWriter, r *http.Request) {
		present, ok := k.Reads(a).(resource.Presenter)
		if !ok {
			panic("api: the records of " + d.Name + " cannot be presented from search")
		}
		a.RecordsBase().search(w, r, s, present.Present)
	}).Safe().Answers(routes.AnswerSearch).Of(d.Name).Doc(func(op *openapi.Operation) { listspec.SearchOperation(op, d) })
	if d.MCP {
		op = op.AsTool("search_"+d.Name, "Search the organization's "+d.Name+": text, structured filters (and/or of field conditions), sort, pages. "+
			"Answers the "+d.Name+" as GET answers them, with paging metadata.")
	}
	return op
}

// similarOperationOf is POST /v1/<name>/{id}/similar of the kind k
// (declared Similar): the records nearest by meaning to one, served by the
// search function; with MCP set, it is the kind's similar_<name> tool.
func similarOperationOf[T any](k Kind[T]) operation.Operation {
	d, s := k.Def, search.SchemaOf(k.Def)
	op := operation.Declare(lambdas.Search, http.MethodPost, "/v1/"+d.Name+"/{id}/similar", func(a Based, w http.ResponseWriter, r *http.Request) {
		present, ok := k.Reads(a).(resource.Presenter)
		if !ok {
			panic("api: the records of " + d.Name + " cannot be presented from search")
		}
		a.RecordsBase().similar(w, r, s, present.Present)
	}).Safe().Answers(routes.AnswerSearch).Of(d.Name).Doc(func(op *openapi.Operation) { listspec.SimilarOperation(op, d) })
	if d.MCP {
		op = op.AsTool("similar_"+d.Name, "Find the organization's "+d.Name+" nearest in meaning to one "+d.Singular+" (by the embeddings of their text), "+
			"with structured filters and pages; never the "+d.Singular+" itself. Answers them as GET answers them.")
	}
	return op
}

// search answers a search of s: page and limit in the query, the search
// in the body; present turns each found record (its stored JSON and shape
// stamp, as search holds it) into what GET returns.
func (b *Base) search(w http.ResponseWriter, r *http.Request, s *search.Schema, present func(stored []byte, stamp string) (json.RawMessage, error)) {
	b.answerSearch(w, r, s, search.Decode, present, func(req *search.Request) (*search.Result, error) {
		return b.Search.Search(r.Context(), httpapi.Caller(r).OrgID, s, req)
	})
}

// similar answers the records of s nearest by meaning to the one of the
// path's id: page and limit in the query, filters in the body.
func (b *Base) similar(w http.ResponseWriter, r *http.Request, s *search.Schema, present func(stored []byte, stamp string) (json.RawMessage, error)) {
	b.answerSearch(w, r, s, search.DecodeSimilar, present, func(req *search.Request) (*search.Result, error) {
		return b.Search.Similar(r.Context(), httpapi.Caller(r).OrgID, s, r.PathValue("id"), req)
	})
}

// answerSearch answers a search-shaped request of s: page and limit from
// the query, the body decoded by decode, the result of run presented.
func (b *Base) answerSearch(w http.ResponseWriter, r *http.Request, s *search.Schema, decode func(*search.Schema, []byte, int, int) (*search.Request, error),
	present func(stored []byte, stamp string) (json.RawMessage, error), run func(*search.Request) (*search.Result, error)) {
	if b.Search == nil {
		panic("api: a search route is served without a search engine")
	}
	page, limit, err := search.ParsePaging(r.URL.Query())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	req, err := decode(s, body, page, limit)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	res, err := run(req)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	for i, rec := range res.Records {
		stamp := ""
		if i < len(res.Stamps) {
			stamp = res.Stamps[i]
		}
		if res.Records[i], err = present(rec, stamp); err != nil {
			httpapi.Error(w, r, fmt.Errorf("search: present a %s record: %w", s.Resource, err))
			return
		}
	}
	writeSearch(w, req, res, httpapi.Budget(r.Context()))
}

// SearchMetadata is the metadata of a search response.
type SearchMetadata struct {
	Page       int    `json:"page"`
	Limit      int    `json:"limit"`
	TotalCount int    `json:"totalCount"`
	TotalPages int    `json:"totalPages"`
	Ranking    string `json:"ranking"`
	// Semantic is search.SemanticPending when a record lacks its
	// embedding yet.
	Semantic string `json:"semantic,omitempty"`
	// Truncated: the page's records did not all fit the response budget
	// (httpapi.ListBudget, or an MCP tool call's lower one); ask again with
	// a smaller limit.
	Truncated bool `json:"truncated,omitempty"`
}

// writeSearch writes {"data": [...], "metadata": {...}} within budget
// (httpapi.Budget): a page whose records do not all fit ends early and says
// so.
func writeSearch(w http.ResponseWriter, req *search.Request, res *search.Result, budget int) {
	meta := SearchMetadata{Page: req.Page, Limit: req.Limit, TotalCount: res.Total, Ranking: res.Ranking, Semantic: res.Semantic}
	meta.TotalPages = (res.Total + req.Limit - 1) / req.Limit
	WriteSearchPage(w, meta, res.Records, budget)
}

// WriteSearchPage writes records and meta as a search page within budget:
// the records that fit, metadata.truncated when some did not.
func WriteSearchPage(w http.ResponseWriter, meta SearchMetadata, records []json.RawMessage, budget int) {
	const reserve = 200 // the metadata object, at most
	size := store.WireSize(`{"data":[],"metadata":}`+"\n") + reserve
	n := 0
	for i, rec := range records {
		add := store.WireSize([]byte(rec))
		if i > 0 {
			add++
		}
		if size+add > budget {
			break
		}
		size += add
		n++
	}
	meta.Truncated = meta.Truncated || n < len(records)
	var body bytes.Buffer
	body.WriteString(`{"data":[`)
	for i, rec := range records[:n] {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(rec)
	}
	body.WriteString(`],"metadata":`)
	m, _ := httpapi.Marshal(meta)
	body.Write(m)
	body.WriteString("}\n")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body.Bytes())
}
