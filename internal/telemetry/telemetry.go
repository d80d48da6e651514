// Package telemetry is what the service tells its operators about each
// request and each call it makes: the request's ids (its X-Request-Id and
// API Gateway's), the DynamoDB calls and capacity units it spent (Meter),
// its line of the request log with CloudWatch Embedded Metric Format
// metrics (RequestMetrics), and X-Ray subsegments of its work and its AWS
// calls, sent to the X-Ray daemon Lambda runs beside an actively traced
// function (xray.go).
//
// Everything here rides on the context: a process that never sets the ids,
// a meter or a trace pays one context lookup per AWS call.
package telemetry

import (
	"context"
	"os"
	"sync"
)

type requestIDKey struct{}

// WithRequestID returns ctx of the request whose id (its X-Request-Id) is
// id: the id the store writes on every item the request puts, so that the
// events, runs and deliveries it causes carry it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the id of ctx's request, or of the run that a request
// started; "" when none.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

type gatewayIDKey struct{}

// WithGatewayRequestID returns ctx of a request API Gateway (or a function
// URL) delivered with the request id id (its requestContext.requestId).
func WithGatewayRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, gatewayIDKey{}, id)
}

// GatewayRequestID is the API Gateway request id of ctx's request; ""
// outside Lambda.
func GatewayRequestID(ctx context.Context) string {
	id, _ := ctx.Value(gatewayIDKey{}).(string)
	return id
}

// Namespace is the CloudWatch namespace of the service's metrics.
const Namespace = "Sourcebase"

// LocalFunction is the Function dimension of metrics emitted outside
// Lambda (the dev server, tests).
const LocalFunction = "local"

// FunctionName is the Lambda function's name (AWS_LAMBDA_FUNCTION_NAME),
// the Function dimension of every metric; LocalFunction outside Lambda.
var FunctionName = sync.OnceValue(func() string {
	if n := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); n != "" {
		return n
	}
	return LocalFunction
})
