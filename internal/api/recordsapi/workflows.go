package recordsapi

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// RotatingWebhookSecrets is what rotating a trigger's secret is, as its
// 403 names it ("rotating a webhook secret requires an admin key").
const RotatingWebhookSecrets = "rotating a webhook secret"

// WorkflowOperations are the generic operations of workflows (with MCP
// tools list_workflows and get_workflow), and the rotation of a trigger's
// secret.
func WorkflowOperations() []operation.Operation {
	k := kind[workflows.Workflow]{def: workflows.Def}
	k.reads, k.writes = records(func(a *API) interface {
		reader[workflows.Workflow]
		writer
	} {
		return workflowRecords{a.d.Workflows}
	})
	return append(recordOperations(k),
		operation.Declare(fn.Workflows, http.MethodPost, "/v1/workflows/{id}/trigger/webhook-secret/rotate", (*API).rotateWebhookSecret).
			AdminOnly(RotatingWebhookSecrets).Answers(routes.AnswerRecord).Of(workflows.Def.Name).Doc(func(op *openapi.Operation) {
			op.Summary = "Rotate a workflow's webhook secret"
			op.Description = "Admin keys only. Answers the trigger with its new `secret`, shown this once; the old secret stops working at once."
			op.Data = openapi.Ref("WebhookTrigger")
		}),
	)
}

// rotateWebhookSecret is an admin-only route (RotatingWebhookSecrets): the
// answer holds the new secret.
func (a *API) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	httpapi.Reply(w, r, http.StatusOK)(a.d.Workflows.RotateSecret(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id")))
}
