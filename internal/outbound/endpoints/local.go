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
// kept as a dead letter, a held group released by Release — without
// durability: a process that stops loses what it had queued (the
// deliveries stay pending in the table).
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
	// holds are the groups waiting for a retry of their first message;
	// released, the groups whose first message Release let go before its
	// wait began (it is being attempted).
	holds    map[string]hold
	released map[string]string
}

// hold is a group's wait for the retry of delivery; closing release ends it.
type hold struct {
	delivery string
	release  chan struct{}
}

// init makes the maps; q.mu is held.
func (q *LocalQueue) init() {
	if q.groups == nil {
		q.groups, q.slots = map[string][]Message{}, map[string]chan struct{}{}
		q.holds, q.released = map[string]hold{}, map[string]string{}
	}
}

// Start makes the queue handle messages until ctx is done.
func (q *LocalQueue) Start(ctx context.Context) { q.ctx = ctx }

// Send queues m behind its group's earlier messages.
func (q *LocalQueue) Send(_ context.Context, m Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
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
			if !q.wait(ctx, group, m.Delivery, out.Retry) {
				return
			}
			continue // the same message again: it holds its group
		}
		q.mu.Lock()
		delete(q.released, group)
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

// wait holds group for the retry of delivery, d, unless Release lets it
// go sooner; false when ctx ends first.
func (q *LocalQueue) wait(ctx context.Context, group, delivery string, d time.Duration) bool {
	q.mu.Lock()
	if q.released[group] == delivery {
		delete(q.released, group)
		q.mu.Unlock()
		return true
	}
	h := hold{delivery: delivery, release: make(chan struct{})}
	q.holds[group] = h
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		if q.holds[group] == h {
			delete(q.holds, group)
		}
		q.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-h.release:
	case <-ctx.Done():
		return false
	}
	return true
}

// Release ends the wait of m's group for the retry of m's delivery, at
// once: the delivery is attempted again (and, done by then, let go), and
// the group goes on. A group attempting that delivery is let go as its
// wait begins; any other is left alone.
func (q *LocalQueue) Release(_ context.Context, m Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	if h, ok := q.holds[m.Group]; ok && h.delivery == m.Delivery {
		close(h.release)
		delete(q.holds, m.Group)
		return nil
	}
	if queued := q.groups[m.Group]; len(queued) > 0 && queued[0].Delivery == m.Delivery {
		q.released[m.Group] = m.Delivery
	}
	return nil
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
