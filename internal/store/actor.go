package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// Actor is who makes a write. Every item a write puts carries it
// (AttrActor), so that the table's stream tells the events function who
// changed a record; a delete, which cannot carry attributes, puts a
// deletion marker holding it in the same transaction (DeleteMarkerOp).
type Actor struct {
	Type string `json:"type" doc:"who: apiKey, webhook, operator, system (workflowRun in events written before runs named their starter)"`
	ID   string `json:"id"`
	// Via is what the actor wrote through (an import, a batch, a workflow
	// run); zero for a write the actor made directly.
	Via Via `json:"via,omitzero" doc:"what the actor wrote through: an import, a batch request or a workflow run; absent for a direct write"`
	// RequestID is the request whose write this was (AttrRequestID), as
	// a deletion marker recorded it (DeletedBy); not part of the actor's
	// JSON: an event shows it as its own requestId.
	RequestID string `json:"-"`
}

// Via is what an actor's write went through: work the actor started that
// writes on its behalf, later (a job, a run) or many times at once (a
// batch).
type Via struct {
	Type string `json:"type" doc:"import, batch or workflowRun"` // one of the Via* kinds
	ID   string `json:"id" doc:"the import's id (imp_…), the batch request's id (its X-Request-Id) or the run's id (run_…)"`
	// WorkflowID is a workflow run's workflow.
	WorkflowID string `json:"workflowId,omitempty" doc:"the run's workflow (workflowRun only)"`
}

// The kinds of actor.
const (
	ActorAPIKey  = "apiKey"  // a request authenticated by an API key: ID is its client id
	ActorWebhook = "webhook" // a signed webhook delivery: ID is the workflow whose trigger took it
	// ActorWorkflowRun was the actor of a run's steps (ID the run's id)
	// until runs recorded their starter: the history keeps such events.
	// Now a run's steps are its starter's, via ViaWorkflowRun.
	ActorWorkflowRun = "workflowRun"
	ActorOperator    = "operator" // the operator's admin command: ID names the command
	ActorSystem      = "system"   // the service itself (sweeps, expiry): ID names the process
)

// ActorTypes are the kinds of actor an event can show.
var ActorTypes = []string{ActorAPIKey, ActorWebhook, ActorWorkflowRun, ActorOperator, ActorSystem}

// The kinds of via.
const (
	ViaImport      = "import"      // an import's rows: ID is the import's id (imp_…)
	ViaExport      = "export"      // an export's own writes (it writes no record): ID is its id (exp_…)
	ViaBatch       = "batch"       // a batch's operations: ID is the batch request's id (X-Request-Id)
	ViaWorkflowRun = "workflowRun" // a run's steps and status: ID is the run's id, WorkflowID its workflow's
)

// ViaTypes are the kinds of via an event can show (an export writes no
// record).
var ViaTypes = []string{ViaImport, ViaBatch, ViaWorkflowRun}

// Attributes every put carries for the events function.
const (
	// AttrActor is the actor of the write that put the item, as
	// Actor.String writes it: "<type>:<id>", then "|<via type>:<via
	// id>" (and ":<workflow id>" for a run) when it wrote through one.
	AttrActor     = "actor"
	AttrWrittenAt = "wat" // when the write was sent, RFC 3339 with nanoseconds (UTC)
	// AttrRequestID is the id of the request that made the write (its
	// X-Request-Id, or the one that started the run that made it:
	// telemetry.RequestID); absent for writes no request made.
	AttrRequestID = "rid"
)

type actorKey struct{}

// WithActor returns ctx whose writes are recorded as a's.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// WithVia returns ctx whose writes are recorded as its actor's through v.
func WithVia(ctx context.Context, v Via) context.Context {
	a := ActorOf(ctx)
	a.Via = v
	return WithActor(ctx, a)
}

// ActorOf is the actor of ctx's writes: the system when none was set.
func ActorOf(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok && a.Type != "" {
		return a
	}
	return Actor{Type: ActorSystem, ID: "sourcebase"}
}

// String is the actor as stored: "<type>:<id>", then its via when it has
// one: "|<via type>:<via id>" and, for a run, ":<workflow id>". No id
// holds '|' or ':' (ids, client ids, request ids, command names).
func (a Actor) String() string {
	if a.Via.Type == "" {
		return a.Name()
	}
	s := a.Name() + "|" + a.Via.String()
	if a.Via.WorkflowID != "" {
		s += ":" + a.Via.WorkflowID
	}
	return s
}

// Name is the actor without its via, "<type>:<id>": what the history's
// actor filter matches.
func (a Actor) Name() string { return a.Type + ":" + a.ID }

// String is "<type>:<id>": what the history's actor filter matches.
func (v Via) String() string { return v.Type + ":" + v.ID }

// ParseActor reads an actor as stored (String; what was stored before
// actors had a via, "<type>:<id>", too); the system for "" or a value
// without a type. A via without a type is left out.
func ParseActor(s string) Actor {
	who, via, _ := strings.Cut(s, "|")
	typ, id, ok := strings.Cut(who, ":")
	if !ok || typ == "" {
		return Actor{Type: ActorSystem, ID: "sourcebase"}
	}
	a := Actor{Type: typ, ID: id}
	if vt, rest, ok := strings.Cut(via, ":"); ok && vt != "" {
		a.Via.Type = vt
		a.Via.ID, a.Via.WorkflowID, _ = strings.Cut(rest, ":")
	}
	return a
}

// withActor returns item with ctx's actor added (a copy; item is shared
// with the Op that holds it).
func withActor(ctx context.Context, item map[string]types.AttributeValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(item)+3)
	for k, v := range item {
		out[k] = v
	}
	out[AttrActor] = &types.AttributeValueMemberS{Value: ActorOf(ctx).String()}
	out[AttrWrittenAt] = &types.AttributeValueMemberS{Value: time.Now().UTC().Format(writtenAtLayout)}
	// Not on a metric series' points: they make no events, and are many
	// and small (a five-year daily series is 5,478 of them).
	if id := telemetry.RequestID(ctx); id != "" && ImageString(item, AttrType) != TypeMetric {
		out[AttrRequestID] = &types.AttributeValueMemberS{Value: id}
	}
	return out
}

// writtenAtLayout is RFC 3339 with all nine digits of nanoseconds: one
// length for every write, so an item's size (and the write units it
// costs) does not change with the trailing zeros of its time.
const writtenAtLayout = "2006-01-02T15:04:05.000000000Z07:00"

// ImageWithDeflatedDoc is img with its doc as the store writes a doc that
// saves a write unit: deflated (tests of the stream's readers).
func ImageWithDeflatedDoc(img Image) Image {
	out := make(Image, len(img))
	for k, v := range img {
		out[k] = v
	}
	if doc, ok := img[AttrDoc].(*types.AttributeValueMemberS); ok {
		out[AttrDoc] = &types.AttributeValueMemberB{Value: DeflateDoc([]byte(doc.Value))}
	}
	return out
}

// withActors are the SDK operations of ops, every put but a plain one
// carrying ctx's actor.
func withActors(ctx context.Context, ops []Op) []types.TransactWriteItem {
	out := writes(ops)
	for i, w := range out {
		if w.Put != nil && !ops[i].plain {
			p := *w.Put
			p.Item = withActor(ctx, p.Item)
			out[i].Put = &p
		}
	}
	return out
}

// TypeDeleted is the item type of a deletion marker.
const TypeDeleted = "DELETED"

// DeletionMarkerTTL is how long a deletion marker is kept: longer than the
// stream keeps a change (24 hours) plus the events function's retries.
const DeletionMarkerTTL = 72 * time.Hour

// DeletedKey is {"ORG#<org>#DELETED[@<shard>]", "<TYPE>#<id>"}: the
// deletion marker of the record id of type typ (ids are never reused), in
// the shard of the record.
func DeletedKey(org, typ, id string) Key {
	return Key{ShardPartition(org, TypeDeleted, ids.Shard(id)), typ + "#" + id}
}

// DeleteMarkerOp puts the deletion marker of a record, to be written in
// the transaction that deletes it: it holds the deleting actor (stamped
// like every put) for the events function, which reads it when the
// stream shows the record removed.
func (s *Store) DeleteMarkerOp(org, typ, id string) (Op, error) {
	k := DeletedKey(org, typ, id)
	return s.putOp(Item{PK: k.PK, SK: k.SK, Type: TypeDeleted, Doc: map[string]string{"type": typ, "id": id}, Version: 1,
		Numbers: map[string]int64{AttrExpires: expiresAt(time.Now().Add(DeletionMarkerTTL))}}, "", nil, nil)
}

// DeletedBy is the actor and time recorded by the deletion marker of a
// record; ok is false when there is none (a delete made without one, or
// expired).
func (s *Store) DeletedBy(ctx context.Context, org, typ, id string) (a Actor, at time.Time, ok bool, err error) {
	k := DeletedKey(org, typ, id)
	av, err := s.getItem(ctx, k.PK, k.SK)
	if errors.Is(err, apperr.ErrNotFound) {
		return Actor{}, time.Time{}, false, nil
	}
	if err != nil {
		return Actor{}, time.Time{}, false, classify(ctx, err)
	}
	v, _ := av[AttrActor].(*types.AttributeValueMemberS)
	w, _ := av[AttrWrittenAt].(*types.AttributeValueMemberS)
	if v == nil || w == nil {
		return Actor{}, time.Time{}, false, nil
	}
	at, _ = time.Parse(time.RFC3339Nano, w.Value)
	a = ParseActor(v.Value)
	if r, ok := av[AttrRequestID].(*types.AttributeValueMemberS); ok {
		a.RequestID = r.Value
	}
	return a, at, true, nil
}

// Image is an item as the table's stream shows it (its new or old image),
// for the readers of the stream (package streams converts to it).
type Image = map[string]types.AttributeValue

// ImageOf is an image of string attributes (tests of the stream's readers).
func ImageOf(strs map[string]string) Image {
	img := Image{}
	for k, v := range strs {
		img[k] = &types.AttributeValueMemberS{Value: v}
	}
	return img
}

// ImageDoc is the record of an image as JSON text, whichever form it is
// stored in; "" when the image has no doc.
func ImageDoc(img Image) (string, error) {
	doc, _, err := docText(img)
	return doc, err
}

// ImageString is a string attribute of an image, "" when it has none.
func ImageString(img Image, attr string) string {
	if v, ok := img[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
