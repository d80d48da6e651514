package capacity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/partitionsim"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

// The targets of one organization on one resource type, at full scale
// (issue 48): 5,000 writes and 20,000 reads a second.
const (
	targetWrites = 5000
	targetReads  = 20000
)

var (
	scale   = flag.Float64("capacity-scale", 100, "K: the simulator's partition limits and the load are both divided by it")
	seconds = flag.Int("capacity-seconds", 4, "how long each load runs (make bench: longer)")
	orgs    = flag.Int("capacity-orgs", 200, "organizations of the mixed load")
)

// TestMain serves the companies alone: the load is one resource type's.
func TestMain(m *testing.M) { apitest.Main(m, apitest.Features(companiesapi.Feature)) }

// env is the service over a table behind a partition simulator at scale.
type env struct {
	*apitest.Env
	sim *partitionsim.Sim
}

// window is the simulator's counting window: K/20 seconds, so that a
// scaled run's requests spread over a window as a twentieth of the full
// load's over a second (partitionsim.Options.Window).
func window() time.Duration { return time.Duration(*scale / 20 * float64(time.Second)) }

func start(t *testing.T) env {
	t.Helper()
	apitest.InProcessOnly(t, "it serves the service over a table behind the partition simulator")
	sim, err := partitionsim.Start(partitionsim.Options{Upstream: testenv.Endpoint(t), Scale: *scale, Window: window()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	st := testenv.StoreOn(t, testenv.ClientThrough(t, sim.URL))
	return env{apitest.NewWith(t, apitest.Options{Store: st}), sim}
}

// org is an organization of the load: its clients (keys) and the ids of
// the companies it made.
type org struct {
	keys []*apitest.Client
	mu   sync.Mutex
	ids  []string
}

func (o *org) id() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.ids) == 0 {
		return ""
	}
	return o.ids[rand.IntN(len(o.ids))]
}

func (o *org) add(id string) {
	o.mu.Lock()
	o.ids = append(o.ids, id)
	o.mu.Unlock()
}

// newOrg makes an organization with shards (1: none), keys API keys (a
// key may send 1,000 requests a second) and seed companies.
func (e env) newOrg(t *testing.T, shards, keys, seed int) *org {
	t.Helper()
	ctx := context.Background()
	o, err := e.Deps.Keys.CreateOrg(ctx, "Load", 0)
	if err != nil {
		t.Fatal(err)
	}
	if shards > 1 {
		if err := e.Store.InitShards(ctx, o.ID, shards); err != nil {
			t.Fatal(err)
		}
	}
	out := &org{}
	for range keys {
		out.keys = append(out.keys, e.Key(t, o.ID, "member"))
	}
	for i := range seed {
		r := out.keys[0].Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprintf("Seed %d", i)}).Want(t, http.StatusCreated)
		out.add(r.Object(t)["id"].(string))
	}
	return out
}

// load is requests a second, all organizations together: writes (half
// creates, half updates of a company) and reads (gets of a company, and
// one in listEvery a page of the list).
type load struct {
	writes, reads float64
	listEvery     int
}

// tally is what a load's requests got.
type tally struct {
	mu       sync.Mutex
	sent     int
	dropped  int            // due while every worker was busy: the machine fell behind
	statuses map[string]int // "create 201", ...
	odd      []string       // answers neither 2xx nor 503
}

func (t *tally) add(what string, status int, body []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent++
	t.statuses[fmt.Sprintf("%s %d", what, status)]++
	if (status < 200 || status > 299) && status != http.StatusServiceUnavailable && len(t.odd) < 5 {
		t.odd = append(t.odd, fmt.Sprintf("%s: %d %s", what, status, body))
	}
}

func (t *tally) count(status int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.statuses {
		if strings.HasSuffix(k, fmt.Sprintf(" %d", status)) {
			n += v
		}
	}
	return n
}

// run sends l for d, open loop (requests are due at the rate whether or
// not earlier ones have answered), spread over orgs.
func run(t *testing.T, orgs []*org, l load, d time.Duration) *tally {
	t.Helper()
	tl := &tally{statuses: map[string]int{}}
	hc := &http.Client{Timeout: testenv.Scaled(30 * time.Second)}
	send := func(c *apitest.Client, method, path string, body any) (int, []byte) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, c.Base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-service-client-id", c.ClientID)
		req.Header.Set("x-service-api-key", c.Secret)
		res, err := hc.Do(req)
		if err != nil {
			return 0, []byte(err.Error())
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	one := func(seq int) {
		o := orgs[seq%len(orgs)]
		c := o.keys[rand.IntN(len(o.keys))]
		id := o.id()
		switch {
		case rand.Float64() < l.writes/(l.writes+l.reads):
			if id == "" || rand.IntN(2) == 0 {
				status, body := send(c, "POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprintf("Load %d %d", seq, rand.Int())})
				var made struct {
					Data struct{ ID string } `json:"data"`
				}
				if status == http.StatusCreated && json.Unmarshal(body, &made) == nil && made.Data.ID != "" {
					o.add(made.Data.ID)
				}
				tl.add("create", status, body)
				return
			}
			status, body := send(c, "PUT", "/v1/companies/"+id, map[string]any{"description": fmt.Sprintf("updated %d", seq)})
			tl.add("update", status, body)
		case id == "" || rand.IntN(l.listEvery) == 0:
			status, body := send(c, "GET", "/v1/companies?limit=20", nil)
			tl.add("list", status, body)
		default:
			status, body := send(c, "GET", "/v1/companies/"+id, nil)
			tl.add("get", status, body)
		}
	}
	due := make(chan int, 64)
	var wg sync.WaitGroup
	for range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range due {
				one(seq)
			}
		}()
	}
	every := time.Duration(float64(time.Second) / (l.writes + l.reads))
	tick := time.NewTicker(every)
	end := time.Now().Add(d)
	for seq := 0; time.Now().Before(end); seq++ {
		<-tick.C
		select {
		case due <- seq:
		default:
			tl.mu.Lock()
			tl.dropped++
			tl.mu.Unlock()
		}
	}
	tick.Stop()
	close(due)
	wg.Wait()
	for _, o := range tl.odd {
		t.Errorf("an answer neither 2xx nor 503: %s", o)
	}
	t.Logf("%d requests in %v (%.0f/s; %d due while every worker was busy): %v", tl.sent, d, float64(tl.sent)/d.Seconds(), tl.dropped, tl.statuses)
	return tl
}

// hottest logs the keys nearest their limits and returns the most used
// share of a partition's units any key took in a window.
func hottest(t *testing.T, sim *partitionsim.Sim) float64 {
	t.Helper()
	keys, throttles := sim.Stats()
	share := func(k partitionsim.KeyStats) float64 {
		return max(k.PeakWrite/sim.WriteLimit(), k.PeakRead/sim.ReadLimit())
	}
	slices.SortFunc(keys, func(a, b partitionsim.KeyStats) int {
		switch sa, sb := share(a), share(b); {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	var lines []string
	for _, k := range keys[:min(8, len(keys))] {
		lines = append(lines, fmt.Sprintf("%5.1f%% %-24s %s (peak %.0f WCU, %.0f RCU a window; %d throttled)",
			100*share(k), store.ClassOf(k.Key.PK), k.Key, k.PeakWrite, k.PeakRead, k.Throttled))
	}
	t.Logf("%d throttles; hottest keys (share of one partition's limit in a %v window):\n%s", throttles, window(), strings.Join(lines, "\n"))
	if len(keys) == 0 {
		return 0
	}
	return share(keys[0])
}

// target is the load of one organization at the target rates, scaled.
func target() load {
	return load{writes: targetWrites / *scale, reads: targetReads / *scale, listEvery: 50}
}

func TestOneOrganizationOfOneShardIsThrottledAtTheTargetRates(t *testing.T) {
	testenv.Long(t, "a load of seconds through the partition simulator")
	e := start(t)
	o := e.newOrg(t, 1, 1, 0)
	l := target()
	l.reads = 0 // its writes alone exceed one partition
	tl := run(t, []*org{o}, l, window()+time.Second)
	hottest(t, e.sim)
	if e.sim.Throttles() == 0 {
		t.Errorf("no throttle at %.0f writes a second into one shard (a partition takes %.0f write units a %v window): the simulator or the load is wrong", l.writes, e.sim.WriteLimit(), window())
	}
	t.Logf("%d answers 503", tl.count(http.StatusServiceUnavailable))
}

func TestOneOrganizationOfShardsTakesTheTargetRatesWithoutAThrottle(t *testing.T) {
	testenv.Long(t, "a load of seconds through the partition simulator")
	e := start(t)
	o := e.newOrg(t, store.MaxShards, 2, 20)
	tl := run(t, []*org{o}, target(), time.Duration(*seconds)*time.Second)
	hot := hottest(t, e.sim)
	if n := e.sim.Throttles(); n > 0 {
		t.Errorf("%d requests throttled at the target rates, scaled by %v", n, *scale)
	}
	if n := tl.count(http.StatusServiceUnavailable); n > 0 {
		t.Errorf("%d answers 503", n)
	}
	t.Logf("the hottest key took %.0f%% of a partition's limit", 100*hot)
}

func TestManyOrganizationsShareTheTableWithoutAThrottleOrAHotKey(t *testing.T) {
	testenv.Long(t, "a load of seconds through the partition simulator")
	e := start(t)
	all := make([]*org, *orgs)
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	for i := range all {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			all[i] = e.newOrg(t, 1, 1, 0)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Together, one organization's target rates, spread evenly: at full
	// scale 200 organizations each write 25 companies a second and read
	// 100.
	l := target()
	l.listEvery = 20
	tl := run(t, all, l, time.Duration(*seconds)*time.Second)
	hot := hottest(t, e.sim)
	if n := e.sim.Throttles(); n > 0 {
		t.Errorf("%d requests throttled", n)
	}
	if n := tl.count(http.StatusServiceUnavailable); n > 0 {
		t.Errorf("%d answers 503", n)
	}
	if hot > 0.3 {
		t.Errorf("a key took %.0f%% of a partition's limit; want at most 30%%", 100*hot)
	}
	keys, _ := e.sim.Stats()
	for _, k := range keys {
		if c := store.ClassOf(k.Key.PK); c == store.ClassGlobal && k.Writes > 0 {
			t.Errorf("key %s (class %s) was written", k.Key, c)
		}
	}
}

func TestACreateWhoseTransactionDynamoDBCancelsForThrottlingAnswers503WithRetryAfter(t *testing.T) {
	e := start(t)
	o := e.newOrg(t, 1, 1, 0)
	c := o.keys[0]
	c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK) // the key and limits cached
	// A partition now takes 1.5 write units a window: a plain write of
	// up to a KB passes, an item written in a transaction (two units a
	// KB) never does. A company with an externalId is created in a
	// transaction with its uniqueness item.
	e.sim.SetScale(partitionsim.PartitionWriteUnits * window().Seconds() / 1.5)
	r := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "externalId": "ext-throttled"})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a create whose transaction is throttled: %d (Retry-After %q) %s; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if e.sim.Cancelled() == 0 {
		t.Fatal("the simulator cancelled no transaction")
	}
	e.sim.SetScale(1)
	if list := c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK).List(t); len(list) != 0 {
		t.Errorf("the throttled create left %d companies", len(list))
	}
	c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "externalId": "ext-throttled"}).Want(t, http.StatusCreated)
}
