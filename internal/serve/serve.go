// Package serve runs the registry's operations (package api) as Lambda
// functions: API Gateway HTTP API (payload v2) and function URL events
// through the proxy adapter into each function's net/http handlers.
package serve

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// Handler is the function a resource group's Lambda runs: API Gateway
// HTTP API (payload v2) or function URL events through the proxy adapter
// into the group's net/http handlers.
// The request log line names the event's request id (API Gateway's, or
// the function URL's).
func Handler(deps service.Deps, groups ...string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(api.Handler(deps, groups...)).ProxyWithContext
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return proxy(telemetry.WithGatewayRequestID(ctx, ev.RequestContext.RequestID), ev)
	}
}

// Lambda runs the handlers of a group as a Lambda function, with
// options applied to its services (the mcp function's MCP server). A group
// that starts runs needs STATE_MACHINE_ARN: a Lambda cannot run them in
// process.
func Lambda(group string, options ...func(*service.Deps)) {
	service.SizeToCPU()
	service.Logger(os.Stdout)
	deps, _, _, err := service.FromEnv(context.Background(), awsenv.Load)
	service.Must(err)
	for _, o := range options {
		o(&deps)
	}
	Deps(group, deps)
}

// Deps runs the handlers of a function over deps (built by FromEnv)
// as a Lambda function; a function that starts runs needs
// STATE_MACHINE_ARN.
func Deps(function string, deps service.Deps) {
	if f, _ := routes.FunctionNamed(function); f.StartsRuns && os.Getenv(service.EnvStateMachineARN) == "" {
		service.Must(fmt.Errorf("the %s function needs STATE_MACHINE_ARN", function))
	}
	lambda.Start(Handler(deps, function))
}

// Search runs the search function (the search routes) over the
// engine SEARCH_ENGINE names: embedded (package search/embedded) or
// openSearch (search/opensearch), whichever its build has; the other is
// nil (routes.Function.EngineBuilds).
func Search(embedded service.EmbeddedEngine, openSearch service.OpenSearchEngine, newBedrock service.NewBedrock) {
	service.SizeToCPU()
	service.Logger(os.Stdout)
	ctx := context.Background()
	deps, cfg, awsCfg, err := service.FromEnv(ctx, awsenv.Load)
	service.Must(err)
	deps.Search, err = service.SearchEngine(ctx, awsCfg, deps.Store, cfg, embedded, openSearch, newBedrock)
	service.Must(err)
	lambda.Start(Handler(deps, lambdas.Search))
}
