package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/runs"
)

func (a *API) createRun(w http.ResponseWriter, r *http.Request) {
	n, ok := decodeBody(w, r, runs.DecodeNewRun)
	if !ok {
		return
	}
	org := principal(r).OrgID
	wf, err := a.d.Workflows.Get(r.Context(), org, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	reply(w, r, http.StatusAccepted)(a.d.Runs.Create(r.Context(), org, wf, n))
}

func (a *API) listWorkflowRuns(w http.ResponseWriter, r *http.Request) {
	q, ok := pageQuery(w, r)
	if !ok {
		return
	}
	org := principal(r).OrgID
	wf, err := a.d.Workflows.Get(r.Context(), org, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	list[runs.Run](w, r)(a.d.Runs.List(r.Context(), org, wf.ID, q))
}

func (a *API) listRuns(w http.ResponseWriter, r *http.Request) {
	q, filter, value, err := httpapi.ParseList(r.URL.Query(), runs.Filters)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	list[runs.Run](w, r)(a.d.Runs.ListBy(r.Context(), principal(r).OrgID, q, filter, value))
}

func (a *API) getRun(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusOK)(a.d.Runs.Get(r.Context(), principal(r).OrgID, r.PathValue("id")))
}

func (a *API) renameRun(w http.ResponseWriter, r *http.Request) {
	if title, ok := decodeBody(w, r, runs.DecodeTitle); ok {
		reply(w, r, http.StatusOK)(a.d.Runs.Rename(r.Context(), principal(r).OrgID, r.PathValue("id"), title))
	}
}

func (a *API) retryRun(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusAccepted)(a.d.Runs.Retry(r.Context(), principal(r).OrgID, r.PathValue("id")))
}
