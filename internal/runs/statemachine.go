package runs

import (
	"encoding/json"
	"maps"
	"slices"
)

// StateMachineDefinition is the Amazon States Language definition of a
// run's execution, given the runner function's ARN. The execution input is
// ExecutionInput. "Execute" invokes the runner with action "execute" and
// the run and steps the input carries. Lambda's own transient failures
// are taken again by "ExecuteAgain", which sends ids only, so that the
// runner reads the run and finds it finished if the first invocation did
// run to the end; it retries them (a run's steps are not re-run after
// they failed). A throttled invocation (one Lambda did not run) is retried
// as it was. Any error either ends with (timeout, crash, the runner's
// error) is caught and "MarkFailed" records it on the run, so a run is
// never left running. The CDK stack builds the state machine from this
// definition.
func StateMachineDefinition(runnerARN string) string {
	lambdaRetry := []any{map[string]any{
		"ErrorEquals":     append(slices.Clone(lambdaTransient), lambdaThrottled),
		"IntervalSeconds": retryInterval,
		"MaxAttempts":     retryAttempts,
		"BackoffRate":     retryBackoff,
	}}
	throttledRetry := []any{map[string]any{
		"ErrorEquals":     []string{lambdaThrottled},
		"IntervalSeconds": retryInterval,
		"MaxAttempts":     retryAttempts,
		"BackoffRate":     retryBackoff,
	}}
	markFailed := map[string]any{
		"ErrorEquals": []string{"States.ALL"},
		"ResultPath":  "$.error",
		"Next":        "MarkFailed",
	}
	ids := map[string]any{
		"action":           "execute",
		"organizationId.$": "$.organizationId",
		"runId.$":          "$.runId",
		"workflowId.$":     "$.workflowId",
	}
	carried := maps.Clone(ids)
	carried["run.$"], carried["steps.$"] = "$.run", "$.steps"
	def := map[string]any{
		"Comment":        "Executes one workflow run; its name is the run id.",
		"StartAt":        "Execute",
		"TimeoutSeconds": ExecutionTimeoutSeconds,
		"States": map[string]any{
			"Execute": map[string]any{
				"Type":           "Task",
				"Resource":       runnerARN,
				"Parameters":     carried,
				"TimeoutSeconds": executeTimeout,
				"Retry":          throttledRetry,
				"Catch": []any{map[string]any{
					"ErrorEquals": lambdaTransient,
					"ResultPath":  "$.transient",
					"Next":        "ExecuteAgain",
				}, markFailed},
				"End": true,
			},
			"ExecuteAgain": map[string]any{
				"Type":           "Task",
				"Resource":       runnerARN,
				"Parameters":     ids,
				"TimeoutSeconds": executeTimeout,
				"Retry":          lambdaRetry,
				"Catch":          []any{markFailed},
				"End":            true,
			},
			"MarkFailed": map[string]any{
				"Type":     "Task",
				"Resource": runnerARN,
				"Parameters": map[string]any{
					"action":           "fail",
					"organizationId.$": "$.organizationId",
					"runId.$":          "$.runId",
					"error.$":          "$.error",
				},
				"TimeoutSeconds": markFailedTimeout,
				"Retry":          lambdaRetry,
				"ResultPath":     "$.marked",
				"Next":           "RunFailed",
			},
			"RunFailed": map[string]any{
				"Type":      "Fail",
				"ErrorPath": "$.error.Error",
				"CausePath": "$.error.Cause",
			},
		},
	}
	b, _ := json.MarshalIndent(def, "", "  ")
	return string(b)
}

// Lambda's errors that Step Functions retries: transient failures of an
// invocation (which may or may not have run the function), and throttling
// (which did not run it).
var lambdaTransient = []string{"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException"}

const lambdaThrottled = "Lambda.TooManyRequestsException"

// Timeouts (seconds) and retries of the tasks.
const (
	executeTimeout    = 900 // a run's steps; also Lambda's longest timeout
	markFailedTimeout = 60
	retryAttempts     = 3
	retryInterval     = 1
	retryBackoff      = 2
)

// ExecutionTimeoutSeconds bounds a whole execution: a backstop above the
// longest path through the tasks' own timeouts with every retry (Execute,
// ExecuteAgain, then MarkFailed) and a minute for the transitions, so that
// a run always ends through its states (Catch, MarkFailed) before the
// execution times out.
var ExecutionTimeoutSeconds = 2*worstCase(executeTimeout) + worstCase(markFailedTimeout) + 60

// worstCase is the longest a task with this timeout can take, retries and
// their backoff included.
func worstCase(timeout int) int {
	total, wait := timeout*(retryAttempts+1), retryInterval
	for range retryAttempts {
		total += wait
		wait *= retryBackoff
	}
	return total
}
