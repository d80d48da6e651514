package service

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/series"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/usage"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Deps are the services a process built (Build): what the features' APIs
// are served over (each feature's operation.Feature; package api's
// Handler serves them all).
type Deps struct {
	Store *store.Store
	Keys  *apikeys.Service
	// Orgs are the organizations' statuses (suspended, being deleted:
	// apikeys.Status), each read at most once per key cache window: what
	// webhook triggers, the events function and deliveries check.
	Orgs      *apikeys.StatusCache
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
	// Usage adds up each organization's requests and capacity units per
	// day (list-orgs reads them); nil: not counted.
	Usage *usage.Recorder
	// NewMCP makes the MCP endpoint over the API, its authenticator, its
	// OpenAPI document and the registry's tools (MCP; package mcpserver);
	// only the functions serving /mcp have one.
	NewMCP func(api http.Handler, a *auth.Authenticator, openAPI []byte, offer routes.MCP) (http.Handler, error)
	// Search answers the search routes; only the functions that serve
	// them (the search function, the dev server) have one, so that the
	// others do not carry a search engine.
	Search search.Engine
	// Present presents a stored record of a kind (its stored JSON and
	// shape stamp) as GET answers it: companies and the declared
	// resources; false for another kind. A list's expand= reads related
	// records of any kind through it.
	Present func(d *resource.Def) (resource.Presenter, bool)
	// SearchBaseURL is where the MCP tools of a function without Search
	// send the search routes: the HTTP API's base URL; "" means the
	// address the MCP request came to (on Lambda, API Gateway's domain).
	SearchBaseURL string
}

// Guards are the middleware of every operation (operation.Handler):
// authenticate, the credentials and rate limits of /v1, and idempotency,
// Idempotency-Key's replays.
func (d Deps) Guards() (authenticate, idempotency func(http.Handler) http.Handler) {
	return httpapi.Authenticate(d.Auth, d.Limits, d.Usage), httpapi.Idempotency(d.Store)
}
