package resource

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/store"
)

// upsertAttempts bounds how often an upsert that lost a race to a
// concurrent writer starts over.
const upsertAttempts = 8

// Upsert is the one upsert of the service — the API's (PUT
// /v1/<resource>?match=<field>, a batch's upsert operation, an import in
// upsert mode) and a workflow run's company step: it writes the record
// that a unique value names, creating it when none does. match finds the
// record's id ("" for none); create makes the record; update changes the
// one with id. Under concurrency it converges: when another writer
// creates the record first, create fails with a *store.UniqueError on
// field and that record is updated instead; an update that lost a version
// race, or whose record was deleted since match found it, starts over. So
// parallel upserts of one value make one record, and every one of them
// succeeds. created says which write happened.
func Upsert[T any](ctx context.Context, field string, match func(context.Context) (string, error),
	create func(context.Context) (T, error), update func(context.Context, string) (T, error)) (v T, created bool, err error) {
	for attempt := 1; ; attempt++ {
		v, created, err = upsertOnce(ctx, field, match, create, update)
		var taken *store.UniqueError
		retry := errors.Is(err, errMatchGone) ||
			errors.Is(err, apperr.ErrConflict) && !errors.As(err, &taken)
		if !retry || attempt == upsertAttempts {
			if errors.Is(err, errMatchGone) {
				err = apperr.ConcurrentWrite("the record was deleted during the upsert; try again")
			}
			return v, created, err
		}
		// Lost a race with another writer: wait a little, then match again.
		select {
		case <-ctx.Done():
			return v, created, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}

// errMatchGone: the record match found was deleted before it was updated.
var errMatchGone = errors.New("resource: the matched record is gone")

func upsertOnce[T any](ctx context.Context, field string, match func(context.Context) (string, error),
	create func(context.Context) (T, error), update func(context.Context, string) (T, error)) (T, bool, error) {
	var zero T
	id, err := match(ctx)
	if err != nil {
		return zero, false, err
	}
	if id == "" {
		v, err := create(ctx)
		var taken *store.UniqueError
		if !errors.As(err, &taken) || taken.Field != field {
			return v, err == nil, err
		}
		// Another writer created the record with this value since match
		// looked: update that one.
		id = taken.OwnerID
	}
	v, err := update(ctx, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return zero, false, errMatchGone
	}
	return v, false, err
}

// UniqueFields lists the names of d's unique fields: what an upsert can
// match by.
func (d *Def) UniqueFields() []string {
	var out []string
	for _, f := range d.Fields {
		if f.Unique && !f.ReadOnly {
			out = append(out, f.Name)
		}
	}
	return out
}

// MatchField checks that name is a unique field of d an upsert can match
// by; the error (400, naming the parameter param) lists those it can.
func (d *Def) MatchField(param, name string) (Field, error) {
	unique := d.UniqueFields()
	if len(unique) == 0 {
		return Field{}, apperr.InvalidQuery(param, "%s have no unique field to match by, so they cannot be upserted", d.Name)
	}
	f, ok := d.Field(name)
	if !ok || !f.Unique || f.ReadOnly {
		return Field{}, apperr.InvalidQuery(param, "must name a unique field of %s: %s", d.Name, strings.Join(unique, ", "))
	}
	return f, nil
}

// MatchValue reads the value of field from an upsert's body: it must be
// there and hold a value. It is the key the field's uniqueness item has.
func MatchValue(body []byte, f Field) (string, error) {
	o, err := jsonbody.ParseObject(body)
	if err != nil {
		return "", err
	}
	raw, ok := o.Raw(f.Name)
	if !ok || string(raw) == "null" {
		return "", apperr.Invalid(f.Name, "is required: the upsert matches a record by it")
	}
	v, err := f.decodeValue(o, o.Path(f.Name))
	if err == nil && f.Validate != nil {
		err = f.Validate(o.Path(f.Name), v)
	}
	if err != nil {
		return "", err
	}
	key := lookupKey(f, v)
	if key == "" {
		return "", apperr.Invalid(f.Name, "is required: the upsert matches a record by it")
	}
	return key, nil
}

// Upsert writes the record of org whose unique field (by name) holds the
// body's value: created from the body (201) when none does, else updated
// with the fields the body sets (200) — immutable ones must hold the
// stored values. created says which.
func (s *Service) Upsert(ctx context.Context, org, field string, body []byte) (rec *Record, created bool, err error) {
	f, err := s.Def.MatchField("match", field)
	if err != nil {
		return nil, false, err
	}
	value, err := MatchValue(body, f)
	if err != nil {
		return nil, false, err
	}
	set, err := s.Def.decode(body, decodeUpsert)
	if err != nil {
		return nil, false, err
	}
	return Upsert(ctx, f.Name,
		func(ctx context.Context) (string, error) { return s.coll.UniqueOwner(ctx, org, f.Name, value) },
		func(ctx context.Context) (*Record, error) { return s.Create(ctx, org, body) },
		func(ctx context.Context, id string) (*Record, error) { return s.update(ctx, org, id, set) })
}

type newIDKey struct{}

// WithNewID returns ctx whose next record created under it gets id
// instead of a new one: an import's row gets an id derived from the job
// and the row, so that a row written again after a crash finds the
// record it made (a conflict on the id) instead of making a second one.
// id must carry the resource's prefix.
func WithNewID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, newIDKey{}, id)
}

// NewID is the id of a record of org created under ctx: the one
// WithNewID set when it has prefix, else a new one in one of the shards
// org's writers use (store.Collection.NewID).
func NewID[T any](ctx context.Context, c *store.Collection[T], org, prefix string) (string, error) {
	if id, ok := ctx.Value(newIDKey{}).(string); ok && strings.HasPrefix(id, prefix+"_") {
		return id, nil
	}
	return c.NewID(ctx, org, prefix)
}

// UniqueOwner is the id of org's record whose unique field holds value
// (as MatchValue reads it), "" when none does.
func (s *Service) UniqueOwner(ctx context.Context, org, field, value string) (string, error) {
	return s.coll.UniqueOwner(ctx, org, field, value)
}
