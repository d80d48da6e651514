// Package enrichment stores candidate values of records' attributes
// (found in documents, by data providers, on the web, by workflows, or set
// by users) and reconciles them into one value per attribute. Each
// candidate is its own item (store.EnrichmentPartition), never part of a
// growing record; every write re-reads a record's candidates strongly
// consistently inside a version-checked update of the record, so the
// reconciled values and the candidates are written together and never
// disagree. Which records can be enriched is a registry of Types
// (companies now; people or deals are one more Type).
package enrichment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Sources of candidate values, in priority order (a tie of confidence goes
// to the earlier one).
const (
	SourceUser     = "user"     // set by a person (PUT /v1/companies/{id}, or sent as such)
	SourceDocument = "document" // read from a document of the organization (sourceId: the document)
	SourceProvider = "provider" // from a data provider
	SourceImport   = "import"   // a value of a file an import read (provider import, sourceId: the import)
	SourceWorkflow = "workflow" // written by a workflow run (sourceId: the run)
	SourceWeb      = "web"      // found on the web
)

// Sources lists the sources, highest priority first.
var Sources = []string{SourceUser, SourceDocument, SourceProvider, SourceImport, SourceWorkflow, SourceWeb}

// Limits.
const (
	// MaxBatch is the most values one write takes (one transaction with
	// the record's update).
	MaxBatch = 50
	// MaxShown is the most candidates a record's enrichment field shows
	// per attribute (the best ranked); the listing shows them all.
	MaxShown = 10
	// MaxShownText is the longest candidate value, in characters, the
	// record's enrichment field shows; longer ones end in "…".
	MaxShownText = 2000
)

// Value is one stored candidate value of a record's attribute.
type Value struct {
	ID         string          `json:"id"`
	Property   string          `json:"property"`
	Value      json.RawMessage `json:"value"`
	Provider   *string         `json:"provider"` // null when not given
	Source     string          `json:"source"`
	SourceID   *string         `json:"sourceId"` // null when not given
	Confidence float64         `json:"confidence"`
	CapturedOn clock.Time      `json:"capturedOn"`
	Pinned     bool            `json:"pinned"`
	PinnedAt   *clock.Time     `json:"pinnedAt"`
}

// UnmarshalJSON reads a stored Value: a provider or sourceId stored as ""
// (before they were null when not given) reads as not given.
func (v *Value) UnmarshalJSON(b []byte) error {
	type stored Value
	if err := json.Unmarshal(b, (*stored)(v)); err != nil {
		return err
	}
	if v.Provider != nil {
		v.Provider = given(*v.Provider)
	}
	if v.SourceID != nil {
		v.SourceID = given(*v.SourceID)
	}
	return nil
}

// given is s, or nil when it is empty: an optional text of a Value that
// was not given is null.
func given(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Candidate is a ranked candidate as a record's enrichment field shows it.
type Candidate struct {
	Value        string     `json:"value"`
	Source       string     `json:"source"`
	Confidence   float64    `json:"confidence"`
	Pinned       bool       `json:"pinned"`
	DiscoveredAt clock.Time `json:"discoveredAt"`
}

// Reconciled is what a write sets on a record: the winning value of each
// property (null when none is left), the candidates shown per property,
// and when.
type Reconciled struct {
	Values     map[string]json.RawMessage
	Candidates map[string][]Candidate
	At         clock.Time
}

// UpdateFunc runs fn inside a version-checked update of record id of org
// (re-running it on races): fn gets the record's current values of the
// enrichable properties and gives what to set and the extra operations to
// write in the same transaction. apperr.ErrNotFound when there is no
// such record.
type UpdateFunc func(ctx context.Context, org, id string, fn func(current map[string]json.RawMessage) (Reconciled, []store.Op, error)) error

// Type is an enrichable resource type.
type Type struct {
	Name       string                    // plural resource name, the path's {resourceType}
	Properties []string                  // the enrichable attributes, in record order
	Fields     map[string]resource.Field // how each property's values are checked
	Update     UpdateFunc
	Exists     ExistsFunc
}

// ExistsFunc reports whether org has a record id.
type ExistsFunc func(ctx context.Context, org, id string) (bool, error)

// Service writes, lists and reconciles candidate values.
type Service struct {
	st        *store.Store
	types     map[string]*Type
	documents ExistsFunc
	now       func() clock.Time
}

// NewService returns the service over st for the given types; documents
// checks the sourceId of document candidates.
func NewService(st *store.Store, documents ExistsFunc, types ...*Type) *Service {
	s := &Service{st: st, types: map[string]*Type{}, documents: documents, now: clock.Now}
	for _, t := range types {
		s.types[t.Name] = t
	}
	return s
}

// Type is the registered type of that name.
func (s *Service) Type(name string) (*Type, bool) { t, ok := s.types[name]; return t, ok }

func (s *Service) typ(name string) (*Type, error) {
	t, ok := s.types[name]
	if !ok {
		return nil, apperr.ErrNotFound
	}
	return t, nil
}

// Input is a candidate value to add.
type Input struct {
	Property   string
	Value      json.RawMessage
	Provider   string
	Source     string
	SourceID   string
	Confidence float64
	CapturedOn *clock.Time
	Pinned     bool
	// PinnedAt, when set, is when a pinned value was pinned (an imported
	// candidate keeps its rank among the pinned); else now.
	PinnedAt *clock.Time
	// Imported: the value comes from an import's file, whose document
	// candidates name the import (the document they were read from is not
	// in the file), so their sourceId is not checked as a document's.
	Imported bool
}

// Decode reads a write body {"values": [...]} for records of type typ:
// each value's property must be one of the type's, its value of the
// property's type (errors name values[i].value).
func (s *Service) Decode(typ string, body []byte) ([]Input, error) {
	t, err := s.typ(typ)
	if err != nil {
		return nil, err
	}
	o, err := jsonbody.ParseObject(body, "values")
	if err != nil {
		return nil, err
	}
	vs, err := o.Objects("values", MaxBatch, "property", "value", "provider", "source", "sourceId", "confidence", "capturedOn")
	if err != nil {
		return nil, err
	}
	if !vs.Set || len(vs.Value) == 0 {
		return nil, apperr.Invalid("values", "must hold at least one value")
	}
	out := make([]Input, len(vs.Value))
	for i, v := range vs.Value {
		if out[i], err = t.decode(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DecodeValues checks values given as JSON-ready maps (a workflow step's),
// as Decode does.
func (s *Service) DecodeValues(typ string, values []map[string]any) ([]Input, error) {
	body, err := json.Marshal(map[string]any{"values": values})
	if err != nil {
		return nil, apperr.Invalid("values", "must be JSON values")
	}
	return s.Decode(typ, body)
}

func (t *Type) decode(o *jsonbody.Object) (Input, error) {
	prop, err := o.Enum("property", t.Properties...)
	if err != nil {
		return Input{}, err
	}
	if !prop.Set {
		return Input{}, apperr.Invalid(o.Path("property"), "is required: one of %s", strings.Join(t.Properties, ", "))
	}
	in := Input{Property: prop.Value}
	if _, ok := o.Raw("value"); !ok {
		return Input{}, apperr.Invalid(o.Path("value"), "is required")
	}
	v, err := t.Fields[prop.Value].DecodeAs(o, "value")
	if err != nil {
		return Input{}, err
	}
	if in.Value, err = json.Marshal(v); err != nil {
		return Input{}, err
	}
	src, err := o.Enum("source", Sources...)
	if err != nil {
		return Input{}, err
	}
	if !src.Set {
		return Input{}, apperr.Invalid(o.Path("source"), "is required: one of %s", strings.Join(Sources, ", "))
	}
	in.Source = src.Value
	prov, err := o.String("provider", jsonbody.Text{Max: 200, Trim: true})
	if err != nil {
		return Input{}, err
	}
	in.Provider = prov.Value
	sid, err := o.String("sourceId", jsonbody.Text{Max: 256, Trim: true})
	if err != nil {
		return Input{}, err
	}
	in.SourceID = sid.Value
	if in.Source == SourceDocument && in.SourceID == "" {
		return Input{}, apperr.Invalid(o.Path("sourceId"), "is required for a document source: the id of a document of your organization")
	}
	conf, err := o.Number("confidence")
	if err != nil {
		return Input{}, err
	}
	if !conf.Set {
		return Input{}, apperr.Invalid(o.Path("confidence"), "is required: a number from 0 to 100")
	}
	c, perr := conf.Value.Float64()
	if perr != nil || c < 0 || c > 100 {
		return Input{}, apperr.Invalid(o.Path("confidence"), "must be a number from 0 to 100")
	}
	in.Confidence = c
	if raw, ok := o.Raw("capturedOn"); ok && string(raw) != "null" {
		var at clock.Time
		if json.Unmarshal(raw, &at) != nil {
			return Input{}, apperr.Invalid(o.Path("capturedOn"), "must be an RFC 3339 date-time such as 2026-01-31T09:30:00Z")
		}
		in.CapturedOn = &at
	}
	return in, nil
}

// existing is the enrichable type typ, when org has its record id;
// apperr.ErrNotFound otherwise.
func (s *Service) existing(ctx context.Context, org, typ, id string) (*Type, error) {
	t, err := s.typ(typ)
	if err != nil {
		return nil, err
	}
	found, err := t.Exists(ctx, org, id)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apperr.ErrNotFound
	}
	return t, nil
}

// Check checks candidate values as Add does (the record exists, the
// documents named) and writes nothing: the values without ids.
func (s *Service) Check(ctx context.Context, org, typ, id string, in []Input) ([]Value, error) {
	if _, err := s.existing(ctx, org, typ, id); err != nil {
		return nil, err
	}
	vals, err := s.prepare(ctx, org, in)
	for i := range vals {
		vals[i].ID = ""
	}
	return vals, err
}

// Add stores candidate values of a record and reconciles its attributes.
func (s *Service) Add(ctx context.Context, org, typ, id string, in []Input) ([]Value, error) {
	if _, err := s.typ(typ); err != nil {
		return nil, err
	}
	added, err := s.prepare(ctx, org, in)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, org, typ, id, func(vals map[string]*Value) ([]store.Op, error) {
		return s.addOps(org, typ, id, added, vals)
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// prepare checks a batch and makes its values.
func (s *Service) prepare(ctx context.Context, org string, in []Input) ([]Value, error) {
	if len(in) == 0 {
		return nil, apperr.Invalid("values", "must hold at least one value")
	}
	if len(in) > MaxBatch {
		return nil, apperr.Invalid("values", "must have at most %d items", MaxBatch)
	}
	for i, v := range in {
		if v.Source != SourceDocument || s.documents == nil || v.Imported {
			continue
		}
		ok, err := s.documents(ctx, org, v.SourceID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apperr.Invalid(fmt.Sprintf("values[%d].sourceId", i), "must be the id of a document of your organization; %s is not one", v.SourceID)
		}
	}
	now := s.now()
	added := make([]Value, len(in))
	for i, v := range in {
		at := now
		if v.CapturedOn != nil {
			at = *v.CapturedOn
		}
		added[i] = Value{ID: ids.New("env"), Property: v.Property, Value: v.Value, Provider: given(v.Provider), Source: v.Source,
			SourceID: given(v.SourceID), Confidence: v.Confidence, CapturedOn: at, Pinned: v.Pinned}
		if v.Pinned {
			added[i].PinnedAt = now.Ptr()
			if v.PinnedAt != nil {
				added[i].PinnedAt = v.PinnedAt
			}
		}
	}
	return added, nil
}

// Pin pins or unpins a candidate value and reconciles its attribute.
func (s *Service) Pin(ctx context.Context, org, typ, id, valueID string, pinned bool) (*Value, error) {
	if _, err := s.typ(typ); err != nil {
		return nil, err
	}
	var out Value
	err := s.write(ctx, org, typ, id, func(vals map[string]*Value) ([]store.Op, error) {
		v, ok := vals[valueID]
		if !ok {
			return nil, apperr.ErrNotFound
		}
		if v.Pinned == pinned {
			out = *v
			return nil, nil
		}
		v.Pinned, v.PinnedAt = pinned, nil
		if pinned {
			v.PinnedAt = s.now().Ptr()
		}
		out = *v
		op, err := s.st.OverwriteOp(s.item(org, typ, id, v))
		return []store.Op{op}, err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes a candidate value and reconciles its attribute.
func (s *Service) Delete(ctx context.Context, org, typ, id, valueID string) error {
	if _, err := s.typ(typ); err != nil {
		return err
	}
	return s.write(ctx, org, typ, id, func(vals map[string]*Value) ([]store.Op, error) {
		if _, ok := vals[valueID]; !ok {
			return nil, apperr.ErrNotFound
		}
		delete(vals, valueID)
		k := store.EnrichmentKey(org, typ, id, valueID)
		return []store.Op{s.st.DeleteOp(k.PK, k.SK)}, nil
	})
}

// Purge deletes every candidate value of the record id of typ, once the
// record itself is deleted, so that none is left behind.
func (s *Service) Purge(ctx context.Context, org, typ, id string) error {
	return s.purge(ctx, store.EnrichmentPartition(org, typ, id))
}

// PurgeOp is the operation a record's delete transaction carries so that
// its candidates are deleted even when Purge fails afterwards: it records
// the partition to purge (store.PurgeKey), which Purge deletes with the
// partition and SweepPurges finds when it was not.
func (s *Service) PurgeOp(org, typ, id string) (store.Op, error) {
	part := store.EnrichmentPartition(org, typ, id)
	k := store.PurgeKey(part)
	return s.st.PutOp(store.Item{PK: k.PK, SK: k.SK, Type: store.TypePurge, Doc: purgeJob{Partition: part, Since: s.now()}})
}

// purgeJob is a partition left to purge.
type purgeJob struct {
	Partition string     `json:"partition"`
	Since     clock.Time `json:"since"`
}

// purge deletes the items of a partition, then its purge job.
func (s *Service) purge(ctx context.Context, part string) error {
	if err := s.st.DeletePartition(ctx, part); err != nil {
		return err
	}
	k := store.PurgeKey(part)
	return s.st.Transact(ctx, nil, s.st.DeleteOp(k.PK, k.SK))
}

// MaxSweep is the most purge jobs one SweepPurges completes.
const MaxSweep = 20

// SweepPurges completes the purges that failed after their record's
// delete (the table stalled, the process stopped): at most MaxSweep. It
// reports how many it completed; the others are left for
// the next sweep.
func (s *Service) SweepPurges(ctx context.Context) (int, error) {
	var jobs []purgeJob
	for _, pk := range store.QueuePartitions(store.TypePurge) {
		if len(jobs) >= MaxSweep {
			break
		}
		if _, err := s.st.ReadRange(ctx, pk, "", "~", func(doc json.RawMessage) (bool, error) {
			var j purgeJob
			if err := json.Unmarshal(doc, &j); err != nil {
				return false, fmt.Errorf("purge job: %w", err)
			}
			jobs = append(jobs, j)
			return len(jobs) < MaxSweep, nil
		}); err != nil {
			return 0, err
		}
	}
	done := 0
	for _, j := range jobs {
		if err := s.purge(ctx, j.Partition); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}

func (s *Service) item(org, typ, id string, v *Value) store.Item {
	k := store.EnrichmentKey(org, typ, id, v.ID)
	return store.Item{PK: k.PK, SK: k.SK, Type: store.TypeEnrichment, Doc: v, Version: 1}
}

// read is every stored candidate of a record: one strongly consistent
// paged Query of its partition.
func (s *Service) read(ctx context.Context, org, typ, id string) ([]Value, int, error) {
	var out []Value
	calls, err := s.st.ReadRange(ctx, store.EnrichmentPartition(org, typ, id), "", "~", func(doc json.RawMessage) (bool, error) {
		var v Value
		if err := json.Unmarshal(doc, &v); err != nil {
			return false, fmt.Errorf("enrichment value: %w", err)
		}
		out = append(out, v)
		return true, nil
	})
	return out, calls, err
}

// write applies change to a record's candidates and reconciles the record
// in one version-checked transaction; the candidates are re-read inside
// it, so a write that raced another starts over from what that one left.
func (s *Service) write(ctx context.Context, org, typ, id string, change func(map[string]*Value) ([]store.Op, error)) error {
	t, err := s.typ(typ)
	if err != nil {
		return err
	}
	_, err = inRounds(ctx, func() (struct{}, error) { return struct{}{}, s.update(ctx, t, org, id, change) })
	return err
}

// inRounds runs a record's version-checked update until it does not lose
// a race: the update itself retries version races a few times, and many
// writers to one record (a batch job) can exhaust that, so rounds of it
// start over after a growing, jittered pause, at most writeRounds.
func inRounds[T any](ctx context.Context, update func() (T, error)) (T, error) {
	for round := 1; ; round++ {
		v, err := update()
		if !errors.Is(err, apperr.ErrConflict) || round == writeRounds {
			return v, err
		}
		if perr := pause(ctx, round); perr != nil {
			return v, err
		}
	}
}

// pause waits before another round of a write that lost races: a growing,
// jittered pause.
func pause(ctx context.Context, round int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(round) * time.Duration(5+rand.IntN(20)) * time.Millisecond):
		return nil
	}
}

// writeRounds bounds the rounds of a write that keeps losing races.
const writeRounds = 10

func (s *Service) update(ctx context.Context, t *Type, org, id string, change func(map[string]*Value) ([]store.Op, error)) error {
	return t.Update(ctx, org, id, s.reconciler(ctx, t, org, id, func(vals map[string]*Value, _ map[string]json.RawMessage) ([]store.Op, error) {
		return change(vals)
	}))
}

// reconciler is the function a record's update runs: it reads the
// record's candidates, applies change, reconciles every property. A
// change that returns errSkip leaves candidates and record alone.
func (s *Service) reconciler(ctx context.Context, t *Type, org, id string, change func(vals map[string]*Value, current map[string]json.RawMessage) ([]store.Op, error)) func(map[string]json.RawMessage) (Reconciled, []store.Op, error) {
	return func(current map[string]json.RawMessage) (Reconciled, []store.Op, error) {
		stored, _, err := s.read(ctx, org, t.Name, id)
		if err != nil {
			return Reconciled{}, nil, err
		}
		vals := make(map[string]*Value, len(stored))
		had := map[string]bool{}
		for i := range stored {
			vals[stored[i].ID] = &stored[i]
			had[stored[i].Property] = true
		}
		ops, err := change(vals, current)
		if err != nil {
			return Reconciled{}, nil, err
		}
		now := s.now()
		// A value the record held before its property had any candidate
		// (set at creation or by a user) becomes a pinned user candidate,
		// so that the first provider value does not silently replace it.
		// A candidate of that very value (the write that set it, such as a
		// workflow's upsert) stands for it instead.
		held := current
		if h, ok := ctx.Value(heldKey{}).(map[string]json.RawMessage); ok {
			held = h
		}
		for _, p := range t.Properties {
			if had[p] || !t.hasValue(held[p]) || !anyOf(vals, p) || holds(vals, p, held[p]) {
				continue
			}
			v := Value{ID: ids.New("env"), Property: p, Value: held[p], Source: SourceUser, Confidence: 100,
				CapturedOn: now, Pinned: true, PinnedAt: now.Ptr()}
			vals[v.ID] = &v
			op, err := s.st.CreateOp(s.item(org, t.Name, id, &v))
			if err != nil {
				return Reconciled{}, nil, err
			}
			ops = append(ops, op)
		}
		list := make([]Value, 0, len(vals))
		for _, v := range vals {
			list = append(list, *v)
		}
		r := t.Reconcile(list, now)
		// A property whose last candidate this write removed is cleared;
		// one that had none before and has none now is not the
		// reconciliation's: its value stays as the record holds it.
		for p := range had {
			if _, ok := r.Values[p]; !ok {
				r.Values[p] = nil
			}
		}
		return r, ops, nil
	}
}

// errSkip is a change that changes nothing.
var errSkip = errors.New("enrichment: nothing to reconcile")

// heldKey carries the values a record held before a write changed them
// (a workflow's upsert), which the reconciliation keeps as user values.
type heldKey struct{}

// holds reports whether a candidate of prop has value v.
func holds(vals map[string]*Value, prop string, v json.RawMessage) bool {
	for _, c := range vals {
		if c.Property == prop && bytes.Equal(c.Value, v) {
			return true
		}
	}
	return false
}

func anyOf(vals map[string]*Value, prop string) bool {
	for _, v := range vals {
		if v.Property == prop {
			return true
		}
	}
	return false
}

// hasValue reports whether a record's value is set: not null, "", [] or {}.
func (t *Type) hasValue(v json.RawMessage) bool {
	s := string(bytes.TrimSpace(v))
	return s != "" && s != "null" && s != `""` && s != "[]" && s != "{}"
}

// Reconcile ranks vals per property and gives the winner and the shown
// candidates of each property that has candidates. A property without
// any is absent from Values: a reconciliation decides only the values of
// properties with candidates, so a write never touches another's value
// (the caller clears a property whose last candidate it removed).
func (t *Type) Reconcile(vals []Value, at clock.Time) Reconciled {
	r := Reconciled{Values: map[string]json.RawMessage{}, Candidates: map[string][]Candidate{}, At: at}
	by := map[string][]Value{}
	for _, v := range vals {
		by[v.Property] = append(by[v.Property], v)
	}
	for _, p := range t.Properties {
		ranked := by[p]
		if len(ranked) == 0 {
			continue
		}
		slices.SortFunc(ranked, Compare)
		r.Values[p] = ranked[0].Value
		shown := make([]Candidate, 0, min(len(ranked), MaxShown))
		for _, v := range ranked[:min(len(ranked), MaxShown)] {
			shown = append(shown, Candidate{Value: text(v.Value), Source: v.Source, Confidence: v.Confidence, Pinned: v.Pinned, DiscoveredAt: v.CapturedOn})
		}
		r.Candidates[p] = shown
	}
	return r
}

// ranked orders vals by property (the type's order), then rank.
func (t *Type) ranked(vals []Value) []Value {
	pos := map[string]int{}
	for i, p := range t.Properties {
		pos[p] = i
	}
	out := slices.Clone(vals)
	slices.SortFunc(out, func(a, b Value) int {
		if a.Property != b.Property {
			return pos[a.Property] - pos[b.Property]
		}
		return Compare(a, b)
	})
	if out == nil {
		out = []Value{}
	}
	return out
}

// Compare ranks two candidates of one property, the better first (< 0):
// pinned before unpinned, the most recently pinned first; then the higher
// confidence; then the source of higher priority (Sources); then the
// newer capturedOn; then the greater id (ids grow with time).
func Compare(a, b Value) int {
	if a.Pinned != b.Pinned {
		if a.Pinned {
			return -1
		}
		return 1
	}
	if a.Pinned && a.PinnedAt != nil && b.PinnedAt != nil && !a.PinnedAt.Equal(b.PinnedAt.Time) {
		if a.PinnedAt.After(b.PinnedAt.Time) {
			return -1
		}
		return 1
	}
	if a.Confidence != b.Confidence {
		if a.Confidence > b.Confidence {
			return -1
		}
		return 1
	}
	if pa, pb := slices.Index(Sources, a.Source), slices.Index(Sources, b.Source); pa != pb {
		return pa - pb
	}
	if !a.CapturedOn.Equal(b.CapturedOn.Time) {
		if a.CapturedOn.After(b.CapturedOn.Time) {
			return -1
		}
		return 1
	}
	return strings.Compare(b.ID, a.ID)
}

// text is a value as a candidate shows it: a string as is, anything else
// as compact JSON, cut to MaxShownText characters.
func text(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(v)
	}
	if r := []rune(s); len(r) > MaxShownText {
		s = string(r[:MaxShownText-1]) + "…"
	}
	return s
}
