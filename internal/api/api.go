// Package api holds the HTTP handlers of every resource group: thin
// functions that read the request, call a domain service and write the
// envelope. The route table decides which group serves which path.
package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/keys"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
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
	// Resources serves the declared resources (package resources).
	Resources *resource.Registry
	// Entries are the records on lists.
	Entries *resources.Entries
}

// API serves the resource groups.
type API struct{ d Deps }

// New returns the API over d.
func New(d Deps) *API { return &API{d: d} }

// Handler serves the routes of the given groups (every group when none).
func (a *API) Handler(groups ...string) http.Handler {
	return httpapi.NewRouter(routes.Of(groups...), a.Handlers(), httpapi.Authenticate(a.d.Auth), httpapi.Idempotency(a.d.Store))
}

// Handlers maps every route pattern of the table to its handler.
func (a *API) Handlers() map[string]http.Handler {
	h := a.handWritten()
	a.resourceHandlers(h)
	return h
}

// handWritten maps the routes written by hand to their handlers.
func (a *API) handWritten() map[string]http.Handler {
	return map[string]http.Handler{
		"GET /healthz":               http.HandlerFunc(a.health),
		"GET /v1/keys":               http.HandlerFunc(a.listKeys),
		"DELETE /v1/keys/{clientId}": http.HandlerFunc(a.revokeKey),
		"POST /v1/companies":         http.HandlerFunc(a.createCompany),
		"GET /v1/companies":          http.HandlerFunc(a.listCompanies),
		"GET /v1/companies/{id}":     http.HandlerFunc(a.getCompany),
		"PUT /v1/companies/{id}":     http.HandlerFunc(a.updateCompany),
		"DELETE /v1/companies/{id}":  http.HandlerFunc(a.deleteCompany),

		"POST /v1/workflows":                                    http.HandlerFunc(a.createWorkflow),
		"GET /v1/workflows":                                     http.HandlerFunc(a.listWorkflows),
		"GET /v1/workflows/{id}":                                http.HandlerFunc(a.getWorkflow),
		"PUT /v1/workflows/{id}":                                http.HandlerFunc(a.updateWorkflow),
		"DELETE /v1/workflows/{id}":                             http.HandlerFunc(a.deleteWorkflow),
		"POST /v1/workflows/{id}/trigger/webhook-secret/rotate": http.HandlerFunc(a.rotateWebhookSecret),
		"POST /v1/workflows/{id}/runs":                          http.HandlerFunc(a.createRun),
		"GET /v1/workflows/{id}/runs":                           http.HandlerFunc(a.listWorkflowRuns),
		"GET /v1/workflow-runs":                                 http.HandlerFunc(a.listRuns),
		"GET /v1/workflow-runs/{id}":                            http.HandlerFunc(a.getRun),
		"PATCH /v1/workflow-runs/{id}":                          http.HandlerFunc(a.renameRun),
		"POST /v1/workflow-runs/{id}/retry":                     http.HandlerFunc(a.retryRun),

		"POST /webhooks/workflows/{slug}": http.HandlerFunc(a.receiveWebhook),

		"POST /v1/lists/{id}/entries":              http.HandlerFunc(a.addListEntry),
		"GET /v1/lists/{id}/entries":               http.HandlerFunc(a.listEntries),
		"DELETE /v1/lists/{id}/entries/{recordId}": http.HandlerFunc(a.removeListEntry),
	}
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
