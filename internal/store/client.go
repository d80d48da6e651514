package store

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// Timeouts bound every DynamoDB call, so a stalled table answers 503 in
// time instead of hanging a request.
type Timeouts struct {
	// Call bounds one store call as a whole: every attempt and the waits
	// between them.
	Call time.Duration
	// Attempt bounds one HTTP attempt, so a frozen connection leaves room
	// for a retry within Call.
	Attempt time.Duration
}

// DefaultCallTimeout is the default deadline of one store call
// (STORE_TIMEOUT): well under API Gateway's 29 s integration limit, and
// far above DynamoDB's single-digit-millisecond answers.
const DefaultCallTimeout = 10 * time.Second

// MaxCallTimeout is the longest deadline a store call may be given: it
// keeps a call under API Gateway's 29 s integration timeout, with room
// for the rest of the request.
const MaxCallTimeout = 25 * time.Second

// Retry policy of every store call, applied once, by the SDK's retryer:
// throttling, 5xx and connection errors are tried up to maxAttempts times
// in all, waiting a random time up to min(retryBase*2^n, retryMaxBackoff)
// between attempts (full jitter). Nothing above the client retries them.
const (
	maxAttempts     = 3
	retryBase       = 50 * time.Millisecond
	retryMaxBackoff = time.Second
)

// TimeoutsFor returns the timeouts for a call deadline: a third of it per
// attempt, so every attempt fits in the call.
func TimeoutsFor(call time.Duration) Timeouts {
	if call <= 0 {
		call = DefaultCallTimeout
	}
	return Timeouts{Call: call, Attempt: call / maxAttempts}
}

// NewClient builds a DynamoDB client from an AWS configuration (region,
// credentials, AWS_ENDPOINT_URL_DYNAMODB: the same binary talks to AWS,
// LocalStack or DynamoDB Local), with t's deadlines.
func NewClient(cfg aws.Config, t Timeouts, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){ClientOptions(t)}, optFns...)...)
}

// ClientOptions sets what every client of the table must have: the call
// deadline, the per-attempt HTTP timeout, the one retry policy and the
// classification of failures that mean "the table is unavailable"
// (apperr.ErrUnavailable). Tests build their clients with it too.
//
// DynamoDB Local answers 4xx without the CRC32 header the SDK checks,
// which would log a warning per reply, so that check is off.
func ClientOptions(t Timeouts) func(*dynamodb.Options) {
	if t.Call <= 0 || t.Attempt <= 0 {
		t = TimeoutsFor(t.Call)
	}
	return func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = true
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = maxAttempts
			so.Backoff = fullJitter{}
			// A transaction cancelled for throttling is retried as a
			// throttled call is (throttledCancellation).
			so.Retryables = append(slices.Clone(so.Retryables), throttledCancellations{})
			so.Throttles = append(slices.Clone(so.Throttles), throttledCancellations{})
		})
		o.RetryMaxAttempts = 0 // the retryer's attempts, not AWS_MAX_ATTEMPTS
		o.HTTPClient = AttemptTimeout(o.HTTPClient, t.Attempt)
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(CallDeadline(t.Call), middleware.Before)
		}, meter, telemetry.Instrument) // a request's calls and units; traced
	}
}

// adminTimeouts bound table administration (creating a table, waiting for
// it), which takes DynamoDB Local seconds, not milliseconds.
var adminTimeouts = Timeouts{Call: time.Minute, Attempt: 30 * time.Second}

// withTimeouts is a per-call option giving one call other timeouts than
// the client's.
func withTimeouts(t Timeouts) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.HTTPClient = AttemptTimeout(o.HTTPClient, t.Attempt)
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			if _, ok := s.Initialize.Get(deadlineID); !ok {
				return s.Initialize.Add(CallDeadline(t.Call), middleware.Before)
			}
			_, err := s.Initialize.Swap(deadlineID, CallDeadline(t.Call))
			return err
		})
	}
}

// HTTPClient is an SDK client's HTTP client (dynamodb.HTTPClient, and the
// same interface of the other services' packages).
type HTTPClient interface {
	Do(*http.Request) (*http.Response, error)
}

// AttemptTimeout returns c with a timeout on each HTTP request: the
// table's clients, and the other clients that reach it (the Streams API's).
func AttemptTimeout(c HTTPClient, d time.Duration) HTTPClient {
	switch c := c.(type) {
	case nil:
		return awshttp.NewBuildableClient().WithTimeout(d)
	case *awshttp.BuildableClient:
		return c.WithTimeout(d)
	case *http.Client:
		cp := *c
		cp.Timeout = d
		return &cp
	default:
		return c // unknown client: the call deadline still bounds it
	}
}

const deadlineID = "StoreCallDeadline"

// CallDeadline is the outermost step of every call of the table's
// clients (and the Streams API's): it bounds the call, retries included,
// and turns a failure that means the table is unavailable into
// apperr.ErrUnavailable.
func CallDeadline(d time.Duration) middleware.InitializeMiddleware {
	return middleware.InitializeMiddlewareFunc(deadlineID, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		callCtx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		out, md, err := next.HandleInitialize(callCtx, in)
		return out, md, classify(ctx, err)
	})
}

// fullJitter waits a random time up to min(retryBase*2^attempt, retryMaxBackoff).
type fullJitter struct{}

func (fullJitter) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	ceiling := retryMaxBackoff
	if attempt < 16 {
		ceiling = min(retryBase<<attempt, retryMaxBackoff)
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1)), nil
}
