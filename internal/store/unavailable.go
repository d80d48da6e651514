package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
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

// unavailable reports whether err is a timeout or a failure the SDK's
// retryer counts as transient.
func unavailable(err error) bool {
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
