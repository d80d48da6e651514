package runs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/runs"
)

// queuedRuns creates a run that will be stale (queued longer than bound)
// and then a fresh one, with an engine that starts nothing (held, unless
// given another).
func queuedRuns(t *testing.T, bound time.Duration, engine ...runs.Engine) (svc *runs.Service, stale, fresh *runs.Run) {
	t.Helper()
	ctx := context.Background()
	e := runs.Engine(held{})
	if len(engine) > 0 {
		e = engine[0]
	}
	svc, wf := setup(t, `[]`, runs.UseEngine(e))
	svc.SetQueuedTimeout(bound)
	stale, err := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(bound + 50*time.Millisecond)
	fresh, err = svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil {
		t.Fatal(err)
	}
	return svc, stale, fresh
}

func TestRecoverFailsAQueuedRunOlderThanTheBoundAndStartsTheFreshOnes(t *testing.T) {
	t.Parallel()
	bound := testenv.Scaled(2 * time.Second)
	svc, stale, fresh := queuedRuns(t, bound)
	resumed, failed, err := svc.Recover(context.Background())
	if err != nil || resumed != 1 || failed != 1 {
		t.Fatalf("Recover = %d resumed, %d failed, %v; want 1, 1", resumed, failed, err)
	}
	r, _ := svc.Get(context.Background(), "org1", stale.ID)
	if r.Status != runs.Failed || r.Error == nil || !strings.Contains(r.Error.Message, "not started within "+bound.String()) {
		t.Errorf("stale run after Recover: %s %+v", r.Status, r.Error)
	}
	if r, _ := svc.Get(context.Background(), "org1", fresh.ID); r.Status != runs.Queued {
		t.Errorf("fresh run after Recover: %s, want queued (restarted)", r.Status)
	}
}

func TestSweepStaleFailsOnlyRunsQueuedLongerThanTheBound(t *testing.T) {
	t.Parallel()
	svc, stale, fresh := queuedRuns(t, testenv.Scaled(2*time.Second))
	n, err := svc.SweepStale(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("SweepStale = %d, %v; want 1", n, err)
	}
	if n, _ := svc.SweepStale(context.Background()); n != 0 {
		t.Errorf("a second sweep failed %d more runs", n)
	}
	r, _ := svc.Get(context.Background(), "org1", stale.ID)
	if r.Status != runs.Failed || !strings.Contains(r.Error.Message, "retry it") {
		t.Errorf("stale run after the sweep: %s %+v", r.Status, r.Error)
	}
	if r, _ := svc.Get(context.Background(), "org1", fresh.ID); r.Status != runs.Queued {
		t.Errorf("fresh run after the sweep: %s, want queued", r.Status)
	}
}

func TestAStaleRunThatAnEngineMarksRunningFirstIsNotFailed(t *testing.T) {
	t.Parallel()
	svc, stale, _ := queuedRuns(t, testenv.Scaled(2*time.Second))
	svc.SetQueuedTimeout(time.Hour) // the engine picks it up in time
	// Without its workflow, as an execution started before the input named it.
	if _, err := svc.Execute(context.Background(), runs.ExecutionInput{OrganizationID: "org1", RunID: stale.ID}); err != nil {
		t.Fatal(err)
	}
	svc.SetQueuedTimeout(testenv.Scaled(2 * time.Second))
	if n, _ := svc.SweepStale(context.Background()); n != 0 {
		t.Errorf("the sweep failed %d runs; a run that started is not stale", n)
	}
	if r, _ := svc.Get(context.Background(), "org1", stale.ID); r.Status != runs.Completed {
		t.Errorf("run: %s, want completed", r.Status)
	}
}

// holding is an engine that has accepted every run and holds it waiting
// for a slot, as the in-process engine does when all its slots are busy.
type holding struct{ held }

func (holding) Holds(string) bool { return true }

func TestARunWaitingInTheEngineForASlotIsNotStaleHoweverLongItWaits(t *testing.T) {
	t.Parallel()
	svc, stale, _ := queuedRuns(t, testenv.Scaled(time.Second), holding{})
	if n, err := svc.SweepStale(context.Background()); err != nil || n != 0 {
		t.Fatalf("SweepStale = %d, %v; want 0: the engine holds the run", n, err)
	}
	if r, _ := svc.Get(context.Background(), "org1", stale.ID); r.Status != runs.Queued {
		t.Errorf("held run read as %s, want queued", r.Status)
	}
}
