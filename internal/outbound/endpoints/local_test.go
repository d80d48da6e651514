package endpoints_test

import (
	"context"
	"io"
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
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestAnEndpointThatTimesOutIsRetriedWithTheSameWebhookIDAndHoldsItsRecordsLaterEvents(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []string // webhook-id and event id of each request, in arrival order
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the sender hanging up
		mu.Lock()
		got = append(got, r.Header.Get("webhook-id"))
		hang := len(got) <= 2
		mu.Unlock()
		if hang {
			<-r.Context().Done() // answers nothing until the sender gives up
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()

	st := testenv.Store(t)
	client := &outbound.Client{AllowLoopback: true, Timeout: testenv.Scaled(300 * time.Millisecond)}
	q := &endpoints.LocalQueue{}
	svc := endpoints.New(st, kinds.Events(), client, q)
	svc.Scale = 1e-6
	q.Attempt = svc.Attempt
	q.Start(ctx)
	ep, err := svc.Create(ctx, "org_1", endpoints.Input{URL: aws.String(recv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(id string, at time.Time) evs.Derived {
		return evs.Derived{Org: "org_1", Event: evs.Event{ID: id, Type: "deal.updated", OccurredAt: clock.Of(at),
			Actor: store.Actor{Type: "apiKey", ID: "ck_1"}, Resource: evs.Resource{Type: "deal", ID: "deal_1"}}}
	}
	now := time.Now()
	for i, id := range []string{"evt_a", "evt_b"} {
		if err := svc.Publish(ctx, ev(id, now.Add(time.Duration(i)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(testenv.Scaled(30 * time.Second))
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 4 && q.Idle() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	// The first event's delivery timed out twice, then succeeded; only then
	// did the record's second event go.
	if len(got) != 4 || got[0] != got[1] || got[1] != got[2] || got[3] == got[0] {
		t.Fatalf("webhook-ids in order %v, want the first delivery three times (two timeouts), then the second", got)
	}
	p, err := svc.Deliveries(ctx, "org_1", ep.ID, "", 10, 0, "")
	if err != nil || len(p.Items) != 2 {
		t.Fatalf("deliveries %v %v", p.Items, err)
	}
	first := p.Items[1] // newest first
	if first.Status != endpoints.Succeeded || len(first.Attempts) != 3 || first.Attempts[0].Error == "" || first.Attempts[0].Status != 0 {
		t.Errorf("the timed-out delivery: %+v", first)
	}
}
