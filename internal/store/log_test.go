package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// readAll pages a log with q until its end.
func readAll(t *testing.T, st *store.Store, q store.LogQuery) []int {
	t.Helper()
	var out []int
	for range 1000 {
		p, err := st.ReadLog(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range p.Items {
			var e struct{ N int }
			json.Unmarshal(raw, &e)
			out = append(out, e.N)
		}
		if p.Next == "" {
			return out
		}
		q.Cursor = p.Next
	}
	t.Fatal("the log did not end")
	return nil
}

func TestALogPagesByTimeWithFiltersThreadsAndBoundsInBothDirections(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var at []time.Time
	for n := range 30 {
		ts := base.Add(time.Duration(n) * time.Second)
		at = append(at, ts)
		kind := []string{"a", "b", "c"}[n%3]
		written, err := st.AppendLog(ctx, store.LogEntry{Org: "org_1", Type: "LOGT", ID: ids.Derived("e", ts, fmt.Sprint(n)),
			Doc: json.RawMessage(fmt.Sprintf(`{"N":%d}`, n)), Thread: fmt.Sprint("t", n%2), Attrs: map[string]string{"kind": kind}})
		if err != nil || !written {
			t.Fatalf("append %d: %v %v", n, written, err)
		}
	}
	if again, err := st.AppendLog(ctx, store.LogEntry{Org: "org_1", Type: "LOGT", ID: ids.Derived("e", at[0], "0"), Doc: json.RawMessage(`{"N":99}`)}); again || err != nil {
		t.Fatalf("an entry appended again is written anew: %v %v", again, err)
	}
	st.AppendLog(ctx, store.LogEntry{Org: "org_2", Type: "LOGT", ID: ids.Derived("e", at[0], "x"), Doc: json.RawMessage(`{"N":-1}`)})

	all := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGT", Limit: 7})
	if len(all) != 30 || all[0] != 29 || !slices.IsSortedFunc(all, func(a, b int) int { return b - a }) {
		t.Fatalf("newest first by 7: %v", all)
	}
	asc := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGT", Limit: 4, Asc: true})
	if len(asc) != 30 || asc[0] != 0 || !slices.IsSorted(asc) {
		t.Fatalf("oldest first by 4: %v", asc)
	}
	got := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGT", Limit: 3, Thread: "t1", Equal: map[string][]string{"kind": {"a", "c"}},
		From: ids.At("e", at[5]), To: ids.At("e", at[20])})
	var want []int
	for n := 20; n >= 5; n-- {
		if n%2 == 1 && n%3 != 1 && n < 20 {
			want = append(want, n)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("thread t1, kinds a and c, from 5 to 20 (exclusive): %v, want %v", got, want)
	}
	// A filter that skips most entries ends a page after its reads, with a
	// cursor that goes on: nothing is skipped or repeated.
	few := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGT", Limit: 2, MaxReads: 1, Equal: map[string][]string{"kind": {"b"}}})
	if len(few) != 10 {
		t.Fatalf("kind b read one slice at a time: %v", few)
	}
	// The byte budget ends a page before the entry that would exceed it.
	p, err := st.ReadLog(ctx, store.LogQuery{Org: "org_1", Type: "LOGT", Limit: 30, MaxBytes: 25})
	if err != nil || len(p.Items) != 2 || p.Next == "" {
		t.Fatalf("a 25-byte budget: %d entries, next %q, %v", len(p.Items), p.Next, err)
	}
	if _, err := st.ReadLog(ctx, store.LogQuery{Org: "org_2", Type: "LOGT", Limit: 5, Cursor: p.Next}); err == nil {
		t.Fatal("another organization's log accepts the cursor")
	}
}

// Either keeps the entries of which one attribute or another has a value
// (an event's actor, or what it wrote through), beside Equal's filters.
func TestALogFilterCanMatchEitherOfTwoAttributes(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for n, attrs := range []map[string]string{
		{"who": "k1", "kind": "a"},
		{"who": "k2", "through": "k1", "kind": "a"},
		{"who": "k2", "kind": "a"},
		{"who": "k1", "kind": "b"},
		{"who": "k3", "through": "k4", "kind": "a"},
	} {
		if _, err := st.AppendLog(ctx, store.LogEntry{Org: "org_1", Type: "LOGE", ID: ids.Derived("e", base.Add(time.Duration(n)*time.Second), fmt.Sprint(n)),
			Doc: json.RawMessage(fmt.Sprintf(`{"N":%d}`, n)), Attrs: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	got := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGE", Limit: 1, Asc: true,
		Either: map[string][]string{"who": {"k1"}, "through": {"k1"}}, Equal: map[string][]string{"kind": {"a"}}})
	if !slices.Equal(got, []int{0, 1}) {
		t.Errorf("who or through k1, of kind a: %v, want [0 1]", got)
	}
	if got := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGE", Limit: 10, Either: map[string][]string{"who": {"k4"}, "through": {"k4"}}}); !slices.Equal(got, []int{4}) {
		t.Errorf("who or through k4: %v, want [4]", got)
	}
}

func TestTheLogOfAShardedOrganizationIsReadAcrossItsShardsInOneOrder(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ctx := context.Background()
	if _, err := st.SetShards(ctx, "org_1", 4); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var entryIDs []string
	for n := range 30 {
		ts := base.Add(time.Duration(n) * time.Second)
		id := ids.InShard(ids.Derived("e", ts, fmt.Sprint(n)), n%4)
		entryIDs = append(entryIDs, id)
		kind := []string{"a", "b", "c"}[n%3]
		if _, err := st.AppendLog(ctx, store.LogEntry{Org: "org_1", Type: "LOGS", ID: id, Doc: json.RawMessage(fmt.Sprintf(`{"N":%d}`, n)),
			Thread: fmt.Sprint("t", n%2), Attrs: map[string]string{"kind": kind}}); err != nil {
			t.Fatal(err)
		}
	}
	desc := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGS", Limit: 7})
	if len(desc) != 30 || desc[0] != 29 || !slices.IsSortedFunc(desc, func(a, b int) int { return b - a }) {
		t.Fatalf("newest first by 7, across 4 shards: %v", desc)
	}
	asc := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGS", Limit: 4, Asc: true})
	if len(asc) != 30 || !slices.IsSorted(asc) {
		t.Fatalf("oldest first by 4: %v", asc)
	}
	// Filters that skip most entries end pages at the shards' frontier:
	// nothing skipped or repeated.
	few := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGS", Limit: 2, MaxReads: 1, Equal: map[string][]string{"kind": {"b"}}})
	if len(few) != 10 || !slices.IsSortedFunc(few, func(a, b int) int { return b - a }) {
		t.Fatalf("kind b read one slice at a time: %v", few)
	}
	thread := readAll(t, st, store.LogQuery{Org: "org_1", Type: "LOGS", Limit: 5, Thread: "t0", Asc: true})
	if len(thread) != 15 || thread[0] != 0 || !slices.IsSorted(thread) {
		t.Fatalf("thread t0: %v", thread)
	}
	for _, n := range []int{1, 2, 3} {
		doc, _, err := st.GetLog(ctx, "org_1", "LOGS", entryIDs[n])
		if err != nil || string(doc) != fmt.Sprintf(`{"N":%d}`, n) {
			t.Fatalf("GetLog of shard %d's entry: %s, %v", n%4, doc, err)
		}
	}
}
