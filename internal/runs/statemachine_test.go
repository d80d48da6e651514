package runs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/runs"
)

const runnerARN = "arn:aws:lambda:us-east-1:123456789012:function:sourcebase-runner"

func node(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	if _, err := os.Stat("../../node_modules/aws-local-stepfunctions"); err != nil {
		t.Fatal("node_modules is missing: run `npm ci` (make does)")
	}
	testinputs.Files("package-lock.json")
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %v: %v\n%s", args, err, out)
	}
	return out
}

func TestStateMachineDefinitionIsValidStatesLanguage(t *testing.T) {
	t.Parallel()
	node(t, nil, "../../node_modules/asl-validator/dist/bin/asl-validator.js", "--json-definition", runs.StateMachineDefinition(runnerARN))
}

// TestStateMachineExecutesRunsAndRecordsFailuresThroughItsCatchPath runs
// the definition in an ASL interpreter, its Task states calling the real
// runner (HandleTask over the local table): a run completes through
// Execute; a run whose execution fails is marked failed by MarkFailed with
// the error, and the execution fails.
func TestStateMachineExecutesRunsAndRecordsFailuresThroughItsCatchPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, wf := setup(t, `[{"id":"s","type":"set","with":{"seen.$":"$.input.n"}}]`, runs.UseEngine(held{}))
	ok, _ := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: map[string]any{"n": 7.0}})
	crash, _ := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var task runs.Task
		if err := json.NewDecoder(r.Body).Decode(&task); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if task.RunID == crash.ID && task.Action == "execute" {
			http.Error(w, "runner crashed", http.StatusInternalServerError)
			return
		}
		res, err := svc.HandleTask(r.Context(), task)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(res)
	}))
	defer srv.Close()

	execute := func(run *runs.Run) map[string]any {
		in, _ := json.Marshal(runs.ExecutionInput{OrganizationID: "org1", RunID: run.ID, WorkflowID: run.WorkflowID})
		out := node(t, []string{"DEFINITION=" + runs.StateMachineDefinition(runnerARN), "INPUT=" + string(in), "RUNNER_URL=" + srv.URL}, "testdata/interpret.mjs")
		var res map[string]any
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("interpreter output %s: %v", out, err)
		}
		return res
	}

	if res := execute(ok); res["status"] != "SUCCEEDED" {
		t.Fatalf("execution of a good run: %v", res)
	}
	if r, _ := svc.Get(ctx, "org1", ok.ID); r.Status != runs.Completed || fmt.Sprint(r.Output["seen"]) != "7" {
		t.Errorf("run = %s %v, want completed with seen 7", r.Status, r.Output)
	}

	// The interpreter reports a Fail state as its ExecutionError, with the cause.
	if res := execute(crash); res["status"] != "FAILED" || !strings.Contains(res["cause"].(string), "runner crashed") {
		t.Fatalf("execution of a crashing run: %v", res)
	}
	r, _ := svc.Get(ctx, "org1", crash.ID)
	if r.Status != runs.Failed || r.Error == nil || !strings.Contains(r.Error.Message, "States.TaskFailed") || !strings.Contains(r.Error.Message, "runner crashed") {
		t.Errorf("run = %s %+v, want failed with the task error", r.Status, r.Error)
	}
}
