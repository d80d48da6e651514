package perfreport_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/partitionsim"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

// keyMeter, when set, is the partition simulator in front of the
// report's table: measureRoute reads from it what each route's requests
// took of every key (routeUsage.Keys), for the capacity model.
var keyMeter *partitionsim.Sim

// keysOfEveryRoute measures every route again (everyEndpoint), on a
// service of its own whose table is behind the partition simulator at
// DynamoDB's own limits: what each route's requests take of every key,
// for the capacity model. (The report's other figures are measured
// without the simulator, whose reads of the items it meters would slow
// them.)
func keysOfEveryRoute(t *testing.T) []routeUsage {
	t.Helper()
	sim, err := partitionsim.Start(partitionsim.Options{Upstream: testenv.Endpoint(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	keyMeter = sim
	defer func() { keyMeter = nil }()
	m := &apitest.Meter{}
	db := testenv.ClientThrough(t, sim.URL)
	env := apitest.NewWith(t, apitest.Options{Store: testenv.StoreOn(t, dynamodb.New(db.Options(), m.Option))})
	quickRuns(env)
	return everyEndpoint(t, env, m)
}

// keyUse is what one request of a route took of one key: its write and
// read units.
type keyUse struct {
	Key         partitionsim.Key
	Class       store.KeyClass
	Write, Read float64
}

// keyUses are the units each key took between two snapshots of the
// simulator, per request of n.
func keyUses(before, after []partitionsim.KeyStats, n int) []keyUse {
	was := map[partitionsim.Key]partitionsim.KeyStats{}
	for _, k := range before {
		was[k.Key] = k
	}
	var out []keyUse
	for _, k := range after {
		w, r := k.Writes-was[k.Key].Writes, k.Reads-was[k.Key].Reads
		if w > 0 || r > 0 {
			out = append(out, keyUse{Key: k.Key, Class: store.ClassOf(k.Key.PK), Write: w / float64(n), Read: r / float64(n)})
		}
	}
	return out
}

// The share of a partition the capacity model lets a key use (issue 48:
// no key hotter than 30% of its partition's limit at the target load).
const keyShare = 0.3

// hottest is the most write and read units a request of u takes of one
// key of class c.
func (u routeUsage) hottest(c store.KeyClass) (write, read float64) {
	for _, k := range u.Keys {
		if k.Class == c {
			write, read = max(write, k.Write), max(read, k.Read)
		}
	}
	return write, read
}

// ceiling is the requests a second that units a request take of one key
// at keyShare of a partition's limit allow; +Inf for none.
func ceiling(write, read float64) float64 {
	c := math.Inf(1)
	if write > 0 {
		c = min(c, keyShare*partitionsim.PartitionWriteUnits/write)
	}
	if read > 0 {
		c = min(c, keyShare*partitionsim.PartitionReadUnits/read)
	}
	return c
}

func rate(c float64) string {
	if math.IsInf(c, 1) {
		return "—"
	}
	switch {
	case c >= 100_000:
		return fmt.Sprintf("%.0fk", c/1000)
	case c >= 10_000:
		return fmt.Sprintf("%.1fk", c/1000)
	}
	return fmt.Sprintf("%.0f", c)
}

// classes describes the classes of keys u writes (or reads) with the
// units a request takes of the hottest key of each.
func (u routeUsage) classes(write bool) string {
	var parts []string
	for _, c := range []store.KeyClass{store.ClassShard, store.ClassRecord, store.ClassOrganization, store.ClassCounter, store.ClassQueue, store.ClassGlobal} {
		w, r := u.hottest(c)
		v := r
		if write {
			v = w
		}
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2g", c, v))
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// onRecord reports whether u reads one record: a route on a record's
// path (…/{id}, an action on it), not a list under it (GET …/{id}/runs).
func onRecord(u routeUsage) bool {
	path := u.Route.Path
	return strings.Contains(path, "{") && (u.Route.Method != "GET" || strings.HasSuffix(path, "}"))
}

// capacityModel is the report's section on what caps each route: the
// classes of keys it writes and reads, the units a request takes of the
// hottest key of each, and the requests a second that leave every key at
// keyShare of its partition, for one organization of one shard and of
// store.MaxShards, for one record and for the deployment.
func (r report) capacityModel() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("\n## Capacity model: the keys of every route and what caps them\n\n")
	p("The same requests as the table above, through the partition simulator (internal/dev/partitionsim), which meters the\n")
	p("units each takes of every table and index partition key. A DynamoDB partition key serves at most %d write and %d\n", partitionsim.PartitionWriteUnits, partitionsim.PartitionReadUnits)
	p("read units a second; the model keeps every key at %.0f%% of that. For each route: the classes of keys it writes and reads\n", 100*keyShare)
	p("(store.ClassOf) with the units one request takes of the hottest key of each, and the requests a second that stay\n")
	p("within %.0f%% — of one organization whose records are in one shard, and in %d (`admin set-shards`: its writes, and\n", 100*keyShare, store.MaxShards)
	p("the reads of a route on one record's path, spread over the shards; a list reads every shard, so it is not, and the reads\n")
	p("of a create or a list route are counted as a list's); of one record (a\n")
	p("record's own keys: its enrichment candidates, a metric series, a uniqueness item); of the whole deployment (the\n")
	p("global queues' %d shards). Rate counters are written once per lease of requests (their units here are the\n", store.GlobalShards)
	p("lease's share) and the organization's own items are read through caches: neither caps a route. No route writes a\n")
	p("global key (the route usage guard of `make test` fails one that does). The load tests of internal/dev/capacity\n")
	p("check the model end to end: one organization of %d shards takes 5,000 writes and 20,000 reads a second of\n", store.MaxShards)
	p("companies without a throttle, one of one shard is throttled at that rate, and 200 organizations share it.\n\n")
	p("| route | writes: class, units of its hottest key a request | reads: class, units | per organization, 1 shard (req/s) | per organization, %d shards | per record | per deployment |\n", store.MaxShards)
	p("|---|---|---|---:|---:|---:|---:|\n")
	routes := slices.Clone(r.Capacity)
	for _, u := range routes {
		if len(u.Keys) == 0 {
			continue
		}
		sw, sr := u.hottest(store.ClassShard)
		one := ceiling(sw, sr)
		spread := ceiling(sw/float64(store.MaxShards), sr)
		if onRecord(u) { // one record's reads land on its shard
			spread = ceiling(sw/float64(store.MaxShards), sr/float64(store.MaxShards))
		}
		rw, rr := u.hottest(store.ClassRecord)
		qw, qr := u.hottest(store.ClassQueue)
		deployment := ceiling(qw, qr)
		if !math.IsInf(deployment, 1) {
			deployment *= store.GlobalShards
		}
		p("| `%s` | %s | %s | %s | %s | %s | %s |\n", u.Route.Pattern(), u.classes(true), u.classes(false), rate(one), rate(spread), rate(ceiling(rw, rr)), rate(deployment))
	}
	return b.String()
}
