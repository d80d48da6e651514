package history

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/streams"
)

// TypeEvent is the item type (and log) of the events.
const TypeEvent = "EVENT"

// DefaultRetention is how long an organization's events are kept unless
// its operator set another retention (the table's TTL removes them).
const DefaultRetention = 90 * 24 * time.Hour

// Attributes of an event item a list filters on.
const (
	attrType         = "etype"
	attrResourceType = "rtype"
	attrActor        = "actor_" // the event's actor without its via ("actor" is the writer's: the events function)
	attrActorType    = "atype"
	attrVia          = "via_" // what the actor wrote through, "<type>:<id>"; absent for a direct write
	attrViaType      = "vtype"
)

// History keeps and reads the events.
type History struct {
	Store   *store.Store
	Catalog *Catalog
	// Retention is an organization's retention; nil: DefaultRetention.
	Retention func(ctx context.Context, org string) (time.Duration, error)

	mu        sync.Mutex
	retention map[string]retained
}

type retained struct {
	d    time.Duration
	read time.Time
}

// retentionCache is how long an organization's retention is remembered.
const retentionCache = 5 * time.Minute

func (h *History) retentionOf(ctx context.Context, org string) (time.Duration, error) {
	if h.Retention == nil {
		return DefaultRetention, nil
	}
	h.mu.Lock()
	r, ok := h.retention[org]
	h.mu.Unlock()
	if ok && time.Since(r.read) < retentionCache {
		return r.d, nil
	}
	d, err := h.Retention(ctx, org)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		d = DefaultRetention
	}
	h.mu.Lock()
	if h.retention == nil {
		h.retention = map[string]retained{}
	}
	h.retention[org] = retained{d, time.Now()}
	h.mu.Unlock()
	return d, nil
}

// Append keeps an event (again: the same event written twice is one).
func (h *History) Append(ctx context.Context, d Derived) error {
	keep, err := h.retentionOf(ctx, d.Org)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(d.Event)
	if err != nil {
		return err
	}
	ev := d.Event
	attrs := map[string]string{attrType: ev.Type, attrResourceType: ev.Resource.Type,
		attrActor: ev.Actor.Name(), attrActorType: ev.Actor.Type}
	if v := ev.Actor.Via; v.Type != "" {
		attrs[attrVia], attrs[attrViaType] = v.String(), v.Type
	}
	_, err = h.Store.AppendLog(ctx, store.LogEntry{
		Org: d.Org, Type: TypeEvent, ID: ev.ID, Doc: doc, Thread: ev.Resource.ID,
		Attrs: attrs, Expires: ev.OccurredAt.Add(keep),
	})
	return err
}

// Get reads one event of org; apperr.ErrNotFound when there is none (or
// it has expired).
func (h *History) Get(ctx context.Context, org, id string) (json.RawMessage, error) {
	if !strings.HasPrefix(id, "evt_") || len(id) > store.MaxIDLength {
		return nil, apperr.ErrNotFound
	}
	doc, _, err := h.Store.GetLog(ctx, org, TypeEvent, id)
	return doc, err
}

// Filter selects events.
type Filter struct {
	ResourceTypes []string
	ResourceID    string
	Types         []string // event types (patterns expanded)
	// Actor is "<type>:<id>" or a type alone: the events whose actor is
	// that, or whose actor wrote through that (Via: "import:imp_1", "batch",
	// "workflowRun:run_1"). An actor's own filter ("apiKey:ck_1") finds its
	// direct writes and those it made through imports, batches and runs.
	Actor        string
	Since, Until time.Time
	Asc          bool
}

// List returns a page of org's events, newest first unless f.Asc.
func (h *History) List(ctx context.Context, org string, f Filter, limit, maxBytes int, cursor string) (store.Page[json.RawMessage], error) {
	q := store.LogQuery{Org: org, Type: TypeEvent, Thread: f.ResourceID, Asc: f.Asc, Limit: limit, MaxBytes: maxBytes,
		Cursor: cursor, Equal: map[string][]string{}}
	if !f.Since.IsZero() {
		q.From = ids.At("evt", f.Since)
	}
	if !f.Until.IsZero() {
		q.To = ids.At("evt", f.Until)
	}
	if len(f.ResourceTypes) > 0 {
		q.Equal[attrResourceType] = f.ResourceTypes
	}
	if len(f.Types) > 0 {
		q.Equal[attrType] = f.Types
	}
	switch {
	case f.Actor == "":
	case strings.Contains(f.Actor, ":"):
		q.Either = map[string][]string{attrActor: {f.Actor}, attrVia: {f.Actor}}
	default:
		q.Either = map[string][]string{attrActorType: {f.Actor}, attrViaType: {f.Actor}}
	}
	return h.Store.ReadLog(ctx, q)
}

// Processor turns the table's stream into events: it keeps each in the
// history and hands it to Publish (the outbound webhooks), in stream
// order. It is the events function's code and the local poller's.
type Processor struct {
	Catalog   *Catalog
	History   *History
	DeletedBy DeletedBy
	// Publish hands kept events on (package outbound/endpoints: deliveries);
	// nil: none. It may be called again with an event it had (a batch
	// retried), and must not deliver it twice as two events.
	Publish func(ctx context.Context, d Derived) error
	// Skip, when set, says whether an organization's changes make no
	// events (one being deleted: what its deletion leaves in the stream
	// is no one's history).
	Skip func(ctx context.Context, org string) (bool, error)
}

// Parallel is how many records' changes Handle works on at once: the
// changes of one record in order, those of different records side by side.
const Parallel = 8

// Handle is a streams.Handler: it handles the records of each item in
// order (Parallel items at once) and, when one fails, answers the index of
// the first record that failed, to be retried from there (records after
// it that were handled are handled again: the work is idempotent).
func (p *Processor) Handle(ctx context.Context, recs []streams.Record) (int, error) {
	ctx = store.WithActor(ctx, store.Actor{Type: store.ActorSystem, ID: "events"})
	var order []string
	byItem := map[string][]int{}
	for i, r := range recs {
		k := store.ImageString(r.Keys, store.AttrPK) + "\x00" + store.ImageString(r.Keys, store.AttrSK)
		if _, ok := byItem[k]; !ok {
			order = append(order, k)
		}
		byItem[k] = append(byItem[k], i)
	}
	var mu sync.Mutex
	failed, firstErr := len(recs), error(nil)
	var wg sync.WaitGroup
	slots := make(chan struct{}, Parallel)
	for _, k := range order {
		wg.Add(1)
		slots <- struct{}{}
		go func(idx []int) {
			defer func() { <-slots; wg.Done() }()
			for _, i := range idx {
				if err := p.handle(ctx, recs[i]); err != nil {
					mu.Lock()
					if i < failed {
						failed, firstErr = i, err
					}
					mu.Unlock()
					return // this item's later changes wait for it
				}
			}
		}(byItem[k])
	}
	wg.Wait()
	return failed, firstErr
}

// handle derives, keeps and publishes the event of one record.
func (p *Processor) handle(ctx context.Context, r streams.Record) error {
	d, ok, err := p.Catalog.Derive(ctx, r, p.DeletedBy)
	if err != nil {
		if _, bad := err.(*store.UndecodableError); bad {
			slog.ErrorContext(ctx, "a stream record's item cannot be read; no event for it", "record", r.ID, "error", err)
			return nil
		}
		return fmt.Errorf("derive the event of stream record %s: %w", r.ID, err)
	}
	if !ok {
		return nil
	}
	if p.Skip != nil {
		skip, err := p.Skip(ctx, d.Org)
		if err != nil {
			return fmt.Errorf("read the status of organization %s: %w", d.Org, err)
		}
		if skip {
			return nil
		}
	}
	if err := p.History.Append(ctx, d); err != nil {
		return fmt.Errorf("keep event %s: %w", d.Event.ID, err)
	}
	if p.Publish != nil {
		if err := p.Publish(ctx, d); err != nil {
			return fmt.Errorf("publish event %s: %w", d.Event.ID, err)
		}
	}
	return nil
}
