package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestTheTableHasTimeToLiveOnTheExpiryAttribute(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	res, err := st.DB.DescribeTimeToLive(context.Background(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(st.Table)})
	if err != nil {
		t.Fatal(err)
	}
	d := res.TimeToLiveDescription
	if d == nil || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != store.AttrExpires {
		t.Errorf("time to live %+v, want enabled on %q", d, store.AttrExpires)
	}
}

func TestAnExpiredItemReadsAsAbsentAndMayBeCreatedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	create := func(note string, expires time.Time) error {
		op, err := st.CreateExpiringOp(store.Item{PK: "P", SK: "S", Type: "MARK", Doc: map[string]string{"note": note}}, expires)
		if err != nil {
			t.Fatal(err)
		}
		return st.Transact(ctx, nil, op)
	}
	if err := create("old", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if _, err := st.GetLive(ctx, "P", "S", &got); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("expired item read as %v (err %v), want not found", got, err)
	}
	if err := create("new", time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("could not create over an expired item: %v", err)
	}
	if _, err := st.GetLive(ctx, "P", "S", &got); err != nil || got["note"] != "new" {
		t.Fatalf("live item %v, err %v; want note new", got, err)
	}
	if err := create("again", time.Now().Add(time.Hour)); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("create over a live item: %v, want a conflict", err)
	}
}
