// Command mcp is the Lambda function of the Model Context Protocol
// endpoint (/mcp): its tools call the other groups' routes in process and
// the search routes through the HTTP API (SEARCH_BASE_URL), so it carries
// no search engine; it is the one function that links the MCP SDK.
package main

import (
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
)

func main() { app.ServeLambda(fn.MCP, func(d *api.Deps) { d.NewMCP = mcpserver.Handler }) }
