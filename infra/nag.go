package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/sourcebase/sourcebase/infra/deploy"
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
	cdknag.NagSuppressions_AddResourceSuppressions(st.JobStateMachine.Role(), &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("Added by CDK for the state machine's logging and X-Ray tracing, which support no resource-level permissions " +
			"(as for the run state machine); the role's only other permission is invoking the runner function."),
		AppliesTo: &[]interface{}{jsii.String("Resource::*")},
	}}, jsii.Bool(true))
	cdknag.NagSuppressions_AddResourceSuppressions(st.BulkBucket, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-S1"),
		Reason: jsii.String("The bucket holds the bulk jobs' files for 7 days and is reached only through presigned URLs the API hands to " +
			"authenticated callers; each job records who created it, and CloudTrail data events can log object access where an account wants it."),
	}}, jsii.Bool(true))
	// The functions that create jobs (the data function) and run them
	// (the runner).
	var jobFunctions []string
	for _, f := range st.deployed() {
		if f.RunsJobs || deploy.IsJobRunner(f) {
			jobFunctions = append(jobFunctions, f.Name)
		}
	}
	for _, name := range jobFunctions {
		cdknag.NagSuppressions_AddResourceSuppressions(st.Roles[name], &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-IAM5"),
			Reason: jsii.String("The jobs' objects are named by organization and job at run time (imports/<org>/<job>/..., exports/<org>/<job>/...): " +
				"the grant is to those two prefixes of the jobs' own bucket, with the actions each function needs (deploy.Bulk*Actions)."),
			AppliesTo: &[]interface{}{
				cdknag.RegexAppliesTo{Regex: jsii.String(`/^Resource::<BulkBucket[0-9A-F]*\.Arn>\/(imports|exports)\/\*$/`)},
			},
		}}, jsii.Bool(true))
	}
	// The operator function's tenant lifecycle: an organization's files
	// under the bucket's three prefixes.
	for _, f := range st.deployed() {
		if !f.ManagesTenants {
			continue
		}
		cdknag.NagSuppressions_AddResourceSuppressions(st.Roles[f.Name], &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-IAM5"),
			Reason: jsii.String("An organization's files are named by organization at run time (imports/<org>/..., exports/<org>/..., orgs/<org>/...): " +
				"the operator function's tenant lifecycle (export-org, delete-org) may read, write and delete objects under those three prefixes of the bulk bucket only (deploy.BulkTenantActions)."),
			AppliesTo: &[]interface{}{
				cdknag.RegexAppliesTo{Regex: jsii.String(`/^Resource::<BulkBucket[0-9A-F]*\.Arn>\/(imports|exports|orgs)\/\*$/`)},
			},
		}}, jsii.Bool(true))
	}
	// Every function sends its traces to X-Ray (tracing.go).
	for _, f := range st.deployed() {
		cdknag.NagSuppressions_AddResourceSuppressions(st.Roles[f.Name], &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-IAM5"),
			Reason: jsii.String("xray:PutTraceSegments and xray:PutTelemetryRecords (the function's traces, Lambda's active tracing) support no " +
				"resource-level permissions, so AWS requires Resource \"*\" for them; every other action of the role names its resource."),
			AppliesTo: &[]interface{}{jsii.String("Resource::*")},
		}}, jsii.Bool(true))
	}
	// The stream consumers: the indexer (OpenSearch deployments) and the
	// events function (every deployment).
	failureQueues := map[string]awssqs.Queue{}
	for _, f := range st.deployed() {
		switch {
		case deploy.IsIndexer(f):
			failureQueues[f.Name] = st.IndexerFailures
		case deploy.IsEventsConsumer(f):
			failureQueues[f.Name] = st.EventsFailures
		}
	}
	for name, failures := range failureQueues {
		if failures == nil {
			continue
		}
		cdknag.NagSuppressions_AddResourceSuppressions(failures, &[]*cdknag.NagPackSuppression{{
			Id:     jsii.String("AwsSolutions-SQS3"),
			Reason: jsii.String("This queue is itself the dead-letter destination of the " + name + " function's stream source: the batches it gave up on, kept 14 days to replay."),
		}}, jsii.Bool(true))
		cdknag.NagSuppressions_AddResourceSuppressions(st.Roles[name], &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-IAM5"),
			Reason: jsii.String("dynamodb:ListStreams, added by CDK for the stream source, supports no resource-level permissions, so AWS " +
				"requires Resource \"*\" for it; the stream's own actions name the stream's ARN."),
			AppliesTo: &[]interface{}{jsii.String("Resource::*")},
		}}, jsii.Bool(true))
	}
	if st.Domain != nil {
		suppressDomainFindings(st)
	}
}

// suppressDomainFindings records the findings of the OpenSearch Service
// domain (-c openSearchKind=domain) that are by design.
func suppressDomainFindings(st *Stack) {
	public := "The functions reaching the domain run outside any VPC (as every function of the stack), so the domain has a public endpoint; " +
		"it is reached only by requests signed with the search, indexer or operator function's role: its access policy allows those roles and no one else " +
		"(no anonymous access, no IP-based rule), with HTTPS enforced (TLS 1.2), encryption at rest and between nodes."
	domain := []*cdknag.NagPackSuppression{
		{Id: jsii.String("AwsSolutions-OS1"), Reason: jsii.String(public)},
		{Id: jsii.String("AwsSolutions-OS3"), Reason: jsii.String(public + " An IP allowlist would not fit Lambda's changing addresses; IAM signing restricts access instead.")},
	}
	if st.Options.Stage != Prod {
		dev := "The dev stage's domain is one small data node (DomainSizes): its indexes are rebuilt from the table by the indexer, so it trades " +
			"availability for cost; prod has three dedicated master nodes and zone awareness over two availability zones."
		domain = append(domain,
			&cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-OS4"), Reason: jsii.String(dev)},
			&cdknag.NagPackSuppression{Id: jsii.String("AwsSolutions-OS7"), Reason: jsii.String(dev)})
	}
	cdknag.NagSuppressions_AddResourceSuppressions(st.Domain, &domain, jsii.Bool(true))
	for _, f := range st.deployed() {
		if DomainActions(f) == nil {
			continue
		}
		cdknag.NagSuppressions_AddResourceSuppressions(st.Roles[f.Name], &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-IAM5"),
			Reason: jsii.String("The OpenSearch Service domain's indexes (and their documents) are named at run time (<prefix>-<resource>): the grant is to " +
				"the paths of the stage's own domain only (<domain ARN>/*), with the HTTP methods the function calls (DomainSearchActions, DomainIndexerActions)."),
			AppliesTo: &[]interface{}{jsii.String("Resource::arn:<AWS::Partition>:es:<AWS::Region>:<AWS::AccountId>:domain/" + DomainName(st.Options.Stage) + "/*")},
		}}, jsii.Bool(true))
	}
}
