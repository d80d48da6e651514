package store

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// classify turns a failed call's error into apperr.ErrUnavailable when it
// means the table could not serve the call now (after the retries): the
// call's deadline passed, the connection failed or timed out, DynamoDB
// throttled it or answered 5xx. Other errors (conditions that failed,
// validation, a caller that went away) are returned as they are. ctx is
// the caller's context, before the call's own deadline.
func classify(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, apperr.ErrUnavailable) {
		return err
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return err // the caller gave up; nobody reads the answer
	}
	if !unavailable(err) {
		return err
	}
	return apperr.Unavailable(err, "storage unavailable: %v", err)
}

var (
	transient = retry.IsErrorRetryables(retry.DefaultRetryables)
	throttle  = retry.IsErrorThrottles(retry.DefaultThrottles)
)

// throttledReasons are the cancellation reasons of a transaction that
// DynamoDB could not serve now: a table or index over its throughput (or
// a partition over its own), or the account's request limit.
var throttledReasons = []string{"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}

// throttledCancellation reports whether err is a transaction cancelled
// because DynamoDB throttled one of its items (TransactionCanceledException
// with a throttling reason) and for nothing the caller did: no condition
// of it failed and no other transaction held an item. Such a transaction
// wrote nothing and may be sent again as it is; DynamoDB answers it with
// HTTP 400, so neither the SDK's retryer nor its throttle detection knows
// it (Retryables and Throttles in ClientOptions add it to both).
func throttledCancellation(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	throttled := false
	for _, r := range tce.CancellationReasons {
		switch code := aws.ToString(r.Code); {
		case slices.Contains(throttledReasons, code):
			throttled = true
		case code != "" && code != "None":
			return false // a failed condition or a conflict: the caller's to answer
		}
	}
	return throttled
}

// throttledCancellations is throttledCancellation as the SDK's retryer
// asks: such a transaction is retried, and counted as throttled.
type throttledCancellations struct{}

func (throttledCancellations) IsErrorRetryable(err error) aws.Ternary {
	return aws.BoolTernary(throttledCancellation(err))
}

func (throttledCancellations) IsErrorThrottle(err error) aws.Ternary {
	return aws.BoolTernary(throttledCancellation(err))
}

// unavailable reports whether err is a timeout or a failure the SDK's
// retryer counts as transient (a transaction cancelled for throttling
// among them).
func unavailable(err error) bool {
	if throttledCancellation(err) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return true
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorFault() == smithy.FaultServer {
		return true // InternalServerError and other server-side faults
	}
	return transient.IsErrorRetryable(err) == aws.TrueTernary || throttle.IsErrorThrottle(err) == aws.TrueTernary
}
