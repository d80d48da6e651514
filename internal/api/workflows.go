package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// workflowOperations are the generic operations of workflows (with MCP
// tools list_workflows and get_workflow), and the rotation of a trigger's
// secret.
func workflowOperations() []Operation {
	k := kind[workflows.Workflow]{def: workflows.Def}
	k.reads, k.writes = records(func(a *API) interface {
		reader[workflows.Workflow]
		writer
	} {
		return workflowRecords{a.d.Workflows}
	})
	return append(recordOperations(k),
		declare(fn.Workflows, http.MethodPost, "/v1/workflows/{id}/trigger/webhook-secret/rotate", (*API).rotateWebhookSecret).
			admin(RotatingWebhookSecrets).answers(routes.AnswerRecord).of(workflows.Def.Name).doc(func(op *openapi.Operation) {
			op.Summary = "Rotate a workflow's webhook secret"
			op.Description = "Admin keys only. Answers the trigger with its new `secret`, shown this once; the old secret stops working at once."
			op.Data = openapi.Ref("WebhookTrigger")
		}),
	)
}

// rotateWebhookSecret is an admin-only route (RotatingWebhookSecrets): the
// answer holds the new secret.
func (a *API) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusOK)(a.d.Workflows.RotateSecret(r.Context(), principal(r).OrgID, r.PathValue("id")))
}
