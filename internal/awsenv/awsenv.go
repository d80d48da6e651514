// Package awsenv is the AWS configuration of a Lambda function: the region
// and the role's credentials Lambda puts in the environment, and endpoint
// overrides (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>) for local
// emulators. It replaces the SDK's config package in the functions, which
// would link what a function never uses (shared config and credentials
// files, SSO, STS, the instance metadata service): about 1.6 MB of every
// bootstrap. Operators' commands (the dev server, the CLI) keep the SDK's
// full chain (config.LoadDefaultConfig): profiles and SSO live there.
package awsenv

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/middleware"

	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// Load is the configuration of the environment: AWS_REGION (or
// AWS_DEFAULT_REGION), the credentials AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, and the endpoint overrides.
// A missing region or credential is an error naming the variable.
func Load(context.Context) (aws.Config, error) {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	switch {
	case region == "":
		return aws.Config{}, errors.New("AWS configuration: AWS_REGION is not set (Lambda sets it)")
	case id == "" || secret == "":
		return aws.Config{}, errors.New("AWS configuration: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (Lambda sets them from the function's role)")
	}
	cfg := aws.Config{
		Region:        region,
		Credentials:   aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN"))),
		ConfigSources: []any{endpoints{}},
		// Every client's calls traced (X-Ray) and the table's metered.
		APIOptions: []func(*middleware.Stack) error{telemetry.Instrument},
	}
	if u := os.Getenv("AWS_ENDPOINT_URL"); u != "" {
		cfg.BaseEndpoint = aws.String(u)
	}
	return cfg, nil
}

// endpoints answers the SDK's clients' question for a service's endpoint
// override, as the config package's environment source does:
// AWS_ENDPOINT_URL_<SERVICE ID> with spaces as underscores, upper case
// (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SFN).
type endpoints struct{}

// GetServiceBaseEndpoint is the SDK's ServiceBaseEndpointProvider.
func (endpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := os.Getenv("AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(sdkID, " ", "_")))
	return v, v != "", nil
}
