package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
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

func TestEveryWriteOfAFedCollectionPutsAFeedEntry(t *testing.T) {
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
	// Nor the actor, the time or a write token: every search reads the
	// window's entries again.
	for _, a := range []string{store.AttrActor, store.AttrWrittenAt, store.AttrWriteToken} {
		if _, ok := out.Items[0][a]; ok {
			t.Errorf("the entry holds %s", a)
		}
	}
	if size := itemSize(out.Items[0]); size > 200 {
		t.Errorf("the entry is %d bytes, want at most 200", size)
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

// writeLog records the operation and write units of every call a client makes.
type writeLog struct {
	mu    sync.Mutex
	ops   []string
	units float64
}

func (l *writeLog) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("writeLog", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			var cc []types.ConsumedCapacity
			switch p := in.Parameters.(type) {
			case *dynamodb.PutItemInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			case *dynamodb.TransactWriteItemsInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			}
			out, md, err := next.HandleInitialize(ctx, in)
			switch r := out.Result.(type) {
			case *dynamodb.PutItemOutput:
				if r.ConsumedCapacity != nil {
					cc = append(cc, *r.ConsumedCapacity)
				}
			case *dynamodb.TransactWriteItemsOutput:
				cc = r.ConsumedCapacity
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			l.ops = append(l.ops, strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", in.Parameters), "*dynamodb."), "Input"))
			for _, c := range cc {
				l.units += aws.ToFloat64(c.CapacityUnits)
			}
			return out, md, err
		}), middleware.After)
	})
}

func (l *writeLog) take() ([]string, float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ops, units := l.ops, l.units
	l.ops, l.units = nil, 0
	return ops, units
}

func TestALoneWritesFeedEntryGoesAheadOfItsRecordAtHalfTheUnitsOfATransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := &writeLog{}
	db := testenv.Client(t, nil)
	st := testenv.StoreOn(t, dynamodb.New(db.Options(), log.option))
	c := fedThings(st, false)
	start := time.Now().Add(-store.FeedWindow)
	log.take() // the table's creation

	// 2 write units as a plain put, deflated or not: random text.
	a := thing{ID: ids.New("thg"), Name: incompressible(1500)}
	if err := c.Create(ctx, "org1", &a); err != nil {
		t.Fatal(err)
	}
	ops, units := log.take()
	// The entry (1 unit), then the record (2): a transaction of both
	// would cost 2 × 3.
	if strings.Join(ops, ",") != "PutItem,PutItem" || units != 3 {
		t.Errorf("a create sent %v for %v write units, want PutItem,PutItem for 3", ops, units)
	}
	if _, err := c.Update(ctx, "org1", a.ID, func(v *thing) error { v.Name += "b"; return nil }); err != nil {
		t.Fatal(err)
	}
	if ops, units := log.take(); strings.Join(ops, ",") != "GetItem,PutItem,PutItem" || units != 3 {
		t.Errorf("an update sent %v for %v write units, want GetItem,PutItem,PutItem for 3", ops, units)
	}
	// A delete's tombstone stays in the delete's transaction: a reader
	// removes a record on its tombstone without reading it.
	b := thing{ID: ids.New("thg"), Name: "b"}
	if err := c.Create(ctx, "org1", &b); err != nil {
		t.Fatal(err)
	}
	log.take()
	if err := c.Delete(ctx, "org1", b.ID); err != nil {
		t.Fatal(err)
	}
	if ops, _ := log.take(); !slices.Contains(ops, "TransactWriteItems") {
		t.Errorf("a delete sent %v, want its tombstone in a transaction", ops)
	}

	// A write whose condition fails after its entry went ahead: the
	// entry names a version that never comes, the record is as stored.
	stale, err := c.ReplaceOp("org1", &thing{ID: a.ID, Name: "lost"}, 1) // stored: version 2
	if err != nil {
		t.Fatal(err)
	}
	lost, err := st.ChangeOp("org1", "THING", a.ID, false, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transact(ctx, nil, stale, lost); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("the stale write: %v, want a conflict", err)
	}
	changes, err := st.Changes(ctx, "org1", "THING", start)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int64
	for _, ch := range changes {
		if ch.ID == a.ID {
			versions = append(versions, ch.Version)
		}
	}
	if !slices.Equal(versions, []int64{1, 2, 2}) {
		t.Errorf("a's entries name versions %v, want 1, 2 and the lost write's 2", versions)
	}
	got, err := c.Get(ctx, "org1", a.ID)
	if err != nil || got.Name != a.Name+"b" {
		t.Errorf("a after the lost write: %+v, %v", got, err)
	}
}

// heldThing is a record that knows the version it was read or written at.
type heldThing struct {
	store.Versioned
	ID   string `json:"id"`
	Name string `json:"name"`
}

func TestUpdateHeldWritesWithoutReadingUnlessTheRecordChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := &writeLog{}
	db := testenv.Client(t, nil)
	st := testenv.StoreOn(t, dynamodb.New(db.Options(), log.option))
	c := store.NewCollection(st, store.Spec[heldThing]{Type: "HELD", ID: func(t *heldThing) string { return t.ID }})
	v := &heldThing{ID: ids.New("thg"), Name: "a"}
	if err := c.Create(ctx, "org1", v); err != nil {
		t.Fatal(err)
	}
	log.take()
	// Held as written: one conditional put.
	v, err := c.UpdateHeld(ctx, "org1", v, func(v *heldThing) error { v.Name = "b"; return nil })
	if err != nil || v.Name != "b" || v.StoreVersion() != 2 {
		t.Fatalf("update of the held record: %+v %v", v, err)
	}
	if ops, _ := log.take(); strings.Join(ops, ",") != "PutItem" {
		t.Errorf("an update of a held record sent %v, want PutItem", ops)
	}
	// Another writer changed it: the held copy is stale, so the write fails
	// on its version and the update reads the record and applies fn again.
	if _, err := c.Update(ctx, "org1", v.ID, func(v *heldThing) error { v.Name += "c"; return nil }); err != nil {
		t.Fatal(err)
	}
	log.take()
	got, err := c.UpdateHeld(ctx, "org1", v, func(v *heldThing) error { v.Name += "d"; return nil })
	if err != nil || got.Name != "bcd" || got.StoreVersion() != 4 {
		t.Fatalf("update of a stale held record: %+v %v, want bcd at version 4", got, err)
	}
	if ops, _ := log.take(); strings.Join(ops, ",") != "PutItem,GetItem,PutItem" {
		t.Errorf("an update of a stale held record sent %v, want PutItem,GetItem,PutItem", ops)
	}
	// A record without a known version is read first.
	got, err = c.UpdateHeld(ctx, "org1", &heldThing{ID: v.ID}, func(v *heldThing) error { v.Name += "e"; return nil })
	if err != nil || got.Name != "bcde" {
		t.Fatalf("update of a record held without its version: %+v %v", got, err)
	}
	if ops, _ := log.take(); strings.Join(ops, ",") != "GetItem,PutItem" {
		t.Errorf("an update of a record held without its version sent %v, want GetItem,PutItem", ops)
	}
}

// itemSize is an item's size as DynamoDB bills it, near enough: the UTF-8
// lengths of its attribute names and string or number values.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value)
		default:
			n += 8
		}
	}
	return n
}
