// Package resource is the resource layer: a resource is declared once (its
// fields, their types and rules, references, lookups, sort fields, unique
// fields) and from that declaration come body decoding and validation with
// errors naming the field, the record's defaults, create / get / list /
// partial update / delete over the single table, reference checks, list
// filters, its routes and its documentation. A simple resource is a short
// declaration; behaviour of its own goes into the Def's hooks.
package resource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/fold"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Def declares a resource.
type Def struct {
	Name     string // plural, the path segment: "deals" -> /v1/deals
	Singular string // for messages: "deal"
	Type     string // the item type in the table: "DEAL"
	IDPrefix string // ids are <IDPrefix>_<ulid>
	Function string // the Lambda function (package fn) serving its routes
	Doc      string // one paragraph for the documentation
	Fields   []Field
	// SortUpdatedAt makes the list sortable by updatedAt (it takes one of
	// the two sort indexes).
	SortUpdatedAt bool
	// NoUpdatedAt: the record has no updatedAt (a workflow run, whose
	// times are createdAt, startedAt and completedAt).
	NoUpdatedAt bool
	// MultiGet lets GET /v1/<name>/ids=<id>,<id>,... read up to
	// store.MaxBatch records at once (the spec's documents-by-ids).
	MultiGet bool
	// Check, when set, validates a record as a whole after a write applied
	// its fields (rules across fields, such as endedAt after startedAt).
	Check func(rec map[string]any) error
	// Compute, when set, fills read-only fields from the others before the
	// record is stored (such as a score's finalScore); reg reads other
	// records.
	Compute func(ctx context.Context, reg *Registry, org string, rec map[string]any) error
	// Searchable resources have POST /v1/<name>/search (package search):
	// their records keep a change feed that search indexes follow, and
	// fields with a Search weight are matched by a search's text.
	Searchable bool
	// Similar (of a Searchable resource) adds POST /v1/<name>/{id}/similar:
	// the records nearest by meaning to one (docs/search.md), and its MCP
	// tool similar_<name>.
	Similar bool
	// MCP gives the resource tools on the MCP server (package mcpserver),
	// one for each of its generic operations: create_<singular>,
	// list_<name>, search_<name> (when Searchable), get_<singular>,
	// update_<singular>, delete_<singular>, upsert_<singular> (when it has
	// a unique field) and batch_<name>.
	MCP bool
	// Series lets its records hold metric series (package metrics): a
	// point's resource is then <Name>:<id>.
	Series bool
	// OnLists lets its records be put on saved lists: a list's
	// resourceType is then its Singular (package resources).
	OnLists bool
	// Rules documents what the hooks (Check, Compute) add to the rules the
	// fields declare: a paragraph of docs/resources.md.
	Rules string
	// Title is how the API reference shows the kind of record (its topic's
	// x-displayName); "" for its Name capitalized, hyphens as spaces
	// ("workflow-runs": "Workflow runs"). See TopicTitle.
	Title string
	// Section is the heading of the API reference it is listed under (one
	// of routes.Sections); "" for DefaultSection.
	Section string
	// File is the file that declares it, from the repository root
	// ("internal/resources/crm.go"), for errors about the declaration to
	// name; resources' declare sets it.
	File string

	orderOnce sync.Once
	order     []string // the names of allFields, the record's JSON order
	shapeOnce sync.Once
	shapeName string
}

// DefaultSection is the heading of the API reference a kind of record is
// listed under when its declaration names none (Def.Section).
const DefaultSection = "Records"

// TopicTitle is how the API reference shows the kind of record: its Title,
// or its Name capitalized with hyphens as spaces.
func (d *Def) TopicTitle() string {
	if d.Title != "" {
		return d.Title
	}
	name := strings.ReplaceAll(d.Name, "-", " ")
	return strings.ToUpper(name[:1]) + name[1:]
}

// TopicSection is the heading of the API reference the kind of record is
// listed under: its Section, or DefaultSection.
func (d *Def) TopicSection() string {
	if d.Section != "" {
		return d.Section
	}
	return DefaultSection
}

// Where names d's declaration for an error: its File, or its name's
// resource.Def when that is not known.
func (d *Def) Where() string {
	if d.File != "" {
		return d.File
	}
	return fmt.Sprintf("the resource.Def of %q", d.Name)
}

// Built-in fields of every record.
const (
	FieldID        = "id"
	FieldCreatedAt = "createdAt"
	FieldUpdatedAt = "updatedAt"
)

// Record is a record of a declared resource: its fields as JSON values.
// It encodes as a JSON object in the declaration's field order.
type Record struct {
	store.Versioned
	Fields map[string]any
	order  []string
}

// ID is the record's id.
func (r *Record) ID() string { s, _ := r.Fields[FieldID].(string); return s }

// MarshalJSON writes the fields in declaration order, then any others.
func (r Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	write := func(k string) error {
		v, ok := r.Fields[k]
		if !ok || seen[k] {
			return nil
		}
		seen[k] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		return nil
	}
	for _, k := range r.order {
		if err := write(k); err != nil {
			return nil, err
		}
	}
	rest := make([]string, 0, len(r.Fields))
	for k := range r.Fields {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		if err := write(k); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a stored record, keeping numbers exact.
func (r *Record) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(&r.Fields)
}

// allFields are the declared fields with the built-in ones around them.
func (d *Def) allFields() []Field {
	out := []Field{{Name: FieldID, Kind: String, ReadOnly: true, Always: true, Doc: "the record's id",
		Import: ImportIgnored, ImportNote: "an import makes each record's id (keepIds: true keeps the file's; mode update matches by it)"}}
	out = append(out, d.Fields...)
	out = append(out, Field{Name: FieldCreatedAt, Kind: DateTime, ReadOnly: true, Always: true, Doc: "when the record was created",
		Import: ImportIgnored, ImportNote: "createdAt is when the import writes the record"})
	if d.NoUpdatedAt {
		return out
	}
	return append(out, Field{Name: FieldUpdatedAt, Kind: DateTime, ReadOnly: true, Always: true, Doc: "when the record last changed", Sort: d.SortUpdatedAt,
		Import: ImportIgnored, ImportNote: "updatedAt is when the import writes the record"})
}

// Field returns the declared field called name.
func (d *Def) Field(name string) (Field, bool) {
	for _, f := range d.allFields() {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// FieldAt returns the declared field at a dotted path ("location.city"):
// a field of a Struct or Structs field by its name within it.
func (d *Def) FieldAt(path string) (Field, bool) {
	fs, parts := d.allFields(), strings.Split(path, ".")
	for i, name := range parts {
		j := slices.IndexFunc(fs, func(f Field) bool { return f.Name == name })
		if j < 0 {
			return Field{}, false
		}
		if i == len(parts)-1 {
			return fs[j], true
		}
		fs = fs[j].Fields
	}
	return Field{}, false
}

// AllFields lists every field of the record, built-in ones included.
func (d *Def) AllFields() []Field { return d.allFields() }

// writable lists the fields a client may send on create (update: mutable only).
func (d *Def) writable(create bool) []string {
	var out []string
	for _, f := range d.Fields {
		if !f.ReadOnly && (create || !f.Immutable) {
			out = append(out, f.Name)
		}
	}
	return out
}

// Filters lists the fields a list can be filtered by.
func (d *Def) Filters() []string {
	var out []string
	for _, f := range d.Fields {
		if f.Lookup {
			out = append(out, f.Name)
		}
	}
	return out
}

// SortFields lists the fields a list can be sorted by, id first.
func (d *Def) SortFields() []string {
	out := []string{FieldID, FieldCreatedAt}
	for _, f := range d.allFields() {
		if f.Sort {
			out = append(out, f.Name)
		}
	}
	return out
}

// Decode reads a create (or partial update) body into the fields it sets,
// by name: null is the field's empty value; required fields are checked on
// create; unknown, read-only and (on update) immutable fields are refused.
// It is how resources written outside the layer (companies) decode bodies
// from their declaration.
func (d *Def) Decode(body []byte, create bool) (map[string]any, error) {
	if create {
		return d.decode(body, decodeCreate)
	}
	return d.decode(body, decodeUpdate)
}

// decodeMode is what a body is decoded for.
type decodeMode int

const (
	decodeCreate decodeMode = iota // every writable field; required ones checked
	decodeUpdate                   // mutable fields only
	// decodeUpsert: an upsert that updates: immutable fields are read too,
	// to be compared with the stored values (Service.update).
	decodeUpsert
)

// decode reads a create or update body into the fields it sets.
func (d *Def) decode(body []byte, mode decodeMode) (map[string]any, error) {
	create := mode == decodeCreate
	o, err := jsonbody.ParseObject(body)
	if err != nil {
		return nil, err
	}
	if err := d.checkNames(o, mode); err != nil {
		return nil, err
	}
	set := map[string]any{}
	for _, f := range d.Fields {
		if f.ReadOnly || (mode == decodeUpdate && f.Immutable) {
			continue
		}
		v, ok, err := f.decode(o)
		if err != nil {
			return nil, err
		}
		if ok {
			set[f.Name] = v
		} else if create && f.Required {
			return nil, apperr.Invalid(f.Name, "is required")
		}
	}
	return set, nil
}

// CheckNames refuses, as Decode does, a body sending the fields names,
// whatever their values: read-only fields, immutable ones on update, and
// unknown ones. It checks a body whose names are known before its values
// (a workflow step's fields, some of which a run resolves from paths).
func (d *Def) CheckNames(names []string, create bool) error {
	mode := decodeUpdate
	if create {
		mode = decodeCreate
	}
	nulls := make(map[string]any, len(names))
	for _, name := range names {
		nulls[name] = nil
	}
	body, err := json.Marshal(nulls)
	if err != nil {
		return err
	}
	o, err := jsonbody.ParseObject(body)
	if err != nil {
		return err
	}
	return d.checkNames(o, mode)
}

// checkNames refuses the read-only, (on update) immutable and unknown
// fields that o sends.
func (d *Def) checkNames(o *jsonbody.Object, mode decodeMode) error {
	for _, name := range o.Names() {
		if f, ok := d.Field(name); ok && f.ReadOnly {
			return apperr.Invalid(name, "is read-only; the service sets it")
		}
		if f, ok := d.Field(name); ok && f.Immutable && mode == decodeUpdate {
			return apperr.Invalid(name, "cannot be changed after the %s is created", d.Singular)
		}
	}
	return o.Only(d.writable(mode != decodeUpdate))
}

// sortKey is the index sort value of a field's value: text folded
// (fold.Text: lower case, without diacritics, as search.Compare orders
// it), numbers in an order-preserving fixed-width form, "" for none.
func sortKey(f Field, v any) string {
	switch f.Kind {
	case Int, Number:
		x, ok := NumberOf(v)
		if !ok {
			return ""
		}
		bits := math.Float64bits(x)
		if x >= 0 {
			bits |= 1 << 63
		} else {
			bits = ^bits
		}
		return fmt.Sprintf("%016x", bits)
	case Bool:
		if b, _ := v.(bool); b {
			return "true"
		}
		return "false"
	default:
		s, _ := v.(string)
		if f.Kind == String || f.Kind == Text || f.Kind == Enum || f.Kind == Email {
			return fold.Text(s)
		}
		return s
	}
}

// lookupKey is the index value of a filterable field's value.
func lookupKey(f Field, v any) string {
	switch x := v.(type) {
	case string:
		if f.Fold {
			return strings.ToLower(x)
		}
		return x
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	}
	return ""
}

// spec is the store's view of the declaration: two sort indexes (GSI1,
// GSI2) and two lookup indexes (GSI3, GSI4) at most.
func (d *Def) spec() store.Spec[Record] {
	sp := store.Spec[Record]{Type: d.Type, ID: func(r *Record) string { return r.ID() }, IDOrder: []string{FieldCreatedAt}, Feed: d.Searchable,
		View: d.view, Shape: d.shape()}
	sortIx := []store.Index{store.GSI1, store.GSI2}
	lookIx := []store.Index{store.GSI3, store.GSI4}
	for _, f := range d.allFields() {
		if f.Sort {
			if len(sortIx) == 0 {
				panic(fmt.Sprintf("resource %s (%s): more than two sort fields: the table has two sort indexes, keep Sort on two fields at most", d.Name, d.Where()))
			}
			sp.Sorts = append(sp.Sorts, store.Sort[Record]{Field: f.Name, Index: sortIx[0], Key: func(r *Record) string { return sortKey(f, r.Fields[f.Name]) }})
			sortIx = sortIx[1:]
		}
		if f.Lookup {
			if len(lookIx) == 0 {
				panic(fmt.Sprintf("resource %s (%s): more than two lookup fields: the table has two lookup indexes, keep Lookup on two fields at most", d.Name, d.Where()))
			}
			if f.Kind == Strings || f.Kind == Refs || f.Kind == Structs || f.Kind == Struct || f.Kind == Object {
				panic(fmt.Sprintf("resource %s (%s): field %s cannot be a Lookup: only a field of one value (not a list, a struct or an object) can", d.Name, d.Where(), f.Name))
			}
			sp.Lookups = append(sp.Lookups, store.Lookup[Record]{Name: f.Name, Index: lookIx[0], Key: func(r *Record) string { return lookupKey(f, r.Fields[f.Name]) }})
			lookIx = lookIx[1:]
		}
		if f.Unique {
			sp.Unique = append(sp.Unique, store.Unique[Record]{Field: f.Name, Key: func(r *Record) string { return lookupKey(f, r.Fields[f.Name]) }})
		}
		if f.Restrict && (!f.Lookup || f.Kind != Ref || f.Target == "") {
			panic(fmt.Sprintf("resource %s (%s): field %s: Restrict needs a Ref field with a Target that is a Lookup", d.Name, d.Where(), f.Name))
		}
	}
	return sp
}

// Service stores the records of one declared resource.
type Service struct {
	Def  *Def
	coll *store.Collection[Record]
	reg  *Registry
	now  func() clock.Time
}

// New builds a record from a create body, without storing it.
func (s *Service) build(ctx context.Context, org string, body []byte) (*Record, error) {
	set, err := s.Def.decode(body, decodeCreate)
	if err != nil {
		return nil, err
	}
	id, err := NewID(ctx, s.coll, org, s.Def.IDPrefix)
	if err != nil {
		return nil, err
	}
	now := s.now().String()
	r := &Record{Fields: map[string]any{FieldID: id, FieldCreatedAt: now, FieldUpdatedAt: now}}
	for _, f := range s.Def.Fields {
		if v, ok := set[f.Name]; ok {
			r.Fields[f.Name] = v
		} else {
			r.Fields[f.Name] = f.empty()
		}
	}
	return r, nil
}

// Create stores a new record made from a create body.
func (s *Service) Create(ctx context.Context, org string, body []byte) (*Record, error) {
	r, err := s.build(ctx, org, body)
	if err != nil {
		return nil, err
	}
	if err := s.prepare(ctx, org, r, nil); err != nil {
		return nil, err
	}
	if err := s.coll.Create(ctx, org, r); err != nil {
		return nil, err
	}
	return s.view(r), nil
}

// prepare checks a record about to be written: cross-field rules,
// computed fields, and references (only those that changed from before).
func (s *Service) prepare(ctx context.Context, org string, r *Record, before map[string]any) error {
	if s.Def.Check != nil {
		if err := s.Def.Check(r.Fields); err != nil {
			return err
		}
	}
	if err := s.reg.checkRefs(ctx, org, s.Def.Fields, r.Fields, before, ""); err != nil {
		return err
	}
	if s.Def.Compute != nil {
		return s.Def.Compute(ctx, s.reg, org, r.Fields)
	}
	return nil
}

// view is the record as clients see it: every declared field present,
// in declaration order. Records are stored so (store.Spec.View).
func (s *Service) view(r *Record) *Record {
	s.Def.view(r)
	return r
}

func (d *Def) view(r *Record) {
	if r.Fields == nil {
		r.Fields = map[string]any{}
	}
	for _, f := range d.Fields {
		if _, ok := r.Fields[f.Name]; !ok {
			r.Fields[f.Name] = f.empty()
		}
	}
	d.orderOnce.Do(func() { d.order = names(d.allFields()) })
	r.order = d.order
}

// shape names the JSON form the declaration's records are stored in
// (store.ShapeOf): their fields in order, each with its kind and the empty
// value view fills in.
func (d *Def) shape() string {
	d.shapeOnce.Do(func() {
		desc := []string{"record.1", d.Type}
		for _, f := range d.allFields() {
			empty, _ := json.Marshal(f.empty())
			desc = append(desc, fmt.Sprintf("%s:%v:%s", f.Name, f.Kind, empty))
		}
		d.shapeName = store.ShapeOf(Record{}, desc...)
	})
	return d.shapeName
}

// Get reads a record of org.
func (s *Service) Get(ctx context.Context, org, id string) (*Record, error) {
	return s.coll.Get(ctx, org, id)
}

// GetJSON reads a record of org as Get answers it, encoded: for a
// response, which then need not decode the stored record.
func (s *Service) GetJSON(ctx context.Context, org, id string) (*store.JSON, error) {
	return s.coll.GetJSON(ctx, org, id)
}

// Present turns a record as stored (its JSON and its item's shape stamp)
// into the record as Get returns it: for readers of stored records such
// as search.
// Presenter presents a stored record (its stored JSON and shape stamp,
// as a search engine or a batch read holds it) as GET answers it: a
// declared resource's Service, and the companies' service.
type Presenter interface {
	Present(stored []byte, stamp string) (json.RawMessage, error)
}

func (s *Service) Present(stored []byte, stamp string) (json.RawMessage, error) {
	return s.coll.Present(stored, stamp)
}

// Exists reports whether org has a record with id.
func (s *Service) Exists(ctx context.Context, org, id string) (bool, error) {
	_, err := s.coll.Get(ctx, org, id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, apperr.ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}

// List returns a page of org's records, filtered by one lookup field when
// filter names one.
func (s *Service) List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[Record], error) {
	if err := s.filtered(&q, filter, value); err != nil {
		return store.Page[Record]{Items: []Record{}}, err
	}
	return s.coll.List(ctx, org, q)
}

// ListJSON is List with each record encoded: for a response.
func (s *Service) ListJSON(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[store.JSON], error) {
	if err := s.filtered(&q, filter, value); err != nil {
		return store.Page[store.JSON]{Items: []store.JSON{}}, err
	}
	return s.coll.ListJSON(ctx, org, q)
}

// filtered restricts q to the records whose lookup field filter ("" for
// none) equals value.
func (s *Service) filtered(q *store.Query, filter, value string) error {
	if filter == "" {
		return nil
	}
	f, ok := s.Def.Field(filter)
	if !ok || !f.Lookup {
		return apperr.InvalidQuery(filter, "is not a filter of %s", s.Def.Name)
	}
	if f.Kind == Bool && value != "true" && value != "false" {
		return apperr.InvalidQuery(filter, "must be true or false")
	}
	if f.Kind == Enum && !slices.Contains(f.Values, value) {
		return apperr.InvalidQuery(filter, "must be one of %s", strings.Join(f.Values, ", "))
	}
	if f.Fold {
		value = strings.ToLower(value)
	}
	q.Where = &store.Where{Lookup: filter, Value: value}
	return nil
}

// Update applies a partial update body to a record of org. A body that
// changes nothing writes nothing and keeps updatedAt.
func (s *Service) Update(ctx context.Context, org, id string, body []byte) (*Record, error) {
	set, err := s.Def.decode(body, decodeUpdate)
	if err != nil {
		return nil, err
	}
	return s.update(ctx, org, id, set)
}

// update sets the fields of set on a record of org. An immutable field in
// set (an upsert's) must hold the stored value.
func (s *Service) update(ctx context.Context, org, id string, set map[string]any) (*Record, error) {
	r, err := s.coll.Update(ctx, org, id, func(r *Record) error {
		before := make(map[string]any, len(r.Fields))
		for k, v := range r.Fields {
			before[k] = v
		}
		s.view(r)
		for _, f := range s.Def.Fields {
			if v, ok := set[f.Name]; ok && f.Immutable && !equalJSON(v, r.Fields[f.Name]) {
				return apperr.Invalid(f.Name, "cannot be changed after the %s is created", s.Def.Singular)
			}
		}
		was, _ := json.Marshal(r.Fields)
		for k, v := range set {
			r.Fields[k] = v
		}
		// Compared once computed fields are filled in, so sending the
		// values a record has (without its read-only ones) changes nothing.
		if err := s.prepare(ctx, org, r, before); err != nil {
			return err
		}
		if now, _ := json.Marshal(r.Fields); bytes.Equal(was, now) {
			return store.ErrUnchanged
		}
		r.Fields[FieldUpdatedAt] = s.now().String()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.view(r), nil
}

// Delete removes a record of org, unless a Restrict reference points at it.
func (s *Service) Delete(ctx context.Context, org, id string) error {
	if err := s.reg.checkReferrers(ctx, org, s.Def.Name, id); err != nil {
		return err
	}
	if err := s.coll.Delete(ctx, org, id); err != nil {
		return err
	}
	for _, fn := range s.reg.afterDelete[s.Def.Name] {
		if err := fn(ctx, org, id); err != nil {
			return fmt.Errorf("delete what belongs to %s %s: %w", s.Def.Singular, id, err)
		}
	}
	return nil
}

// findBy returns up to limit records whose lookup field equals value.
func (s *Service) findBy(ctx context.Context, org, field, value string, limit int) ([]Record, error) {
	return s.coll.FindBy(ctx, org, field, value, limit)
}

// MultiGetPrefix starts the last path segment of a read of several records.
const MultiGetPrefix = "ids="

// MaxMultiGetSegment is the longest such segment: MaxBatch ids of the
// longest length, with their commas.
const MaxMultiGetSegment = len(MultiGetPrefix) + store.MaxBatch*(store.MaxIDLength+1)

// GetByIDs reads the records a segment "ids=<id>,<id>,..." names: in the
// order asked, each once, leaving out ids that name no record of org. A
// segment with no id, an empty id or more than store.MaxBatch ids is a 400.
func (s *Service) GetByIDs(ctx context.Context, org, segment string) ([]Record, error) {
	list, ok := strings.CutPrefix(segment, MultiGetPrefix)
	if !ok {
		return nil, apperr.InvalidPath("ids", "the path must end in ids= and comma-separated %s ids", s.Def.Singular)
	}
	ids := strings.Split(list, ",")
	if len(ids) > store.MaxBatch {
		return nil, apperr.InvalidPath("ids", "names %d ids; at most %d at once", len(ids), store.MaxBatch)
	}
	for i, id := range ids {
		if strings.TrimSpace(id) == "" {
			return nil, apperr.InvalidPath("ids", "has an empty id at position %d; send ids=<id>,<id>,... without empty entries", i+1)
		}
	}
	return s.coll.GetMany(ctx, org, ids)
}

// GetMany reads up to store.MaxBatch records of org by id in one batch, in
// the order asked, each once, leaving out ids that name none.
func (s *Service) GetMany(ctx context.Context, org string, ids []string) ([]Record, error) {
	return s.coll.GetMany(ctx, org, ids)
}
