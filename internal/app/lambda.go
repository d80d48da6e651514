package app

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// LambdaHandler is the function a resource group's Lambda runs: API Gateway
// HTTP API (payload v2) or function URL events through the proxy adapter
// into the group's net/http handlers.
func LambdaHandler(deps api.Deps, groups ...string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(api.New(deps).Handler(groups...)).ProxyWithContext
}

// ServeLambda runs the handlers of the given groups as a Lambda function.
// Groups that start runs need STATE_MACHINE_ARN: a Lambda cannot run them
// in process.
func ServeLambda(groups ...string) {
	Logger(os.Stdout)
	deps, cfg, err := FromEnv(context.Background())
	Must(err)
	for _, g := range groups {
		if f, _ := routes.FunctionNamed(g); f.StartsRuns && cfg.StateMachineARN == "" {
			Must(fmt.Errorf("the %s function needs STATE_MACHINE_ARN", g))
		}
	}
	lambda.Start(LambdaHandler(deps, groups...))
}

// ServeSearch runs the search function: the search routes, over the
// engine that newEngine makes (package search/embedded, which only this
// function links).
func ServeSearch(newEngine func(*store.Store) search.Engine) {
	Logger(os.Stdout)
	deps, _, err := FromEnv(context.Background())
	Must(err)
	deps.Search = newEngine(deps.Store)
	lambda.Start(LambdaHandler(deps, routes.Search))
}

// ServeRunner runs the Lambda the state machine invokes to execute a run
// and, from its Catch path, to mark a run failed.
func ServeRunner() {
	Logger(os.Stdout)
	deps, _, err := FromEnv(context.Background())
	Must(err)
	lambda.Start(deps.Runs.HandleTask)
}
