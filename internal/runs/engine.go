package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// ExecutionInput is what a run's state machine execution receives, and
// what the runner Lambda is invoked with (plus the action).
type ExecutionInput struct {
	OrganizationID string `json:"organizationId"`
	RunID          string `json:"runId"`
	// WorkflowID is the run's workflow, so that an execution that reads
	// the run and the workflow reads both in one call; an execution
	// started without it (before it was added) reads the run first.
	WorkflowID string `json:"workflowId,omitempty"`
	// Run is the run as its creation wrote it, so that its first
	// execution reads nothing back (Execute says when it is used); Steps
	// are the steps of its workflow when the run was created, which the
	// run executes. Either is null when not carried: in executions started
	// before they were, by Recover, and when carrying them would make the
	// input too large for Step Functions (MaxCarried). Both are always
	// present in the JSON, null or not, for the state machine's paths.
	Run   *HeldRun      `json:"run"`
	Steps *[]steps.Step `json:"steps"`
}

// HeldRun is a run's record and the version it was written at.
type HeldRun struct {
	Record  record `json:"record"`
	Version int64  `json:"version"`
}

// MaxCarried is the largest execution input that carries the run and its
// steps: Step Functions takes 256 KiB of input and state, and a failed
// task's error is added to the state on the way to MarkFailed. A larger
// one is started with ids only, and its execution reads the run and the
// workflow.
const MaxCarried = 160 << 10

// withoutCarried is the input with ids only.
func (in ExecutionInput) withoutCarried() ExecutionInput {
	in.Run, in.Steps = nil, nil
	return in
}

// StepFunctions starts each run as an execution of the state machine,
// named after the run id, so starting a run twice starts it once.
type StepFunctions struct {
	Client          *sfn.Client
	StateMachineARN string
}

// Start starts the run's execution.
func (e StepFunctions) Start(ctx context.Context, run ExecutionInput) error {
	in, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("encode the execution input of run %s: %w", run.RunID, err)
	}
	if len(in) > MaxCarried {
		in, _ = json.Marshal(run.withoutCarried())
	}
	_, err = e.Client.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(e.StateMachineARN),
		Name:            aws.String(run.RunID),
		Input:           aws.String(string(in)),
		TraceHeader:     telemetry.TraceHeader(ctx), // the trace goes on into the runner
	})
	var exists *sfntypes.ExecutionAlreadyExists
	if errors.As(err, &exists) {
		return nil
	}
	if err != nil {
		return awsenv.Classify(fmt.Errorf("start Step Functions execution: %w", err), "the run could not be started")
	}
	return nil
}

// InProcess executes runs in goroutines of this process: the dev server's
// and the tests' engine. At most Concurrency runs execute at once.
type InProcess struct {
	exec func(ctx context.Context, run ExecutionInput) (*Run, error)
	fail func(ctx context.Context, org, id, message string) (*Run, error)

	ctx     context.Context
	cancel  context.CancelFunc
	sem     chan struct{}
	mu      sync.Mutex
	closed  bool
	pending map[string]bool // runs started here and not finished executing
	wg      sync.WaitGroup
}

// InProcessEngine is the factory of an engine executing the service's
// runs in this process, at most concurrency at once. The service's
// Engine() is then the *InProcess (to Close it).
func InProcessEngine(concurrency int) EngineFactory {
	return func(svc *Service) Engine { return newInProcess(svc.Execute, svc.Fail, concurrency) }
}

func newInProcess(exec func(ctx context.Context, run ExecutionInput) (*Run, error),
	fail func(ctx context.Context, org, id, message string) (*Run, error), concurrency int) *InProcess {
	ctx, cancel := context.WithCancel(context.Background())
	return &InProcess{exec: exec, fail: fail, ctx: ctx, cancel: cancel, sem: make(chan struct{}, max(concurrency, 1)), pending: map[string]bool{}}
}

// Start executes the run in the background.
func (e *InProcess) Start(_ context.Context, run ExecutionInput) error {
	org, runID := run.OrganizationID, run.RunID
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("the engine is shutting down")
	}
	e.wg.Add(1)
	e.pending[runID] = true
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.pending, runID)
			e.mu.Unlock()
		}()
		select {
		case e.sem <- struct{}{}:
		case <-e.ctx.Done():
			return
		}
		defer func() { <-e.sem }()
		if _, err := e.exec(e.ctx, run); err != nil {
			slog.Error("execute run", "runId", runID, "organizationId", org, "err", err)
			// Like the state machine's Catch path: a run whose execution
			// failed is marked failed, unless the process is stopping
			// (then Recover deals with it at the next start).
			if e.ctx.Err() == nil {
				if _, err := e.fail(e.ctx, org, runID, "the run could not be executed: "+err.Error()); err != nil {
					slog.Error("mark run failed", "runId", runID, "err", err)
				}
			}
		}
	}()
	return nil
}

// Holds reports whether the run was started here and is waiting for a
// slot or executing: such a run is not interrupted, however long it waits.
func (e *InProcess) Holds(runID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pending[runID]
}

// Pending is how many runs started here are waiting for a slot or executing.
func (e *InProcess) Pending() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.pending)
}

// Close stops accepting runs and waits up to grace for running ones; runs
// still unfinished then are interrupted and found by Recover at the next start.
func (e *InProcess) Close(grace time.Duration) {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		e.cancel()
		<-done
	}
	e.cancel()
}

// Task is the runner Lambda's event, sent by the state machine: execute
// the run, or (from the Catch path) mark it failed with the error.
type Task struct {
	Action         string `json:"action"` // "execute" or "fail"
	OrganizationID string `json:"organizationId"`
	RunID          string `json:"runId"`
	WorkflowID     string `json:"workflowId,omitempty"` // ExecutionInput.WorkflowID
	// Run and Steps are ExecutionInput's, in the first "execute" task only:
	// the task that executes again after a transient Lambda error
	// (ExecuteAgain) reads the run, so that it finds a run the first
	// invocation finished.
	Run   *HeldRun      `json:"run,omitempty"`
	Steps *[]steps.Step `json:"steps,omitempty"`
	Error *TaskError    `json:"error,omitempty"`
}

// TaskError is what a Step Functions Catch puts at its ResultPath.
type TaskError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// TaskResult is the runner's answer: where the run ended up.
type TaskResult struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
}

// HandleTask serves one state machine task. An error makes the state
// machine retry or take its Catch path, which calls back with "fail".
func (s *Service) HandleTask(ctx context.Context, t Task) (TaskResult, error) {
	if t.OrganizationID == "" || t.RunID == "" {
		return TaskResult{}, errors.New("task needs organizationId and runId")
	}
	var (
		r   *Run
		err error
	)
	switch t.Action {
	case "execute":
		r, err = s.Execute(ctx, ExecutionInput{OrganizationID: t.OrganizationID, RunID: t.RunID, WorkflowID: t.WorkflowID, Run: t.Run, Steps: t.Steps})
	case "fail":
		msg := "the run's execution failed"
		if t.Error != nil {
			msg += ": " + strings.TrimSpace(t.Error.Error+" "+truncate(t.Error.Cause, 500))
		}
		r, err = s.Fail(ctx, t.OrganizationID, t.RunID, msg)
	default:
		return TaskResult{}, fmt.Errorf("unknown task action %q; use execute or fail", t.Action)
	}
	if err != nil {
		return TaskResult{}, err
	}
	return TaskResult{RunID: r.ID, Status: r.Status}, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
