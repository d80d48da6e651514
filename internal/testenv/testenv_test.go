package testenv

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sourcebase/sourcebase/internal/store"
)

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
