package httpapi

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/sourcebase/sourcebase/internal/routes"
)

// NewRouter mounts handlers for the given routes of the route table. Every
// route must have a handler (a missing one is a programming error and
// panics at start). Authenticated routes go through authn. A known path
// with another method is 405 with Allow; an unknown path is 404; both with
// the JSON error body. Authenticated POST routes also go through each of
// creates (such as Idempotency), inside authn.
func NewRouter(rs []routes.Route, handlers map[string]http.Handler, authn func(http.Handler) http.Handler, creates ...func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range rs {
		h, ok := handlers[rt.Pattern()]
		if !ok {
			panic(fmt.Sprintf("httpapi: no handler for route %s", rt.Pattern()))
		}
		if rt.Authenticated() {
			for i := len(creates) - 1; i >= 0 && rt.Method == http.MethodPost; i-- {
				h = creates[i](h)
			}
			h = authn(h)
		}
		mux.Handle(rt.Pattern(), h)
		allowed[rt.Path] = append(allowed[rt.Path], rt.Method)
	}
	for path, methods := range allowed {
		sort.Strings(methods)
		allow := strings.Join(methods, ", ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			ErrorBody(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed; use %s", r.Method, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		ErrorBody(w, http.StatusNotFound, "not found")
	})
	return Observe(mux)
}
