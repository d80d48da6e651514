package api

import (
	"net/http"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/input"
	"github.com/sourcebase/sourcebase/internal/runs"
)

// runTitle is the accepted title: 1 to 120 characters, not only spaces.
var runTitle = input.Text{Min: 1, Max: runs.MaxTitle, Trim: true}

func (a *API) createRun(w http.ResponseWriter, r *http.Request) {
	org := principal(r).OrgID
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	n := runs.NewRun{Trigger: runs.TriggerAPI}
	if len(strings.TrimSpace(string(body))) > 0 {
		o, err := input.ParseObject(body, "input", "dryRun", "title")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		in, err := o.FreeObject("input")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		dry, err := o.Bool("dryRun")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		title, err := o.String("title", runTitle)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if title.Null {
			httpapi.Error(w, r, apperr.Invalid("title", "must be a string of 1 to %d characters", runs.MaxTitle))
			return
		}
		n.Input, n.DryRun, n.Title = in.Value, dry.Value, title.Value
	}
	wf, err := a.d.Workflows.Get(r.Context(), org, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	run, err := a.d.Runs.Create(r.Context(), org, wf, n)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusAccepted, run)
}

func (a *API) listWorkflowRuns(w http.ResponseWriter, r *http.Request) {
	org := principal(r).OrgID
	q, err := httpapi.ParsePage(r.URL.Query())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	wf, err := a.d.Workflows.Get(r.Context(), org, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	rs, err := a.d.Runs.List(r.Context(), org, wf.ID, q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, rs)
}

func (a *API) listRuns(w http.ResponseWriter, r *http.Request) {
	q, err := httpapi.ParsePage(r.URL.Query())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	rs, err := a.d.Runs.List(r.Context(), principal(r).OrgID, "", q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, rs)
}

func (a *API) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := a.d.Runs.Get(r.Context(), principal(r).OrgID, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, run)
}

func (a *API) renameRun(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	o, err := input.ParseObject(body, "title")
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	title, err := o.String("title", runTitle)
	if err == nil && (!title.Set || title.Null) {
		err = apperr.Invalid("title", "is required: a string of 1 to %d characters", runs.MaxTitle)
	}
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	run, err := a.d.Runs.Rename(r.Context(), principal(r).OrgID, r.PathValue("id"), title.Value)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, run)
}

func (a *API) retryRun(w http.ResponseWriter, r *http.Request) {
	run, err := a.d.Runs.Retry(r.Context(), principal(r).OrgID, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusAccepted, run)
}
