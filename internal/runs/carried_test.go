package runs_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// recording is an engine that starts nothing and keeps what it was asked
// to start.
type recording struct {
	mu     sync.Mutex
	inputs map[string]runs.ExecutionInput
}

func (e *recording) Start(_ context.Context, in runs.ExecutionInput) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inputs[in.RunID] = in
	return nil
}

func (e *recording) input(t *testing.T, id string) runs.ExecutionInput {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	in, ok := e.inputs[id]
	if !ok {
		t.Fatalf("run %s was not started", id)
	}
	return in
}

// operations counts the DynamoDB requests by operation (each attempt).
type operations struct {
	mu  sync.Mutex
	ops map[string]int
}

func (o *operations) RoundTrip(req *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	o.mu.Lock()
	o.ops[op]++
	o.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (o *operations) take() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.ops
	o.ops = map[string]int{}
	return out
}

// carriedEnv is a run service whose engine records executions, over a
// table whose requests are counted, with the workflow service to change
// the workflow.
type carriedEnv struct {
	svc    *runs.Service
	wfs    *workflows.Service
	wf     *workflows.Workflow
	engine *recording
	ops    *operations
}

func newCarriedEnv(t *testing.T, stepsJSON string) *carriedEnv {
	t.Helper()
	e := &carriedEnv{engine: &recording{inputs: map[string]runs.ExecutionInput{}}, ops: &operations{ops: map[string]int{}}}
	st := testenv.StoreWith(t, e.ops)
	e.wfs = workflows.NewService(st, "http://example.test")
	in, err := workflows.DecodeCreate([]byte(`{"name":"Carried","steps":` + stepsJSON + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.wf, err = e.wfs.Create(context.Background(), "org1", in); err != nil {
		t.Fatal(err)
	}
	e.svc = runs.NewService(st, e.wfs, companies.NewService(st), runs.UseEngine(e.engine))
	return e
}

func (e *carriedEnv) create(t *testing.T, v string) (*runs.Run, runs.ExecutionInput) {
	t.Helper()
	r, err := e.svc.Create(context.Background(), "org1", e.wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: map[string]any{"v": v}})
	if err != nil {
		t.Fatal(err)
	}
	return r, e.engine.input(t, r.ID)
}

func TestAnExecutionCarryingItsRunAndStepsReadsNothing(t *testing.T) {
	t.Parallel()
	e := newCarriedEnv(t, `[{"id":"s","type":"set","with":{"seen.$":"$.input.v"}}]`)
	run, in := e.create(t, "one")
	if in.Run == nil || in.Steps == nil || len(*in.Steps) != 1 {
		t.Fatalf("the execution input carries run %v and steps %v, want both", in.Run, in.Steps)
	}
	e.ops.take()
	done, err := e.svc.Execute(context.Background(), in)
	if err != nil || done.Status != runs.Completed || done.Output["seen"] != "one" || done.Title != run.Title {
		t.Fatalf("execute = %+v, %v; want completed with seen one", done, err)
	}
	ops := e.ops.take()
	for _, read := range []string{"GetItem", "BatchGetItem", "Query"} {
		if ops[read] != 0 {
			t.Errorf("the execution made %d %s requests, want none: %v", ops[read], read, ops)
		}
	}
	if got, err := e.svc.Get(context.Background(), "org1", run.ID); err != nil || got.Status != runs.Completed || got.Output["seen"] != "one" {
		t.Errorf("stored run = %+v, %v", got, err)
	}
}

func TestARunExecutesTheStepsItsWorkflowHadWhenItWasCreated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newCarriedEnv(t, `[{"id":"s","type":"set","with":{"version":"before"}}]`)
	_, carried := e.create(t, "a")
	_, plain := e.create(t, "b")
	in, err := workflows.DecodeUpdate([]byte(`{"steps":[{"id":"s","type":"set","with":{"version":"after"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.wfs.Update(ctx, "org1", e.wf.ID, in); err != nil {
		t.Fatal(err)
	}
	done, err := e.svc.Execute(ctx, carried)
	if err != nil || done.Status != runs.Completed || done.Output["version"] != "before" {
		t.Errorf("the run carrying its steps: %+v, %v; want the steps of its creation (version before)", done, err)
	}
	// An execution that carries no steps (started before they were
	// carried, or too large to carry them) reads the workflow's steps.
	plain.Run, plain.Steps = nil, nil
	done, err = e.svc.Execute(ctx, plain)
	if err != nil || done.Status != runs.Completed || done.Output["version"] != "after" {
		t.Errorf("the run carrying no steps: %+v, %v; want the workflow's current steps (version after)", done, err)
	}
}

func TestACarriedRunKeepsARenameMadeBeforeItsExecutionFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newCarriedEnv(t, `[{"id":"s","type":"set","with":{"seen.$":"$.input.v"}}]`)
	run, in := e.create(t, "renamed")
	if _, err := e.svc.Rename(ctx, "org1", run.ID, "A new title"); err != nil {
		t.Fatal(err)
	}
	done, err := e.svc.Execute(ctx, in)
	if err != nil || done.Status != runs.Completed || done.Title != "A new title" || done.Output["seen"] != "renamed" {
		t.Errorf("execute = %+v, %v; want completed under the new title", done, err)
	}
}

func TestACarriedRunIsReadWhenItIsNotThisExecutionsOrNoLongerFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newCarriedEnv(t, `[{"id":"s","type":"set","with":{"seen.$":"$.input.v"}}]`)
	a, inA := e.create(t, "a")
	b, _ := e.create(t, "b")

	// Run a's record carried into b's execution stands for nothing: b is read.
	wrong := inA
	wrong.RunID = b.ID
	done, err := e.svc.Execute(ctx, wrong)
	if err != nil || done.ID != b.ID || done.Output["seen"] != "b" {
		t.Fatalf("execute of b carrying a's record = %+v, %v; want b executed with its own input", done, err)
	}

	// A carried run older than half the queued timeout may have been
	// failed as stale or finished meanwhile: it is read, and a finished
	// run is left as it is.
	first, err := e.svc.Execute(ctx, inA)
	if err != nil || first.Status != runs.Completed {
		t.Fatalf("execute a = %+v, %v", first, err)
	}
	const timeout = 40 * time.Millisecond
	e.svc.SetQueuedTimeout(timeout)
	if wait := timeout - time.Since(a.CreatedAt.Time); wait > 0 {
		time.Sleep(wait)
	}
	e.ops.take()
	again, err := e.svc.Execute(ctx, inA)
	if err != nil || again.Status != runs.Completed || !again.CompletedAt.Equal(first.CompletedAt.Time) {
		t.Errorf("a second execution of a finished run = %+v, %v; want the run as it finished (%v)", again, err, first.CompletedAt)
	}
	if ops := e.ops.take(); ops["GetItem"]+ops["BatchGetItem"] == 0 || ops["PutItem"]+ops["TransactWriteItems"] != 0 {
		t.Errorf("requests %v, want the run read and nothing written", ops)
	}
}
