package httpapi

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/store"
)

// The handlers' vocabulary: each reads the request, calls a service and
// answers through one of these.

// Reply returns a function that writes a service call's result: the error
// through the one error mapping, or the value as {"data": v} with status.
// Used as httpapi.Reply(w, r, 200)(svc.Get(...)).
func Reply(w http.ResponseWriter, r *http.Request, status int) func(any, error) {
	return func(v any, err error) {
		if err != nil {
			Error(w, r, err)
			return
		}
		Data(w, status, v)
	}
}

// ReplyPage returns a function that writes a page of a list: the error
// through the one error mapping, or {"data": [...]} within the list byte
// budget with the next-page headers (List). Used as
// httpapi.ReplyPage[T](w, r)(svc.List(...)).
func ReplyPage[T any](w http.ResponseWriter, r *http.Request) func(store.Page[T], error) {
	return func(p store.Page[T], err error) {
		if err != nil {
			Error(w, r, err)
			return
		}
		List(w, r, p)
	}
}

// NoContent answers 204, or the error.
func NoContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Body reads the request's body (ReadBody); on failure it has answered.
func Body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := ReadBody(w, r)
	if err != nil {
		Error(w, r, err)
		return nil, false
	}
	return body, true
}

// DecodeBody reads the body and decodes it; on failure it has answered.
func DecodeBody[T any](w http.ResponseWriter, r *http.Request, decode func([]byte) (T, error)) (T, bool) {
	body, ok := Body(w, r)
	if !ok {
		var zero T
		return zero, false
	}
	v, err := decode(body)
	if err != nil {
		Error(w, r, err)
		return v, false
	}
	return v, true
}

// PageQuery reads the paging parameters (ParsePage); on failure it has
// answered.
func PageQuery(w http.ResponseWriter, r *http.Request) (store.Query, bool) {
	q, err := ParsePage(r.URL.Query())
	if err != nil {
		Error(w, r, err)
		return q, false
	}
	return q, true
}

// Caller is the authenticated caller of r; the router guarantees one on
// every authenticated route.
func Caller(r *http.Request) auth.Principal {
	p, _ := auth.FromContext(r.Context())
	return p
}
