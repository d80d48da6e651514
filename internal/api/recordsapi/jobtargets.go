package recordsapi

import (
	"context"

	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/store"
)

// JobTarget is what bulk jobs move of kind k: its records written and
// read through the services its own operations use (a, the API of the
// feature that serves it). owner finds the record a unique field's value
// names, for an import that upserts.
func JobTarget(k Kind[store.JSON], a Based, owner func(ctx context.Context, org, field, value string) (string, error)) jobs.Target {
	w, r := k.Writes(a), k.Reads(a)
	t := jobs.Target{Def: k.Def, Create: w.Create, Update: w.Update, Get: r.Get,
		List: func(ctx context.Context, org string, q store.Query) (store.Page[store.JSON], error) {
			q.Desc = false
			return r.List(ctx, org, q, "", "")
		}}
	if len(k.Def.UniqueFields()) > 0 {
		t.Upsert = upsertWith(w, k.Def)
		t.Owner = owner
	}
	return t
}
