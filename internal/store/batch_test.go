package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestGetRecordsReturnsTheCurrentRecordsInTheOrderAskedAndLeavesDeletedOnesOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	c := things(st)
	made := seed(t, c, "org1", "a", "b", "c")
	other := seed(t, c, "org2", "x")
	if _, err := c.Update(ctx, "org1", made[1].ID, func(v *thing) error { v.Name = "b2"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "org1", made[0].ID); err != nil {
		t.Fatal(err)
	}
	ask := []string{made[2].ID, made[0].ID, made[1].ID, made[2].ID, other[0].ID, ids.New("thg"), ""}
	got, err := st.GetRecords(ctx, "org1", "THING", ask)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		var v thing
		if err := json.Unmarshal(r.Doc, &v); err != nil {
			t.Fatal(err)
		}
		if v.ID != r.ID || r.Version < 1 {
			t.Errorf("record %s: doc id %s, version %d", r.ID, v.ID, r.Version)
		}
		names = append(names, v.Name)
	}
	if strings.Join(names, ",") != "c,b2" {
		t.Errorf("records %v, want c,b2 (deleted, other org's and unknown ids left out; each once)", names)
	}
	if _, err := st.GetRecords(ctx, "org1", "THING", make([]string, store.MaxBatch+1)); err == nil {
		t.Error("GetRecords of more than MaxBatch ids was accepted")
	}
}
