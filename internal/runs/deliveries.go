package runs

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// DeliveryWindow is how long a webhook delivery id is remembered: a
// delivery repeated within it starts no second run.
const DeliveryWindow = 24 * time.Hour

// delivery records the run a webhook delivery started.
type delivery struct {
	Slug  string `json:"slug"`
	RunID string `json:"runId"`
}

// createForDelivery is Create for a webhook delivery. When the delivery
// carries an id, it starts one run per trigger slug and id within
// DeliveryWindow: the record of the delivery is written in the same
// transaction as the run, and a repeat (even a concurrent one) gets the
// first run as it is now, with first false. A delivery is written before
// it is looked for: a first delivery, the common case, costs no read; a
// repeat finds the delivery's record in its way and reads the run it names.
func (s *Service) createForDelivery(ctx context.Context, org string, wf *workflows.Workflow, n NewRun, slug, deliveryID string) (run *Run, first bool, err error) {
	if deliveryID == "" {
		run, err := s.Create(ctx, org, wf, n)
		return run, true, err
	}
	st := s.coll.Store()
	key := store.DeliveryKey(org, slug, deliveryID)
	base, baseUndo := n.Extra, n.Undo
	const attempts = 6
	for attempt := 1; ; attempt++ {
		if n.ID, err = s.coll.NewID(ctx, org, "run"); err != nil {
			return nil, false, err
		}
		mark, err := st.CreateExpiringOp(store.Item{PK: key.PK, SK: key.SK, Type: store.TypeDelivery, Doc: delivery{Slug: slug, RunID: n.ID}},
			s.now().Add(DeliveryWindow))
		if err != nil {
			return nil, false, err
		}
		n.Extra = append(append([]store.Op{}, base...), mark)
		n.Undo = append(append([]store.Op{}, baseUndo...), st.DeleteOp(key.PK, key.SK))
		run, err := s.Create(ctx, org, wf, n)
		if err == nil || !errors.Is(err, apperr.ErrConflict) {
			return run, true, err
		}
		// A delivery with this id came first: its run.
		var seen delivery
		_, err = st.GetLive(ctx, key.PK, key.SK, &seen)
		if err == nil {
			run, err := s.Get(ctx, org, seen.RunID)
			return run, false, err
		}
		if !errors.Is(err, apperr.ErrNotFound) {
			return nil, false, err
		}
		if attempt == attempts {
			return nil, false, apperr.ConcurrentWrite("the delivery's record kept changing while the run was created; try again")
		}
		// It expired meanwhile (or another attempt is between its writes).
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}
