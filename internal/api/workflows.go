package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

func (a *API) createWorkflow(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	in, err := workflows.DecodeCreate(body)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	wf, err := a.d.Workflows.Create(r.Context(), principal(r).OrgID, in)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusCreated, wf)
}

func (a *API) listWorkflows(w http.ResponseWriter, r *http.Request) {
	q, err := httpapi.ParsePage(r.URL.Query())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	wfs, err := a.d.Workflows.List(r.Context(), principal(r).OrgID, q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, wfs)
}

func (a *API) getWorkflow(w http.ResponseWriter, r *http.Request) {
	wf, err := a.d.Workflows.Get(r.Context(), principal(r).OrgID, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, wf)
}

func (a *API) updateWorkflow(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	in, err := workflows.DecodeUpdate(body)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	wf, err := a.d.Workflows.Update(r.Context(), principal(r).OrgID, r.PathValue("id"), in)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, wf)
}

func (a *API) deleteWorkflow(w http.ResponseWriter, r *http.Request) {
	if err := a.d.Workflows.Delete(r.Context(), principal(r).OrgID, r.PathValue("id")); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	t, err := a.d.Workflows.RotateSecret(r.Context(), principal(r).OrgID, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, t)
}
