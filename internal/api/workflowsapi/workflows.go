// Package workflowsapi serves workflows and their runs: their records
// through the generic operations of a kind (recordsapi.KindOperations),
// and what they do beyond them: rotating a trigger's secret, starting,
// renaming and retrying runs, and the intake of signed webhook deliveries
// that start them (package runs).
package workflowsapi

import (
	"github.com/sourcebase/sourcebase/internal/apikeys"
	"net/http"
	"reflect"
	"slices"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
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

// API serves the workflows' and runs' routes.
type API struct {
	*recordsapi.Base
	workflows *workflows.Service
	runs      *runs.Service
	limits    *ratelimit.Limiter
	orgs      *apikeys.StatusCache // nil: no organization is suspended
}

// New returns the API over the generic operations' base, the workflows,
// the runs and the rate limits a webhook delivery counts against (nil:
// none).
func New(b *recordsapi.Base, w *workflows.Service, r *runs.Service, l *ratelimit.Limiter) *API {
	return &API{Base: b, workflows: w, runs: r, limits: l}
}

// Feature is the workflows' triggers and runs, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("workflows", Operations, Schemas, func(d service.Deps) *API {
	a := New(recordsapi.NewBase(d.Store, d.Search, d.Limits, d.Present), d.Workflows, d.Runs, d.Limits)
	a.orgs = d.Orgs
	return a
})

// Schemas adds the workflows' and runs' component schemas to out: their
// records' (recordsapi.SchemasOf) and a workflow's webhook trigger.
func Schemas(out map[string]openapi.Schema) {
	recordsapi.SchemasOf(workflows.Def, runs.Def)(out)
	out["WebhookTrigger"] = openapi.TypeOf(reflect.TypeFor[workflows.WebhookTrigger]())
}

// Operations are the workflows' and runs' operations: their records'
// generic ones (recordsapi.KindOperations), then a trigger's secret, a
// run's start, rename and retry, and the webhook deliveries that start
// runs.
func Operations() []operation.Operation {
	return slices.Concat(workflowOperations(), runRecordOperations(), SecretOperations(), RunOperations(), WebhookOperations())
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
