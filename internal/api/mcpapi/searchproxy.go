package mcpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// throughAPI is api with the remote routes (patterns) sent to the HTTP API
// (Deps.SearchBaseURL, else the address of the MCP request being served),
// where the functions that serve them answer with the caller's own
// credentials, as they answer any client: a function without a search
// engine (the mcp function) then carries none, and its searches see the
// one index the search function keeps; the same for the bulk jobs and
// their S3 client. Those functions count the requests against the key's
// rate limit as they count any (so /mcp does not count their messages). A
// search's answer is cut to the caller's byte budget (httpapi.Budget,
// which an HTTP request does not carry) on its way back, as the search
// function cuts its pages.
func (a *API) throughAPI(api http.Handler, remote map[string]bool) (http.Handler, error) {
	var base *url.URL
	if a.d.SearchBaseURL != "" {
		u, err := url.Parse(a.d.SearchBaseURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("search base URL %q is not a URL", a.d.SearchBaseURL)
		}
		base = u
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target(pr.In.Context(), base))
		},
		Transport: searchTransport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			httpapi.Refuse(w, apperr.CodeUpstreamFailed, "", fmt.Sprintf("%s %s: the HTTP API at %s did not answer: %v", r.Method, r.URL.Path, target(r.Context(), base).Redacted(), err))
		},
	}
	search := map[string]bool{}
	for _, rt := range routes.Of(a.d.Routes, lambdas.Search) {
		search[rt.Pattern()] = true
	}
	send := func(pattern string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if target(r.Context(), base) == nil {
				httpapi.Error(w, r, fmt.Errorf("no HTTP API to send %s %s to (SEARCH_BASE_URL is unset and the request's address is unknown)", r.Method, r.URL.Path))
				return
			}
			if budget := httpapi.Budget(r.Context()); search[pattern] && budget < httpapi.ListBudget {
				rec := httptest.NewRecorder()
				proxy.ServeHTTP(rec, r)
				recut(w, rec, budget)
				return
			}
			proxy.ServeHTTP(w, r)
		})
	}
	// The remote routes' patterns (literal, or with an {id}); every other
	// request reaches api as it is.
	mux := http.NewServeMux()
	for p := range remote {
		mux.Handle(p, send(p))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, pattern := mux.Handler(r); pattern != "" && remote[pattern] {
			h.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}), nil
}

// recut writes the search function's answer rec ending its page within
// budget (the lower budget of an MCP tool's call, which an HTTP request
// does not carry), as the search function would have ended it: the
// records that fit, metadata.truncated when some did not.
func recut(w http.ResponseWriter, rec *httptest.ResponseRecorder, budget int) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	var page struct {
		Data     []json.RawMessage         `json:"data"`
		Metadata recordsapi.SearchMetadata `json:"metadata"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return
	}
	w.Header().Del("Content-Length")
	recordsapi.WriteSearchPage(w, page.Metadata, page.Data, budget)
}

// searchTransport reaches the HTTP API: connections are kept between
// invocations of a warm function; a request ends with the caller's.
var searchTransport = &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	ForceAttemptHTTP2:     true,
	MaxIdleConnsPerHost:   8,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 29 * time.Second, // API Gateway's integration timeout, with a second to spare
}

// originKey is the context key of the MCP request's origin.
type originKey struct{}

// origin is the scheme and host r came to: on Lambda, https and API
// Gateway's domain name (the proxy adapter's request URL); on a plain
// server, its Host.
func origin(r *http.Request) *url.URL {
	u := &url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host}
	if u.Host == "" {
		u.Host = r.Host
	}
	if u.Scheme == "" {
		u.Scheme = "http"
		if r.TLS != nil {
			u.Scheme = "https"
		}
	}
	return u
}

// target is where a search goes: base, or the origin of the MCP request
// in ctx; nil when neither is known.
func target(ctx context.Context, base *url.URL) *url.URL {
	if base != nil {
		return base
	}
	u, _ := ctx.Value(originKey{}).(*url.URL)
	return u
}
