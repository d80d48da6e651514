package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/httpapi"
)

// serveMCP is POST /mcp: the MCP server (Deps.NewMCP) over the whole API
// (every group, in process), built on first use. Only the functions that
// serve it (the mcp function, the dev server) have one, so that the others
// do not carry the MCP SDK; without it the path is no endpoint.
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
		a.mcp, a.mcpErr = a.d.NewMCP(a.Handler(), a.d.Auth, doc)
	})
	if a.mcpErr != nil {
		httpapi.Error(w, r, a.mcpErr)
		return
	}
	a.mcp.ServeHTTP(w, r)
}
