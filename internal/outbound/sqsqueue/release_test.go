package sqsqueue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	evs "github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/outbound/sqsqueue"
	"github.com/sourcebase/sourcebase/internal/store"
)

// In SQS as in process, a manual retry that succeeds releases the
// record's later deliveries at once: the failed delivery's message,
// hidden for its retry (here more than 8 minutes away), is made visible
// again, and the one behind it, made visible as it was held, follows.
func TestASuccessfulManualRetryReleasesTheGroupItsMessageHides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := motoSQS(t)
	queue, dlq := fifo(t, c, "release"), fifo(t, c, "release-dlq")
	var mu sync.Mutex
	down := true
	var got []string // webhook-ids, in arrival order
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Header.Get("webhook-id"))
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)

	st := testenv.Store(t)
	svc := endpoints.New(st, kinds.Events(), &outbound.Client{AllowLoopback: true}, sqsqueue.Queue{Client: c, URL: queue})
	svc.Scale = 100 // the first retry 500 s away
	ep, err := svc.Create(ctx, "org_1", endpoints.Input{URL: aws.String(recv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	for i, id := range []string{"evt_01m8a0000000000000000000001", "evt_01m8a0000000000000000000002"} {
		ev := evs.Event{ID: id, Type: "deal.updated", OccurredAt: clock.Of(now.Add(time.Duration(i) * time.Millisecond)),
			Actor: store.Actor{Type: store.ActorSystem, ID: "test"}, Resource: evs.Resource{Type: "deal", ID: "deal_1"}}
		if err := svc.Publish(ctx, evs.Derived{Org: "org_1", Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	handle := sqsqueue.Handler(svc, c, queue, dlq)
	deliver := func() int {
		t.Helper()
		batch := receive(t, c, queue)
		if _, err := handle(ctx, batch); err != nil {
			t.Fatal(err)
		}
		return len(batch.Records)
	}
	deliver() // the first fails and hides for its retry; the second is held behind it
	if n := deliver(); n != 0 {
		t.Fatalf("%d messages received while the group waits for its retry", n)
	}
	p, err := svc.Deliveries(ctx, "org_1", ep.ID, "", 10, 0, "")
	if err != nil || len(p.Items) != 2 {
		t.Fatalf("deliveries %+v %v", p.Items, err)
	}
	first, second := p.Items[1], p.Items[0] // newest first
	if len(first.Attempts) != 1 || len(second.Attempts) != 0 {
		t.Fatalf("attempts: first %d, second %d; want the first tried once and the second waiting", len(first.Attempts), len(second.Attempts))
	}

	mu.Lock()
	down = false
	mu.Unlock()
	if _, err := svc.Retry(ctx, "org_1", ep.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	deliver() // the manual retry: it succeeds and releases the group
	deliver() // the released group: the first, done, then the second
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != first.ID || got[1] != first.ID || got[2] != second.ID {
		t.Fatalf("webhook-ids in order %v, want %s twice (failed, retried), then %s", got, first.ID, second.ID)
	}
}
