// Command mcp is the Lambda function of the Model Context Protocol
// endpoint (/mcp): its tools call the other groups' routes in process,
// search included, so it carries the search engines too; it is the one
// function that links the MCP SDK.
package main

import (
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
)

func main() {
	app.ServeSearch(routes.MCP, embedded.NewEngine, opensearch.NewEngine, func(d *api.Deps) { d.NewMCP = mcpserver.Handler })
}
