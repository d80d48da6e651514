package store

import (
	"context"
	"strconv"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Versioned, embedded in a record type, carries the stored version of the
// record it was read as or written as, so that a response can show it as
// an entity tag and a client can make a later write conditional on it.
// It adds nothing to the record's JSON.
type Versioned struct{ version int64 }

// SetStoreVersion records the stored version; the store calls it.
func (v *Versioned) SetStoreVersion(n int64) { v.version = n }

// ETag is the record's entity tag, "" when its version is unknown.
func (v Versioned) ETag() string {
	if v.version <= 0 {
		return ""
	}
	return `"` + strconv.FormatInt(v.version, 10) + `"`
}

// StoreVersion is the stored version the record was read or written at,
// 0 when unknown.
func (v Versioned) StoreVersion() int64 { return v.version }

// versionSetter is implemented by records embedding Versioned.
type versionSetter interface{ SetStoreVersion(int64) }

// versionOf is the stored version of a record embedding Versioned, 0 when
// unknown.
func versionOf(v any) int64 {
	if g, ok := v.(interface{ StoreVersion() int64 }); ok {
		return g.StoreVersion()
	}
	return 0
}

func setVersion(out any, version int64) {
	if v, ok := out.(versionSetter); ok {
		v.SetStoreVersion(version)
	}
}

// Precondition makes writes to one record conditional on its current
// entity tag (an HTTP If-Match): Any matches every existing version;
// otherwise the version must be one of Versions.
type Precondition struct {
	ID       string
	Any      bool
	Versions []int64
}

type preconditionKey struct{}

// WithPrecondition returns ctx carrying p. Collection updates and deletes
// of the record p.ID check it against the version they read, inside their
// version-checked write, so a concurrent writer cannot slip in between.
func WithPrecondition(ctx context.Context, p Precondition) context.Context {
	return context.WithValue(ctx, preconditionKey{}, p)
}

// checkPrecondition fails with apperr.ErrPreconditionFailed when ctx holds
// a precondition on id that version does not meet.
func checkPrecondition(ctx context.Context, id string, version int64) error {
	p, ok := ctx.Value(preconditionKey{}).(Precondition)
	if !ok || p.ID != id || p.Any {
		return nil
	}
	for _, v := range p.Versions {
		if v == version {
			return nil
		}
	}
	return apperr.PreconditionFailed("the record has changed: its current ETag is \"%d\", not the one sent in If-Match; read it again and retry", version)
}
