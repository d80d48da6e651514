package api

import (
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// RemoteRoutes are the routes (patterns) whose tools a function without
// their service sends to the HTTP API (mcpapi.Deps.Remote): the search routes
// without a search engine (the mcp function carries none), the bulk jobs'
// without jobs (it links no S3 client).
func RemoteRoutes(hasSearch, hasJobs bool) map[string]bool {
	remote := map[string]bool{}
	if !hasSearch {
		for _, rt := range routes.Of(Routes(), lambdas.Search) {
			remote[rt.Pattern()] = true
		}
	}
	if !hasJobs {
		for _, op := range jobsapi.Operations() {
			remote[op.Pattern()] = true
		}
	}
	return remote
}
