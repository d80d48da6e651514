package store_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

// injected returns a store over a fresh table whose every call, inside
// the retry loop, runs fault instead of reaching the table while armed.
func injected(t *testing.T, timeouts store.Timeouts, armed *atomic.Bool, attempts *atomic.Int32, fault func(ctx context.Context) error) *store.Store {
	t.Helper()
	base := testenv.StoreOn(t, testenv.Client(t, nil))
	mw := middleware.FinalizeMiddlewareFunc("InjectFault", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		if !armed.Load() {
			return next.HandleFinalize(ctx, in)
		}
		attempts.Add(1)
		return middleware.FinalizeOutput{}, middleware.Metadata{}, fault(ctx)
	})
	db := dynamodb.New(base.DB.Options(), store.ClientOptions(timeouts), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error { return s.Finalize.Add(mw, middleware.After) })
	})
	return store.New(db, base.Table)
}

func TestStoreCallsThatOutlastTheRetriesAreUnavailableAndOthersKeepTheirKind(t *testing.T) {
	t.Parallel()
	short := store.Timeouts{Call: 2 * time.Second, Attempt: 500 * time.Millisecond}
	for _, tc := range []struct {
		name        string
		fault       func(ctx context.Context) error
		unavailable bool
		attempts    int32
	}{
		{"throttled", func(context.Context) error {
			return &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"}
		}, true, 3},
		{"provisioned throughput exceeded", func(context.Context) error {
			return &types.ProvisionedThroughputExceededException{Message: new("over capacity")}
		}, true, 3},
		{"internal server error", func(context.Context) error {
			// As the SDK's deserializer returns it: the error with its HTTP response.
			return &awshttp.ResponseError{
				ResponseError: &smithyhttp.ResponseError{
					Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 500}},
					Err:      &types.InternalServerError{Message: new("boom")},
				},
			}
		}, true, 3},
		{"frozen until the deadline", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, true, 1},
		{"a transaction cancelled for throttling", func(context.Context) error {
			return cancelled("ThrottlingError", "None")
		}, true, 3},
		{"a transaction cancelled for an index's throughput", func(context.Context) error {
			return cancelled("None", "ProvisionedThroughputExceeded")
		}, true, 3},
		{"a transaction cancelled by a failed condition, another item throttled", func(context.Context) error {
			return cancelled("ThrottlingError", "ConditionalCheckFailed")
		}, false, 1},
		{"a transaction cancelled by another transaction", func(context.Context) error {
			return cancelled("TransactionConflict", "None")
		}, false, 1},
		{"validation error", func(context.Context) error {
			return &smithy.GenericAPIError{Code: "ValidationException", Message: "bad key"}
		}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var armed atomic.Bool
			var attempts atomic.Int32
			st := injected(t, short, &armed, &attempts, tc.fault)
			armed.Store(true)
			var out map[string]any
			_, err := st.Get(context.Background(), "pk", "sk", &out)
			if got := errors.Is(err, apperr.ErrUnavailable); got != tc.unavailable {
				t.Fatalf("Get error %v: unavailable %v, want %v", err, got, tc.unavailable)
			}
			if n := attempts.Load(); n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
		})
	}
}

func TestAFailedConditionIsAConflictNotUnavailable(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	it := store.Item{PK: "p", SK: "s", Type: "T", Doc: map[string]any{"a": 1}}
	if err := st.Create(context.Background(), it); err != nil {
		t.Fatal(err)
	}
	err := st.Create(context.Background(), it)
	if !errors.Is(err, apperr.ErrConflict) || errors.Is(err, apperr.ErrUnavailable) {
		t.Fatalf("second create: %v, want a conflict", err)
	}
}

func TestACallerThatGoesAwayIsNotReportedAsAnUnavailableTable(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	var attempts atomic.Int32
	st := injected(t, store.TimeoutsFor(0), &armed, &attempts, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	armed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var out map[string]any
	_, err := st.Get(ctx, "pk", "sk", &out)
	if err == nil || errors.Is(err, apperr.ErrUnavailable) {
		t.Fatalf("Get with a cancelled context: %v, want a plain cancellation", err)
	}
}

// cancelled is a TransactionCanceledException with one reason an item, as
// DynamoDB answers a TransactWriteItems it cancelled.
func cancelled(codes ...string) error {
	var reasons []types.CancellationReason
	for _, c := range codes {
		reasons = append(reasons, types.CancellationReason{Code: aws.String(c)})
	}
	return &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
}

// TestABatchReadDynamoDBKeepsLeavingUnprocessedIsUnavailable holds a
// batch read whose keys DynamoDB leaves unprocessed round after round (a
// table or partition over its throughput) to what a throttle answers:
// unavailable (503 with Retry-After), after a bounded number of rounds,
// never a plain error (500).
func TestABatchReadDynamoDBKeepsLeavingUnprocessedIsUnavailable(t *testing.T) {
	t.Parallel()
	base := testenv.StoreOn(t, testenv.Client(t, nil))
	var rounds atomic.Int32
	leave := middleware.InitializeMiddlewareFunc("LeaveUnprocessed", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		if get, ok := in.Parameters.(*dynamodb.BatchGetItemInput); ok && err == nil {
			rounds.Add(1)
			out.Result = &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}, UnprocessedKeys: get.RequestItems}
		}
		return out, md, err
	})
	db := dynamodb.New(base.DB.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error { return s.Initialize.Add(leave, middleware.After) })
	})
	st := store.New(db, base.Table)
	_, err := st.GetRecords(context.Background(), "org1", "THING", []string{"thg_1", "thg_2"})
	if !errors.Is(err, apperr.ErrUnavailable) {
		t.Fatalf("a batch read left unprocessed: %v, want unavailable", err)
	}
	if n := rounds.Load(); n != 10 {
		t.Errorf("%d rounds of BatchGetItem, want 10", n)
	}
}
