package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestFetchAllReadsRecordsOfSeveralCollectionsInOneCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	calls := &testenv.CountingTransport{}
	st := testenv.StoreWith(t, calls)
	things, others := things(st), store.NewCollection(st, store.Spec[thing]{Type: "OTHER", ID: func(t *thing) string { return t.ID }})
	a := thing{ID: ids.New("thg"), Name: "a", Count: 1}
	b := thing{ID: ids.New("oth"), Name: "b", Count: 2}
	if err := things.Create(ctx, "org1", &a); err != nil {
		t.Fatal(err)
	}
	if err := others.Create(ctx, "org1", &b); err != nil {
		t.Fatal(err)
	}

	calls.Reset()
	fa, fb := things.Fetch("org1", a.ID), others.Fetch("org1", b.ID)
	missing, elsewhere := things.Fetch("org1", ids.New("thg")), others.Fetch("org2", b.ID)
	again, empty := things.Fetch("org1", a.ID), things.Fetch("org1", "")
	if _, err := fa.Result(); err == nil {
		t.Error("a result before FetchAll is no error")
	}
	if err := store.FetchAll(ctx, fa, fb, missing, elsewhere, again, empty); err != nil {
		t.Fatal(err)
	}
	if n := calls.Count(); n != 1 {
		t.Errorf("FetchAll made %d calls, want 1", n)
	}
	if got, err := fa.Result(); err != nil || got.Name != "a" || got.Count != 1 {
		t.Errorf("a: %+v, %v", got, err)
	}
	if got, err := again.Result(); err != nil || got.Name != "a" {
		t.Errorf("a read twice: %+v, %v", got, err)
	}
	if got, err := fb.Result(); err != nil || got.Name != "b" || got.Count != 2 {
		t.Errorf("b: %+v, %v", got, err)
	}
	for name, p := range map[string]*store.Pending[thing]{"a missing id": missing, "another organization's record": elsewhere, "an empty id": empty} {
		if got, err := p.Result(); !errors.Is(err, apperr.ErrNotFound) || got != nil {
			t.Errorf("%s: %+v, %v; want not found", name, got, err)
		}
	}

	// A call that fails is every read's error.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	fa = things.Fetch("org1", a.ID)
	if err := store.FetchAll(canceled, fa); err == nil {
		t.Error("FetchAll with a canceled context succeeded")
	}
	if _, err := fa.Result(); err == nil || errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("the read of a failed call: %v, want the call's error", err)
	}
}
