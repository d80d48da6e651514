package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// scheduledEvent reads events/runner-schedule.json, strictly, as the
// Scheduled Event an EventBridge schedule rule sends the runner.
func scheduledEvent(t *testing.T) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleEventsDir, "runner-schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.CloudWatchEvent
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("runner-schedule.json is not an EventBridge event: %v", err)
	}
	if ev.Version != "0" || ev.ID == "" || ev.Source != service.ScheduledEventSource || ev.DetailType != service.ScheduledEventDetailType ||
		ev.Time.IsZero() || len(ev.Resources) != 1 || !strings.Contains(ev.Resources[0], ":rule/") {
		t.Fatalf("runner-schedule.json does not have the shape of a Scheduled Event: %+v", ev)
	}
	return raw
}

// count is how many items partition pk of the table holds.
func count(t *testing.T, st *store.Store, pk string) int {
	t.Helper()
	n := 0
	if _, err := st.ReadRange(context.Background(), pk, "", "~", func(json.RawMessage) (bool, error) {
		n++
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// A Scheduled Event given to the runner's handler runs the sweeps: the run
// left queued too long fails, the fresh one stays queued, and the purge a
// company's delete left pending deletes the company's candidates and its
// job; the next event finds nothing to do. A state machine task given to
// the same handler still executes its run.
func TestAScheduledEventMakesTheRunnerFailAStaleQueuedRunAndCompleteAPendingPurge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRunnerEnv(t)
	handler := service.RunnerHandler(r.deps)
	ev := scheduledEvent(t)

	bound := testenv.Scaled(2 * time.Second)
	r.deps.Runs.SetQueuedTimeout(bound)
	wf := r.workflow(t, setStepWorkflow)
	stale := r.queued(t, wf, map[string]any{"deal": "stale"})
	time.Sleep(bound + 100*time.Millisecond)
	fresh := r.queued(t, wf, map[string]any{"deal": "fresh"})

	// A company with candidates whose purge is pending: the job its
	// delete's transaction records (enrichment.Service.PurgeOp), left as
	// a purge that failed after the delete leaves it.
	co, err := r.deps.Enrichment.CreateCompany(ctx, r.deps.Companies, r.org, companies.Fields{CanonicalName: jsonbody.Field[string]{Set: true, Value: "Gone Robotics"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	in, err := r.deps.Enrichment.DecodeValues("companies", []map[string]any{
		{"property": "employeeCount", "value": 40, "source": "provider", "confidence": 50},
		{"property": "sector", "value": "Robotics", "source": "provider", "confidence": 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.deps.Enrichment.Add(ctx, r.org, "companies", co.ID, in); err != nil {
		t.Fatal(err)
	}
	part := store.EnrichmentPartition(r.org, "companies", co.ID)
	op, err := r.deps.Enrichment.PurgeOp(r.org, "companies", co.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.deps.Store.Transact(ctx, nil, op); err != nil {
		t.Fatal(err)
	}
	if n, jobs := count(t, r.deps.Store, part), purgeJobs(t, r.deps.Store); n == 0 || jobs != 1 {
		t.Fatalf("%d candidates and %d purge jobs before the sweep, want some and 1", n, jobs)
	}

	out, err := handler(ctx, ev)
	if err != nil {
		t.Fatalf("the scheduled event: %v", err)
	}
	if out != (service.SweepResult{FailedRuns: 1, CompletedPurges: 1}) {
		t.Errorf("the scheduled event answered %+v, want 1 run failed and 1 purge completed", out)
	}
	if got := r.get(t, stale.ID); got.Status != runs.Failed || got.Error == nil || !strings.Contains(got.Error.Message, "not started within "+bound.String()) {
		t.Errorf("the stale run after the sweep: %s %+v, want failed as never started", got.Status, got.Error)
	}
	if got := r.get(t, fresh.ID); got.Status != runs.Queued {
		t.Errorf("the fresh run after the sweep: %s, want still queued", got.Status)
	}
	if n, jobs := count(t, r.deps.Store, part), purgeJobs(t, r.deps.Store); n != 0 || jobs != 0 {
		t.Errorf("%d candidates and %d purge jobs left after the sweep, want none", n, jobs)
	}

	if out, err := handler(ctx, ev); err != nil || out != (service.SweepResult{}) {
		t.Errorf("a second scheduled event: %+v, %v; want nothing to do", out, err)
	}

	// The state machine's tasks reach the same handler.
	out, err = handler(ctx, json.RawMessage(`{"action":"execute","organizationId":"`+r.org+`","runId":"`+fresh.ID+`"}`))
	if err != nil || out != (runs.TaskResult{RunID: fresh.ID, Status: runs.Completed}) {
		t.Errorf("an execute task through the runner's handler: %+v, %v; want run %s completed", out, err, fresh.ID)
	}
}

// A sweep that fails fails the invocation (so that it shows in the
// function's errors and EventBridge's asynchronous invocation retries it);
// an event that is neither a Scheduled Event nor a task is refused.
func TestTheRunnerFailsTheInvocationWhenASweepFailsAndRefusesOtherEvents(t *testing.T) {
	t.Parallel()
	r := newRunnerEnv(t)
	handler := service.RunnerHandler(r.deps)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // every table call fails
	if _, err := handler(ctx, scheduledEvent(t)); err == nil {
		t.Error("a sweep over a table that cannot be reached returned no error")
	}
	for _, ev := range []string{
		`{"source":"aws.events","detail-type":"Object Created"}`,
		`{"action":"sweep","organizationId":"org_1","runId":"run_1"}`,
		`[]`,
	} {
		if out, err := handler(context.Background(), json.RawMessage(ev)); err == nil {
			t.Errorf("event %s answered %+v, want an error", ev, out)
		}
	}
}

// purgeJobs counts the purge queue's items, in every shard.
func purgeJobs(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	for _, pk := range store.QueuePartitions(store.TypePurge) {
		n += count(t, st, pk)
	}
	return n
}
