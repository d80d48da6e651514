package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// A scheduled event is what an EventBridge schedule rule sends its target
// (routes.Function.Schedule): {"version":"0","id":…,"detail-type":
// "Scheduled Event","source":"aws.events",…}.
const (
	ScheduledEventSource     = "aws.events"
	ScheduledEventDetailType = "Scheduled Event"
)

// SweepResult is what a sweep did: the runs left queued too long that it
// failed (runs.Service.SweepStale) and the purges of deleted companies'
// candidates it completed (enrichment.Service.SweepPurges).
type SweepResult struct {
	FailedRuns      int `json:"failedRuns"`
	CompletedPurges int `json:"completedPurges"`
	// StuckJobs are the jobs past their bound (jobs.StuckAfter).
	StuckJobs int `json:"stuckJobs"`
}

// Sweep runs both sweeps, the second even when the first fails, counts
// the stuck jobs (the JobsStuck metric), logs
// what they did (when they did something, or failed) and returns the
// errors of both. The runner runs it on its schedule in AWS, the dev
// server every minute.
func Sweep(ctx context.Context, deps Deps) (SweepResult, error) {
	var res SweepResult
	var errStale, errPurges error
	res.FailedRuns, errStale = deps.Runs.SweepStale(ctx)
	if errStale != nil {
		errStale = fmt.Errorf("sweep runs left queued: %w", errStale)
	}
	res.CompletedPurges, errPurges = deps.Enrichment.SweepPurges(ctx)
	if errPurges != nil {
		errPurges = fmt.Errorf("sweep purges left over: %w", errPurges)
	}
	var stuck int
	var errStuck error
	if deps.Jobs != nil { // a process without bulk jobs has none stuck
		stuck, errStuck = deps.Jobs.Stuck(ctx)
	}
	if errStuck != nil {
		errStuck = fmt.Errorf("count stuck jobs: %w", errStuck)
	} else {
		res.StuckJobs = stuck
		// Every sweep, zero included: the alarm on it sees data.
		telemetry.EmitMetrics(ctx, "jobs", []telemetry.Metric{{Name: telemetry.MetricJobsStuck, Unit: "Count", Value: float64(stuck)}})
	}
	err := errors.Join(errStale, errPurges, errStuck)
	if err != nil {
		slog.ErrorContext(ctx, "sweep", "failedRuns", res.FailedRuns, "completedPurges", res.CompletedPurges, "err", err)
	} else if res.FailedRuns+res.CompletedPurges > 0 {
		slog.InfoContext(ctx, "sweep", "failedRuns", res.FailedRuns, "completedPurges", res.CompletedPurges)
	}
	return res, err
}

// runnerEvent is enough of either of the runner's events to tell them
// apart: a scheduled event names its source and detail type, a state
// machine task its action.
type runnerEvent struct {
	Source     string `json:"source"`
	DetailType string `json:"detail-type"`
}

// RunnerHandler is the runner function's handler: a scheduled event
// (EventBridge, the runner's routes.Function.Schedule) runs the sweeps
// (Sweep; an error fails the invocation, so it is visible and retried);
// any other event is a task of the run state machine
// (runs.Service.HandleTask).
func RunnerHandler(deps Deps) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var ev runnerEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("runner event: %w", err)
		}
		if ev.Source == ScheduledEventSource && ev.DetailType == ScheduledEventDetailType {
			return Sweep(ctx, deps)
		}
		var action struct {
			Action string `json:"action"`
		}
		json.Unmarshal(raw, &action)
		if strings.HasPrefix(action.Action, jobs.ActionPrefix) {
			if deps.Jobs == nil {
				return nil, fmt.Errorf("a job task (%s), and the runner has no bulk jobs (BULK_BUCKET)", action.Action)
			}
			var task jobs.Task
			if err := json.Unmarshal(raw, &task); err != nil {
				return nil, fmt.Errorf("job task: %w", err)
			}
			return deps.Jobs.HandleTask(ctx, task)
		}
		var task runs.Task
		if err := json.Unmarshal(raw, &task); err != nil {
			return nil, fmt.Errorf("runner task: %w", err)
		}
		return deps.Runs.HandleTask(ctx, task)
	}
}
