package perfreport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/serve/eventfns"
	"github.com/sourcebase/sourcebase/internal/store"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/service"
)

// eventFigures are the change history's: from a write to its delivery at
// a subscribed endpoint, and what the events code costs per event.
type eventFigures struct {
	Burst, Workers int
	P50, P99, Max  time.Duration // write (occurredAt) to delivery
	Drain          time.Duration // from the burst's first write to its last delivery
	Measured       int           // events Usage is of
	Usage          apitest.Usage // DynamoDB of the events code (history, deliveries) over Measured events
}

// changeHistory writes a burst of company creates with the change history
// running (in this process, over its own metered client of the table) and
// an endpoint subscribed, and measures each event's delay from its write to
// its delivery, and the DynamoDB calls and units the events code spends per
// event: deriving it, keeping it, queueing and recording its delivery.
func changeHistory(t *testing.T, env *apitest.Env, c *apitest.Client, burst, workers int) eventFigures {
	t.Helper()
	m := &apitest.Meter{}
	st := store.New(dynamodb.New(env.Store.DB.Options(), m.Option), env.Store.Table)
	deps := service.Build(st, service.Config{Table: st.Table, CacheTTL: auth.MaxCacheTTL, WebhooksAllowLoopback: true}, nil)
	evs := eventfns.StartEvents(context.Background(), deps)
	defer evs.Stop()
	// The stream's earlier changes (the report's traffic so far) first,
	// with no endpoint to deliver them to.
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(5*time.Minute))
	defer cancel()
	if err := evs.Caught(ctx); err != nil {
		t.Fatal(err)
	}

	const name = "Burst company "
	var mu sync.Mutex
	var delays []time.Duration
	var last time.Time
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		b, _ := io.ReadAll(r.Body)
		var ev struct {
			OccurredAt time.Time `json:"occurredAt"`
			Data       struct {
				CanonicalName string `json:"canonicalName"`
			} `json:"data"`
		}
		json.Unmarshal(b, &ev)
		w.WriteHeader(http.StatusNoContent)
		if !strings.HasPrefix(ev.Data.CanonicalName, name) {
			return
		}
		mu.Lock()
		delays = append(delays, at.Sub(ev.OccurredAt))
		last = at
		mu.Unlock()
	}))
	defer recv.Close()
	ep := c.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL, "eventTypes": []string{"company.created"}}).Want(t, http.StatusCreated).Object(t)
	defer c.Do("DELETE", "/v1/webhook-endpoints/"+ep["id"].(string), nil)
	if err := evs.Caught(ctx); err != nil {
		t.Fatal(err)
	}
	m.Reset()

	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprint(name, i)}).Want(t, http.StatusCreated)
			}
		}()
	}
	for i := range burst {
		next <- i
	}
	close(next)
	wg.Wait()
	for {
		mu.Lock()
		got := len(delays)
		mu.Unlock()
		if got >= burst {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d deliveries before the deadline", got, burst)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for !evs.Queue.Idle() {
		time.Sleep(10 * time.Millisecond)
	}
	out := eventFigures{Burst: burst, Workers: workers, Measured: burst, Usage: m.Reset()}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(delays)
	out.P50, out.P99, out.Max = delays[len(delays)/2], delays[len(delays)*99/100], delays[len(delays)-1]
	out.Drain = last.Sub(start)
	return out
}
