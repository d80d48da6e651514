package awsenv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/sourcebase/sourcebase/internal/awsenv"
)

func TestTheConfigurationIsTheEnvironmentsRegionCredentialsAndEndpoints(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-3")
	t.Setenv("AWS_DEFAULT_REGION", "us-east-2")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8000")
	t.Setenv("AWS_ENDPOINT_URL_SFN", "http://127.0.0.1:8083")
	cfg, err := awsenv.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || cfg.Region != "eu-west-3" || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("region %q, credentials %+v (%v)", cfg.Region, creds, err)
	}
	// Each client finds its own endpoint override, as with the SDK's chain.
	if got := dynamodb.NewFromConfig(cfg).Options().BaseEndpoint; got == nil || *got != "http://127.0.0.1:8000" {
		t.Errorf("DynamoDB endpoint %v", got)
	}
	if got := sfn.NewFromConfig(cfg).Options().BaseEndpoint; got == nil || *got != "http://127.0.0.1:8083" {
		t.Errorf("Step Functions endpoint %v", got)
	}
	// A general override applies where no service names its own.
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	t.Setenv("AWS_ENDPOINT_URL_SFN", "")
	cfg, _ = awsenv.Load(context.Background())
	if got := sfn.NewFromConfig(cfg).Options().BaseEndpoint; got == nil || *got != "http://127.0.0.1:4566" {
		t.Errorf("Step Functions endpoint with AWS_ENDPOINT_URL %v", got)
	}
	t.Setenv("AWS_REGION", "")
	if cfg, _ := awsenv.Load(context.Background()); cfg.Region != "us-east-2" {
		t.Errorf("without AWS_REGION the region is %q, want AWS_DEFAULT_REGION's", cfg.Region)
	}
}

func TestAMissingRegionOrCredentialIsAnErrorNamingIt(t *testing.T) {
	for _, tc := range []struct{ unset, want string }{
		{"region", "AWS_REGION"}, {"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"}, {"AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"},
	} {
		t.Setenv("AWS_REGION", "eu-west-3")
		t.Setenv("AWS_DEFAULT_REGION", "")
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
		if tc.unset == "region" {
			t.Setenv("AWS_REGION", "")
		} else {
			t.Setenv(tc.unset, "")
		}
		if _, err := awsenv.Load(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("without %s: %v, want an error naming %s", tc.unset, err, tc.want)
		}
	}
}
