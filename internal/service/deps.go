package service

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/enrichmentapi"
	"github.com/sourcebase/sourcebase/internal/api/eventsapi"
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/api/keysapi"
	"github.com/sourcebase/sourcebase/internal/api/listsapi"
	"github.com/sourcebase/sourcebase/internal/api/mcpapi"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/api/seriesapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/endpoints"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/series"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Deps are the services a process built (Build): what the features' APIs
// are served over (Handler).
type Deps struct {
	Store     *store.Store
	Keys      *apikeys.Service
	Auth      *auth.Authenticator
	Companies *companies.Service
	Workflows *workflows.Service
	Runs      *runs.Service
	// Enrichment writes and reconciles candidate values of records.
	Enrichment *enrichment.Service
	// Series writes and reads metric series.
	Series *series.Service
	// Resources serves the declared resources (package resources).
	Resources *resource.Registry
	// Entries are the records on lists.
	Entries *resources.Entries
	// History is the change history (GET /v1/events).
	History *history.History
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

// Handler serves the operations of the given functions (every function
// when none) over d: each feature's API over the services it uses (the
// registry of features: api.Handler).
func Handler(d Deps, functions ...string) http.Handler {
	f := &api.Features{
		Service:    api.NewService(d.Store),
		Keys:       keysapi.New(d.Keys, d.Auth),
		Records:    recordsapi.New(d.records()),
		Workflows:  workflowsapi.New(d.Workflows, d.Runs, d.Limits),
		Lists:      listsapi.New(d.Entries),
		Series:     seriesapi.New(d.Series),
		Enrichment: enrichmentapi.New(d.Enrichment),
		Jobs:       jobsapi.New(d.Jobs),
		Events:     eventsapi.New(d.History, d.Endpoints, eventsapi.AdminOnly(api.Routes())),
	}
	authenticate, idempotency := httpapi.Authenticate(d.Auth, d.Limits), httpapi.Idempotency(d.Store)
	// The MCP tools call every function's operations in process, made on
	// the first message.
	f.MCP = mcpapi.New(mcpapi.Deps{Tools: func() http.Handler { return api.Handler(f, authenticate, idempotency) },
		OpenAPI: api.OpenAPI, Offer: api.MCP(), Routes: api.Routes(), Remote: api.RemoteRoutes(d.Search != nil, d.Jobs != nil),
		NewMCP: d.NewMCP, Auth: d.Auth, Limits: d.Limits, SearchBaseURL: d.SearchBaseURL})
	return api.Handler(f, authenticate, idempotency, functions...)
}

// JobTargets are what bulk jobs import and export, over d's services
// (recordsapi.JobTargets).
func JobTargets(d Deps) []jobs.Target { return recordsapi.JobTargets(d.records()) }

// records are the services of the records' handlers.
func (d Deps) records() recordsapi.Deps {
	return recordsapi.Deps{Store: d.Store, Companies: d.Companies, Workflows: d.Workflows, Runs: d.Runs,
		Enrichment: d.Enrichment, Resources: d.Resources, Search: d.Search, Limits: d.Limits}
}
