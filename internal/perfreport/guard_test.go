package perfreport_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// usagePath holds every route's committed DynamoDB calls and capacity
// units per request, the figures make test holds each route to.
const usagePath = "testdata/usage.json"

// usageCommand rewrites usagePath from a run of the guard.
const usageCommand = "go test -count=1 -run '^TestEveryRouteKeepsItsCommittedDynamoDBUsage$' ./internal/perfreport -usage"

var writeUsage = flag.Bool("usage", false, "write every route's DynamoDB calls and units per request to "+usagePath+" (make bench does, after the report)")

// routeFigure is a route's DynamoDB work per request.
type routeFigure struct {
	Calls      float64 `json:"calls"`
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
}

// searchSlack is how much more a search may read than its committed
// figures: it reads the change feed's entries of the last
// store.FeedWindow and the records newer than its index, how many of them
// depending on how fast the machine made the requests before it.
func searchSlack(w routeFigure) routeFigure {
	return routeFigure{Calls: 1, ReadUnits: max(1, w.ReadUnits/2)}
}

// perRequest is a route's work per request, without the shared part
// (apitest.Usage.Shared: cache fills and rate limit leases, which fall on
// whichever request comes when they are due).
func perRequest(u routeUsage) routeFigure {
	r := func(v float64) float64 { return math.Round(v/routeRequests*100) / 100 }
	x := u.Usage
	return routeFigure{Calls: r(float64(x.Calls - x.Shared.Calls)), ReadUnits: r(x.Reads - x.Shared.Reads), WriteUnits: r(x.Write - x.Shared.Write)}
}

// usageRounds is how many times the guard measures every route when it
// writes the figures (keeping each route's most), and at most when a
// route is above them (keeping each route's least). A record whose item
// is near a KB boundary costs a write unit more in each copy when the
// deflated form of its doc, whose length varies by a few bytes with the
// random ids in it, does not fit under the boundary (store.docValue): so
// a figure is the most a route costs, and a route is above it only when
// it is above in every round.
const usageRounds = 3

// guardUsage fails the test for every route whose calls or capacity units
// per request (perRequest) rise above its committed figures (a search's
// beyond searchSlack) in measured and in every round of measure after it
// (usageRounds in all), and for every route without figures; with -usage
// it writes the most of usageRounds rounds instead. Only the guard's own
// test writes them, in the conditions it checks them in: the report's
// table of every route is measured after its load tests, with sample
// names numbered past the records they made, so its records can sit
// elsewhere around the KB boundaries (a run's write units differed by 3).
func guardUsage(t *testing.T, measured []routeUsage, measure func() []routeUsage) {
	t.Helper()
	got := map[string]routeFigure{}
	searches := map[string]bool{}
	for _, u := range measured {
		got[u.figureName()] = perRequest(u)
		searches[u.figureName()] = u.Route.Function == lambdas.Search
	}
	// another measures every route again and keeps, of each figure, the
	// most (keep true) or the least.
	another := func(most bool) {
		for _, u := range measure() {
			r, f := u.figureName(), perRequest(u)
			g := got[r]
			pick := math.Min
			if most {
				pick = math.Max
			}
			got[r] = routeFigure{Calls: pick(g.Calls, f.Calls), ReadUnits: pick(g.ReadUnits, f.ReadUnits), WriteUnits: pick(g.WriteUnits, f.WriteUnits)}
		}
	}
	if *writeUsage {
		for range usageRounds - 1 {
			another(true)
		}
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(usagePath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", usagePath)
		return
	}
	b, err := os.ReadFile(usagePath)
	if err != nil {
		t.Fatalf("the committed DynamoDB figures per route: %v (write them with %s)", err, usageCommand)
	}
	var want map[string]routeFigure
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", usagePath, err)
	}
	over := overFigures(got, want, searches)
	for round := 1; len(over) > 0 && round < usageRounds; round++ {
		another(false)
		over = overFigures(got, want, searches)
	}
	if len(over) > 0 {
		t.Errorf("DynamoDB work per request above the committed figures of %s:\n  %s\nMake the route cheaper again; if the new cost is intended, commit the new figures (%s).",
			usagePath, strings.Join(over, "\n  "), usageCommand)
	}
}

// overFigures describes each route of got above its figures in want (a
// search's beyond searchSlack), each route without figures and each
// route of want that got does not have.
func overFigures(got, want map[string]routeFigure, searches map[string]bool) []string {
	var over []string
	for _, route := range slices.Sorted(maps.Keys(got)) {
		g := got[route]
		w, ok := want[route]
		if !ok {
			over = append(over, fmt.Sprintf("%s: no committed figures (it makes %.2f calls, %.2f read and %.2f write units a request)", route, g.Calls, g.ReadUnits, g.WriteUnits))
			continue
		}
		var slack routeFigure
		if searches[route] {
			slack = searchSlack(w)
		}
		var worse []string
		for _, c := range []struct {
			what           string
			got, want, eps float64
		}{{"calls", g.Calls, w.Calls, slack.Calls}, {"read units", g.ReadUnits, w.ReadUnits, slack.ReadUnits}, {"write units", g.WriteUnits, w.WriteUnits, slack.WriteUnits}} {
			if c.got > c.want+c.eps+0.005 { // the figures are rounded to hundredths
				worse = append(worse, fmt.Sprintf("%.2f %s a request, committed %.2f", c.got, c.what, c.want))
			}
		}
		if len(worse) > 0 {
			over = append(over, route+": "+strings.Join(worse, ", "))
		}
	}
	for _, route := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[route]; !ok {
			over = append(over, route+": committed figures for a route the service no longer has")
		}
	}
	return over
}

// TestEveryRouteKeepsItsCommittedDynamoDBUsage is the regression guard of
// make test: every route of the route table, a few successful requests
// each, measured alone (everyEndpoint), and the worst case of every list
// (worstLists), against usagePath (guardUsage).
// The load tests, the soak and the rest of the report run in make bench.
func TestEveryRouteKeepsItsCommittedDynamoDBUsage(t *testing.T) {
	testenv.Long(t, "every route of the route table measured against its committed DynamoDB figures")
	if apitest.Lambdas() {
		t.Skip("the guard measures the in-process server")
	}
	m := &apitest.Meter{}
	db := testenv.Client(t, nil)
	env := apitest.NewWith(t, apitest.Options{Store: testenv.StoreOn(t, dynamodb.New(db.Options(), m.Option))})
	quickRuns(env)
	worst := worstLists(t, env, m)
	measure := func() []routeUsage { return append(everyEndpoint(t, env, m), worst()...) }
	measured := measure()
	guardKeys(t, measured)
	guardUsage(t, measured, measure)
}

// guardKeys fails the test for every route that writes a key of class
// store.ClassGlobal (one that every organization's requests could write),
// or appends to a key of an organization that no shard spreads (writes
// it twice or more, each past the sort key of the one before, as a log
// or an index in time order does) or to a global one: each caps a
// deployment or an organization at one partition's 1,000 write units a
// second (issue 48).
func guardKeys(t interface {
	Helper()
	Errorf(string, ...any)
}, measured []routeUsage) {
	t.Helper()
	for _, u := range measured {
		bad := map[string]bool{}
		last := map[string]string{}
		appends := map[string]int{}
		for _, w := range u.Usage.Written {
			class := store.ClassOf(w.PK)
			if class == store.ClassGlobal && !bad[w.PK] {
				bad[w.PK] = true
				t.Errorf("%s writes key %q, which every organization's requests could write (class %q): spread it over shards (store.QueueKey) or key it by organization", u.figureName(), w.PK, class)
			}
			if prev, ok := last[w.PK]; ok && w.SK > prev {
				appends[w.PK]++
			}
			last[w.PK] = w.SK
		}
		for pk, n := range appends {
			if class := store.ClassOf(pk); n >= routeRequests-1 && (class == store.ClassOrganization || class == store.ClassGlobal) {
				t.Errorf("%s appends to key %q (class %q) at each request: no shard spreads it, so it caps the organization at one partition's writes (build it with store.ShardPartition)", u.figureName(), pk, class)
			}
		}
	}
}

// figureName is the name of u's figures in usagePath: the route's
// pattern, followed by its case when it is not the typical request.
func (u routeUsage) figureName() string {
	if u.Case != "" {
		return u.Route.Pattern() + " (" + u.Case + ")"
	}
	return u.Route.Pattern()
}

// quickRuns keeps env's runs from being marked running while they execute:
// on a busy machine a run may take longer than runs.RunningAfter, and the
// figures are those of a run that does not.
func quickRuns(env *apitest.Env) {
	if env.Deps.Runs != nil {
		env.Deps.Runs.SetRunningAfter(time.Hour)
	}
}

// errorsSeen records what a guard reports.
type errorsSeen struct{ said []string }

func (e *errorsSeen) Helper()                   {}
func (e *errorsSeen) Errorf(f string, a ...any) { e.said = append(e.said, fmt.Sprintf(f, a...)) }

func TestTheKeyGuardRefusesAGlobalKeyAndAnUnshardedAppendOnlyKeyOfAnOrganization(t *testing.T) {
	route := func(name string, w ...apitest.Written) routeUsage {
		return routeUsage{Route: routes.Route{Method: "POST", Path: "/v1/" + name}, Usage: apitest.Usage{Written: w}}
	}
	store.NewCollection(nil, store.Spec[struct{}]{Type: store.TypeCompany}) // companies are sharded
	var seen errorsSeen
	guardKeys(&seen, []routeUsage{
		route("everyone", apitest.Written{PK: "EVERYONE", SK: "x"}),
		route("audit", apitest.Written{PK: "ORG#o1#AUDIT", SK: "01"}, apitest.Written{PK: "ORG#o1#AUDIT", SK: "02"}, apitest.Written{PK: "ORG#o1#AUDIT", SK: "03"}),
		route("fine",
			apitest.Written{PK: store.RecordKey("o1", store.TypeCompany, "cmp_1").PK, SK: "cmp_1"},
			apitest.Written{PK: store.RecordKey("o1", store.TypeCompany, "cmp_2").PK, SK: "cmp_2"},
			apitest.Written{PK: store.RecordKey("o1", store.TypeCompany, "cmp_3").PK, SK: "cmp_3"},
			apitest.Written{PK: store.PurgeKey("ORG#o1#ENRICH#companies#cmp_1").PK, SK: "x"},
			apitest.Written{PK: store.OrgKey("o1").PK, SK: "ORG"}, apitest.Written{PK: store.OrgKey("o1").PK, SK: "ORG"}),
	})
	if len(seen.said) != 2 || !strings.Contains(seen.said[0], `"EVERYONE"`) || !strings.Contains(seen.said[1], `"ORG#o1#AUDIT"`) {
		t.Errorf("the guard said %q; want the global key and the organization's append-only key", seen.said)
	}
}
