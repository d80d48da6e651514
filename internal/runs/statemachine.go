package runs

import "encoding/json"

// StateMachineDefinition is the Amazon States Language definition of a
// run's execution, given the runner function's ARN. The execution input is
// ExecutionInput. "Execute" invokes the runner with action "execute",
// retrying only Lambda's own transient failures (a run's steps are not
// re-run after they failed); any error it ends with (timeout, crash, the
// runner's error) is caught and "MarkFailed" records it on the run, so a
// run is never left running. The CDK stack builds the state machine from
// this definition.
func StateMachineDefinition(runnerARN string) string {
	lambdaRetry := []any{map[string]any{
		"ErrorEquals":     []string{"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException", "Lambda.TooManyRequestsException"},
		"IntervalSeconds": 1,
		"MaxAttempts":     3,
		"BackoffRate":     2,
	}}
	def := map[string]any{
		"Comment": "Executes one workflow run; its name is the run id.",
		"StartAt": "Execute",
		"States": map[string]any{
			"Execute": map[string]any{
				"Type":     "Task",
				"Resource": runnerARN,
				"Parameters": map[string]any{
					"action":           "execute",
					"organizationId.$": "$.organizationId",
					"runId.$":          "$.runId",
				},
				"TimeoutSeconds": 900,
				"Retry":          lambdaRetry,
				"Catch": []any{map[string]any{
					"ErrorEquals": []string{"States.ALL"},
					"ResultPath":  "$.error",
					"Next":        "MarkFailed",
				}},
				"End": true,
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
				"TimeoutSeconds": 60,
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
