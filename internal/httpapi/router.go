package httpapi

import (
	"fmt"
	"mime"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// NewRouter mounts handlers for routes of the route table (table): a route
// with a handler in handlers (by pattern) is served, one without belongs
// to another function and answers like an unknown route. The whole table
// decides 405s, so that every function, and the one that API Gateway's
// $default route reaches, answers a known path with a wrong method alike.
//
// Every request to a /v1 path but the OpenAPI document's goes through authn
// first, known route or not, so that without valid credentials any /v1 path
// answers 401. After that an
// unclean path (with "..", "//" or "/."), an unknown path and an unknown
// route answer 404 "no such endpoint: METHOD PATH", which tells them apart
// from a missing record ("not found"); a known path with another method is
// 405 with Allow. A path parameter longer than any id can be is "not found"
// before the handler runs. Idempotent routes also go through each of
// creates (such as Idempotency), inside authn; a route with Admin set
// refuses member keys (403) before those.
func NewRouter(table []routes.Route, handlers map[string]http.Handler, authn func(http.Handler) http.Handler, creates ...func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range table {
		allowed[rt.Path] = append(allowed[rt.Path], rt.Method)
		h, ok := handlers[rt.Pattern()]
		if !ok {
			mux.HandleFunc(rt.Pattern(), noSuchEndpoint)
			continue
		}
		if rt.Idempotent {
			for i := len(creates) - 1; i >= 0; i-- {
				h = creates[i](h)
			}
		}
		h = wellFormed(rt, h)
		if rt.Admin != "" {
			h = adminOnly(rt.Admin, h)
		}
		mux.Handle(rt.Pattern(), routed(rt.Pattern(), boundParams(rt, conditional(rt, h))))
	}
	paths := make([]pathMethods, 0, len(allowed))
	for p, methods := range allowed {
		paths = append(paths, pathMethods{segments: strings.Split(p, "/"), methods: methods})
	}
	// What no pattern serves: 405 when a route's path matches with another
	// method (the methods of every such route are allowed), else 404. This
	// is decided here rather than by method-less mux patterns, which would
	// conflict with a literal route beside a wildcard one (POST
	// /v1/companies/search beside GET /v1/companies/{id}).
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(paths, r.URL.Path); allow != "" {
			w.Header().Set("Allow", allow)
			Refuse(w, apperr.CodeMethodNotAllowed, "", fmt.Sprintf("method %s not allowed; use %s", r.Method, allow))
			return
		}
		noSuchEndpoint(w, r)
	})

	// The mux answers unclean paths with a redirect; they are refused before
	// it sees them.
	routed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isClean(r.URL.EscapedPath()) {
			noSuchEndpoint(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	authenticated := authn(routed)
	return Observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); (p == "/v1" || strings.HasPrefix(p, "/v1/")) && p != routes.OpenAPIPath {
			authenticated.ServeHTTP(w, r)
			return
		}
		routed.ServeHTTP(w, r)
	}))
}

// pathMethods are the methods of the routes of one path template.
type pathMethods struct {
	segments []string
	methods  []string
}

// allowedMethods lists, sorted and joined, the methods of the routes
// whose path template matches path ({name} one segment, {name...} the
// rest); "" when none does.
func allowedMethods(paths []pathMethods, path string) string {
	segs := strings.Split(path, "/")
	set := map[string]bool{}
	for _, pm := range paths {
		if matchSegments(pm.segments, segs) {
			for _, m := range pm.methods {
				set[m] = true
			}
		}
	}
	if len(set) == 0 {
		return ""
	}
	methods := make([]string, 0, len(set))
	for m := range set {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	return strings.Join(methods, ", ")
}

func matchSegments(tmpl, segs []string) bool {
	for i, t := range tmpl {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "...}") {
			return len(segs) >= i
		}
		if i >= len(segs) {
			return false
		}
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if t != segs[i] {
			return false
		}
	}
	return len(tmpl) == len(segs)
}

// adminOnly refuses a caller without an admin key 403 "<action> requires an
// admin key" before h (and the creates around it) runs, so that a member
// key can neither do the action nor be answered an earlier admin's answer
// kept for an Idempotency-Key.
func adminOnly(action string, h http.Handler) http.Handler {
	refusal := apperr.Forbidden("%s requires an admin key", action)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := auth.FromContext(r.Context()); !ok || !p.IsAdmin() {
			Error(w, r, refusal)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// noSuchEndpoint answers a request no route serves.
func noSuchEndpoint(w http.ResponseWriter, r *http.Request) {
	Refuse(w, apperr.CodeNoSuchEndpoint, "", "no such endpoint: "+r.Method+" "+truncate(r.URL.EscapedPath(), 200))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// isClean reports whether p is a path as the router's patterns are written:
// no empty, "." or ".." segment and no trailing slash (the root excepted).
func isClean(p string) bool {
	return p == "/" || (strings.HasPrefix(p, "/") && path.Clean(p) == p)
}

// wellFormed refuses, before the route (an Idempotency-Key's kept answer
// included) runs, what no route accepts: a query parameter given more than
// once (400: no parameter of the API is a list sent by repeating it, and
// which of the values a route would read is not the caller's to guess),
// and a body of POST, PUT or PATCH whose Content-Type is not
// application/json (415). A body with no Content-Type, or curl's default
// one, is read as JSON (isJSONMedia). An inbound webhook (/webhooks/...) is exempt: its
// sender decides its query and media type.
func wellFormed(rt routes.Route, h http.Handler) http.Handler {
	if strings.HasPrefix(rt.Path, "/webhooks/") {
		return h
	}
	hasBody := rt.Method == http.MethodPost || rt.Method == http.MethodPut || rt.Method == http.MethodPatch
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			for name, vs := range r.URL.Query() {
				if len(vs) > 1 {
					Error(w, r, apperr.InvalidQuery(name, "is given %d times; give it once", len(vs)))
					return
				}
			}
		}
		if ct := r.Header.Get("Content-Type"); hasBody && ct != "" && r.ContentLength != 0 && !isJSONMedia(ct) {
			// The words of the MCP transport's own refusal, so that every
			// route refuses alike.
			Refuse(w, apperr.CodeUnsupportedMediaType, "", "Content-Type must be 'application/json'")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isJSONMedia reports whether the Content-Type ct is read as JSON:
// application/json, with any parameters (charset=utf-8), and
// application/x-www-form-urlencoded, which curl's -d sends unless told
// otherwise (the docs' examples rely on it; no route reads a form).
func isJSONMedia(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || mt == "application/x-www-form-urlencoded")
}

// boundParams answers "not found" when a wildcard of the route's path holds
// more than store.MaxIDLength bytes (or the route's own MaxParam): no
// record can have such an id, and the table refuses keys that long.
func boundParams(rt routes.Route, h http.Handler) http.Handler {
	limit := store.MaxIDLength
	if rt.MaxParam > 0 {
		limit = rt.MaxParam
	}
	var names []string
	for _, seg := range strings.Split(rt.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(strings.Trim(seg, "{}"), "..."))
		}
	}
	if len(names) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, n := range names {
			if len(r.PathValue(n)) > limit {
				Refuse(w, apperr.CodeNotFound, "", "not found")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// conditional makes the writes of PUT, PATCH and DELETE routes of a record
// ({id}: routes.Route.Conditional) conditional on the request's If-Match:
// the record's ETag must be one of the tags sent (strong comparison: weak
// tags never match), or "*". A mismatch is 412, checked by the store
// inside the version-checked write.
func conditional(rt routes.Route, h http.Handler) http.Handler {
	if !rt.Conditional() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("If-Match")
		if len(values) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r.WithContext(store.WithPrecondition(r.Context(), ParseIfMatch(r.PathValue("id"), values...))))
	})
}

// ParseIfMatch reads If-Match values (comma-separated entity tags, "*")
// into a precondition on the record id: the versions of the strong tags
// (weak and malformed ones match nothing), Any for "*". A batch's
// operations take the same (their ifMatch).
func ParseIfMatch(id string, values ...string) store.Precondition {
	p := store.Precondition{ID: id}
	for _, v := range values {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" {
				p.Any = true
				continue
			}
			if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
				if n, err := strconv.ParseInt(tag[1:len(tag)-1], 10, 64); err == nil && n > 0 {
					p.Versions = append(p.Versions, n)
				}
			}
		}
	}
	return p
}
