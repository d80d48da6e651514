package awsenv

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

var (
	throttles  = retry.IsErrorThrottles(retry.DefaultThrottles)
	retryables = retry.IsErrorRetryables(retry.DefaultRetryables)
)

// capacityCodes are error codes of AWS services that mean "not now"
// without being throttles in the SDK's list: Step Functions' limit of
// open executions.
var capacityCodes = map[string]bool{"ExecutionLimitExceeded": true}

// Unavailable reports whether err, from a call to an AWS service (Step
// Functions, SQS) after the SDK's retries, means the service could not
// take the call now: it throttled it, answered 5xx, or did not answer in
// time. Such a request is answered 503 with Retry-After.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var api smithy.APIError
	if errors.As(err, &api) && (capacityCodes[api.ErrorCode()] || api.ErrorFault() == smithy.FaultServer) {
		return true
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return throttles.IsErrorThrottle(err) == aws.TrueTernary || retryables.IsErrorRetryable(err) == aws.TrueTernary
}

// Refused reports whether err, after the SDK's retries, says the service
// refused the call for capacity: it throttled it or was at a limit, so
// nothing was done. Unlike a deadline or a 5xx, after which the call may
// have been carried out, a refused call can be taken back by its caller
// (a run whose execution was refused is deleted).
func Refused(err error) bool {
	if err == nil {
		return false
	}
	var api smithy.APIError
	if errors.As(err, &api) && capacityCodes[api.ErrorCode()] {
		return true
	}
	return throttles.IsErrorThrottle(err) == aws.TrueTernary
}

// Classify returns err as apperr.ErrUnavailable (503 with Retry-After)
// when Unavailable says so, saying what could not be done; other errors
// as they are.
func Classify(err error, what string) error {
	if !Unavailable(err) {
		return err
	}
	return apperr.Unavailable(err, "%s: the service is over its capacity now; try again shortly (%v)", what, err)
}
