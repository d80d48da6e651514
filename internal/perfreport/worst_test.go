package perfreport_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	decl "github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// worstReads is the records a page may read in the guard's worst cases
// (store.Store.PageReads in place of store.MaxPageReads): a page's work is
// linear in the bound, so a low one measures its shape with a few records
// of each resource; with the real bound a page reads MaxPageReads/worstReads
// times the committed read units at most.
const worstReads = 20

// worstLists prepares the worst case of every list a filter makes
// costly, and returns what measures them: in an organization of their
// own holding more records of each resource than a page may read, each
// list of companies and of the declared resources with a filter that no
// index serves and that nothing matches, read from the table
// (X-Query-Plan: key): each page reads the bound and returns none. And
// the change history filtered by an event type none has, a record a page
// (each read of the log takes two entries, and a page makes at most its
// bound of reads). Each is named "<route> (worst case)" in usagePath.
func worstLists(t *testing.T, env *apitest.Env, m *apitest.Meter) func() []routeUsage {
	t.Helper()
	env.Store.PageReads = worstReads
	t.Cleanup(func() { env.Store.PageReads = 0 })
	c := env.Org(t)
	anonymous := env.Anonymous(t)
	var cases []struct {
		route routes.Route
		path  string
	}
	for _, r := range api.Routes() {
		if r.Method != "GET" || r.Path != "/v1/"+r.Resource {
			continue
		}
		var sample func(i int) map[string]any
		switch {
		case r.Resource == resources.Companies:
			sample = func(i int) map[string]any {
				return map[string]any{"canonicalName": fmt.Sprintf("Worst %d", apitest.NextSeq())}
			}
		case slices.ContainsFunc(resources.All(), func(d *decl.Def) bool { return d.Name == r.Resource }):
			def := declared(t, r.Resource)
			sample = func(int) map[string]any { return withResourceType(apitest.Sample(t, c, def, true)) }
		default:
			continue
		}
		var ops []any
		for i := range worstReads + 5 {
			ops = append(ops, map[string]any{"op": "create", "data": sample(i)})
		}
		if res := c.Do("POST", "/v1/"+r.Resource+"/batch", map[string]any{"operations": ops}); res.Status != 200 {
			t.Fatalf("seed %s: %d %s", r.Resource, res.Status, res.Body)
		}
		cases = append(cases, struct {
			route routes.Route
			path  string
		}{r, "/v1/" + r.Resource + "?filter[createdAt][lt]=" + url.QueryEscape("2000-01-01T00:00:00Z")})
	}
	evs := env.StartEvents(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(2*time.Minute))
	defer cancel()
	if err := evs.Caught(ctx); err != nil {
		t.Fatalf("the events code did not catch up with the stream: %v", err)
	}
	evs.Stop()
	for _, r := range api.Routes() {
		if r.Method == "GET" && r.Path == "/v1/events" {
			cases = append(cases, struct {
				route routes.Route
				path  string
			}{r, "/v1/events?type=company.deleted&limit=1"})
		}
	}
	return func() []routeUsage {
		var out []routeUsage
		for _, cs := range cases {
			u := measureRoute(t, env, m, c, anonymous, cs.route, func(*testing.T, int) call {
				return call{method: "GET", path: cs.path, headers: []string{"X-Query-Plan", "key"}}
			})
			u.Case = "worst case"
			out = append(out, u)
		}
		return out
	}
}
