package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/store"
)

// An organization runs at most MaxRunningJobs imports and exports at once:
// a job holds one of its organization's MaxRunningJobs slots (items of the
// table, in a partition of the organization's own) from its first step to
// its end. A step of a job that holds none and finds every slot held by
// another job writes nothing: it waits, polling the slots, and ends not
// done, so that the runner or the state machine runs it again; the job
// stays queued meanwhile. A slot is a lease, renewed by each step of its
// job, that expires slotMargin after the step's deadline: a job whose
// process died frees its slot within that, rather than for ever.
//
// With each import at most RowsPerSecond (DefaultRowsPerSecond), an
// organization's imports together write at most MaxRunningJobs times it.

// MaxRunningJobs is how many jobs (imports and exports together) of one
// organization run at once; the others wait, queued, in turn.
const MaxRunningJobs = 2

// slotMargin is how long after its step's deadline a slot is held: the
// time the state machine or the runner takes to run the job's next step
// (its retries' waits included).
const slotMargin = 5 * time.Minute

// queuePoll is how often a waiting step reads the slots again.
const queuePoll = time.Second

// queueWait bounds how long one step of a waiting job waits for a slot
// before it ends not done (and is run again).
const queueWait = time.Minute

const typeSlot = "JOBSLOT"

// slotKey is the i-th slot of org: a partition of the organization's own,
// read strongly consistent.
func slotKey(org string, i int) store.Key {
	return store.Key{PK: typeSlot + "#" + org, SK: fmt.Sprint(i)}
}

type slotDoc struct {
	Job string `json:"job"`
}

// acquire takes or renews a slot of org for the job id until expires, and
// reports whether it holds one.
func (s *Service) acquire(ctx context.Context, org, id string, expires time.Time) (bool, error) {
	free := []int{}
	for i := range MaxRunningJobs {
		k := slotKey(org, i)
		var doc slotDoc
		it, err := s.st.GetLive(ctx, k.PK, k.SK, &doc)
		if errors.Is(err, apperr.ErrNotFound) {
			free = append(free, i)
			continue
		}
		if err != nil {
			return false, err
		}
		if doc.Job != id {
			continue
		}
		if ok, err := s.putSlot(ctx, s.st.ReplaceExpiringOp, store.Item{PK: k.PK, SK: k.SK, Type: typeSlot, Doc: slotDoc{Job: id}, Version: it.Version + 1}, expires); ok || err != nil {
			return ok, err
		}
	}
	for _, i := range free {
		k := slotKey(org, i)
		if ok, err := s.putSlot(ctx, s.st.CreateExpiringOp, store.Item{PK: k.PK, SK: k.SK, Type: typeSlot, Doc: slotDoc{Job: id}}, expires); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// putSlot writes a slot with the conditional operation op makes: false
// when another job's write won the slot first.
func (s *Service) putSlot(ctx context.Context, op func(store.Item, time.Time) (store.Op, error), it store.Item, expires time.Time) (bool, error) {
	o, err := op(it, expires)
	if err != nil {
		return false, err
	}
	err = s.st.Transact(ctx, nil, o)
	if errors.Is(err, apperr.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// waitSlot acquires a slot for the job, waiting up to queueWait (and not
// past deadline) while every slot is another job's.
func (s *Service) waitSlot(ctx context.Context, org, id string, deadline time.Time) (bool, error) {
	expires := deadline.Add(slotMargin)
	until := time.Now().Add(queueWait)
	if deadline.Before(until) {
		until = deadline
	}
	for {
		ok, err := s.acquire(ctx, org, id, expires)
		if ok || err != nil || !time.Now().Add(queuePoll).Before(until) {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(queuePoll):
		}
	}
}

// release frees the slot the job holds, if any (a job that ended).
func (s *Service) release(ctx context.Context, org, id string) error {
	for i := range MaxRunningJobs {
		k := slotKey(org, i)
		var doc slotDoc
		it, err := s.st.GetItem(ctx, k.PK, k.SK, &doc)
		if errors.Is(err, apperr.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if doc.Job != id {
			continue
		}
		if err := s.st.Transact(ctx, nil, s.st.DeleteVersionOp(k.PK, k.SK, it.Version)); err != nil && !errors.Is(err, apperr.ErrConflict) {
			return err
		}
	}
	return nil
}

// RowLimiter counts requests of an API key against its limits
// (ratelimit.Limiter.Key): an import's rows count as its creator's
// requests.
type RowLimiter interface {
	Key(ctx context.Context, org, clientID string) ratelimit.Decision
}

// maxRowWait bounds one wait of an import for its key's limit (a window
// is a minute).
const maxRowWait = ratelimit.Window

// takeRows counts n rows of the import against the rate limit of the API
// key that created it, one request each (as a batch's operations count),
// before they are written: a row the limit refuses waits until the
// window the limit reports ends, then is counted again. An import created
// by no API key (the system's) is not counted; a limiter that fails lets
// the rows through (ratelimit.Limiter.Key). waited says a row waited.
func (s *Service) takeRows(ctx context.Context, org string, j *Job, n int) (waited bool, err error) {
	if s.Limits == nil || n <= 0 {
		return false, nil
	}
	a := store.ParseActor(j.CreatedBy)
	if a.Type != store.ActorAPIKey || a.ID == "" {
		return false, nil
	}
	for taken := 0; taken < n; {
		d := s.Limits.Key(ctx, org, a.ID)
		if d.Allowed {
			taken++
			continue
		}
		wait := min(max(d.Reset, 10*time.Millisecond), maxRowWait)
		slog.DebugContext(ctx, "import waits for its key's rate limit", "job", j.ID, "wait", wait)
		waited = true
		select {
		case <-ctx.Done():
			return waited, ctx.Err()
		case <-time.After(wait):
		}
	}
	return waited, nil
}
