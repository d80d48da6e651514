package streamsapi

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
		o.HTTPClient = store.AttemptTimeout(o.HTTPClient, t.Attempt)
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(store.CallDeadline(t.Call), middleware.Before)
		})
	}
	return dynamodbstreams.NewFromConfig(cfg, append([]func(*dynamodbstreams.Options){opts}, optFns...)...)
}

// ClientOf is a Streams client reaching where db reaches (DynamoDB Local
// serves both APIs on one endpoint), with its region and credentials.
func ClientOf(db *dynamodb.Client) *dynamodbstreams.Client {
	o := db.Options()
	return NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, aws.ToString(o.BaseEndpoint))
}
