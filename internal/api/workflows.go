package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/workflows"
)

func (a *API) createWorkflow(w http.ResponseWriter, r *http.Request) {
	if in, ok := decodeBody(w, r, workflows.DecodeCreate); ok {
		reply(w, r, http.StatusCreated)(a.d.Workflows.Create(r.Context(), principal(r).OrgID, in))
	}
}

func (a *API) listWorkflows(w http.ResponseWriter, r *http.Request) {
	if q, ok := pageQuery(w, r); ok {
		list[workflows.Workflow](w, r)(a.d.Workflows.List(r.Context(), principal(r).OrgID, q))
	}
}

func (a *API) getWorkflow(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusOK)(a.d.Workflows.Get(r.Context(), principal(r).OrgID, r.PathValue("id")))
}

func (a *API) updateWorkflow(w http.ResponseWriter, r *http.Request) {
	if in, ok := decodeBody(w, r, workflows.DecodeUpdate); ok {
		reply(w, r, http.StatusOK)(a.d.Workflows.Update(r.Context(), principal(r).OrgID, r.PathValue("id"), in))
	}
}

func (a *API) deleteWorkflow(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.d.Workflows.Delete(r.Context(), principal(r).OrgID, r.PathValue("id")))
}

// rotateWebhookSecret is an admin-only route (RotatingWebhookSecrets): the
// answer holds the new secret.
func (a *API) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusOK)(a.d.Workflows.RotateSecret(r.Context(), principal(r).OrgID, r.PathValue("id")))
}
