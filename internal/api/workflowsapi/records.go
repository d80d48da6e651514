package workflowsapi

import (
	"context"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// workflowOperations are the generic operations of workflows (with MCP
// tools list_workflows and get_workflow).
func workflowOperations() []operation.Operation {
	k := recordsapi.Kind[workflows.Workflow]{Def: workflows.Def}
	k.Reads, k.Writes = recordsapi.Records(func(a recordsapi.Based) interface {
		recordsapi.Reader[workflows.Workflow]
		recordsapi.Writer
	} {
		return workflowRecords{a.(*API).workflows}
	})
	return recordsapi.KindOperations(k)
}

// runRecordOperations are the generic list and get of workflow runs (with MCP
// tools list_workflow_runs and get_workflow_run).
func runRecordOperations() []operation.Operation {
	return recordsapi.KindOperations(recordsapi.Kind[runs.Run]{Def: runs.Def, Reads: func(a recordsapi.Based) recordsapi.Reader[runs.Run] { return runRecords{a.(*API).runs} }})
}

// workflowRecords are workflows with their webhook triggers
// (workflows.Service).
type workflowRecords struct{ svc *workflows.Service }

func (s workflowRecords) Create(ctx context.Context, org string, body []byte) (any, error) {
	in, err := workflows.DecodeCreate(body)
	if err != nil {
		return nil, err
	}
	return s.svc.Create(ctx, org, in)
}

func (s workflowRecords) List(ctx context.Context, org string, q store.Query, _, _ string) (store.Page[workflows.Workflow], error) {
	return s.svc.List(ctx, org, q) // workflows have no lookup filters: the list parser refused any
}

func (s workflowRecords) Get(ctx context.Context, org, id string) (any, error) {
	return s.svc.Get(ctx, org, id)
}

func (s workflowRecords) Update(ctx context.Context, org, id string, body []byte) (any, error) {
	in, err := workflows.DecodeUpdate(body)
	if err != nil {
		return nil, err
	}
	return s.svc.Update(ctx, org, id, in)
}

func (s workflowRecords) Delete(ctx context.Context, org, id string) error {
	return s.svc.Delete(ctx, org, id)
}

// runRecords are workflow runs, only listed and read by the generic
// operations (runs.Service): runs are started, renamed and retried by
// operations of their own (RunOperations).
type runRecords struct{ svc *runs.Service }

func (s runRecords) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[runs.Run], error) {
	return s.svc.ListBy(ctx, org, q, filter, value)
}

func (s runRecords) Get(ctx context.Context, org, id string) (any, error) {
	return s.svc.Get(ctx, org, id)
}
