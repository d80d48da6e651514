package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// noopEngine accepts every start and does nothing, as Step Functions does
// from the point of view of the API function: the run stays queued until
// the runner is invoked.
type noopEngine struct{}

func (noopEngine) Start(context.Context, runs.ExecutionInput) error { return nil }

// runnerEnv is the service as the runner Lambda sees it: a fresh table and
// an organization, runs queued by an engine that leaves them to the runner.
type runnerEnv struct {
	deps service.Deps
	org  string
}

func newRunnerEnv(t *testing.T) *runnerEnv {
	t.Helper()
	st := testenv.Store(t)
	deps := service.Build(st, service.Config{Table: st.Table, CacheTTL: auth.MaxCacheTTL}, runs.UseEngine(noopEngine{}))
	org, err := deps.Keys.CreateOrg(context.Background(), "Runner Org", 0)
	if err != nil {
		t.Fatal(err)
	}
	return &runnerEnv{deps: deps, org: org.ID}
}

// workflow creates a workflow of the organization from a create body.
func (r *runnerEnv) workflow(t *testing.T, body string) *workflows.Workflow {
	t.Helper()
	in, err := workflows.DecodeCreate([]byte(body))
	if err != nil {
		t.Fatalf("workflow body %s: %v", body, err)
	}
	wf, err := r.deps.Workflows.Create(context.Background(), r.org, in)
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

// queued creates a run of wf, which the no-op engine leaves queued.
func (r *runnerEnv) queued(t *testing.T, wf *workflows.Workflow, input map[string]any) *runs.Run {
	t.Helper()
	run, err := r.deps.Runs.Create(context.Background(), r.org, wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != runs.Queued {
		t.Fatalf("new run is %s, want queued", run.Status)
	}
	return r.get(t, run.ID)
}

func (r *runnerEnv) get(t *testing.T, id string) *runs.Run {
	t.Helper()
	run, err := r.deps.Runs.Get(context.Background(), r.org, id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// runnerTask reads a sample runner event for the run, strictly, as the
// runner function receives it from the state machine.
func runnerTask(t *testing.T, name, org, runID string) runs.Task {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleEventsDir, name))
	if err != nil {
		t.Fatalf("read sample event: %v", err)
	}
	s := strings.NewReplacer("org_REPLACE", org, "run_REPLACE", runID).Replace(string(raw))
	var task runs.Task
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&task); err != nil {
		t.Fatalf("%s is not a runner task: %v", name, err)
	}
	return task
}

// handle serves a task as the runner function does; an error fails the test.
func (r *runnerEnv) handle(t *testing.T, task runs.Task) runs.TaskResult {
	t.Helper()
	res, err := r.deps.Runs.HandleTask(context.Background(), task)
	if err != nil {
		t.Fatalf("HandleTask(%+v): %v", task, err)
	}
	return res
}

const setStepWorkflow = `{"name":"Runner set","steps":[{"id":"shape","type":"set","with":{"deal.$":"$.input.deal","source":"runner"}}]}`

func TestTheRunnerExecuteEventCompletesAQueuedRunAndASecondDeliveryChangesNothing(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	run := r.queued(t, r.workflow(t, setStepWorkflow), map[string]any{"deal": map[string]any{"id": "d-1", "amount": 5.5}})
	task := runnerTask(t, "runner-execute.json", r.org, run.ID)
	if task.Action != "execute" {
		t.Fatalf("runner-execute.json has action %q", task.Action)
	}

	if res := r.handle(t, task); res != (runs.TaskResult{RunID: run.ID, Status: runs.Completed}) {
		t.Errorf("result %+v, want run %s completed", res, run.ID)
	}
	done := r.get(t, run.ID)
	want := map[string]any{"deal": map[string]any{"id": "d-1", "amount": 5.5}, "source": "runner"}
	if done.Status != runs.Completed || done.Error != nil || !reflect.DeepEqual(plainJSON(t, done.Output), want) {
		t.Errorf("run %+v, want completed with output %v", done, want)
	}
	if done.StartedAt == nil || done.CompletedAt == nil || done.CompletedAt.Before(done.StartedAt.Time) {
		t.Errorf("startedAt %v, completedAt %v: want both, in order", done.StartedAt, done.CompletedAt)
	}

	if res := r.handle(t, task); res != (runs.TaskResult{RunID: run.ID, Status: runs.Completed}) {
		t.Errorf("second delivery answered %+v, want run %s completed", res, run.ID)
	}
	if again := r.get(t, run.ID); !reflect.DeepEqual(again, done) {
		t.Errorf("a second delivery changed the run:\nbefore %+v\nafter  %+v", done, again)
	}
}

func TestTheRunnerRecordsAFailingStepAsAFailedRunNotAsATaskError(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	wf := r.workflow(t, `{"name":"Runner fail","steps":[{"id":"check","type":"fail","with":{"message.$":"$.input.why"}}]}`)
	run := r.queued(t, wf, map[string]any{"why": "no deal id"})
	if res := r.handle(t, runnerTask(t, "runner-execute.json", r.org, run.ID)); res.Status != runs.Failed {
		t.Errorf("result %+v, want failed", res)
	}
	got := r.get(t, run.ID)
	if got.Status != runs.Failed || got.Error == nil || got.Error.Message != "no deal id" || got.Error.Step != "check" || got.Output != nil {
		t.Errorf("run %+v (error %+v), want failed by step check with its message and no output", got, got.Error)
	}
}

func TestTheRunnerFailEventFailsAQueuedRunWithTheErrorAndCause(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	wf := r.workflow(t, setStepWorkflow)
	task := runnerTask(t, "runner-fail.json", r.org, "")
	if task.Action != "fail" || task.Error == nil || task.Error.Error != "States.Timeout" || task.Error.Cause == "" {
		t.Fatalf("runner-fail.json decodes to %+v, want action fail with a States.Timeout error and a cause", task)
	}
	run := r.queued(t, wf, map[string]any{"deal": "d-2"})
	fail := runnerTask(t, "runner-fail.json", r.org, run.ID)
	if res := r.handle(t, fail); res != (runs.TaskResult{RunID: run.ID, Status: runs.Failed}) {
		t.Errorf("result %+v, want run %s failed", res, run.ID)
	}
	got := r.get(t, run.ID)
	if got.Status != runs.Failed || got.Error == nil || got.Output != nil || got.CompletedAt == nil {
		t.Fatalf("run %+v, want failed with an error, no output and completedAt", got)
	}
	for _, part := range []string{fail.Error.Error, fail.Error.Cause} {
		if !strings.Contains(got.Error.Message, part) {
			t.Errorf("error message %q does not contain %q", got.Error.Message, part)
		}
	}
	// A late execute delivery does not revive it.
	if res := r.handle(t, runnerTask(t, "runner-execute.json", r.org, run.ID)); res.Status != runs.Failed {
		t.Errorf("execute after fail answered %+v, want the run to stay failed", res)
	}
	if again := r.get(t, run.ID); !reflect.DeepEqual(again, got) {
		t.Errorf("execute after fail changed the run:\nbefore %+v\nafter  %+v", got, again)
	}
}

func TestTheRunnerFailEventLeavesACompletedRunCompleted(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	run := r.queued(t, r.workflow(t, setStepWorkflow), map[string]any{"deal": "d-3"})
	r.handle(t, runnerTask(t, "runner-execute.json", r.org, run.ID))
	done := r.get(t, run.ID)
	if done.Status != runs.Completed {
		t.Fatalf("run %+v, want completed", done)
	}
	if res := r.handle(t, runnerTask(t, "runner-fail.json", r.org, run.ID)); res != (runs.TaskResult{RunID: run.ID, Status: runs.Completed}) {
		t.Errorf("fail of a completed run answered %+v, want it completed", res)
	}
	if after := r.get(t, run.ID); !reflect.DeepEqual(after, done) {
		t.Errorf("fail changed a completed run:\nbefore %+v\nafter  %+v", done, after)
	}
}

func TestTheRunnerFailsARunWhoseWorkflowWasDeletedBeforeItExecuted(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	wf := r.workflow(t, setStepWorkflow)
	run := r.queued(t, wf, map[string]any{"deal": "d-4"})
	if err := r.deps.Workflows.Delete(context.Background(), r.org, wf.ID); err != nil {
		t.Fatal(err)
	}
	if res := r.handle(t, runnerTask(t, "runner-execute.json", r.org, run.ID)); res.Status != runs.Failed {
		t.Errorf("result %+v, want failed", res)
	}
	if got := r.get(t, run.ID); got.Status != runs.Failed || got.Error == nil || !strings.Contains(got.Error.Message, "deleted") {
		t.Errorf("run %+v, want failed saying the workflow was deleted", got)
	}
}

func TestTheRunnerRefusesTasksItCannotServeAndTouchesNoRun(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	run := r.queued(t, r.workflow(t, setStepWorkflow), map[string]any{"deal": "d-5"})
	other, err := r.deps.Keys.CreateOrg(context.Background(), "Other Org", 0)
	if err != nil {
		t.Fatal(err)
	}
	execute := runnerTask(t, "runner-execute.json", r.org, run.ID)
	edit := func(f func(*runs.Task)) runs.Task {
		task := execute
		f(&task)
		return task
	}
	cases := []struct {
		name string
		task runs.Task
	}{
		{"an unknown action", edit(func(t *runs.Task) { t.Action = "cancel" })},
		{"no action", edit(func(t *runs.Task) { t.Action = "" })},
		{"no run id", edit(func(t *runs.Task) { t.RunID = "" })},
		{"no organization", edit(func(t *runs.Task) { t.OrganizationID = "" })},
		{"another organization's id for the run", edit(func(t *runs.Task) { t.OrganizationID = other.ID })},
		{"an unknown run", edit(func(t *runs.Task) { t.RunID = "run_doesnotexist" })},
		{"a fail of another organization's id for the run", runnerTask(t, "runner-fail.json", other.ID, run.ID)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if res, err := r.deps.Runs.HandleTask(context.Background(), tc.task); err == nil {
				t.Errorf("HandleTask(%+v) = %+v, want an error", tc.task, res)
			}
		})
	}
	if got := r.get(t, run.ID); !reflect.DeepEqual(got, run) {
		t.Errorf("refused tasks changed the run:\nbefore %+v\nafter  %+v", run, got)
	}
}

func TestARunWhoseOutputCannotBeStoredIsFailedThroughTheCatchPath(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	// The input fits in a table item, but input plus an equal output (no
	// steps: the output is the input) does not.
	run := r.queued(t, r.workflow(t, `{"name":"Big"}`), map[string]any{"blob": strings.Repeat("x", 300<<10)})
	res, err := r.deps.Runs.HandleTask(context.Background(), runnerTask(t, "runner-execute.json", r.org, run.ID))
	if err == nil {
		// Recording the outcome may instead succeed (say, as a failed run); it must then be final.
		if got := r.get(t, run.ID); !got.Done() {
			t.Fatalf("execute answered %+v without an error, but the run is %s", res, got.Status)
		}
		return
	}
	// The execution is interrupted: the run stays running for the state
	// machine, whose Retry and Catch then deliver a fail task.
	if got := r.get(t, run.ID); got.Status != runs.Running {
		t.Errorf("after the interrupted execution the run is %s, want running", got.Status)
	}
	fail := runnerTask(t, "runner-fail.json", r.org, run.ID)
	fail.Error = &runs.TaskError{Error: "runs.TooLarge", Cause: "record outcome: the record exceeds the item size limit"}
	if res := r.handle(t, fail); res.Status != runs.Failed {
		t.Errorf("fail answered %+v, want failed", res)
	}
	if got := r.get(t, run.ID); got.Status != runs.Failed || got.Error == nil || !strings.Contains(got.Error.Message, "runs.TooLarge") {
		t.Errorf("run %+v, want failed with the Catch's error", got)
	}
}

func TestARunCreatedWithoutAnEngineIsFailedAtOnceNotLeftQueued(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	deps := service.Build(st, service.Config{Table: st.Table, CacheTTL: auth.MaxCacheTTL}, nil)
	org, err := deps.Keys.CreateOrg(context.Background(), "No Engine Org", 0)
	if err != nil {
		t.Fatal(err)
	}
	in, err := workflows.DecodeCreate([]byte(`{"name":"Orphan"}`))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := deps.Workflows.Create(context.Background(), org.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	run, err := deps.Runs.Create(context.Background(), org.ID, wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != runs.Failed || run.Error == nil || !strings.Contains(run.Error.Message, "engine") {
		t.Errorf("run %+v (error %+v), want failed saying no engine is configured", run, run.Error)
	}
	stored, err := deps.Runs.Get(context.Background(), org.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != runs.Failed {
		t.Errorf("stored run is %s, want failed", stored.Status)
	}
}

func TestRunnerSampleEventsDecodeIntoTasks(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"runner-execute.json", "runner-fail.json"} {
		raw, err := os.ReadFile(filepath.Join(sampleEventsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(raw), "\n") {
			t.Errorf("%s: no final newline", name)
		}
		task := runnerTask(t, name, "org_REPLACE", "run_REPLACE")
		if task.OrganizationID != "org_REPLACE" || task.RunID != "run_REPLACE" {
			t.Errorf("%s: organizationId %q, runId %q; want the placeholders org_REPLACE and run_REPLACE", name, task.OrganizationID, task.RunID)
		}
		wantAction := strings.TrimSuffix(strings.TrimPrefix(name, "runner-"), ".json")
		if task.Action != wantAction {
			t.Errorf("%s: action %q, want %q", name, task.Action, wantAction)
		}
		if (task.Error != nil) != (wantAction == "fail") {
			t.Errorf("%s: error %+v; only the fail event carries the Catch's error", name, task.Error)
		}
	}
}
