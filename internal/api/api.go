// Package api holds the HTTP handlers of every resource group: thin
// functions that read the request, call a domain service and write the
// envelope. The route table decides which group serves which path.
package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/keys"
	"github.com/sourcebase/sourcebase/internal/metrics"
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
	// Limits counts the requests of each key and trigger against their
	// organization's rate limits; nil: no limits.
	Limits *ratelimit.Limiter
	// NewMCP makes the MCP endpoint over the API, its authenticator and
	// OpenAPI document (package mcpserver); only the functions serving
	// /mcp have one.
	NewMCP func(api http.Handler, a *auth.Authenticator, openAPI []byte) (http.Handler, error)
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

	mcpOnce sync.Once
	mcp     http.Handler
	mcpErr  error
	// mcpRemote are the routes ("POST /v1/companies/search") whose REST
	// calls the MCP tools send to the HTTP API (the search routes of a
	// function without a search engine).
	mcpRemote map[string]bool
}

// New returns the API over d.
func New(d Deps) *API { return &API{d: d} }

// Handler serves the routes of the given groups (every group when none);
// a route of another group answers as an unknown one, and a known path
// with a wrong method 405, whichever group serves it.
func (a *API) Handler(groups ...string) http.Handler {
	eps := a.endpoints()
	handlers := make(map[string]http.Handler, len(eps))
	table := make([]routes.Route, len(eps))
	for i, ep := range eps {
		table[i] = ep.Route
		if len(groups) == 0 || slices.Contains(groups, ep.Group) {
			handlers[ep.Pattern()] = ep.handler
		}
	}
	return httpapi.NewRouter(table, handlers, httpapi.Authenticate(a.d.Auth, a.d.Limits), httpapi.Idempotency(a.d.Store))
}

// Routes is the route table of the service: every route, each declared
// once, with its handler, below (and for the declared resources, by their
// declarations).
func Routes() []routes.Route {
	eps := New(Deps{}).endpoints()
	out := make([]routes.Route, len(eps))
	for i, ep := range eps {
		out[i] = ep.Route
	}
	return out
}

// endpoint is a route and its handler.
type endpoint struct {
	routes.Route
	handler http.Handler
}

// endpoints declares every route with its handler: those written by hand,
// then those of every declared resource.
func (a *API) endpoints() []endpoint {
	route := func(group, method, path string, h http.HandlerFunc) endpoint {
		return endpoint{routes.Route{Group: group, Method: method, Path: path}, h}
	}
	// adminOnly declares an admin-only route: member keys are refused 403
	// "<action> requires an admin key" by the router.
	adminOnly := func(action string, ep endpoint) endpoint {
		ep.Admin = action
		return ep
	}
	// Every slug reaches the webhook handler, however long: one that leads
	// to no trigger is answered exactly as a wrong secret (runs.Receive).
	webhook := route(fn.Webhook, "POST", "/webhooks/workflows/{slug}", a.receiveWebhook)
	webhook.MaxParam = math.MaxInt
	eps := []endpoint{
		route(fn.Keys, "GET", routes.HealthPath, a.health),
		route(fn.Keys, "GET", routes.OpenAPIPath, a.serveOpenAPI),
		adminOnly(ManagingKeys, route(fn.Keys, "GET", "/v1/keys", a.listKeys)),
		adminOnly(ManagingKeys, route(fn.Keys, "DELETE", "/v1/keys/{clientId}", a.revokeKey)),

		route(fn.Companies, "POST", "/v1/companies", a.createCompany),
		route(fn.Companies, "GET", "/v1/companies", a.listCompanies),
		route(fn.Companies, "GET", "/v1/companies/{id}", a.getCompany),
		route(fn.Companies, "PUT", "/v1/companies/{id}", a.updateCompany),
		route(fn.Companies, "DELETE", "/v1/companies/{id}", a.deleteCompany),

		route(fn.Workflows, "POST", "/v1/workflows", a.createWorkflow),
		route(fn.Workflows, "GET", "/v1/workflows", a.listWorkflows),
		route(fn.Workflows, "GET", "/v1/workflows/{id}", a.getWorkflow),
		route(fn.Workflows, "PUT", "/v1/workflows/{id}", a.updateWorkflow),
		route(fn.Workflows, "DELETE", "/v1/workflows/{id}", a.deleteWorkflow),
		adminOnly(RotatingWebhookSecrets, route(fn.Workflows, "POST", "/v1/workflows/{id}/trigger/webhook-secret/rotate", a.rotateWebhookSecret)),
		route(fn.Workflows, "POST", "/v1/workflows/{id}/runs", a.createRun),
		route(fn.Workflows, "GET", "/v1/workflows/{id}/runs", a.listWorkflowRuns),
		route(fn.Workflows, "GET", "/v1/workflow-runs", a.listRuns),
		route(fn.Workflows, "GET", "/v1/workflow-runs/{id}", a.getRun),
		route(fn.Workflows, "PATCH", "/v1/workflow-runs/{id}", a.renameRun),
		route(fn.Workflows, "POST", "/v1/workflow-runs/{id}/retry", a.retryRun),

		webhook,

		route(fn.MCP, "POST", routes.MCPPath, a.serveMCP),

		route(fn.Documents, "POST", "/v1/lists/{id}/entries", a.addListEntry),
		route(fn.Documents, "GET", "/v1/lists/{id}/entries", a.listEntries),
		route(fn.Documents, "DELETE", "/v1/lists/{id}/entries/{recordId}", a.removeListEntry),
	}
	eps = append(eps, a.dataEndpoints()...)
	eps = append(eps, a.enrichmentEndpoints()...)
	eps = append(eps, a.searchEndpoints()...)
	return append(eps, a.resourceEndpoints()...)
}

// principal is the authenticated caller; the router guarantees one on /v1.
func principal(r *http.Request) auth.Principal {
	p, _ := auth.FromContext(r.Context())
	return p
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
