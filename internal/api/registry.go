package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/api/enrichmentapi"
	"github.com/sourcebase/sourcebase/internal/api/eventsapi"
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/api/keysapi"
	"github.com/sourcebase/sourcebase/internal/api/listsapi"
	"github.com/sourcebase/sourcebase/internal/api/mcpapi"
	"github.com/sourcebase/sourcebase/internal/api/resourcesapi"
	"github.com/sourcebase/sourcebase/internal/api/seriesapi"
	"github.com/sourcebase/sourcebase/internal/api/serviceapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/service"
)

// Operations is the registry: every operation of the service, each
// declared once with its handler — the hand-written ones in the file of
// their handlers, those of every kind of record (declared resources,
// companies, workflows, runs) by recordOperations from their
// declarations.
func Operations() []operation.Operation { return slices.Clone(registry()) }

var (
	registryOnce sync.Once
	registered   []operation.Operation
)

// registry is the registry, declared on first use.
func registry() []operation.Operation {
	registryOnce.Do(func() {
		var groups [][]operation.Operation
		for _, f := range features() {
			groups = append(groups, f.Operations())
		}
		registered = operation.Collect(groups...)
	})
	return registered
}

// mcpFeature names the MCP bridge, whose API serves the others
// (Handler makes it).
const mcpFeature = "mcp"

// features are the service's features, in the order the registry lists
// their operations (the reference's and the MCP tools' order): the
// service's own routes, the keys, the companies, the workflows and their
// runs, the declared resources, lists, series, enrichment, bulk jobs,
// events and webhook endpoints, and the MCP bridge.
func features() []operation.Feature[service.Deps] {
	return []operation.Feature[service.Deps]{
		operation.NewFeature("service", serviceapi.Operations, nil, func(d service.Deps) *serviceapi.API { return serviceapi.New(d.Store, OpenAPI) }),
		keysapi.Feature, companiesapi.Feature, workflowsapi.Feature, resourcesapi.Feature, listsapi.Feature, seriesapi.Feature,
		enrichmentapi.Feature, jobsapi.Feature, eventsapi.Feature,
		{Name: mcpFeature, Operations: mcpapi.Operations},
	}
}

// Routes is the route table: the registry's routes and policies.
func Routes() []routes.Route { return operation.Routes(registry()) }

// Handler serves the operations of the given functions (every function
// when none) over d's services, each feature's over its API, behind the
// credentials and rate limits of /v1 and Idempotency-Key
// (operation.Handler); the MCP bridge's tools call every function's
// operations in process.
func Handler(d service.Deps, functions ...string) http.Handler {
	authenticate, idempotency := d.Guards()
	var all []operation.Bound
	mcp := mcpapi.New(mcpapi.Deps{Tools: func() http.Handler { return operation.Handler(all, nil, authenticate, idempotency) },
		OpenAPI: OpenAPI, Offer: MCP(), Routes: Routes(), Remote: RemoteRoutes(d.Search != nil, d.Jobs != nil),
		NewMCP: d.NewMCP, Auth: d.Auth, Limits: d.Limits, Usage: d.Usage, SearchBaseURL: d.SearchBaseURL})
	all = operation.Bind(d, map[string]any{mcpFeature: mcp}, features()...)
	return operation.Handler(all, functions, authenticate, idempotency)
}

// MCP is what the MCP server offers (service.Deps.NewMCP): the tools of the
// registry's operations, in registry order, and the kinds of record they
// read.
func MCP() routes.MCP {
	var out routes.MCP
	for _, op := range registry() {
		if op.Tool == nil {
			continue
		}
		out.Tools = append(out.Tools, *op.Tool)
		if op.Resource != "" && !slices.Contains(out.Records, op.Resource) {
			out.Records = append(out.Records, op.Resource)
		}
	}
	return out
}

// DocRoutes are the routes that serve d's records, for docs/resources.md
// (resources.Markdown): its generic operations, which its declaration
// describes, then the others, each with its summary, status and
// description from the OpenAPI text it is declared with.
func DocRoutes(d *resource.Def) []resource.DocRoute {
	var out []resource.DocRoute
	for _, op := range registry() {
		if op.Resource != d.Name {
			continue
		}
		r := resource.DocRoute{Method: op.Method, Path: op.Path}
		if !op.Generic {
			doc := describe(op)
			r.Answer = fmt.Sprintf("%s: `%d`. %s", doc.Summary, doc.Status, strings.ReplaceAll(doc.Description, "|", `\|`))
		}
		out = append(out, r)
	}
	return out
}
