package testenv

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { Main(m) }

func TestAutoScaleGrowsWithTheLoadPerCPUAndIsBounded(t *testing.T) {
	for _, c := range []struct {
		load float64
		cpus int
		want float64
	}{{0, 2, 1}, {0.5, 2, 1}, {2, 2, 2}, {5, 2, 3}, {20, 2, 10}, {400, 2, 10}, {3, 0, 1}} {
		if got := autoScale(c.load, c.cpus); got != c.want {
			t.Errorf("autoScale(%v, %d) = %v, want %v", c.load, c.cpus, got, c.want)
		}
	}
}

func TestCountingTransportCountsACallOnceHoweverOftenTheSDKRetriesIt(t *testing.T) {
	var attempts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"down"}`))
	}))
	defer srv.Close()
	var calls CountingTransport
	db := ClientAt(t, srv.URL, &calls, store.TimeoutsFor(10*time.Second))
	if _, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err == nil {
		t.Fatal("a table that answers 500 gave no error")
	}
	if attempts.Load() < 2 {
		t.Fatalf("the SDK made %d attempts; the test needs a retry", attempts.Load())
	}
	if n := calls.Count(); n != 1 {
		t.Errorf("%d calls counted for one call of %d attempts, want 1", n, attempts.Load())
	}
}

func TestAFinishedTestsAccessKeyComesBackWithNoTableUnderIt(t *testing.T) {
	ctx := context.Background()
	keyOf := func(t *testing.T, db *dynamodb.Client) string {
		creds, err := db.Options().Credentials.Retrieve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return creds.AccessKeyID
	}
	var first, firstTable string
	t.Run("first", func(t *testing.T) {
		st := Store(t)
		first, firstTable = keyOf(t, st.DB), st.Table
		// A table the test makes itself goes too.
		if _, err := store.CreateTable(ctx, st.DB, "made-by-the-test"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table), Item: map[string]types.AttributeValue{
			store.AttrPK: &types.AttributeValueMemberS{Value: "p"}, store.AttrSK: &types.AttributeValueMemberS{Value: "s"}}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("second", func(t *testing.T) {
		st := Store(t)
		if got := keyOf(t, st.DB); got != first {
			t.Fatalf("the second test got access key %s, want the first's %s back from the pool", got, first)
		}
		if st.Table == firstTable {
			t.Errorf("the second test's table has the first's name %s", st.Table)
		}
		out, err := st.DB.ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.TableNames) != 1 || out.TableNames[0] != st.Table {
			t.Errorf("tables under the reused key: %v, want only this test's %s", out.TableNames, st.Table)
		}
	})
	t.Run("another server's client", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		if got := keyOf(t, ClientAt(t, srv.URL, nil, store.TimeoutsFor(time.Second))); got == first {
			t.Errorf("a client of another server got the pooled key %s", got)
		}
	})
}

func TestAnUnansweringAddressGivesNoAnswerAndKeepsItsPort(t *testing.T) {
	u := Unanswering(t)
	if res, err := http.Get(u); err == nil {
		res.Body.Close()
		t.Fatalf("GET %s answered %s", u, res.Status)
	}
	// Its port stays held until the test ends: nothing else can listen there.
	if l, err := net.Listen("tcp", strings.TrimPrefix(u, "http://")); err == nil {
		l.Close()
		t.Errorf("another listener could take %s", u)
	}
}
