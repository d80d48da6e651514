package localsfn

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
)

// Invoker is a Lambda function run locally: *lambdaenv.Function.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) (lambdaenv.Result, error)
}

// Lambda is a task that invokes fn, with Step Functions' Lambda semantics:
// the function's result is the task's result; a function error fails the
// task with the function's errorType as the error name and Lambda's error
// payload ({"errorMessage","errorType"}) as the cause; a runtime that
// crashed or timed out (Lambda's Runtime.* and Sandbox.* errors) is
// Lambda.Unknown, as Step Functions reports it; an invocation that could
// not be made at all is Lambda.ServiceException (which the run state
// machine retries).
func Lambda(fn Invoker) TaskFunc {
	return func(ctx context.Context, _ string, input []byte) ([]byte, error) {
		res, err := fn.Invoke(ctx, input)
		if err != nil {
			return nil, &TaskError{Name: "Lambda.ServiceException", Cause: err.Error()}
		}
		if res.Error == nil {
			return res.Payload, nil
		}
		cause, _ := json.Marshal(res.Error)
		name := res.Error.Type
		if name == "" || strings.HasPrefix(name, "Runtime.") || strings.HasPrefix(name, "Sandbox.") {
			name = "Lambda.Unknown"
		}
		return nil, &TaskError{Name: name, Cause: string(cause)}
	}
}

// Lambdas routes each task to the function of its Resource (a function
// ARN); a Resource with no function fails as Lambda.ResourceNotFoundException.
func Lambdas(fns map[string]Invoker) TaskFunc {
	return func(ctx context.Context, resource string, input []byte) ([]byte, error) {
		fn, ok := fns[resource]
		if !ok {
			return nil, &TaskError{Name: "Lambda.ResourceNotFoundException", Cause: "Function not found: " + resource}
		}
		return Lambda(fn)(ctx, resource, input)
	}
}
