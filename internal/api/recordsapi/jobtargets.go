package recordsapi

import (
	"context"

	"github.com/sourcebase/sourcebase/internal/store"
)

// JobKind is a kind as bulk jobs move it (jobsapi.Targets): its records,
// written and read through the services its own operations use (API, the
// feature that serves it), and Owner, which finds the record a unique
// field's value names, for an import that upserts.
type JobKind struct {
	Kind  Kind[store.JSON]
	API   Based
	Owner func(ctx context.Context, org, field, value string) (string, error)
}
