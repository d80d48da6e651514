package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsxray"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
)

// SamplingRuleName is the stack's X-Ray sampling rule's name (at most 32
// characters): the stack's.
func SamplingRuleName(stack string) string { return stack }

// traceFunction sets fn's tracing mode (Active, or PassThrough when
// Options.Tracing is off) on its CloudFormation resource, and lets its role
// send traces through doc, its inline policy (the L2 Tracing property would
// add a second, default policy to the role for the same statement).
func (st *Stack) traceFunction(fn awslambda.Function, doc awsiam.PolicyDocument) {
	mode := deploy.TracingActive
	if !st.Options.Tracing() {
		mode = deploy.TracingPassThrough
	}
	fn.Node().DefaultChild().(awslambda.CfnFunction).SetTracingConfig(&awslambda.CfnFunction_TracingConfigProperty{Mode: jsii.String(mode)})
	// PassThrough traces the requests a caller (a traced state machine)
	// already sampled, which needs the same actions.
	doc.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(deploy.XRayActions...),
		Resources: jsii.Strings("*"), // X-Ray supports no resource-level permissions
	}))
}

// addSamplingRule adds the X-Ray sampling rule of the stack's functions
// (their names start with the stack's): TraceReservoir requests a second,
// then TraceSampleRate of the rest. None when tracing is off.
func (st *Stack) addSamplingRule() {
	if !st.Options.Tracing() {
		return
	}
	name := StackName(st.Options.Stage)
	st.SamplingRule = awsxray.NewCfnSamplingRule(st.Stack, jsii.String("SamplingRule"), &awsxray.CfnSamplingRuleProps{
		SamplingRule: &awsxray.CfnSamplingRule_SamplingRuleProperty{
			RuleName:      jsii.String(SamplingRuleName(name)),
			Priority:      jsii.Number(deploy.SamplingRulePriority),
			FixedRate:     jsii.Number(st.Options.TraceSampleRate),
			ReservoirSize: jsii.Number(st.Options.TraceReservoir),
			ServiceName:   jsii.String(name + "-*"),
			ServiceType:   jsii.String(deploy.TracingServiceType),
			Host:          jsii.String("*"),
			HttpMethod:    jsii.String("*"),
			UrlPath:       jsii.String("*"),
			ResourceArn:   jsii.String("*"),
			Version:       jsii.Number(1),
		},
	})
}
