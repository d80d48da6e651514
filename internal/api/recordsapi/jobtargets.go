package recordsapi

import (
	"context"

	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// JobTargets are the kinds of record bulk jobs move (companies and the
// declared resources), written and read through the services the API's
// own operations use, over a process's services.
func JobTargets(d service.Deps) []jobs.Target {
	a := New(DepsOf(d))
	var out []jobs.Target
	for _, k := range append([]Kind[store.JSON]{companyKind()}, declaredKinds()...) {
		w, r := k.Writes(a), k.Reads(a)
		t := jobs.Target{Def: k.Def, Create: w.Create, Update: w.Update, Get: r.Get,
			List: func(ctx context.Context, org string, q store.Query) (store.Page[store.JSON], error) {
				q.Desc = false
				return r.List(ctx, org, q, "", "")
			}}
		if len(k.Def.UniqueFields()) > 0 {
			t.Upsert = upsertWith(w, k.Def)
			t.Owner = ownerOf(a, k.Def)
		}
		out = append(out, t)
	}
	return out
}

// ownerOf finds the record of d's kind whose unique field holds a value.
func ownerOf(a *API, d *resource.Def) func(ctx context.Context, org, field, value string) (string, error) {
	return func(ctx context.Context, org, field, value string) (string, error) {
		if d == companyKind().Def {
			return a.d.Companies.ByExternalID(ctx, org, value)
		}
		svc, ok := a.d.Resources.Service(d.Name)
		if !ok {
			return "", nil
		}
		return svc.UniqueOwner(ctx, org, field, value)
	}
}
