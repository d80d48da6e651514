package usage

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestConcurrentAddsAreWrittenOncePerFlushWindowAndReadBackPerOrganizationAndDay(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	c := &clock{t: time.Date(2025, 3, 1, 23, 59, 0, 0, time.UTC)}
	r := NewRecorder(st)
	r.now = c.now

	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Add(ctx, fmt.Sprintf("org_%d", i%2), Units{Requests: 1, ReadUnits: 0.5, WriteUnits: 1})
		}()
	}
	wg.Wait()
	// Within the window: nothing written yet.
	if got, err := Read(ctx, st, "org_0", c.now(), c.now()); err != nil || got != (Units{}) {
		t.Fatalf("before the window ended: %+v %v, want nothing written", got, err)
	}
	c.add(FlushEvery)
	r.Add(ctx, "org_0", Units{Requests: 1, ReadUnits: 2}) // due: flushes all
	for org, want := range map[string]Units{"org_0": {26, 14.5, 25}, "org_1": {25, 12.5, 25}} {
		got, err := Read(ctx, st, org, c.now(), c.now())
		if err != nil || got != want {
			t.Errorf("%s after the flush: %+v %v, want %+v", org, got, err, want)
		}
	}

	// The next UTC day is an item of its own; Read adds the days of its range.
	c.add(2 * time.Minute)
	r.Add(ctx, "org_0", Units{Requests: 3, WriteUnits: 2})
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	day1, day2 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 2, 12, 0, 0, 0, time.UTC)
	if got, _ := Read(ctx, st, "org_0", day2, day2); got != (Units{3, 0, 2}) {
		t.Errorf("the second day: %+v", got)
	}
	if got, _ := Read(ctx, st, "org_0", day1.AddDate(0, 0, -29), day2); got != (Units{29, 14.5, 27}) {
		t.Errorf("both days: %+v", got)
	}
	if got, _ := Read(ctx, st, "org_2", day1, day2); got != (Units{}) {
		t.Errorf("an organization with no usage: %+v", got)
	}

	// The items are the organization's own, counters, and expire.
	k := store.UsageKey("org_0", day1)
	if c := store.ClassOf(k.PK); c != store.ClassCounter {
		t.Errorf("usage key %s is of class %q, want a counter", k.PK, c)
	}
	if store.OwnerOf(store.Image{}) != "" {
		t.Error("an empty item has an owner")
	}
	found := false
	err := st.ScanItems(ctx, 2, true, func(it store.Image) error {
		if store.KeyOf(it) == k {
			found = true
			if store.OwnerOf(it) != "org_0" || store.ItemType(it) != store.TypeUsage {
				t.Errorf("usage item: owner %q type %q", store.OwnerOf(it), store.ItemType(it))
			}
			if _, ok := it[store.AttrExpires]; !ok {
				t.Error("the usage item has no TTL")
			}
		}
		return nil
	})
	if err != nil || !found {
		t.Fatalf("scan: %v, found %v", err, found)
	}
}

func TestAFailedFlushKeepsItsTotalsForTheNext(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	r := NewRecorder(st)
	r.Add(ctx, "org_a", Units{Requests: 2, ReadUnits: 1})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.Flush(cancelled); err == nil {
		t.Fatal("a flush under a cancelled context succeeded")
	}
	r.Add(ctx, "org_a", Units{Requests: 1})
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if got, _ := Read(ctx, st, "org_a", now, now); got != (Units{3, 1, 0}) {
		t.Errorf("after a failed flush and a good one: %+v, want every request once", got)
	}
}
