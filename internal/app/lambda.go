package app

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/sourcebase/sourcebase/internal/api"
)

// LambdaHandler is the function a resource group's Lambda runs: API Gateway
// HTTP API (payload v2) or function URL events through the proxy adapter
// into the group's net/http handlers.
func LambdaHandler(deps api.Deps, groups ...string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(api.New(deps).Handler(groups...)).ProxyWithContext
}

// ServeLambda runs the handlers of the given groups as a Lambda function.
func ServeLambda(groups ...string) {
	Logger(os.Stdout)
	deps, _, err := FromEnv(context.Background())
	Must(err)
	lambda.Start(LambdaHandler(deps, groups...))
}
