package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// NewClient builds a DynamoDB client from the SDK's standard configuration
// (AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, credentials chain), so the same
// binary talks to AWS, LocalStack or DynamoDB Local.
func NewClient(ctx context.Context, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){clientDefaults}, optFns...)...), nil
}

// clientDefaults: DynamoDB Local answers 4xx without the CRC32 header the
// SDK checks, which would log a warning per reply.
func clientDefaults(o *dynamodb.Options) {
	o.DisableValidateResponseChecksum = true
}
