package partitionsim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/partitionsim"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) tick(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// started runs a Sim at scale in front of the test's DynamoDB Local, with
// a store over a table of the service's layout made through it.
func started(t *testing.T, scale float64) (*partitionsim.Sim, *store.Store, *clock) {
	t.Helper()
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	sim, err := partitionsim.Start(partitionsim.Options{Upstream: testenv.Endpoint(t), Scale: scale, Now: clk.now, SplitAfter: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim, testenv.StoreOn(t, testenv.ClientThrough(t, sim.URL)), clk
}

// once is a call option without the SDK's retries, so a throttle is seen.
func once(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }

func put(pk, sk string, attrs map[string]string) *dynamodb.PutItemInput {
	it := map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: pk},
		store.AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
	for k, v := range attrs {
		it[k] = &types.AttributeValueMemberS{Value: v}
	}
	return &dynamodb.PutItemInput{Item: it}
}

func stats(sim *partitionsim.Sim, k partitionsim.Key) partitionsim.KeyStats {
	all, _ := sim.Stats()
	for _, s := range all {
		if s.Key == k {
			return s
		}
	}
	return partitionsim.KeyStats{Key: k}
}

func TestPutsChargeTheTableAndEachIndexThatHoldsTheItemByKB(t *testing.T) {
	sim, st, _ := started(t, 1)
	in := put("A", "1", map[string]string{"gsi1pk": "IX", "gsi1sk": "1", "doc": strings.Repeat("x", 1500)})
	in.TableName = aws.String(st.Table)
	if _, err := st.DB.PutItem(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, PK: "A"}); got.Writes != 2 {
		t.Errorf("table key A: %v write units, want 2 (a 1.5 KB item)", got.Writes)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, Index: "gsi1", PK: "IX"}); got.Writes != 2 {
		t.Errorf("gsi1 key IX: %v write units, want 2 (the index projects all attributes)", got.Writes)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, Index: "gsi2", PK: ""}); got.Writes != 0 {
		t.Errorf("gsi2 was charged %v units for an item it does not hold", got.Writes)
	}
	// Moving the item to another index key is two index writes: the old
	// entry's delete and the new one's put.
	in = put("A", "1", map[string]string{"gsi1pk": "IY", "gsi1sk": "1"})
	in.TableName = aws.String(st.Table)
	if _, err := st.DB.PutItem(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, Index: "gsi1", PK: "IX"}); got.Writes != 4 {
		t.Errorf("gsi1 key IX: %v write units, want 4 (its put, then its delete)", got.Writes)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, Index: "gsi1", PK: "IY"}); got.Writes != 1 {
		t.Errorf("gsi1 key IY: %v write units, want 1", got.Writes)
	}
	// Reading it back: a strongly consistent read of up to 4 KB is one
	// unit, a query of the index an eventually consistent half.
	if _, err := st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{store.AttrPK: &types.AttributeValueMemberS{Value: "A"}, store.AttrSK: &types.AttributeValueMemberS{Value: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, PK: "A"}); got.Reads != 1 {
		t.Errorf("table key A: %v read units, want 1", got.Reads)
	}
	if _, err := st.DB.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(st.Table), IndexName: aws.String("gsi1"),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": "gsi1pk"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "IY"}}}); err != nil {
		t.Fatal(err)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, Index: "gsi1", PK: "IY"}); got.Reads != 0.5 {
		t.Errorf("gsi1 key IY: %v read units, want 0.5", got.Reads)
	}
}

func TestAKeyOverItsPartitionsWriteUnitsInASecondIsThrottledAndTheNextSecondServes(t *testing.T) {
	sim, st, clk := started(t, 100) // 10 write units a second per key
	ctx := context.Background()
	throttled := 0
	for i := range 15 {
		in := put("HOT", fmt.Sprintf("%03d", i), nil)
		in.TableName = aws.String(st.Table)
		_, err := st.DB.PutItem(ctx, in, once)
		var pte *types.ProvisionedThroughputExceededException
		switch {
		case errors.As(err, &pte):
			throttled++
		case err != nil:
			t.Fatal(err)
		}
	}
	if throttled != 5 || sim.Throttles() != 5 {
		t.Fatalf("%d of 15 one-unit puts in a second throttled (Sim counted %d), want the 5 past 10 units", throttled, sim.Throttles())
	}
	// Another key of the table is not affected, and the next second the
	// hot key serves again.
	in := put("COLD", "1", nil)
	in.TableName = aws.String(st.Table)
	if _, err := st.DB.PutItem(ctx, in, once); err != nil {
		t.Fatalf("a put of another key: %v", err)
	}
	clk.tick(time.Second)
	in = put("HOT", "999", nil)
	in.TableName = aws.String(st.Table)
	if _, err := st.DB.PutItem(ctx, in, once); err != nil {
		t.Fatalf("the hot key the next second: %v", err)
	}
	// Nothing throttled was written.
	out, err := st.DB.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(st.Table), KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "HOT"}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 11 {
		t.Errorf("the hot key holds %d items, want the 10 admitted and the 1 of the next second", out.Count)
	}
}

func TestAThrottledTransactionIsCancelledWithThrottlingErrorAndTheStoreAnswersUnavailable(t *testing.T) {
	_, st, _ := started(t, 1000) // 1 write unit a second per key: a transactional write needs 2
	ctx := context.Background()
	in := put("T", "1", nil)
	_, err := st.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(st.Table), Item: in.Item}},
	}}, once)
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 1 || aws.ToString(tce.CancellationReasons[0].Code) != "ThrottlingError" {
		t.Fatalf("err = %v, want a TransactionCanceledException with reason ThrottlingError", err)
	}
	// The store retries it as a throttle, then answers ErrUnavailable
	// (a store transaction of one item is a plain write: two items).
	err = st.Transact(ctx, apperr.ErrConflict,
		mustPut(t, st, store.Item{PK: "T", SK: "2", Type: "X", Doc: map[string]int{"a": 1}}),
		mustPut(t, st, store.Item{PK: "U", SK: "2", Type: "X", Doc: map[string]int{"a": 1}}))
	if !errors.Is(err, apperr.ErrUnavailable) {
		t.Fatalf("store.Transact: %v, want ErrUnavailable", err)
	}
}

func mustPut(t *testing.T, st *store.Store, it store.Item) store.Op {
	t.Helper()
	op, err := st.PutOp(it)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func TestABatchWriteLeavesTheThrottledItemsUnprocessed(t *testing.T) {
	sim, st, _ := started(t, 200) // 5 write units a second per key
	var reqs []types.WriteRequest
	for i := range 8 {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: put("B", fmt.Sprint(i), nil).Item}})
	}
	reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: put("C", "1", nil).Item}})
	out, err := st.DB.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{st.Table: reqs}}, once)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.UnprocessedItems[st.Table]); n != 3 {
		t.Errorf("%d items unprocessed, want the 3 of key B past 5 units", n)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, PK: "C"}); got.Writes != 1 {
		t.Errorf("key C: %v write units, want 1", got.Writes)
	}
}

func TestAHotKeySplitsUnlessItsWritesOnlyAppend(t *testing.T) {
	sim, st, clk := started(t, 100) // 10 write units a second per key
	ctx := context.Background()
	// Key R is written at sort keys all over its range, key M always past
	// its last: both at 8 units a second (above half of 10) for 4 seconds.
	for s := range 4 {
		for i := range 8 {
			r := put("R", fmt.Sprintf("%02d-%d", (i*7)%8, s), nil)
			r.TableName = aws.String(st.Table)
			m := put("M", fmt.Sprintf("%02d-%02d", s, i), nil)
			m.TableName = aws.String(st.Table)
			for _, in := range []*dynamodb.PutItemInput{r, m} {
				if _, err := st.DB.PutItem(ctx, in, once); err != nil {
					t.Fatal(err)
				}
			}
		}
		clk.tick(time.Second)
	}
	// Rolling a key's second happens on its next access.
	for _, pk := range []string{"R", "M"} {
		in := put(pk, "zz", nil)
		in.TableName = aws.String(st.Table)
		if _, err := st.DB.PutItem(ctx, in, once); err != nil {
			t.Fatal(err)
		}
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, PK: "R"}); got.Partitions != 2 {
		t.Errorf("key R spans %d partitions after 3 hot seconds, want 2", got.Partitions)
	}
	if got := stats(sim, partitionsim.Key{Table: st.Table, PK: "M"}); got.Partitions != 1 || got.Appends != 1 {
		t.Errorf("key M: %d partitions, %v of its writes appended; want 1 and 1 (no split for a key whose sort keys only grow)", got.Partitions, got.Appends)
	}
}
