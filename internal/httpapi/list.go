package httpapi

import (
	"bytes"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/store"
)

// ListBudget is the most bytes a list response body may take, counted as
// Lambda carries it inside its response payload (store.WireSize: quotes
// and backslashes count twice), so that a page always fits Lambda's 6 MB
// response limit with its headers. A page ends early, before the record
// that would exceed it; the next-page headers then say where to go on.
const ListBudget = 5_000_000

// envelopeSize is what {"data":[]} and the final newline take.
var envelopeSize = store.WireSize(`{"data":[]}` + "\n")

// Page headers: present whenever another page follows, absent on the last.
const (
	HeaderNextCursor = "X-Next-Cursor"
	HeaderLink       = "Link"
)

// List writes a page as {"data": [...]} with status 200: as many of its
// records as fit the request's Budget (ListBudget, or the lower budget of
// an MCP tool's call; at least one record) and, when more records follow,
// the headers X-Next-Cursor (the cursor of the next page) and
// Link: <url>; rel="next", the same path and parameters with that cursor
// and without page.
func List[T any](w http.ResponseWriter, r *http.Request, p store.Page[T]) {
	var body bytes.Buffer
	body.WriteString(`{"data":[`)
	size := envelopeSize
	budget := Budget(r.Context())
	n := 0
	for i := range p.Items {
		b, err := encode(&p.Items[i])
		if err != nil {
			Error(w, r, err)
			return
		}
		add := store.WireSize(b)
		if n > 0 {
			add++ // the comma
		}
		if n > 0 && size+add > budget {
			break
		}
		if n == 0 {
			// Records are about the same size; the budget bounds a page.
			body.Grow(min(len(b)*len(p.Items)+len(p.Items), budget))
		} else {
			body.WriteByte(',')
		}
		body.WriteString(b)
		size += add
		n++
	}
	body.WriteString("]}\n")
	p = p.Cut(n)
	if p.Next != "" {
		w.Header().Set(HeaderNextCursor, p.Next)
		if r.Method == http.MethodGet { // a list query (POST) sends its cursor in the body
			w.Header().Set(HeaderLink, "<"+nextURL(r, p.Next)+`>; rel="next"`)
		}
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(body.Bytes())
}

// encode is v's JSON: as it is when it is already encoded.
func encode(v any) (string, error) {
	if e, ok := v.(Encoded); ok {
		return e.EncodedJSON(), nil
	}
	b, err := Marshal(v)
	return string(b), err
}

// nextURL is the request's path and parameters with cursor set and page
// removed: a URL relative to the request's origin.
func nextURL(r *http.Request, cursor string) string {
	q := r.URL.Query()
	q.Del("page")
	q.Set("cursor", cursor)
	return r.URL.EscapedPath() + "?" + q.Encode()
}
