package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// uniqueThings are things whose ext is unique per organization.
func uniqueThings(s *store.Store) *store.Collection[thing] {
	return store.NewCollection(s, store.Spec[thing]{
		Type:   "THING",
		ID:     func(t *thing) string { return t.ID },
		Unique: []store.Unique[thing]{{Field: "ext", Key: func(t *thing) string { return t.Ext }}},
	})
}

// wantTaken fails unless err is the uniqueness conflict of ext held by owner.
func wantTaken(t *testing.T, err error, ext, owner string) {
	t.Helper()
	var taken *store.UniqueError
	if !errors.As(err, &taken) || !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("err %v, want a uniqueness conflict", err)
	}
	if taken.Field != "ext" || taken.Value != ext || taken.OwnerID != owner || taken.Type != "thing" {
		t.Errorf("conflict %+v, want ext %q held by thing %s", taken, ext, owner)
	}
	if want := `ext "` + ext + `" is already used by thing ` + owner; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

func TestAUniqueValueIsHeldByOneRecordThroughCreateUpdateAndDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := uniqueThings(testenv.Store(t))
	a := thing{ID: ids.New("thg"), Ext: "x"}
	if err := c.Create(ctx, "org1", &a); err != nil {
		t.Fatal(err)
	}
	b := thing{ID: ids.New("thg"), Ext: "x"}
	wantTaken(t, c.Create(ctx, "org1", &b), "x", a.ID)
	if _, err := c.Get(ctx, "org1", b.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("a refused create stored the record: %v", err)
	}
	// Another organization has its own values.
	if err := c.Create(ctx, "org2", &b); err != nil {
		t.Fatalf("another organization could not use the value: %v", err)
	}
	b2 := thing{ID: ids.New("thg")}
	if err := c.Create(ctx, "org1", &b2); err != nil {
		t.Fatal(err)
	}
	_, err := c.Update(ctx, "org1", b2.ID, func(v *thing) error { v.Ext = "x"; return nil })
	wantTaken(t, err, "x", a.ID)

	// Moving a's value frees the old one and takes the new one.
	if _, err := c.Update(ctx, "org1", a.ID, func(v *thing) error { v.Ext = "y"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, "org1", b2.ID, func(v *thing) error { v.Ext = "x"; return nil }); err != nil {
		t.Fatalf("the freed value could not be taken: %v", err)
	}
	c3 := thing{ID: ids.New("thg"), Ext: "y"}
	wantTaken(t, c.Create(ctx, "org1", &c3), "y", a.ID)

	// Clearing and deleting free values too.
	if _, err := c.Update(ctx, "org1", b2.ID, func(v *thing) error { v.Ext = ""; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "org1", a.ID); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"x", "y"} {
		v := thing{ID: ids.New("thg"), Ext: ext}
		if err := c.Create(ctx, "org1", &v); err != nil {
			t.Errorf("value %q still taken after it was cleared or its record deleted: %v", ext, err)
		}
	}
	if err := c.Delete(ctx, "org1", a.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("second delete: %v, want not found", err)
	}
}

func TestParallelCreatesOfOneUniqueValueStoreExactlyOneRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := uniqueThings(testenv.Store(t))
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v := thing{ID: ids.New("thg"), Ext: "same"}
			errs[i] = c.Create(ctx, "org1", &v)
		})
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, apperr.ErrConflict):
			t.Errorf("create: %v, want success or a conflict", err)
		}
	}
	all, err := c.List(ctx, "org1", store.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || len(all.Items) != 1 {
		t.Errorf("%d creates succeeded and %d records exist, want 1 and 1", created, len(all.Items))
	}
}

func TestARecordStoredBeforeItsFieldWasUniqueCanStillBeChangedAndDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	before := store.NewCollection(st, store.Spec[thing]{Type: "THING", ID: func(t *thing) string { return t.ID }})
	c := uniqueThings(st)
	legacy := thing{ID: ids.New("thg"), Ext: "x"}
	if err := before.Create(ctx, "org1", &legacy); err != nil {
		t.Fatal(err)
	}
	holder := thing{ID: ids.New("thg"), Ext: "x"}
	if err := c.Create(ctx, "org1", &holder); err != nil {
		t.Fatal(err)
	}
	// The legacy record lets go of a value it never held an item for,
	// leaving the holder's item alone.
	if _, err := c.Update(ctx, "org1", legacy.ID, func(v *thing) error { v.Ext = "y"; return nil }); err != nil {
		t.Fatalf("update of the legacy record: %v", err)
	}
	if err := c.Delete(ctx, "org1", legacy.ID); err != nil {
		t.Fatalf("delete of the legacy record: %v", err)
	}
	other := thing{ID: ids.New("thg"), Ext: "x"}
	wantTaken(t, c.Create(ctx, "org1", &other), "x", holder.ID)
	if err := c.Create(ctx, "org1", &thing{ID: ids.New("thg"), Ext: "y"}); err != nil {
		t.Errorf("the deleted record's value is still taken: %v", err)
	}
}

func TestAValueLeftHeldByARecordThatNoLongerExistsIsFreedByTheNextClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	c := uniqueThings(st)
	gone := thing{ID: ids.New("thg"), Ext: "x"}
	if err := c.Create(ctx, "org1", &gone); err != nil {
		t.Fatal(err)
	}
	// Deleted behind the collection's back: its uniqueness item stays.
	if err := st.Delete(ctx, store.RecordKey("org1", "THING", gone.ID).PK, gone.ID); err != nil {
		t.Fatal(err)
	}
	next := thing{ID: ids.New("thg"), Ext: "x"}
	if err := c.Create(ctx, "org1", &next); err != nil {
		t.Fatalf("claim of a value whose holder is gone: %v", err)
	}
	wantTaken(t, c.Create(ctx, "org1", &thing{ID: ids.New("thg"), Ext: "x"}), "x", next.ID)
}
