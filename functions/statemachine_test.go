package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/localsfn"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
)

// The state machine tests run runs.StateMachineDefinition (what the stack
// deploys) in localsfn, its tasks invoking the runner's real bootstrap
// against DynamoDB Local; a run's execution is started the way the API and
// webhook functions start it (runs.StepFunctions through the SDK).

func TestTheRunStateMachineDefinitionIsValidForAslValidator(t *testing.T) {
	t.Parallel()
	validator := filepath.Join(repoRoot, "node_modules", "asl-validator", "dist", "bin", "asl-validator.js")
	testinputs.Files("package-lock.json")
	out, err := exec.Command("node", validator, "--json-definition", runs.StateMachineDefinition(runnerARN)).CombinedOutput()
	if err != nil {
		t.Fatalf("asl-validator: %v\n%s", err, out)
	}
}

// runEnv is an env with an organization and the run engine that starts
// executions in localsfn, and a count of the runner's invocations by action.
type runEnv struct {
	*env
	org    string
	engine runs.StepFunctions

	mu      sync.Mutex
	invoked map[string]int
}

func newRunEnv(t *testing.T) *runEnv {
	t.Helper()
	e := newEnv(t)
	org, err := e.deps.Keys.CreateOrg(context.Background(), "State Machine Org", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &runEnv{env: e, org: org.ID, engine: runs.StepFunctions{Client: e.sfn.Client(), StateMachineARN: stateMachineARN}, invoked: map[string]int{}}
	r.through(nil)
	return r
}

// through makes the state machine's tasks invoke the runner after before
// (when non-nil) had its say: before can fail a task without invoking it.
func (r *runEnv) through(before func(task runs.Task) error) {
	runner := localsfn.Lambda(r.fn(lambdas.Runner))
	r.setTask(func(ctx context.Context, resource string, input []byte) ([]byte, error) {
		var task runs.Task
		json.Unmarshal(input, &task)
		if before != nil {
			if err := before(task); err != nil {
				return nil, err
			}
		}
		r.mu.Lock()
		r.invoked[task.Action]++
		r.mu.Unlock()
		return runner(ctx, resource, input)
	})
}

func (r *runEnv) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.invoked {
		out[k] = v
	}
	return out
}

func (r *runEnv) invocations(action string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.invoked[action]
}

// execute starts the run's execution as the functions do and waits for it.
func (r *runEnv) execute(run *runs.Run) localsfn.Execution {
	r.t.Helper()
	if err := r.engine.Start(context.Background(), runs.ExecutionInput{OrganizationID: r.org, RunID: run.ID, WorkflowID: run.WorkflowID}); err != nil {
		r.t.Fatalf("start the execution of %s: %v", run.ID, err)
	}
	return r.awaitExecution(run.ID)
}

const setWorkflow = `{"name":"Deals","steps":[{"id":"shape","type":"set","with":{"deal.$":"$.input.deal","source":"state machine"}}]}`

func TestAnExecutionCompletesItsRunThroughTheRunnerBootstrap(t *testing.T) {
	t.Parallel()
	r := newRunEnv(t)
	run := r.queued(r.org, r.workflow(r.org, setWorkflow), map[string]any{"deal": "d-1"})

	ex := r.execute(run)
	if ex.Status != localsfn.Succeeded || ex.Output != `{"runId":"`+run.ID+`","status":"completed"}` {
		t.Fatalf("execution %s %s %s %s, want SUCCEEDED with the runner's result", ex.Status, ex.Output, ex.Error, ex.Cause)
	}
	got := r.run(r.org, run.ID)
	if got.Status != runs.Completed || got.Output["deal"] != "d-1" || got.Output["source"] != "state machine" {
		t.Errorf("run %s %v, want completed with the step's output", got.Status, got.Output)
	}
	if n := r.invocations("execute"); n != 1 || r.invocations("fail") != 0 {
		t.Errorf("runner invoked %v, want execute once", r.snapshot())
	}

	// Starting it again (a retried request) starts nothing new.
	if err := r.engine.Start(context.Background(), runs.ExecutionInput{OrganizationID: r.org, RunID: run.ID, WorkflowID: run.WorkflowID}); err != nil {
		t.Errorf("starting a finished run's execution again: %v", err)
	}
	if n := len(r.sfn.Executions()); n != 1 {
		t.Errorf("%d executions, want 1", n)
	}
}

func TestARunWhoseStepFailsIsRecordedFailedByTheRunnerAndItsExecutionSucceeds(t *testing.T) {
	t.Parallel()
	r := newRunEnv(t)
	run := r.queued(r.org, r.workflow(r.org, `{"name":"Stops","steps":[{"id":"stop","type":"fail","with":{"message":"no company found"}}]}`), nil)

	ex := r.execute(run)
	if ex.Status != localsfn.Succeeded || ex.Output != `{"runId":"`+run.ID+`","status":"failed"}` {
		t.Fatalf("execution %s %s %s, want SUCCEEDED: the run failed, not its execution", ex.Status, ex.Output, ex.Error)
	}
	if got := r.run(r.org, run.ID); got.Status != runs.Failed || got.Error == nil || got.Error.Message != "no company found" || got.Error.Step != "stop" {
		t.Errorf("run %s %+v, want failed by its step", got.Status, got.Error)
	}
	if r.invocations("fail") != 0 {
		t.Errorf("MarkFailed ran: %v", r.snapshot())
	}
}

func TestARunnerFailureTakesTheCatchPathMarksTheRunFailedAndFailsTheExecution(t *testing.T) {
	t.Parallel()
	r := newRunEnv(t)
	wf := r.workflow(r.org, setWorkflow)
	run := r.queued(r.org, wf, nil)
	// The workflow's record becomes unreadable: the runner cannot execute
	// the run and fails (a real error of the real bootstrap, not a retry case).
	testenv.DamageDoc(t, r.st, store.RecordKey(r.org, store.TypeWorkflow, wf.ID))

	ex := r.execute(run)
	if ex.Status != localsfn.Failed || ex.Error == "" || strings.HasPrefix(ex.Error, "Lambda.") || !strings.Contains(ex.Cause, "errorMessage") {
		t.Fatalf("execution %s error %q cause %q, want FAILED with the runner's error", ex.Status, ex.Error, ex.Cause)
	}
	t.Logf("the execution failed with %s: %s", ex.Error, ex.Cause)
	got := r.run(r.org, run.ID)
	if got.Status != runs.Failed || got.Error == nil || !strings.HasPrefix(got.Error.Message, "the run's execution failed: "+ex.Error+" ") {
		t.Errorf("run %s %+v, want failed by MarkFailed with the execution's error %s", got.Status, got.Error, ex.Error)
	}
	// The runner's own failure is not retried (the steps must not run
	// twice); MarkFailed ran once.
	if r.invocations("execute") != 1 || r.invocations("fail") != 1 {
		t.Errorf("runner invoked %v, want execute once and fail once", r.snapshot())
	}
}

func TestATransientLambdaErrorIsRetriedAndTheRunCompletes(t *testing.T) {
	t.Parallel()
	r := newRunEnv(t)
	run := r.queued(r.org, r.workflow(r.org, setWorkflow), map[string]any{"deal": "d-2"})
	var injected atomic.Int32
	r.through(func(task runs.Task) error {
		if task.Action == "execute" && injected.CompareAndSwap(0, 1) {
			return &localsfn.TaskError{Name: "Lambda.ServiceException", Cause: "Lambda is unable to serve the request (injected before the runner is called)"}
		}
		return nil
	})

	ex := r.execute(run)
	if ex.Status != localsfn.Succeeded {
		t.Fatalf("execution %s %s %s, want SUCCEEDED after the retry", ex.Status, ex.Error, ex.Cause)
	}
	if got := r.run(r.org, run.ID); got.Status != runs.Completed || got.Output["deal"] != "d-2" {
		t.Errorf("run %s %v, want completed", got.Status, got.Output)
	}
	if injected.Load() != 1 || r.invocations("execute") != 1 || r.invocations("fail") != 0 {
		t.Errorf("injected %d, runner invoked %v; want the runner invoked once, on the retry", injected.Load(), r.snapshot())
	}
}

// A run created where the API and webhook functions create it starts an
// execution that carries the run and its steps to the first invocation;
// a transient Lambda error (which may come after the runner ran) leads to
// ExecuteAgain, which sends ids only, so the runner reads the run.
func TestAnExecutionCarriesTheRunToItsFirstInvocationOnlyAndTheRetryReadsIt(t *testing.T) {
	t.Parallel()
	r := newRunEnv(t)
	creator := runs.NewService(r.st, r.deps.Workflows, r.deps.Companies, runs.UseEngine(r.engine))
	wf := r.workflow(r.org, setWorkflow)
	var (
		mu    sync.Mutex
		tasks []runs.Task
		fail  atomic.Bool
	)
	r.through(func(task runs.Task) error {
		mu.Lock()
		tasks = append(tasks, task)
		mu.Unlock()
		if task.Action == "execute" && fail.CompareAndSwap(true, false) {
			return &localsfn.TaskError{Name: "Lambda.AWSLambdaException", Cause: "injected before the runner is called"}
		}
		return nil
	})
	for _, transient := range []bool{false, true} {
		fail.Store(transient)
		mu.Lock()
		tasks = nil
		mu.Unlock()
		run, err := creator.Create(context.Background(), r.org, wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: map[string]any{"deal": fmt.Sprint("d-", transient)}})
		if err != nil {
			t.Fatal(err)
		}
		ex := r.awaitExecution(run.ID)
		if ex.Status != localsfn.Succeeded {
			t.Fatalf("execution %s %s %s, want SUCCEEDED", ex.Status, ex.Error, ex.Cause)
		}
		if got := r.run(r.org, run.ID); got.Status != runs.Completed || got.Output["deal"] != fmt.Sprint("d-", transient) {
			t.Errorf("run %s %v, want completed with its deal", got.Status, got.Output)
		}
		mu.Lock()
		seen := slices.Clone(tasks)
		mu.Unlock()
		want := 1
		if transient {
			want = 2
		}
		if len(seen) != want {
			t.Fatalf("transient %v: %d tasks %+v, want %d", transient, len(seen), seen, want)
		}
		if first := seen[0]; first.Run == nil || first.Steps == nil || len(*first.Steps) != 1 || first.Run.Version != 1 {
			t.Errorf("the first execute task carries run %+v and steps %v, want the run at version 1 and its one step", first.Run, first.Steps)
		}
		if transient && (seen[1].Run != nil || seen[1].Steps != nil || seen[1].RunID != run.ID) {
			t.Errorf("ExecuteAgain's task %+v carries the run or steps, want ids only", seen[1])
		}
	}
}
