package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// StepBudget is how long one step of a job runs before it checkpoints and
// hands over to the next: well within Lambda's 15 minutes.
const StepBudget = 10 * time.Minute

// The actions of the job state machine's tasks ("job." tells them from a
// run's, which the same function handles).
const (
	ActionUploaded = "job.uploaded" // an upload's key arrived: queue its import
	ActionStep     = "job.step"     // run the job for a step
	ActionFail     = "job.fail"     // the job failed
	ActionPrefix   = "job."
)

// Task is what the job state machine sends the function running jobs: the
// action and the job.
type Task struct {
	Action string `json:"action"`
	Org    string `json:"organizationId,omitempty"`
	ID     string `json:"jobId,omitempty"`
	// Key and Size are an upload's (action uploaded), as S3's event says.
	Key  string `json:"key,omitempty"`
	Size int64  `json:"size,omitempty"`
	// Error is the failure the state machine caught (action fail).
	Error json.RawMessage `json:"error,omitempty"`
}

// TaskResult is a task's answer: the job, and whether it has ended.
type TaskResult struct {
	Org  string `json:"organizationId"`
	ID   string `json:"jobId"`
	Done bool   `json:"done"`
}

// HandleTask runs a task of the job state machine.
func (s *Service) HandleTask(ctx context.Context, t Task) (TaskResult, error) {
	switch t.Action {
	case ActionUploaded:
		j, err := s.Uploaded(ctx, t.Key, t.Size, false)
		if err != nil {
			return TaskResult{}, err
		}
		org, _ := ParseUploadKey(t.Key)
		return TaskResult{Org: org, ID: j.ID, Done: j.Done()}, nil
	case ActionStep:
		deadline := time.Now().Add(StepBudget)
		if d, ok := ctx.Deadline(); ok && d.Add(-time.Minute).Before(deadline) {
			deadline = d.Add(-time.Minute)
		}
		done, err := s.Step(ctx, t.Org, t.ID, deadline)
		return TaskResult{Org: t.Org, ID: t.ID, Done: done}, err
	case ActionFail:
		var cause struct{ Error, Cause string }
		json.Unmarshal(t.Error, &cause)
		msg := "the job failed: " + cause.Error
		if cause.Cause != "" {
			msg += ": " + cause.Cause
		}
		return TaskResult{Org: t.Org, ID: t.ID, Done: true}, s.Fail(ctx, t.Org, t.ID, msg)
	}
	return TaskResult{}, fmt.Errorf("jobs: unknown task action %q", t.Action)
}

// Runner runs jobs in the process (the dev server, tests): each job's
// steps one after the other until it ends, a failed step run again from
// its checkpoint after a pause, up to Attempts times in a row.
type Runner struct {
	svc *Service
	// Attempts bounds the failed steps in a row before the job fails (5
	// when 0).
	Attempts int
	// Pause is the first pause after a failed step, doubled each time
	// (time.Second when 0).
	Pause time.Duration

	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

// NewRunner returns a runner of svc's jobs and makes it svc's starter.
func NewRunner(svc *Service) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{svc: svc, running: map[string]bool{}, ctx: ctx, cancel: cancel}
	svc.SetStarter(r)
	return r
}

// Start runs the job in the background (once: a job already running is
// left to its run).
func (r *Runner) Start(_ context.Context, org, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[org+"/"+id] || r.ctx.Err() != nil {
		return nil
	}
	r.running[org+"/"+id] = true
	r.wg.Go(func() {
		defer func() {
			r.mu.Lock()
			delete(r.running, org+"/"+id)
			r.mu.Unlock()
		}()
		r.run(org, id)
	})
	return nil
}

// Resume starts every unfinished job (Service.Pending): what a process
// does when it starts, after a crash left jobs half done.
func (r *Runner) Resume(ctx context.Context) error {
	pending, err := r.svc.Pending(ctx)
	if err != nil {
		return err
	}
	for _, p := range pending {
		j, err := r.svc.coll.Get(ctx, p.Org, p.ID)
		if err != nil || j.Status == StatusAwaitingUpload {
			continue
		}
		r.Start(ctx, p.Org, p.ID)
	}
	return nil
}

func (r *Runner) run(org, id string) {
	attempts := r.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	pause := r.Pause
	if pause <= 0 {
		pause = time.Second
	}
	failures := 0
	for r.ctx.Err() == nil {
		done, err := r.svc.Step(r.ctx, org, id, time.Now().Add(StepBudget))
		if done && err == nil {
			return
		}
		if err == nil {
			failures = 0
			continue
		}
		if r.ctx.Err() != nil {
			return
		}
		failures++
		slog.Warn("job step failed", "org", org, "job", id, "attempt", failures, "err", err)
		if failures >= attempts {
			if ferr := r.svc.Fail(context.Background(), org, id, "the job failed "+fmt.Sprint(failures)+" times in a row: "+err.Error()); ferr != nil {
				slog.Error("job not marked failed", "org", org, "job", id, "err", ferr)
			}
			return
		}
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(pause<<(failures-1) + time.Duration(rand.IntN(100))*time.Millisecond):
		}
	}
}

// Close stops the runner: running steps are cancelled (their jobs resume
// from their checkpoints when a runner starts again) and awaited.
func (r *Runner) Close() {
	r.cancel()
	r.wg.Wait()
}

// StateMachineDefinition is the job state machine (Amazon States
// Language): started by an upload (S3's Object Created event, through
// EventBridge: input {"detail": {"object": {"key", "size"}}}) or by an
// export (input {"organizationId", "jobId"}), it runs the job's steps in
// a loop until the job ends; a step that fails is retried from its
// checkpoint, and a job that keeps failing is marked failed.
func StateMachineDefinition(functionARN string) string {
	retry := []any{
		map[string]any{"ErrorEquals": []string{"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException", "Lambda.TooManyRequestsException"},
			"IntervalSeconds": 2, "MaxAttempts": 6, "BackoffRate": 2},
		map[string]any{"ErrorEquals": []string{"States.TaskFailed", "States.Timeout"}, "IntervalSeconds": 5, "MaxAttempts": 4, "BackoffRate": 3},
	}
	catch := []any{map[string]any{"ErrorEquals": []string{"States.ALL"}, "ResultPath": "$.error", "Next": "MarkFailed"}}
	def := map[string]any{
		"Comment":        "Runs one bulk import or export; its name is the job id.",
		"StartAt":        "Kind",
		"TimeoutSeconds": 24 * 3600,
		"States": map[string]any{
			"Kind": map[string]any{
				"Type":    "Choice",
				"Choices": []any{map[string]any{"Variable": "$.detail.object.key", "IsPresent": true, "Next": "Uploaded"}},
				"Default": "Step",
			},
			"Uploaded": map[string]any{
				"Type": "Task", "Resource": functionARN,
				"Parameters": map[string]any{"action": ActionUploaded, "key.$": "$.detail.object.key", "size.$": "$.detail.object.size"},
				"Retry":      retry, "TimeoutSeconds": 60,
				"ResultSelector": map[string]any{"organizationId.$": "$.organizationId", "jobId.$": "$.jobId"},
				"Next":           "Step",
			},
			"Step": map[string]any{
				"Type": "Task", "Resource": functionARN,
				"Parameters": map[string]any{"action": ActionStep, "organizationId.$": "$.organizationId", "jobId.$": "$.jobId"},
				"Retry":      retry, "Catch": catch, "TimeoutSeconds": 900,
				"Next": "Ended",
			},
			"Ended": map[string]any{
				"Type":    "Choice",
				"Choices": []any{map[string]any{"Variable": "$.done", "BooleanEquals": true, "Next": "Succeeded"}},
				"Default": "Step",
			},
			"MarkFailed": map[string]any{
				"Type": "Task", "Resource": functionARN,
				"Parameters": map[string]any{"action": ActionFail, "organizationId.$": "$.organizationId", "jobId.$": "$.jobId", "error.$": "$.error"},
				"Retry":      retry, "TimeoutSeconds": 60, "ResultPath": "$.marked",
				"Next": "Failed",
			},
			"Succeeded": map[string]any{"Type": "Succeed"},
			"Failed":    map[string]any{"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"},
		},
	}
	b, _ := json.MarshalIndent(def, "", "  ")
	return string(b)
}

// StepFunctions starts jobs as executions of the job state machine, named
// by the job's id (a second start of one job is no second execution).
type StepFunctions struct {
	Client          *sfn.Client
	StateMachineARN string
}

// Start starts the job's execution.
func (e StepFunctions) Start(ctx context.Context, org, id string) error {
	in, _ := json.Marshal(TaskResult{Org: org, ID: id})
	_, err := e.Client.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(e.StateMachineARN),
		Name:            aws.String(id),
		Input:           aws.String(string(in)),
		TraceHeader:     telemetry.TraceHeader(ctx), // the trace goes on into the runner
	})
	var exists *sfntypes.ExecutionAlreadyExists
	if errors.As(err, &exists) {
		return nil
	}
	if err != nil {
		return awsenv.Classify(fmt.Errorf("start the job state machine: %w", err), "the job could not be started")
	}
	return nil
}
