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
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Service serves the service's own routes: the health check and this
// document.
type Service struct{ store *store.Store }

// NewService returns the service's own routes over the table the health
// check pings.
func NewService(st *store.Store) *Service { return &Service{store: st} }

// serviceOperations are the service's own: the health check and the
// OpenAPI document, public and fixed.
func serviceOperations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(lambdas.Keys, http.MethodGet, routes.HealthPath, (*Service).health).InTopic("service").Answers(routes.AnswerFixed).Doc(func(op *openapi.Operation) {
			op.Summary, op.Raw = "Check the service's health", true
			op.Description = "200 when the table answers within 2 seconds, else 503."
			op.Data = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"status"},
				"properties": openapi.Schema{"status": openapi.Schema{"type": "string", "enum": []any{"ok"}}}}
			op.Errors = []int{503}
		}),
		operation.Declare(lambdas.Keys, http.MethodGet, routes.OpenAPIPath, (*Service).serveOpenAPI).InTopic("service").Answers(routes.AnswerFixed).Doc(func(op *openapi.Operation) {
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
func (a *Service) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		if !errors.Is(err, apperr.ErrUnavailable) {
			err = apperr.Unavailable(err, "health check: %v", err)
		}
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
