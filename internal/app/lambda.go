package app

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/sourcebase/sourcebase/internal/api"
)

// ServeLambda runs the handlers of the given groups as a Lambda function
// behind API Gateway HTTP API (payload v2) or a function URL.
func ServeLambda(groups ...string) {
	Logger(os.Stdout)
	deps, _, err := FromEnv(context.Background())
	Must(err)
	lambda.Start(httpadapter.NewV2(api.New(deps).Handler(groups...)).ProxyWithContext)
}
