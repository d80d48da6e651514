package runs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/store"
)

// A run whose start was interrupted (the process stopped, the table or
// the engine did not answer) stays queued. Once it has been queued longer
// than the queued timeout it is failed, so it can be retried: by Recover
// at dev-server start, by SweepStale (every 5 minutes by the runner
// function in AWS, every minute in the dev server: app.Sweep), and lazily
// by any read of the run (Get, List).

// stale reports whether r has been queued longer than the queued timeout
// and is not waiting in this process's engine for a free slot (a run
// queued behind others has been started; it is not interrupted).
func (s *Service) stale(r *Run) bool {
	if r.Status != Queued || s.now().Sub(r.CreatedAt.Time) <= s.queuedTimeout {
		return false
	}
	h, ok := s.engine.(interface{ Holds(runID string) bool })
	return !ok || !h.Holds(r.ID)
}

// staleError is the error of a run failed as never started.
func (s *Service) staleError() *steps.RunError {
	return &steps.RunError{Message: fmt.Sprintf("the run was not started within %s of being queued (its start was interrupted); retry it to run it again", s.queuedTimeout)}
}

// recoverMessage says why Recover fails an unfinished run.
func (s *Service) recoverMessage(r *Run) string {
	if s.stale(r) {
		return s.staleError().Message
	}
	return "the service stopped while this run was " + r.Status + "; retry it to run it again"
}

// failIfStale fails r when it is stale, by a conditional state change
// (only a run still queued and stale is changed, so an engine marking it
// running at the same moment wins or loses cleanly), and returns the run
// as stored.
func (s *Service) failIfStale(ctx context.Context, org string, r *Run) (*Run, error) {
	if !s.stale(r) {
		return r, nil
	}
	rec, err := s.coll.Update(ctx, org, r.ID, func(cur *record) error {
		if !s.stale(&cur.Run) {
			return store.ErrUnchanged
		}
		s.setOutcome(cur, nil, s.staleError())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fail stale queued run %s: %w", r.ID, err)
	}
	slog.InfoContext(ctx, "failed a run left queued", "runId", r.ID, "organizationId", org)
	return &rec.Run, nil
}

// failStaleIn fails the stale runs of a list in place. A run that cannot
// be changed now is listed as read (and logged); a later read retries.
func (s *Service) failStaleIn(ctx context.Context, org string, rs []Run) {
	for i := range rs {
		if !s.stale(&rs[i]) {
			continue
		}
		r, err := s.failIfStale(ctx, org, &rs[i])
		if err != nil {
			slog.WarnContext(ctx, "fail stale queued run", "runId", rs[i].ID, "err", err)
			return
		}
		rs[i] = *r
	}
}

// SweepStale fails every stale queued run of every organization and
// returns how many it failed; the dev server calls it periodically.
func (s *Service) SweepStale(ctx context.Context) (int, error) {
	failed := 0
	for _, lookup := range []string{activeLookup, layout1Active} {
		n, err := s.sweepStale(ctx, lookup)
		failed += n
		if err != nil {
			return failed, err
		}
	}
	return failed, nil
}

// sweepStale is SweepStale of the runs one marker (lookup) finds.
func (s *Service) sweepStale(ctx context.Context, lookup string) (int, error) {
	q := store.Query{Limit: 100, Desc: true, Where: &store.Where{Lookup: lookup, Value: "1"}}
	failed := 0
	for {
		p, err := s.coll.List(ctx, "", q)
		if err != nil {
			return failed, err
		}
		for _, r := range p.Items {
			if !s.stale(&r.Run) {
				continue
			}
			done, err := s.failIfStale(ctx, r.OrganizationID, &r.Run)
			if err != nil {
				return failed, err
			}
			if done.Status == Failed {
				failed++
			}
		}
		if p.Next == "" {
			return failed, nil
		}
		q.Cursor = p.Next
	}
}
