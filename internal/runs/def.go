package runs

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Def declares the run record on the resource layer, as Run shows it, for
// docs/resources.md. Runs are made by starting a workflow (NewRunDef), a
// webhook or a retry, and change by their engine; only the title is the
// client's to change (TitleDef).
var Def = &resource.Def{
	Name: "workflow-runs", Singular: "workflow run", Type: store.TypeRun, IDPrefix: "run", Function: lambdas.Workflows, MCP: true,
	Section: "Workflows",
	Doc: "A run of a workflow: queued, then completed or failed, once (running meanwhile when it executes for more than a second). Started with " +
		"`POST /v1/workflows/{id}/runs`, by a webhook to the workflow's trigger, or as the retry of a failed run.",
	NoUpdatedAt: true,
	Fields: []resource.Field{
		{Name: "workflowId", Kind: resource.String, ReadOnly: true, Always: true, Lookup: true, Doc: "the id of the workflow run (kept when the workflow is deleted); a list filter"},
		{Name: "status", Kind: resource.Enum, Values: []string{Queued, Running, Completed, Failed}, Open: true, ReadOnly: true, Always: true, Lookup: true,
			Doc: "where the run is; a list filter"},
		{Name: "title", Kind: resource.String, MaxLen: MaxTitle, ReadOnly: true, Omitted: true,
			Doc: "the run's title: sent on start or generated; renamed with `PATCH`; left out of a run made before runs had titles"},
		{Name: "input", Kind: resource.Object, ReadOnly: true, Doc: "the input the run started with"},
		{Name: "output", Kind: resource.Object, ReadOnly: true, Nullable: true, Doc: "the last step's output once completed; `null` otherwise"},
		{Name: "error", Kind: resource.Struct, ReadOnly: true, Nullable: true, Doc: "why the run failed; `null` otherwise",
			Fields: []resource.Field{
				{Name: "message", Kind: resource.Text, ReadOnly: true, Always: true, Doc: "what went wrong"},
				{Name: "step", Kind: resource.String, ReadOnly: true, Always: true, Doc: "the id of the step that failed"},
			}},
		{Name: "dryRun", Kind: resource.Bool, ReadOnly: true, Doc: "a dry run writes nothing (company steps only say what they would do)"},
		{Name: "retryOf", Kind: resource.String, ReadOnly: true, Doc: "the id of the failed run this one retries"},
		{Name: "retriedBy", Kind: resource.String, ReadOnly: true, Doc: "the id of the retry of this run (a run is retried once)"},
		{Name: "startedBy", Kind: resource.Enum, Values: []string{StartedByAPI, StartedByWebhook, StartedByRetry, StartedByUnknown}, ReadOnly: true, Always: true,
			Doc: "what started the run (`unknown` for a stored run that cannot be read)"},
		{Name: "requestId", Kind: resource.String, ReadOnly: true, Omitted: true,
			Doc: "the request that started the run (its `X-Request-Id`): the events of the run's writes, and their webhook deliveries, carry it too; absent for a run started before runs recorded it"},
		{Name: "startedAt", Kind: resource.DateTime, ReadOnly: true, Doc: "when the run began executing (set with its outcome for a run that finishes within a second)"},
		{Name: "completedAt", Kind: resource.DateTime, ReadOnly: true, Doc: "when the run completed or failed"},
	},
}

// NewRunDef declares the body of POST /v1/workflows/{id}/runs (DecodeNewRun).
var NewRunDef = &resource.Def{
	Name: "runs", Singular: "run",
	Fields: []resource.Field{
		{Name: "input", Kind: resource.Object, Doc: "the run's input: a JSON object of at most 128 KB as JSON; `{}` when not sent"},
		{Name: "dryRun", Kind: resource.Bool, Doc: "run without writing anything"},
		{Name: "title", Kind: resource.String, MaxLen: MaxTitle, Doc: "the run's title; generated when not sent"},
	},
}

// TitleDef declares the body of PATCH /v1/workflow-runs/{id} (DecodeTitle).
var TitleDef = &resource.Def{
	Name: "runs", Singular: "run",
	Fields: []resource.Field{
		{Name: "title", Kind: resource.String, MaxLen: MaxTitle, Required: true, Doc: "the run's new title"},
	},
}
