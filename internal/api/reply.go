package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/store"
)

// reply returns a function that writes a service call's result: the error
// through the one error mapping, or the value as {"data": v} with status.
// Used as reply(w, r, 200)(svc.Get(...)).
func reply(w http.ResponseWriter, r *http.Request, status int) func(any, error) {
	return func(v any, err error) {
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.Data(w, status, v)
	}
}

// list returns a function that writes a page of a list: the error through
// the one error mapping, or {"data": [...]} within the list byte budget
// with the next-page headers. Used as list(w, r)(svc.List(...)).
func list[T any](w http.ResponseWriter, r *http.Request) func(store.Page[T], error) {
	return func(p store.Page[T], err error) {
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.List(w, r, p)
	}
}

// noContent answers 204, or the error.
func noContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodeBody reads the body and decodes it; on failure it has answered.
func decodeBody[T any](w http.ResponseWriter, r *http.Request, decode func([]byte) (T, error)) (T, bool) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		var zero T
		return zero, false
	}
	v, err := decode(body)
	if err != nil {
		httpapi.Error(w, r, err)
		return v, false
	}
	return v, true
}

// pageQuery reads the paging parameters; on failure it has answered.
func pageQuery(w http.ResponseWriter, r *http.Request) (store.Query, bool) {
	q, err := httpapi.ParsePage(r.URL.Query())
	if err != nil {
		httpapi.Error(w, r, err)
		return q, false
	}
	return q, true
}
