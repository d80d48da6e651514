package endpoints

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// LocalQueue is the delivery queue of one process (the dev server, the
// local Lambda front): the same semantics as the SQS FIFO queue of a
// deployment — one group's messages one at a time in order, a retry
// holding its group until its wait is over, what exhausts its retries
// kept as a dead letter — without durability: a process that stops loses
// what it had queued (the deliveries stay pending in the table).
type LocalQueue struct {
	// Attempt handles a message (Service.Attempt).
	Attempt func(context.Context, Message) (Outcome, error)
	// PerEndpoint bounds the groups of one endpoint handled at once
	// (default 4).
	PerEndpoint int

	ctx    context.Context
	mu     sync.Mutex
	groups map[string][]Message
	slots  map[string]chan struct{}
	dead   []Message
	wg     sync.WaitGroup
}

// Start makes the queue handle messages until ctx is done.
func (q *LocalQueue) Start(ctx context.Context) { q.ctx = ctx }

// Send queues m behind its group's earlier messages.
func (q *LocalQueue) Send(_ context.Context, m Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.groups == nil {
		q.groups, q.slots = map[string][]Message{}, map[string]chan struct{}{}
	}
	busy := len(q.groups[m.Group]) > 0
	q.groups[m.Group] = append(q.groups[m.Group], m)
	if !busy {
		q.wg.Add(1)
		go q.run(m.Group)
	}
	return nil
}

// run handles a group's messages in order until it has none.
func (q *LocalQueue) run(group string) {
	defer q.wg.Done()
	ctx := q.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	endpoint, _, _ := strings.Cut(group, "/")
	slot := q.slot(endpoint)
	for {
		q.mu.Lock()
		m := q.groups[group][0]
		q.mu.Unlock()
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
			return
		}
		out, err := q.Attempt(ctx, m)
		<-slot
		switch {
		case err != nil:
			slog.ErrorContext(ctx, "a delivery attempt failed; trying again", "delivery", m.Delivery, "error", err)
			out.Retry = time.Second
		case out.Dead:
			q.mu.Lock()
			q.dead = append(q.dead, m)
			q.mu.Unlock()
			slog.WarnContext(ctx, "a delivery exhausted its retries", "delivery", m.Delivery)
		}
		if out.Retry > 0 {
			select {
			case <-time.After(out.Retry):
				continue // the same message again: it holds its group
			case <-ctx.Done():
				return
			}
		}
		q.mu.Lock()
		rest := q.groups[group][1:]
		if len(rest) == 0 {
			delete(q.groups, group)
			q.mu.Unlock()
			return
		}
		q.groups[group] = rest
		q.mu.Unlock()
	}
}

func (q *LocalQueue) slot(endpoint string) chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	s, ok := q.slots[endpoint]
	if !ok {
		n := q.PerEndpoint
		if n <= 0 {
			n = 4
		}
		s = make(chan struct{}, n)
		q.slots[endpoint] = s
	}
	return s
}

// DeadLetters are the messages that exhausted their retries.
func (q *LocalQueue) DeadLetters() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]Message(nil), q.dead...)
}

// Idle reports whether no message is queued or being handled.
func (q *LocalQueue) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.groups) == 0
}
