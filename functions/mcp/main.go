// Command mcp is the Lambda function of the Model Context Protocol
// endpoint (/mcp): its tools call the other groups' routes in process and
// the search routes through the HTTP API (SEARCH_BASE_URL), so it carries
// no search engine; it is the one function that links the MCP SDK. The
// documentation pages it offers as resources ship beside its bootstrap
// (routes.Function.Pages), not inside it.
package main

import (
	"os"
	"path/filepath"

	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/serve"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() {
	pages := os.DirFS(filepath.Join(taskRoot(), routes.PagesDir))
	serve.Lambda(lambdas.MCP, func(d *service.Deps) { d.NewMCP = mcpserver.Handler(pages) })
}

// taskRoot is the function's directory: LAMBDA_TASK_ROOT, as Lambda sets
// it, else the bootstrap's own.
func taskRoot() string {
	if d := os.Getenv("LAMBDA_TASK_ROOT"); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}
