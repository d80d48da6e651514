package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

// fedThings keep a change feed; ext is unique, so deletes take the path
// that reads the record first.
func fedThings(s *store.Store, unique bool) *store.Collection[thing] {
	spec := store.Spec[thing]{Type: "THING", ID: func(t *thing) string { return t.ID }, Feed: true}
	if unique {
		spec.Unique = []store.Unique[thing]{{Field: "ext", Key: func(t *thing) string { return t.Ext }}}
	}
	return store.NewCollection(s, spec)
}

func TestEveryWriteOfAFedCollectionPutsAFeedEntryInTheSameTransaction(t *testing.T) {
	t.Parallel()
	for _, unique := range []bool{false, true} {
		ctx := context.Background()
		st := testenv.Store(t)
		c := fedThings(st, unique)
		start := time.Now().Add(-store.FeedWindow)
		a := thing{ID: ids.New("thg"), Name: "a", Ext: "x"}
		b := thing{ID: ids.New("thg"), Name: "b", Ext: "y"}
		for _, v := range []*thing{&a, &b} {
			if err := c.Create(ctx, "org1", v); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Update(ctx, "org1", a.ID, func(v *thing) error { v.Name = "a2"; return nil }); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, "org1", b.ID); err != nil {
			t.Fatal(err)
		}
		// A write that fails leaves no entry behind.
		if err := c.Delete(ctx, "org1", b.ID); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := c.Update(ctx, "org1", "thg_missing", func(v *thing) error { return nil }); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("update of a missing record: %v", err)
		}

		changes, err := st.Changes(ctx, "org1", "THING", start)
		if err != nil {
			t.Fatal(err)
		}
		type seen struct {
			id      string
			version int64
			deleted bool
		}
		var got []seen
		for _, ch := range changes {
			got = append(got, seen{ch.ID, ch.Version, ch.Deleted})
		}
		want := []seen{{a.ID, 1, false}, {b.ID, 1, false}, {a.ID, 2, false}, {b.ID, 0, true}}
		if len(got) != len(want) {
			t.Fatalf("unique=%v: feed %+v, want %+v", unique, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("unique=%v: entry %d is %+v, want %+v", unique, i, got[i], want[i])
			}
		}
		for i := 1; i < len(changes); i++ {
			if changes[i].At.Before(changes[i-1].At) {
				t.Errorf("entries out of time order: %v before %v", changes[i-1].At, changes[i].At)
			}
		}
		if other, _ := st.Changes(ctx, "org2", "THING", start); len(other) != 0 {
			t.Errorf("another organization's feed shows %d entries", len(other))
		}
		if later, _ := st.Changes(ctx, "org1", "THING", time.Now().Add(time.Second)); len(later) != 0 {
			t.Errorf("entries from the future: %d", len(later))
		}

		recs, err := st.Records(ctx, "org1", "THING")
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].ID != a.ID || recs[0].Version != 2 {
			t.Fatalf("records %+v, want only a at version 2", recs)
		}
		var v thing
		if err := json.Unmarshal(recs[0].Doc, &v); err != nil || v.Name != "a2" {
			t.Errorf("record doc %s: %v", recs[0].Doc, err)
		}
	}
}

func TestAFeedEntryNamesItsRecordWithoutCopyingIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	c := fedThings(st, false)
	big := thing{ID: ids.New("thg"), Name: strings.Repeat("x", 20_000)}
	if err := c.Create(ctx, "org1", &big); err != nil {
		t.Fatal(err)
	}
	out, err := st.DB.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(st.Table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: store.ChangeKey("org1", "THING", time.Now(), big.ID, 1).PK}},
		ConsistentRead:            aws.Bool(true),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	})
	if err != nil || len(out.Items) != 1 {
		t.Fatalf("the feed: %v items, %v", len(out.Items), err)
	}
	// A 20 KB record; its entry is one read unit (4 KB) at most.
	if cc := out.ConsumedCapacity; cc == nil || cc.CapacityUnits == nil || *cc.CapacityUnits > 1 {
		t.Errorf("reading the one entry of a 20 KB record consumed %v", cc)
	}
	if d, ok := out.Items[0][store.AttrDoc].(*types.AttributeValueMemberS); ok && d.Value != "null" {
		t.Errorf("the entry holds a doc: %.80s", d.Value)
	}
}

func TestACollectionWithoutAFeedWritesNoEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	c := things(st)
	seed(t, c, "org1", "a")
	if changes, err := st.Changes(ctx, "org1", "THING", time.Time{}); err != nil || len(changes) != 0 {
		t.Errorf("changes %v, %v", changes, err)
	}
}
