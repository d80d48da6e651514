// Package workflowsapi serves what workflows and their runs do beyond
// the generic operations of their records (package recordsapi): rotating
// a trigger's secret, starting, listing, renaming and retrying runs, and
// the intake of signed webhook deliveries that start them (package runs).
package workflowsapi

import (
	"net/http"
	"slices"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// RotatingWebhookSecrets is what rotating a trigger's secret is, as its
// 403 names it ("rotating a webhook secret requires an admin key").
const RotatingWebhookSecrets = "rotating a webhook secret"

// API serves the workflows' and runs' own routes.
type API struct {
	workflows *workflows.Service
	runs      *runs.Service
	limits    *ratelimit.Limiter
}

// New returns the API over the workflows, the runs and the rate limits a
// webhook delivery counts against (nil: none).
func New(w *workflows.Service, r *runs.Service, l *ratelimit.Limiter) *API {
	return &API{workflows: w, runs: r, limits: l}
}

// Feature is the workflows' triggers and runs, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("workflows", Operations, nil, func(d service.Deps) *API { return New(d.Workflows, d.Runs, d.Limits) })

// Operations are the workflows' own operations: a trigger's secret, a
// run's start, rename and retry, and the webhook deliveries that start
// runs (their generic reads and writes are recordsapi's).
func Operations() []operation.Operation {
	return slices.Concat(SecretOperations(), RunOperations(), WebhookOperations())
}

// SecretOperations are the rotation of a trigger's secret.
func SecretOperations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(lambdas.Workflows, http.MethodPost, "/v1/workflows/{id}/trigger/webhook-secret/rotate", (*API).rotateWebhookSecret).
			AdminOnly(RotatingWebhookSecrets).Answers(routes.AnswerRecord).Of(workflows.Def.Name).Doc(func(op *openapi.Operation) {
			op.Summary = "Rotate a workflow's webhook secret"
			op.Description = "Admin keys only. Answers the trigger with its new `secret`, shown this once; the old secret stops working at once."
			op.Data = openapi.Ref("WebhookTrigger")
		}),
	}
}

// rotateWebhookSecret is an admin-only route (RotatingWebhookSecrets): the
// answer holds the new secret.
func (a *API) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	httpapi.Reply(w, r, http.StatusOK)(a.workflows.RotateSecret(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id")))
}
