package workflowsapi

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
)

// RunOperations are what a client does to runs: start one, list a
// workflow's, rename, retry.
func RunOperations() []operation.Operation {
	run := openapi.Ref("WorkflowRun")
	return append([]operation.Operation{},
		operation.Declare(lambdas.Workflows, http.MethodPost, "/v1/workflows/{id}/runs", (*API).startRun).Answers(routes.AnswerRecord).Of(runs.Def.Name).
			AsTool("start_workflow_run", "Start a run of a workflow with an input. It is a dry run (nothing written; company steps say what they would do) "+
				"unless body.dryRun is false. Follow it with get_workflow_run.").ToolDefaults(map[string]any{"dryRun": true}).
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Status = "Start a run of a workflow", http.StatusAccepted
				op.Description = "Queues a run with the given input (202); it executes afterwards: follow it with `GET /v1/workflow-runs/{id}`."
				op.Body, op.BodyOptional = openapi.Record(runs.NewRunDef, openapi.Create), true
				op.Data = run
			}),
		operation.Declare(lambdas.Workflows, http.MethodGet, "/v1/workflows/{id}/runs", (*API).listWorkflowRuns).Answers(routes.AnswerPaged).Of(runs.Def.Name).
			Doc(func(op *openapi.Operation) {
				op.Summary = "List a workflow's runs"
				op.Description = "A page of the runs of one workflow, newest first."
				op.Query, op.Data, op.Paged = operation.ListQuery(runs.Def.SortFields(), nil), operation.ArrayOf("WorkflowRun"), true
			}),
		operation.Declare(lambdas.Workflows, http.MethodPatch, "/v1/workflow-runs/{id}", (*API).renameRun).Answers(routes.AnswerRecord).Of(runs.Def.Name).
			Doc(func(op *openapi.Operation) {
				op.Summary = "Rename a run"
				op.Description = "Changes the run's title, the only part of a run a client changes."
				op.Body, op.Data, op.ETag = openapi.Record(runs.TitleDef, openapi.Create), run, true
			}),
		operation.Declare(lambdas.Workflows, http.MethodPost, "/v1/workflow-runs/{id}/retry", (*API).retryRun).Answers(routes.AnswerRecord).Of(runs.Def.Name).
			AsTool("retry_workflow_run", "Retry a failed run once: a new run with the same input and dry-run setting.").
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Status = "Retry a failed run", http.StatusAccepted
				op.Description = "Starts a new run with the failed run's input and dry-run setting; a run is retried once (409 after)."
				op.Data = run
			}),
	)
}

// startRun starts a run of the workflow (runs.Service.Start).
func (a *API) startRun(w http.ResponseWriter, r *http.Request) {
	if n, ok := httpapi.DecodeBody(w, r, runs.DecodeNewRun); ok {
		httpapi.Reply(w, r, http.StatusAccepted)(a.runs.Start(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), n))
	}
}

func (a *API) listWorkflowRuns(w http.ResponseWriter, r *http.Request) {
	if q, ok := httpapi.PageQuery(w, r); ok {
		httpapi.ReplyPage[runs.Run](w, r)(a.runs.List(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), q))
	}
}

func (a *API) renameRun(w http.ResponseWriter, r *http.Request) {
	if title, ok := httpapi.DecodeBody(w, r, runs.DecodeTitle); ok {
		httpapi.Reply(w, r, http.StatusOK)(a.runs.Rename(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), title))
	}
}

func (a *API) retryRun(w http.ResponseWriter, r *http.Request) {
	httpapi.Reply(w, r, http.StatusAccepted)(a.runs.Retry(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id")))
}
