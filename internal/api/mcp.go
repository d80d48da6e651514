package api

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/sourcebase/sourcebase/internal/httpapi"
)

// serveMCP is POST /mcp: the MCP server (Deps.NewMCP) over the whole API
// (every group, in process, and the search routes through the HTTP API
// when this function has no search engine), built on first use. Only the
// functions that serve it (the mcp function, the dev server) have one, so
// that the others do not carry the MCP SDK; without it the path is no
// endpoint.
func (a *API) serveMCP(w http.ResponseWriter, r *http.Request) {
	if a.d.NewMCP == nil {
		httpapi.ErrorBody(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.EscapedPath())
		return
	}
	a.mcpOnce.Do(func() {
		doc, err := OpenAPI()
		if err != nil {
			a.mcpErr = err
			return
		}
		tools := a.Handler()
		if a.d.Search == nil {
			tools, a.mcpErr = a.searchThroughAPI(tools)
			if a.mcpErr != nil {
				return
			}
		}
		a.mcp, a.mcpErr = a.d.NewMCP(tools, a.d.Auth, doc)
	})
	if a.mcpErr != nil {
		httpapi.Error(w, r, a.mcpErr)
		return
	}
	jw := &jsonErrors{ResponseWriter: w}
	a.mcp.ServeHTTP(jw, r.WithContext(context.WithValue(r.Context(), originKey{}, origin(r))))
	jw.finish()
}

// jsonErrors makes the MCP SDK's plain-text refusals (an Accept without
// application/json and text/event-stream, a Content-Type other than JSON,
// an unknown session) the service's {"error": ...} bodies, with their
// status.
type jsonErrors struct {
	http.ResponseWriter
	status int // a refusal being held, 0 otherwise
	msg    bytes.Buffer
}

func (w *jsonErrors) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrors) Write(b []byte) (int, error) {
	if w.status != 0 {
		return w.msg.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps streaming answers streaming.
func (w *jsonErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

func (w *jsonErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held refusal as {"error": message}.
func (w *jsonErrors) finish() {
	if w.status == 0 {
		return
	}
	w.Header().Del("X-Content-Type-Options")
	httpapi.ErrorBody(w.ResponseWriter, w.status, strings.TrimSpace(w.msg.String()))
}
