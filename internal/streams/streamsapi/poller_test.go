package streamsapi

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/streams"
)

// change is what a test expects of a record: its name and the item's
// attribute v before and after ("" for no image).
type change struct{ name, old, new string }

func changeOf(r streams.Record) change {
	v := func(item map[string]types.AttributeValue) string {
		if item == nil {
			return ""
		}
		n, ok := item["v"].(*types.AttributeValueMemberN)
		if !ok {
			return "no v"
		}
		return n.Value
	}
	return change{r.Name, v(r.Old), v(r.New)}
}

// byItem groups records by their item's pk, in the order handed.
func byItem(t *testing.T, records []streams.Record) map[string][]streams.Record {
	t.Helper()
	out := map[string][]streams.Record{}
	for _, r := range records {
		pk, ok := r.Keys["pk"].(*types.AttributeValueMemberS)
		if !ok || render(r.Keys) != render(key(pk.Value)) {
			t.Fatalf("record %s: keys %s", r.ID, render(r.Keys))
		}
		out[pk.Value] = append(out[pk.Value], r)
	}
	return out
}

// checkChanges checks that the records hold exactly the expected changes
// of each item, in order, each once, with ascending sequence numbers.
func checkChanges(t *testing.T, records []streams.Record, want map[string][]change) {
	t.Helper()
	ids := map[string]bool{}
	for _, r := range records {
		if ids[r.ID] {
			t.Errorf("record %s handed twice", r.ID)
		}
		ids[r.ID] = true
		if r.At.IsZero() || r.ByTTL {
			t.Errorf("record %s: At %v, ByTTL %t", r.ID, r.At, r.ByTTL)
		}
	}
	got := byItem(t, records)
	for pk, want := range want {
		var changes []change
		for i, r := range got[pk] {
			changes = append(changes, changeOf(r))
			if i > 0 && !before(got[pk][i-1].Sequence, r.Sequence) {
				t.Errorf("item %s: sequence %s after %s", pk, r.Sequence, got[pk][i-1].Sequence)
			}
		}
		if !slices.Equal(changes, want) {
			t.Errorf("item %s: changes\n got %v\nwant %v", pk, changes, want)
		}
	}
	if len(got) != len(want) {
		t.Errorf("changes of %d items, want %d", len(got), len(want))
	}
}

// before compares sequence numbers, decimal strings of any length.
func before(a, b string) bool {
	x, okx := new(big.Int).SetString(a, 10)
	y, oky := new(big.Int).SetString(b, 10)
	return okx && oky && x.Cmp(y) < 0
}

func TestPollerHandsEveryChangeInOrder(t *testing.T) {
	t.Parallel()
	db := testenv.Client(t, nil)
	table := testenv.StoreOn(t, db).Table
	var got collector
	p := pollerFor(t, db)
	p.Table, p.Handle, p.Batch = table, got.handle, 2 // several reads per shard
	p.Log, _ = logger()

	// Changes before the Poller starts are read too (from TRIM_HORIZON).
	put(t, db, table, "a", 1)
	put(t, db, table, "b", 1)
	start(t, p)
	set(t, db, table, "a", 2)
	put(t, db, table, "c", 1)
	set(t, db, table, "b", 2)
	del(t, db, table, "a")
	del(t, db, table, "c")
	set(t, db, table, "b", 3)
	put(t, db, table, "c", 10)
	caught(t, p)
	want := map[string][]change{
		"a": {{streams.Insert, "", "1"}, {streams.Modify, "1", "2"}, {streams.Remove, "2", ""}},
		"b": {{streams.Insert, "", "1"}, {streams.Modify, "1", "2"}, {streams.Modify, "2", "3"}},
		"c": {{streams.Insert, "", "1"}, {streams.Remove, "1", ""}, {streams.Insert, "", "10"}},
	}
	checkChanges(t, got.all(), want)

	// The Poller goes on reading what comes after.
	put(t, db, table, "a", 5)
	set(t, db, table, "c", 11)
	caught(t, p)
	want["a"] = append(want["a"], change{streams.Insert, "", "5"})
	want["c"] = append(want["c"], change{streams.Modify, "10", "11"})
	checkChanges(t, got.all(), want)
}

// A Handler that stops mid-batch is handed the batch again from the first
// record it did not handle: none is handed twice after being handled, none
// is skipped, and the log names the record without its contents.
func TestPollerRetriesFromTheFirstUnhandledRecord(t *testing.T) {
	t.Parallel()
	db := testenv.Client(t, nil)
	table := testenv.StoreOn(t, db).Table
	const secret = "s3cr3t-value"
	for i := range 5 {
		item := key(fmt.Sprint("item", i))
		item["v"] = &types.AttributeValueMemberN{Value: "1"}
		item["secret"] = &types.AttributeValueMemberS{Value: secret}
		putItem(t, db, table, item)
	}

	var (
		mu      sync.Mutex
		calls   [][]string // the records' ids, per call
		handled []streams.Record
	)
	handle := func(_ context.Context, records []streams.Record) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		ids := make([]string, len(records))
		for i, r := range records {
			ids[i] = r.ID
		}
		calls = append(calls, ids)
		done := len(records)
		switch {
		case len(calls) == 1 && len(records) >= 2:
			done = len(records) / 2 // part of the batch, then a failure
		case len(calls) == 2:
			done = 0 // a failure without progress
		}
		handled = append(handled, records[:done]...)
		if done < len(records) {
			return done, errors.New("boom")
		}
		return done, nil
	}
	p := pollerFor(t, db)
	log, logs := logger()
	p.Table, p.Handle, p.Log = table, handle, log
	start(t, p)
	caught(t, p)

	mu.Lock()
	defer mu.Unlock()
	if len(calls) < 3 || len(calls[0]) < 2 {
		t.Fatalf("calls %v: want a first batch of several records, then two more calls", calls)
	}
	first := len(calls[0]) / 2
	if calls[1][0] != calls[0][first] || calls[2][0] != calls[1][0] {
		t.Errorf("calls %v: want the second and third from record %d of the first", calls, first)
	}
	want := map[string][]change{}
	for i := range 5 {
		want[fmt.Sprint("item", i)] = []change{{streams.Insert, "", "1"}}
	}
	checkChanges(t, handled, want)

	text := logs.String()
	var failed streams.Record
	for _, r := range handled {
		if r.ID == calls[0][first] {
			failed = r
		}
	}
	if !strings.Contains(text, failed.Sequence) || !strings.Contains(text, failed.ID) || !strings.Contains(text, "boom") {
		t.Errorf("log does not name the failed record %s (%s) and the error:\n%s", failed.ID, failed.Sequence, text)
	}
	if strings.Contains(text, secret) {
		t.Errorf("log holds a record's contents:\n%s", text)
	}
}

// A table made without a stream gets one; when the stream is disabled,
// the Poller reads it to its end and moves to the table's next stream.
func TestPollerEnablesTheStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Client(t, nil)
	def := tableWithoutStream("no-stream")
	if _, err := db.CreateTable(ctx, def); err != nil {
		t.Fatal(err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: def.TableName}, wait()); err != nil {
		t.Fatal(err)
	}
	var got collector
	p := pollerFor(t, db)
	log, logs := logger()
	p.Table, p.Handle, p.Log = *def.TableName, got.handle, log
	start(t, p)
	caught(t, p) // the stream exists once the Poller has read it
	if !strings.Contains(logs.String(), "enabled") {
		t.Errorf("the Poller did not log that it enabled the stream:\n%s", logs)
	}
	first := streamOf(t, db, *def.TableName)
	put(t, db, *def.TableName, "a", 1)
	caught(t, p)
	checkChanges(t, got.all(), map[string][]change{"a": {{streams.Insert, "", "1"}}})

	_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: def.TableName, StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}})
	if err != nil {
		t.Fatal(err)
	}
	// Changes while the table has no stream are never streamed: wait for
	// the Poller to enable the next one.
	deadline := time.Now().Add(wait())
	for streamOf(t, db, *def.TableName) == first || streamOf(t, db, *def.TableName) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the Poller did not enable a new stream within %v:\n%s", wait(), logs)
		}
		time.Sleep(testenv.Scaled(50 * time.Millisecond))
	}
	set(t, db, *def.TableName, "a", 2)
	caught(t, p)
	checkChanges(t, got.all(), map[string][]change{"a": {{streams.Insert, "", "1"}, {streams.Modify, "1", "2"}}})
}

// tableWithoutStream is the table's definition without its stream.
func tableWithoutStream(name string) *dynamodb.CreateTableInput {
	def := store.TableDefinition(name)
	def.StreamSpecification = nil
	return def
}

// streamOf is the table's enabled stream, "" when it has none.
func streamOf(t *testing.T, db *dynamodb.Client, table string) string {
	t.Helper()
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Table.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) {
		return ""
	}
	return aws.ToString(out.Table.LatestStreamArn)
}

func TestPollerChecksItsFields(t *testing.T) {
	full := func() *Poller {
		return &Poller{Streams: NewStreamsClient(aws.Config{}, ""), DB: &dynamodb.Client{}, Table: "t", Handle: (&collector{}).handle}
	}
	for field, clear := range map[string]func(*Poller){
		"Streams": func(p *Poller) { p.Streams = nil },
		"DB":      func(p *Poller) { p.DB = nil },
		"Table":   func(p *Poller) { p.Table = "" },
		"Handle":  func(p *Poller) { p.Handle = nil },
	} {
		p := full()
		clear(p)
		if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Run of a Poller without %s: %v", field, err)
		}
	}
}

func TestBackoff(t *testing.T) {
	var b backoff
	var got []time.Duration
	for range 8 {
		got = append(got, b.next())
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("backoff %v, want %v", got, want)
	}
	b.reset()
	if d := b.next(); d != 100*time.Millisecond {
		t.Errorf("after reset: %v", d)
	}
}
