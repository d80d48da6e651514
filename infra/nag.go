package main

import (
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// suppressFindings records the cdk-nag AwsSolutions findings that are by
// design, each with its reason. Everything else cdk-nag checks is fixed in
// the stack (explicit roles instead of AWSLambdaBasicExecutionRole, table
// and index ARNs instead of wildcards, access logs, point in time
// recovery, state machine logging and tracing).
func suppressFindings(st *Stack) {
	cdknag.NagSuppressions_AddResourceSuppressions(st.Api, &[]*cdknag.NagPackSuppression{
		{
			Id: jsii.String("AwsSolutions-APIG4"),
			Reason: jsii.String("Callers authenticate with the service's own API keys (the x-service-client-id and x-service-api-key headers), " +
				"verified in code against the keys stored in the table for every /v1 route, the $default route included; the health check is public on purpose. " +
				"An API Gateway authorizer would duplicate that check and add a second source of truth for keys."),
		},
		{
			Id:     jsii.String("AwsSolutions-COG4"),
			Reason: jsii.String("No Cognito user pool: callers are services holding API keys, checked in code (see APIG4)."),
		},
	}, jsii.Bool(true))
	cdknag.NagSuppressions_AddResourceSuppressions(st.StateMachine.Role(), &[]*cdknag.NagPackSuppression{
		{
			Id: jsii.String("AwsSolutions-IAM5"),
			Reason: jsii.String("Added by CDK for the state machine's logging and X-Ray tracing: the CloudWatch Logs delivery actions " +
				"(logs:CreateLogDelivery and the like) and the X-Ray actions do not support resource-level permissions, so AWS " +
				"requires Resource \"*\" for them. The role's only other permission is invoking the runner function."),
			AppliesTo: &[]interface{}{jsii.String("Resource::*")},
		},
	}, jsii.Bool(true))
}
