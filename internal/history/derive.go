package history

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/streams"
)

// Derived is the event of one stream record, with the organization it
// belongs to.
type Derived struct {
	Org   string
	Event Event
}

// DeletedBy finds who deleted a record: the actor and time its deletion
// marker holds (store.DeleteMarkerOp); ok false when it has none.
type DeletedBy func(ctx context.Context, org, typ, id string) (a store.Actor, at time.Time, ok bool, err error)

// Derive is the event of a stream record, false when the record is not a
// change of a record of the catalog's kinds (an index item, a counter, a
// feed entry) or changes nothing a client sees.
func (c *Catalog) Derive(ctx context.Context, r streams.Record, deletedBy DeletedBy) (Derived, bool, error) {
	img := r.New
	if img == nil {
		img = r.Old
	}
	k := c.kindOf(img)
	if k == nil {
		return Derived{}, false, nil
	}
	before, err := k.view(r.Old)
	if err != nil {
		return Derived{}, false, err
	}
	after, err := k.view(r.New)
	if err != nil {
		return Derived{}, false, err
	}
	pk, sk := str(img, store.AttrPK), str(img, store.AttrSK)
	doc := after.doc
	if doc == nil {
		doc = before.doc
	}
	org, id, ok := k.key(pk, sk, doc)
	if !ok {
		return Derived{}, false, nil
	}
	ev := Event{Resource: Resource{Type: k.Name, ID: id}}
	switch {
	case r.New != nil && r.Old == nil:
		ev.Type = k.Name + "." + Created
		ev.Data = after.raw
	case r.New == nil:
		ev.Type = k.Name + "." + Deleted
		ev.Data = before.raw
	default:
		ev.Changes = changes(before, after, k.Secrets)
		if len(ev.Changes) == 0 {
			return Derived{}, false, nil // only attributes outside the record changed
		}
		verb := Updated
		if k.Verb != nil {
			if v := k.Verb(before.doc, after.doc); v != "" {
				verb = v
			}
		}
		ev.Type = k.Name + "." + verb
	}
	at := writtenAt(r.New, r.At)
	ev.Actor = store.ParseActor(str(r.New, store.AttrActor))
	ev.RequestID = str(r.New, store.AttrRequestID)
	if r.New == nil {
		ev.Actor, at = store.Actor{Type: store.ActorSystem, ID: "sourcebase"}, r.At
		if r.ByTTL {
			ev.Actor.ID = "expiry"
		} else if deletedBy != nil {
			a, deletedAt, found, err := deletedBy(ctx, org, k.StoreType, id)
			if err != nil {
				return Derived{}, false, err
			}
			if found {
				ev.Actor, ev.RequestID, at = a, a.RequestID, deletedAt
			}
		}
	}
	ev.OccurredAt = clock.Of(at)
	// In the shard of its record (store's shards): the log of a sharded
	// organization is spread like its records, one record's events in one
	// partition, in order.
	ev.ID = ids.InShard(ids.Derived("evt", ev.OccurredAt.Time, r.ID), ids.Shard(id))
	if size(ev) > MaxDataBytes {
		ev = ev.Truncate()
	}
	return Derived{Org: org, Event: ev}, true, nil
}

var truncatedValue = json.RawMessage(`"[truncated]"`)

// Truncate is ev without its data, and its changes' values as
// "[truncated]": for an event too large to carry its record.
func (ev Event) Truncate() Event {
	ev.Data, ev.Truncated = nil, true
	if ev.Changes != nil {
		changes := make(map[string]Change, len(ev.Changes))
		for f := range ev.Changes {
			changes[f] = Change{From: truncatedValue, To: truncatedValue}
		}
		ev.Changes = changes
	}
	return ev
}

func size(ev Event) int {
	n := len(ev.Data)
	for _, ch := range ev.Changes {
		n += len(ch.From) + len(ch.To)
	}
	return n
}

// kindOf is the kind whose items carry img's type attribute.
func (c *Catalog) kindOf(img store.Image) *Kind {
	typ := str(img, store.AttrType)
	for i := range c.kinds {
		if c.kinds[i].StoreType == typ {
			return &c.kinds[i]
		}
	}
	return nil
}

func (k *Kind) key(pk, sk string, doc map[string]any) (string, string, bool) {
	if k.Key != nil {
		return k.Key(pk, sk, doc)
	}
	org, typ, id, ok := store.ParseRecordKey(pk, sk)
	return org, id, ok && typ == k.StoreType
}

// viewed is a record as clients see it: decoded, and as JSON.
type viewed struct {
	doc     map[string]any
	raw     json.RawMessage
	secrets map[string]string // stored secret fields' values, to compare
}

func (k *Kind) view(img store.Image) (viewed, error) {
	if img == nil {
		return viewed{}, nil
	}
	text, err := store.ImageDoc(img)
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var doc map[string]any
	if err != nil || d.Decode(&doc) != nil || doc == nil {
		// Not a record this code can read: described by key, not content.
		return viewed{}, &store.UndecodableError{PK: str(img, store.AttrPK), SK: str(img, store.AttrSK), Problem: "its doc is not a JSON object"}
	}
	v := viewed{doc: doc, secrets: map[string]string{}}
	for f := range k.Secrets {
		if s, ok := doc[f]; ok {
			b, _ := json.Marshal(s)
			v.secrets[f] = string(b)
			delete(doc, f)
		}
	}
	for _, f := range k.Hidden {
		delete(doc, f)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return viewed{}, err
	}
	v.raw = raw
	return v, nil
}

// changes are the top-level fields whose values differ, and the secrets
// that changed (redacted).
func changes(before, after viewed, secrets map[string]string) map[string]Change {
	out := map[string]Change{}
	fields := map[string]bool{}
	for f := range before.doc {
		fields[f] = true
	}
	for f := range after.doc {
		fields[f] = true
	}
	for f := range fields {
		from, to := value(before.doc, f), value(after.doc, f)
		if !bytes.Equal(from, to) {
			out[f] = Change{From: from, To: to}
		}
	}
	names := make([]string, 0, len(secrets))
	for f := range secrets {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		b, a := before.secrets[f], after.secrets[f]
		if b != a {
			from, to := json.RawMessage(Redacted), json.RawMessage(Redacted)
			if b == "" {
				from = json.RawMessage("null")
			}
			if a == "" {
				to = json.RawMessage("null")
			}
			out[secrets[f]] = Change{From: from, To: to}
		}
	}
	return out
}

// value is doc's field as JSON (maps with sorted keys, so that equal
// values compare equal), null when absent.
func value(doc map[string]any, f string) json.RawMessage {
	v, ok := doc[f]
	if !ok {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func str(img store.Image, attr string) string { return store.ImageString(img, attr) }

// writtenAt is when the write of img was sent (store.AttrWrittenAt), else
// the stream's time of the change.
func writtenAt(img store.Image, at time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, str(img, store.AttrWrittenAt)); err == nil {
		return t
	}
	return at
}
