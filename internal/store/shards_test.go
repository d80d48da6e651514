package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// sortedFedThings is things with a change feed.
func sortedFedThings(s *store.Store) *store.Collection[thing] {
	return store.NewCollection(s, store.Spec[thing]{
		Type:    "THING",
		ID:      func(t *thing) string { return t.ID },
		IDOrder: []string{"createdAt"},
		Sorts:   []store.Sort[thing]{{Field: "name", Index: store.GSI1, Key: func(t *thing) string { return strings.ToLower(t.Name) }}},
		Lookups: []store.Lookup[thing]{{Name: "ext", Index: store.GSI2, Key: func(t *thing) string { return t.Ext }}},
		Feed:    true,
	})
}

// listAll pages through a list of org, limit records a page, and returns
// the names in the order read.
func listAll(t *testing.T, c *store.Collection[thing], org string, q store.Query) []string {
	t.Helper()
	var names []string
	for range 100 {
		p, err := c.List(context.Background(), org, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.Items {
			names = append(names, v.Name)
		}
		if p.Next == "" {
			return names
		}
		q.Cursor = p.Next
	}
	t.Fatal("the list did not end")
	return nil
}

func TestAShardedOrganizationsRecordsAreReadByIdAndListedAcrossItsShardsInOneOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	c := sortedFedThings(st)
	if n, err := st.SetShards(ctx, "big", 8); err != nil || n != 8 {
		t.Fatalf("SetShards: %d, %v", n, err)
	}
	start := time.Now()
	var made []thing
	for i := range 30 {
		v := thing{ID: ids.InShard(ids.New("thg"), i%8), Name: fmt.Sprintf("n%02d", (i*7)%30), Ext: []string{"a", "b"}[i%2]}
		if err := c.Create(ctx, "big", &v); err != nil {
			t.Fatal(err)
		}
		made = append(made, v)
	}
	seed(t, c, "small", "x", "y") // an organization of one shard beside it

	var byID, byName []string
	for _, v := range made {
		byID = append(byID, v.Name)
	}
	byName = slices.Sorted(slices.Values(byID))
	reversed := slices.Clone(byID)
	slices.Reverse(reversed)

	for name, tc := range map[string]struct {
		q    store.Query
		want []string
	}{
		"id order":             {store.Query{Limit: 7}, byID},
		"id order, descending": {store.Query{Limit: 4, Desc: true}, reversed},
		"by name":              {store.Query{Limit: 5, Sort: "name"}, byName},
		"offset":               {store.Query{Limit: 50, Offset: 25}, byID[25:]},
	} {
		if got := listAll(t, c, "big", tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v\nwant %v", name, got, tc.want)
		}
	}
	var lookedUp []string
	for i, v := range made {
		if i%2 == 0 {
			lookedUp = append(lookedUp, v.Name)
		}
	}
	if got := listAll(t, c, "big", store.Query{Limit: 3, Where: &store.Where{Lookup: "ext", Value: "a"}}); !slices.Equal(got, lookedUp) {
		t.Errorf("lookup ext=a: %v\nwant %v", got, lookedUp)
	}
	if got := listAll(t, c, "small", store.Query{Limit: 1}); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("the small organization's list: %v", got)
	}
	for _, v := range made[:9] {
		got, err := c.Get(ctx, "big", v.ID)
		if err != nil || got.Name != v.Name {
			t.Fatalf("Get %s: %+v, %v", v.ID, got, err)
		}
	}
	many, err := c.GetMany(ctx, "big", []string{made[3].ID, made[0].ID, made[5].ID})
	if err != nil || len(many) != 3 || many[0].ID != made[3].ID || many[2].ID != made[5].ID {
		t.Fatalf("GetMany: %+v, %v", many, err)
	}
	found, err := c.FindBySortKey(ctx, "big", "name", made[6].Name, 5)
	if err != nil || len(found) != 1 || found[0].ID != made[6].ID {
		t.Fatalf("FindBySortKey: %+v, %v", found, err)
	}

	// The feed and the records of every shard, in one order.
	changes, err := st.Changes(ctx, "big", "THING", start.Add(-time.Second))
	if err != nil || len(changes) != 30 {
		t.Fatalf("Changes: %d entries, %v; want 30", len(changes), err)
	}
	for i := 1; i < len(changes); i++ {
		if changes[i].At.Before(changes[i-1].At) {
			t.Fatalf("the feed's entries are out of time order at %d", i)
		}
	}
	records, err := st.Records(ctx, "big", "THING")
	if err != nil || len(records) != 30 || records[0].ID != made[0].ID || records[29].ID != made[29].ID {
		t.Fatalf("Records: %d, %v", len(records), err)
	}
	if err := c.Delete(ctx, "big", made[9].ID); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, c, "big", store.Query{Limit: 100}); len(got) != 29 || slices.Contains(got, made[9].Name) {
		t.Errorf("after a delete: %v", got)
	}
}

func TestShardsOnlyGrowAndNewIDsKeepToTheShardsWritersUseUntilTheRaiseSettles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	if _, err := st.SetShards(ctx, "o", 0); err == nil {
		t.Error("0 shards accepted")
	}
	if _, err := st.SetShards(ctx, "o", store.MaxShards+1); err == nil {
		t.Error("more than MaxShards accepted")
	}
	if n, err := st.SetShards(ctx, "o", 4); err != nil || n != 4 {
		t.Fatalf("raise to 4: %d, %v", n, err)
	}
	if n, err := st.SetShards(ctx, "o", 2); err != nil || n != 4 {
		t.Fatalf("lower to 2: %d, %v; want 4 kept", n, err)
	}
	if n, err := st.ReadShards(ctx, "o"); err != nil || n != 4 {
		t.Fatalf("ReadShards: %d, %v", n, err)
	}
	// Raised just now: writers keep to the one shard of before for
	// store.ShardSettle, so no process still reading one shard misses a record.
	for range 20 {
		id, err := st.NewID(ctx, "o", "thg")
		if err != nil || ids.Shard(id) != 0 || !ids.Valid("thg", id) {
			t.Fatalf("NewID right after the raise: %q, %v", id, err)
		}
	}
}

func TestIDsOfAShardNameItAndSortByTime(t *testing.T) {
	a := ids.New("thg")
	b := ids.New("thg")
	for n := range ids.MaxShards {
		x := ids.InShard(a, n)
		if ids.Shard(x) != n || !ids.Valid("thg", x) {
			t.Fatalf("shard %d: id %q names shard %d (valid %v)", n, x, ids.Shard(x), ids.Valid("thg", x))
		}
		if ids.InShard(b, 0) <= x {
			t.Fatalf("a later id of shard 0 sorts before %q", x)
		}
	}
	for _, id := range []string{"thg_1", "cmp_" + strings.Repeat("z", 28), "x", "_"} {
		if ids.Shard(id) >= ids.MaxShards {
			t.Errorf("%q names shard %d", id, ids.Shard(id))
		}
	}
}

func TestATableOfTheEarlierLayoutIsRefusedNamingTheMigrationWhichAddsItsIndexesOnline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Client(t, nil)
	name := "sourcebase-test-" + ids.Random(8)
	def := store.TableDefinition(name)
	def.GlobalSecondaryIndexes = def.GlobalSecondaryIndexes[:4] // layout 1: no gsi5
	def.AttributeDefinitions = def.AttributeDefinitions[:10]
	if _, err := db.CreateTable(ctx, def); err != nil {
		t.Fatal(err)
	}
	old := store.New(db, name)
	c := things(old)
	seed(t, c, "o", "kept")

	_, err := store.CreateTable(ctx, db, name)
	var le *store.LayoutError
	if !errors.As(err, &le) || !slices.Equal(le.Missing, []string{"gsi5"}) || !strings.Contains(err.Error(), "admin migrate-layout") {
		t.Fatalf("CreateTable of a layout 1 table: %v; want a LayoutError naming gsi5 and migrate-layout", err)
	}
	added, err := store.MigrateLayout(ctx, db, name)
	if err != nil || !slices.Equal(added, []string{"gsi5"}) {
		t.Fatalf("MigrateLayout: added %v, %v", added, err)
	}
	if err := store.CheckLayout(ctx, db, name); err != nil {
		t.Fatalf("after the migration: %v", err)
	}
	if added, err := store.MigrateLayout(ctx, db, name); err != nil || len(added) != 0 {
		t.Fatalf("MigrateLayout again: added %v, %v; want nothing", added, err)
	}
	if got := listAll(t, c, "o", store.Query{Limit: 10}); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("the records of before: %v", got)
	}
}
