// Package api is the registry of the service's operations (Operations):
// each declared once, next to its handler — a thin function that reads
// the request, calls a domain service and writes the envelope — with its
// route and policies. The router, the OpenAPI document, the MCP tools and
// the route table of the CDK stack and SAM template are derived from it.
package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/api/mcpapi"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/endpoints"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/events"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/keys"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/metrics"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Deps are the services the handlers use.
type Deps struct {
	Store     *store.Store
	Keys      *keys.Service
	Auth      *auth.Authenticator
	Companies *companies.Service
	Workflows *workflows.Service
	Runs      *runs.Service
	// Enrichment writes and reconciles candidate values of records.
	Enrichment *enrichment.Service
	// Metrics writes and reads metric series.
	Metrics *metrics.Service
	// Resources serves the declared resources (package resources).
	Resources *resource.Registry
	// Entries are the records on lists.
	Entries *resources.Entries
	// History is the change history (GET /v1/events).
	History *events.History
	// Endpoints are the outbound webhook endpoints and their deliveries.
	Endpoints *endpoints.Service
	// Jobs are the bulk imports and exports (JobTargets are what they
	// move); nil: their routes answer 503.
	Jobs *jobs.Service
	// Limits counts the requests of each key and trigger against their
	// organization's rate limits; nil: no limits.
	Limits *ratelimit.Limiter
	// NewMCP makes the MCP endpoint over the API, its authenticator, its
	// OpenAPI document and the registry's tools (MCP; package mcpserver);
	// only the functions serving /mcp have one.
	NewMCP func(api http.Handler, a *auth.Authenticator, openAPI []byte, offer routes.MCP) (http.Handler, error)
	// Search answers the search routes; only the functions that serve
	// them (the search function, the dev server) have one, so that the
	// others do not carry a search engine.
	Search search.Engine
	// SearchBaseURL is where the MCP tools of a function without Search
	// send the search routes: the HTTP API's base URL; "" means the
	// address the MCP request came to (on Lambda, API Gateway's domain).
	SearchBaseURL string
}

// API serves the resource groups.
type API struct {
	d Deps

	recordsOnce sync.Once
	recordsAPI  *recordsapi.API

	mcpOnce sync.Once
	mcpAPI  *mcpapi.API
}

// New returns the API over d.
func New(d Deps) *API { return &API{d: d} }

// serviceOperations are the service's own: the health check and the
// OpenAPI document, public and fixed.
func serviceOperations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(fn.Keys, http.MethodGet, routes.HealthPath, (*API).health).InTopic("service").Answers(routes.AnswerFixed).Doc(func(op *openapi.Operation) {
			op.Summary, op.Raw = "Check the service's health", true
			op.Description = "200 when the table answers within 2 seconds, else 503."
			op.Data = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"status"},
				"properties": openapi.Schema{"status": openapi.Schema{"type": "string", "enum": []any{"ok"}}}}
			op.Errors = []int{503}
		}),
		operation.Declare(fn.Keys, http.MethodGet, routes.OpenAPIPath, (*API).serveOpenAPI).InTopic("service").Answers(routes.AnswerFixed).Doc(func(op *openapi.Operation) {
			op.Summary, op.Raw = "Get this OpenAPI document", true
			op.Description = "The one `/v1` route without credentials. Compressed with gzip when `Accept-Encoding` allows it " +
				"(`Content-Encoding: gzip`); its `ETag` is the document's digest: with `If-None-Match` naming it, the answer is 304 without a body."
			op.Data = openapi.Schema{"type": "object", "additionalProperties": true}
			op.ETag, op.NotModified = true, true
			op.Headers = []openapi.Param{{Name: "If-None-Match", Schema: openapi.Schema{"type": "string"},
				Description: "the `ETag` of a copy the client holds: 304 when it is still the current document"}}
			op.ResponseHeaders = map[string]openapi.Param{"Content-Encoding": {Schema: openapi.Schema{"type": "string", "enum": []any{"gzip"}},
				Description: "`gzip` when the request's `Accept-Encoding` allows it; absent otherwise"}}
		}),
	}
}

// HealthTimeout bounds the health check's table call, shorter than a
// storage call's deadline: a load balancer or operator learns quickly
// that the table does not answer.
const HealthTimeout = 2 * time.Second

// health answers 200 when the table answers, else 503 with Retry-After.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
	defer cancel()
	if err := a.d.Store.Ping(ctx); err != nil {
		if !errors.Is(err, apperr.ErrUnavailable) {
			err = apperr.Unavailable(err, "health check: %v", err)
		}
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// EventCatalog is every kind of record that has events (kinds.Events).
func EventCatalog() *events.Catalog { return kinds.Events() }

// SchemaName is the component name of d's records (openapi.SchemaName).
func SchemaName(d *resource.Def) string { return openapi.SchemaName(d) }

// Searchable lists the resources with a search operation, in route order
// (recordsapi.Searchable).
func Searchable() []*resource.Def { return recordsapi.Searchable() }

// JobTargets are what bulk jobs import and export, over d's services
// (recordsapi.JobTargets).
func JobTargets(d Deps) []jobs.Target { return recordsapi.JobTargets(d.records()) }

// records are the services of the records' handlers.
func (d Deps) records() recordsapi.Deps {
	return recordsapi.Deps{Store: d.Store, Companies: d.Companies, Workflows: d.Workflows, Runs: d.Runs,
		Enrichment: d.Enrichment, Resources: d.Resources, Search: d.Search, Limits: d.Limits}
}

// records is the API of the records' handlers, made once.
func (a *API) records() *recordsapi.API {
	a.recordsOnce.Do(func() { a.recordsAPI = recordsapi.New(a.d.records()) })
	return a.recordsAPI
}

// mcp is the API of POST /mcp, made once: the MCP server over this API's
// handler (every function's operations).
func (a *API) mcp() *mcpapi.API {
	a.mcpOnce.Do(func() {
		a.mcpAPI = mcpapi.New(mcpapi.Deps{Tools: func() http.Handler { return a.Handler() }, OpenAPI: OpenAPI, Offer: MCP(),
			Routes: Routes(), Remote: a.remoteRoutes(), NewMCP: a.d.NewMCP, Auth: a.d.Auth, Limits: a.d.Limits, SearchBaseURL: a.d.SearchBaseURL})
	})
	return a.mcpAPI
}
