package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
)

// runOperations are the generic list and get of workflow runs (with MCP
// tools list_workflow_runs and get_workflow_run), and what a client does
// to runs: start one, list a workflow's, rename, retry.
func runOperations() []Operation {
	k := kind[runs.Run]{def: runs.Def, reads: func(a *API) reader[runs.Run] { return runRecords{a.d.Runs} }}
	run := openapi.Ref("WorkflowRun")
	return append(recordOperations(k),
		declare(fn.Workflows, http.MethodPost, "/v1/workflows/{id}/runs", (*API).startRun).answers(routes.AnswerRecord).of(runs.Def.Name).
			tool("start_workflow_run", "Start a run of a workflow with an input. It is a dry run (nothing written; company steps say what they would do) "+
				"unless body.dryRun is false. Follow it with get_workflow_run.").toolDefaults(map[string]any{"dryRun": true}).
			doc(func(op *openapi.Operation) {
				op.Summary, op.Status = "Start a run of a workflow", http.StatusAccepted
				op.Description = "Queues a run with the given input (202); it executes afterwards: follow it with `GET /v1/workflow-runs/{id}`."
				op.Body, op.BodyOptional = openapi.Record(runs.NewRunDef, openapi.Create), true
				op.Data = run
			}),
		declare(fn.Workflows, http.MethodGet, "/v1/workflows/{id}/runs", (*API).listWorkflowRuns).answers(routes.AnswerPaged).of(runs.Def.Name).
			doc(func(op *openapi.Operation) {
				op.Summary = "List a workflow's runs"
				op.Description = "A page of the runs of one workflow, newest first."
				op.Query, op.Data, op.Paged = listQuery(runs.Def.SortFields(), nil), arrayOf("WorkflowRun"), true
			}),
		declare(fn.Workflows, http.MethodPatch, "/v1/workflow-runs/{id}", (*API).renameRun).answers(routes.AnswerRecord).of(runs.Def.Name).
			doc(func(op *openapi.Operation) {
				op.Summary = "Rename a run"
				op.Description = "Changes the run's title, the only part of a run a client changes."
				op.Body, op.Data, op.ETag = openapi.Record(runs.TitleDef, openapi.Create), run, true
			}),
		declare(fn.Workflows, http.MethodPost, "/v1/workflow-runs/{id}/retry", (*API).retryRun).answers(routes.AnswerRecord).of(runs.Def.Name).
			tool("retry_workflow_run", "Retry a failed run once: a new run with the same input and dry-run setting.").
			doc(func(op *openapi.Operation) {
				op.Summary, op.Status = "Retry a failed run", http.StatusAccepted
				op.Description = "Starts a new run with the failed run's input and dry-run setting; a run is retried once (409 after)."
				op.Data = run
			}),
	)
}

// startRun starts a run of the workflow (runs.Service.Start).
func (a *API) startRun(w http.ResponseWriter, r *http.Request) {
	if n, ok := decodeBody(w, r, runs.DecodeNewRun); ok {
		reply(w, r, http.StatusAccepted)(a.d.Runs.Start(r.Context(), principal(r).OrgID, r.PathValue("id"), n))
	}
}

func (a *API) listWorkflowRuns(w http.ResponseWriter, r *http.Request) {
	if q, ok := pageQuery(w, r); ok {
		list[runs.Run](w, r)(a.d.Runs.List(r.Context(), principal(r).OrgID, r.PathValue("id"), q))
	}
}

func (a *API) renameRun(w http.ResponseWriter, r *http.Request) {
	if title, ok := decodeBody(w, r, runs.DecodeTitle); ok {
		reply(w, r, http.StatusOK)(a.d.Runs.Rename(r.Context(), principal(r).OrgID, r.PathValue("id"), title))
	}
}

func (a *API) retryRun(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusAccepted)(a.d.Runs.Retry(r.Context(), principal(r).OrgID, r.PathValue("id")))
}
