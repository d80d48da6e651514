package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// TypeDelivery is the item type (and log) of deliveries.
const TypeDelivery = "WHDELIVERY"

// DeliveryRetention is how long a delivery and its attempts are kept.
const DeliveryRetention = 30 * 24 * time.Hour

// MaxAttemptsShown bounds the attempts a delivery keeps (the latest).
const MaxAttemptsShown = 20

// Delivery statuses.
const (
	Pending   = "pending"   // to be attempted (again)
	Succeeded = "succeeded" // an attempt got a 2xx
	Failed    = "failed"    // its retries are exhausted, or its endpoint is gone or disabled
)

// Delivery is one event's delivery to one endpoint, with its attempts.
// Its id is the webhook-id every attempt sends.
type Delivery struct {
	ID         string `json:"id"`
	EndpointID string `json:"endpointId"`
	EventID    string `json:"eventId"`
	EventType  string `json:"eventType"`
	// Resource is the record the event is about ("" for a test): its
	// deliveries to one endpoint are made in order of change.
	ResourceID string `json:"resourceId,omitempty"`
	// RequestID is the request that made the change (the event's
	// requestId); absent when no request did.
	RequestID string    `json:"requestId,omitempty"`
	Status    string    `json:"status"`
	Attempts  []Attempt `json:"attempts"`
	// NextAttemptAt is when a pending delivery is due: when it was made
	// (or queued again by a manual retry), the time of its retry after a
	// failed attempt; nil once it succeeded or failed. A due delivery
	// still waits behind its record's earlier deliveries to the endpoint.
	NextAttemptAt *clock.Time `json:"nextAttemptAt"`
	CreatedAt     clock.Time  `json:"createdAt"`
	UpdatedAt     clock.Time  `json:"updatedAt"`
	// Payload is the body every attempt sends (kept so that a retry sends
	// the same bytes); not shown.
	Payload json.RawMessage `json:"payload,omitempty"`
}

// stored is a delivery as the table keeps it: with the hold of its
// message, which clients never see.
type stored struct {
	Delivery
	// Hold is where the delivery's message waits for its retry, holding
	// its group (the record's later deliveries to the endpoint): what a
	// successful manual retry releases; nil when none waits.
	Hold *Hold `json:"hold,omitempty"`
}

// Hold is a message of a group waiting for its retry: its group and, in
// SQS, the receipt handle of the receive that holds it.
type Hold struct {
	Group   string `json:"group"`
	Receipt string `json:"receipt,omitempty"`
}

// Attempt is one try of a delivery.
type Attempt struct {
	At        clock.Time `json:"at"`
	Status    int        `json:"status,omitempty"` // the endpoint's HTTP status; absent when none came
	LatencyMs int64      `json:"latencyMs"`
	Response  string     `json:"response,omitempty"` // the first KiB of the answer
	Error     string     `json:"error,omitempty"`    // why no status came (timeout, refused destination)
	Manual    bool       `json:"manual,omitempty"`   // asked for by a retry request or a test
}

// public is d as clients see it: without its payload.
func (d Delivery) public() Delivery {
	d.Payload = nil
	if d.Attempts == nil {
		d.Attempts = []Attempt{}
	}
	return d
}

// Message is what the queue carries: which delivery to attempt. Group
// orders them: a group's messages are handled one at a time, in order
// (an endpoint and a record).
type Message struct {
	Org      string `json:"org"`
	Delivery string `json:"delivery"`
	Group    string `json:"group"`
	Manual   bool   `json:"manual,omitempty"` // a retry asked for by a client
	// Receipt is the queue's handle of this receipt of the message (SQS),
	// set by the queue's handler; what a Hold keeps.
	Receipt string `json:"-"`
}

// Queue carries deliveries to Attempt.
type Queue interface {
	Send(ctx context.Context, m Message) error
}

// Releaser is a Queue that can end at once the wait of a message held for
// its retry (m: the delivery, its group and receipt, from its Hold): the
// message is attempted again now, finds its delivery done, and its group
// goes on.
type Releaser interface {
	Release(ctx context.Context, m Message) error
}

// Publish creates the deliveries of an event to org's endpoints
// subscribed to it and queues them. A delivery's id comes from the event
// and the endpoint, so an event published again (a stream batch retried)
// makes no second delivery: it is queued again only while still pending.
func (s *Service) Publish(ctx context.Context, d history.Derived) error {
	eps, err := s.subscribed(ctx, d.Org, d.Event.Type)
	if err != nil || len(eps) == 0 {
		return err
	}
	body, err := bodyOf(d.Event)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		now := s.now()
		// In the shard of its event (and so of the event's record).
		dl := Delivery{ID: ids.InShard(ids.Derived("msg", d.Event.OccurredAt.Time, d.Event.ID+"/"+ep.ID), ids.Shard(d.Event.ID)), EndpointID: ep.ID,
			EventID: d.Event.ID, EventType: d.Event.Type, ResourceID: d.Event.Resource.ID, RequestID: d.Event.RequestID, Status: Pending,
			NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now, Payload: body}
		created, err := s.appendDelivery(ctx, d.Org, dl)
		if err != nil {
			return err
		}
		if !created {
			cur, _, err := s.delivery(ctx, d.Org, dl.ID)
			if err != nil || cur.Status != Pending {
				continue // delivered, or given up: nothing to queue again
			}
		}
		if err := s.queue.Send(ctx, Message{Org: d.Org, Delivery: dl.ID, Group: ep.ID + "/" + d.Event.Resource.ID}); err != nil {
			return fmt.Errorf("queue delivery %s: %w", dl.ID, err)
		}
	}
	return nil
}

func (s *Service) appendDelivery(ctx context.Context, org string, dl Delivery) (bool, error) {
	doc, err := json.Marshal(dl)
	if err != nil {
		return false, err
	}
	return s.st.AppendLog(ctx, store.LogEntry{Org: org, Type: TypeDelivery, ID: dl.ID, Doc: doc, Thread: dl.EndpointID,
		Attrs: map[string]string{"status": dl.Status}, Expires: dl.CreatedAt.Add(DeliveryRetention)})
}

func (s *Service) delivery(ctx context.Context, org, id string) (stored, int64, error) {
	var d stored
	if len(id) > store.MaxIDLength {
		return d, 0, apperr.ErrNotFound
	}
	raw, version, err := s.st.GetLog(ctx, org, TypeDelivery, id)
	if err != nil {
		return d, 0, err
	}
	return d, version, json.Unmarshal(raw, &d)
}

// saveDelivery writes d over the version read.
func (s *Service) saveDelivery(ctx context.Context, org string, d stored, version int64) error {
	if len(d.Attempts) > MaxAttemptsShown {
		d.Attempts = d.Attempts[len(d.Attempts)-MaxAttemptsShown:]
	}
	doc, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return s.st.ReplaceLog(ctx, store.LogEntry{Org: org, Type: TypeDelivery, ID: d.ID, Doc: doc, Thread: d.EndpointID,
		Attrs: map[string]string{"status": d.Status}, Expires: d.CreatedAt.Add(DeliveryRetention), Version: version + 1})
}

// Outcome is what Attempt did: Retry > 0 asks for another attempt after
// that wait; Dead says the delivery exhausted its retries (the queue's
// dead-letter queue keeps its message).
type Outcome struct {
	Retry time.Duration
	Dead  bool
	// Paused: the delivery's organization is suspended, nothing was
	// attempted, and Retry is when to look again (the queue keeps it).
	Paused bool
}

// Attempt makes one try of a pending delivery: it signs the payload with
// the endpoint's live secrets, posts it, and records the attempt. A
// delivery no longer pending (done, given up, or attempted meanwhile by a
// duplicate message) is left alone. A failed attempt of the delivery's
// own message holds its group for the retry (Hold); a manual retry that
// succeeds releases that hold (release), so the record's later
// deliveries go at once rather than at the retry's time.
func (s *Service) Attempt(ctx context.Context, m Message) (Outcome, error) {
	ctx = store.WithActor(ctx, store.Actor{Type: store.ActorSystem, ID: "deliveries"})
	if paused, out, err := s.paused(ctx, m); paused || err != nil {
		return out, err
	}
	d, version, err := s.delivery(ctx, m.Org, m.Delivery)
	if errors.Is(err, apperr.ErrNotFound) {
		return Outcome{}, nil // expired
	}
	if err != nil || d.Status != Pending {
		return Outcome{}, err
	}
	ep, err := s.coll.Get(ctx, m.Org, d.EndpointID)
	switch {
	case errors.Is(err, apperr.ErrNotFound):
		return Outcome{}, s.giveUp(ctx, m.Org, d, version, "the endpoint was deleted")
	case err != nil:
		return Outcome{}, err
	case !ep.Enabled:
		return Outcome{}, s.giveUp(ctx, m.Org, d, version, "the endpoint is disabled")
	}
	at := s.send(ctx, ep, d.Delivery, false)
	d.Attempts = append(d.Attempts, at)
	d.UpdatedAt = s.now()
	var out Outcome
	failures := 0
	for _, a := range d.Attempts {
		if !a.Manual && !(a.Status >= 200 && a.Status <= 299) {
			failures++
		}
	}
	if !ok(at) {
		// Failures in a row: this delivery's to its endpoint (an alarm
		// watches their maximum).
		telemetry.EmitMetrics(ctx, "delivery failed", []telemetry.Metric{
			{Name: telemetry.MetricDeliveryFailures, Unit: "Count", Value: 1},
			{Name: telemetry.MetricEndpointConsecutiveFailures, Unit: "Count", Value: float64(failures)},
		}, slog.String("organizationId", m.Org), slog.String("endpointId", ep.ID), slog.String("deliveryId", d.ID), slog.Int("status", at.Status))
	}
	held := d.Hold
	switch wait, again := outbound.NextRetry(failures, s.Scale); {
	case ok(at):
		d.Status, d.NextAttemptAt, d.Hold = Succeeded, nil, nil
	case again:
		next := clock.Time{Time: s.now().Add(wait)}
		d.NextAttemptAt, out.Retry = &next, wait
		if !m.Manual {
			// A manual retry waits in a group of its own, holding nothing.
			d.Hold = &Hold{Group: m.Group, Receipt: m.Receipt}
		}
	default:
		d.Status, d.NextAttemptAt, d.Hold, out.Dead = Failed, nil, nil, true
	}
	if err := s.saveDelivery(ctx, m.Org, d, version); err != nil {
		if errors.Is(err, apperr.ErrConflict) {
			return Outcome{}, nil // a duplicate message attempted it meanwhile
		}
		return Outcome{}, err
	}
	if m.Manual && ok(at) && held != nil {
		s.release(ctx, m.Org, d.ID, *held)
	}
	return out, s.health(ctx, m.Org, ep, ok(at))
}

// release lets the group the delivery's message holds for its retry go
// on now, when the queue can (Releaser): the delivery is done, and the
// record's later deliveries need not wait for that retry. A release that
// fails is logged: the group then goes on at the retry's time, as it
// would have.
func (s *Service) release(ctx context.Context, org, delivery string, h Hold) {
	r, ok := s.queue.(Releaser)
	if !ok {
		return
	}
	if err := r.Release(ctx, Message{Org: org, Delivery: delivery, Group: h.Group, Receipt: h.Receipt}); err != nil {
		slog.WarnContext(ctx, "a delivery's group cannot be released; its later deliveries wait for its retry", "delivery", delivery, "error", err)
	}
}

func ok(a Attempt) bool { return a.Status >= 200 && a.Status <= 299 }

// send posts d's payload to ep, signed, and describes the attempt.
func (s *Service) send(ctx context.Context, ep *record, d Delivery, manual bool) Attempt {
	now := s.now()
	at := Attempt{At: now, Manual: manual}
	h, err := outbound.Headers(ep.live(now.Time), d.ID, now.Time, d.Payload)
	if err != nil {
		at.Error = "the endpoint's secret cannot sign: " + err.Error()
		return at
	}
	res, err := s.client.Post(ctx, ep.URL, h, d.Payload)
	at.LatencyMs, at.Status, at.Response = res.Latency.Milliseconds(), res.Status, res.Excerpt
	if err != nil {
		at.Error = err.Error()
	}
	return at
}

// giveUp fails a delivery that can no longer be made.
func (s *Service) giveUp(ctx context.Context, org string, d stored, version int64, why string) error {
	d.Status, d.NextAttemptAt, d.Hold, d.UpdatedAt = Failed, nil, nil, s.now()
	d.Attempts = append(d.Attempts, Attempt{At: s.now(), Error: why})
	err := s.saveDelivery(ctx, org, d, version)
	if errors.Is(err, apperr.ErrConflict) {
		return nil
	}
	return err
}

// health keeps an endpoint's failing time: set by its first failure,
// cleared by a success; an endpoint failing for DisableAfter is disabled
// (its webhookEndpoint.disabled event tells the organization).
func (s *Service) health(ctx context.Context, org string, ep *record, success bool) error {
	switch {
	case success && ep.FailingSince == nil:
		return nil // healthy, as it was
	case !success && ep.FailingSince != nil && (!ep.Enabled || s.now().Sub(ep.FailingSince.Time) < s.disableAfter()):
		return nil // failing, not yet for long enough
	}
	_, err := s.coll.Update(ctx, org, ep.ID, func(r *record) error {
		now := s.now()
		switch {
		case success && r.FailingSince != nil:
			r.FailingSince = nil
		case !success && r.FailingSince == nil:
			r.FailingSince = &now
		case !success && r.Enabled && now.Sub(r.FailingSince.Time) >= s.disableAfter():
			r.Enabled = false
			r.DisabledReason = fmt.Sprintf("every delivery failed since %s", r.FailingSince.Format(time.RFC3339))
		default:
			return store.ErrUnchanged
		}
		r.UpdatedAt = now
		return nil
	})
	if errors.Is(err, apperr.ErrNotFound) {
		return nil
	}
	return err
}

func (s *Service) disableAfter() time.Duration {
	if s.DisableAfter > 0 {
		return s.DisableAfter
	}
	return DisableAfter
}

// Deliveries pages an endpoint's deliveries, newest first; status, when
// set, keeps those in it.
func (s *Service) Deliveries(ctx context.Context, org, endpoint, status string, limit, maxBytes int, cursor string) (store.Page[Delivery], error) {
	if _, err := s.coll.Get(ctx, org, endpoint); err != nil {
		return store.Page[Delivery]{Items: []Delivery{}}, err
	}
	q := store.LogQuery{Org: org, Type: TypeDelivery, Thread: endpoint, Limit: limit, MaxBytes: maxBytes, Cursor: cursor}
	if status != "" {
		q.Equal = map[string][]string{"status": {status}}
	}
	p, err := s.st.ReadLog(ctx, q)
	if err != nil {
		return store.Page[Delivery]{Items: []Delivery{}}, err
	}
	return decodePage(p)
}

func decodePage(p store.Page[json.RawMessage]) (store.Page[Delivery], error) {
	var bad error
	out := store.MapPage(p, func(raw *json.RawMessage) Delivery {
		var d Delivery
		if err := json.Unmarshal(*raw, &d); err != nil && bad == nil {
			bad = err
		}
		return d.public()
	})
	return out, bad
}

// GetDelivery reads one delivery of an endpoint.
func (s *Service) GetDelivery(ctx context.Context, org, endpoint, id string) (*Delivery, error) {
	d, _, err := s.delivery(ctx, org, id)
	if err != nil {
		return nil, err
	}
	if d.EndpointID != endpoint {
		return nil, apperr.ErrNotFound
	}
	p := d.public()
	return &p, nil
}

// Retry queues a delivery again, whatever its status: pending once more
// with the same webhook-id and payload, attempted at once. An attempt
// that succeeds releases the record's later deliveries its retry held
// (Attempt).
func (s *Service) Retry(ctx context.Context, org, endpoint, id string) (*Delivery, error) {
	for range 5 {
		d, version, err := s.delivery(ctx, org, id)
		if err != nil {
			return nil, err
		}
		if d.EndpointID != endpoint {
			return nil, apperr.ErrNotFound
		}
		if _, err := s.coll.Get(ctx, org, endpoint); err != nil {
			return nil, err
		}
		now := s.now()
		d.Status, d.NextAttemptAt, d.UpdatedAt = Pending, &now, now
		err = s.saveDelivery(ctx, org, d, version)
		if errors.Is(err, apperr.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := s.queue.Send(ctx, Message{Org: org, Delivery: d.ID, Group: endpoint + "/retry/" + d.ID, Manual: true}); err != nil {
			return nil, err
		}
		p := d.public()
		return &p, nil
	}
	return nil, apperr.ConcurrentWrite("the delivery is being attempted; try again")
}

// TestType is the event type of a test delivery.
const TestType = "webhookEndpoint.test"

// Test sends a test event to an endpoint at once (enabled or not) and
// answers the delivery with its one attempt; it is not retried.
func (s *Service) Test(ctx context.Context, org, endpoint string) (*Delivery, error) {
	ep, err := s.coll.Get(ctx, org, endpoint)
	if err != nil {
		return nil, err
	}
	now := s.now()
	ev := history.Event{ID: ids.New("evt"), Type: TestType, OccurredAt: now,
		Actor:    store.ActorOf(ctx),
		Resource: history.Resource{Type: "webhookEndpoint", ID: endpoint}}
	ev.Data, _ = json.Marshal(map[string]string{"message": "a test delivery from Sourcebase"})
	body, err := bodyOf(ev)
	if err != nil {
		return nil, err
	}
	d := Delivery{ID: ids.New("msg"), EndpointID: endpoint, EventID: ev.ID, EventType: TestType, Status: Pending,
		CreatedAt: now, UpdatedAt: now, Payload: body}
	at := s.send(ctx, ep, d, true)
	d.Attempts = []Attempt{at}
	d.Status = Failed
	if ok(at) {
		d.Status = Succeeded
	}
	if _, err := s.appendDelivery(ctx, org, d); err != nil {
		return nil, err
	}
	slog.InfoContext(ctx, "webhook test delivery", "endpointId", endpoint, "status", at.Status, "delivered", ok(at))
	p := d.public()
	return &p, nil
}

// paused reports whether m waits (its organization suspended: attempted
// after PausedWait, neither failed nor dropped) or is dropped (the
// organization's deletion began: its deliveries are deleted with it).
func (s *Service) paused(ctx context.Context, m Message) (bool, Outcome, error) {
	if s.OrgStatus == nil {
		return false, Outcome{}, nil
	}
	paused, gone, err := s.OrgStatus(ctx, m.Org)
	switch {
	case err != nil:
		return true, Outcome{}, err
	case gone:
		slog.InfoContext(ctx, "a delivery of a deleted organization is dropped", "org", m.Org, "delivery", m.Delivery)
		return true, Outcome{}, nil
	case paused:
		wait := s.PausedWait
		if wait <= 0 {
			wait = PausedWait
		}
		return true, Outcome{Retry: wait, Paused: true}, nil
	}
	return false, Outcome{}, nil
}
