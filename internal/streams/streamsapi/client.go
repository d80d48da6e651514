package streamsapi

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go/middleware"

	"github.com/sourcebase/sourcebase/internal/store"
)

// NewStreamsClient builds a DynamoDB Streams client from an AWS
// configuration (region, credentials), as store.NewClient builds the
// table's client. endpoint, when not empty, is where the Streams API is
// served: DynamoDB Local serves it on its DynamoDB endpoint, so the dev
// server passes AWS_ENDPOINT_URL_DYNAMODB. Empty, the configuration
// decides (AWS, or AWS_ENDPOINT_URL_DYNAMODB_STREAMS).
//
// Every call is bounded by store.DefaultCallTimeout and each HTTP attempt
// by a third of it, so a stalled server cannot hang a Poller; optFns apply
// last.
func NewStreamsClient(cfg aws.Config, endpoint string, optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	t := store.TimeoutsFor(store.DefaultCallTimeout)
	opts := func(o *dynamodbstreams.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.HTTPClient = withAttemptTimeout(o.HTTPClient, t.Attempt)
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(callDeadline(t.Call), middleware.Before)
		})
	}
	return dynamodbstreams.NewFromConfig(cfg, append([]func(*dynamodbstreams.Options){opts}, optFns...)...)
}

// withAttemptTimeout returns c with a timeout on each HTTP request.
func withAttemptTimeout(c dynamodbstreams.HTTPClient, d time.Duration) dynamodbstreams.HTTPClient {
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

// callDeadline is the outermost step of every call: it bounds the call,
// the SDK's retries included.
func callDeadline(d time.Duration) middleware.InitializeMiddleware {
	return middleware.InitializeMiddlewareFunc("StreamsCallDeadline", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return next.HandleInitialize(ctx, in)
	})
}
