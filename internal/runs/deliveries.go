package runs

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ids"
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
// first run as it is now, with first false.
func (s *Service) createForDelivery(ctx context.Context, org string, wf *workflows.Workflow, n NewRun, slug, deliveryID string) (run *Run, first bool, err error) {
	if deliveryID == "" {
		run, err := s.Create(ctx, org, wf, n)
		return run, true, err
	}
	st := s.coll.Store()
	key := store.DeliveryKey(org, slug, deliveryID)
	base := n.Extra
	const attempts = 6
	for attempt := 1; ; attempt++ {
		var seen delivery
		_, err := st.GetLive(ctx, key.PK, key.SK, &seen)
		if err == nil {
			run, err := s.Get(ctx, org, seen.RunID)
			return run, false, err
		}
		if !errors.Is(err, apperr.ErrNotFound) {
			return nil, false, err
		}
		n.ID = ids.New("run")
		mark, err := st.CreateExpiringOp(store.Item{PK: key.PK, SK: key.SK, Type: store.TypeDelivery, Doc: delivery{Slug: slug, RunID: n.ID}},
			s.now().Add(DeliveryWindow))
		if err != nil {
			return nil, false, err
		}
		n.Extra = append(append([]store.Op{}, base...), mark)
		run, err := s.Create(ctx, org, wf, n)
		if err == nil || !errors.Is(err, apperr.ErrConflict) || attempt == attempts {
			return run, true, err
		}
		// A concurrent delivery with this id got there first: read its run.
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}
