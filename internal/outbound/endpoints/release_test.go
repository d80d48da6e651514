package endpoints_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
)

// A group held for the retry of its first message (an hour away) goes on
// as soon as Release names that message, also when the release comes
// while the message is still being attempted (before its wait begins).
func TestALocalQueueReleasesAHeldGroupAtOnce(t *testing.T) {
	t.Parallel()
	for _, early := range []bool{false, true} {
		name := "released while waiting"
		if early {
			name = "released while being attempted"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			q := &endpoints.LocalQueue{}
			var mu sync.Mutex
			var attempts []string
			attempted := make(chan string, 10)
			held := endpoints.Message{Org: "org_1", Delivery: "msg_a", Group: "we_1/deal_1"}
			q.Attempt = func(ctx context.Context, m endpoints.Message) (endpoints.Outcome, error) {
				mu.Lock()
				attempts = append(attempts, m.Delivery)
				first := len(attempts) == 1
				mu.Unlock()
				if !first {
					attempted <- m.Delivery
					return endpoints.Outcome{}, nil
				}
				if early {
					// The manual retry succeeds while this attempt is still
					// recording its failure.
					q.Release(ctx, endpoints.Message{Delivery: "msg_other", Group: held.Group})
					q.Release(ctx, held)
				}
				return endpoints.Outcome{Retry: time.Hour}, nil
			}
			q.Start(ctx)
			q.Send(ctx, held)
			q.Send(ctx, endpoints.Message{Org: "org_1", Delivery: "msg_b", Group: held.Group})
			if !early {
				// Released once it has failed: whether it waits yet or
				// not, the release ends the wait.
				deadline := time.Now().Add(testenv.Scaled(10 * time.Second))
				for {
					mu.Lock()
					n := len(attempts)
					mu.Unlock()
					if n >= 1 || time.Now().After(deadline) {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				q.Release(ctx, endpoints.Message{Delivery: "msg_other", Group: held.Group})
				q.Release(ctx, held)
			}
			for _, want := range []string{"msg_a", "msg_b"} {
				select {
				case got := <-attempted:
					if got != want {
						t.Fatalf("attempted %s, want %s", got, want)
					}
				case <-time.After(testenv.Scaled(10 * time.Second)):
					t.Fatalf("the released group did not go on: attempts %v", attempts)
				}
			}
		})
	}
}
