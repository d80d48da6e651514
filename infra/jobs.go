package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
)

// addBulkBucket adds the bulk jobs' bucket: private (public access
// blocked, objects owned by the bucket), encrypted (SSE-S3), TLS only,
// objects expiring after deploy.BulkRetentionDays, unfinished multipart
// uploads removed after a day, its events sent to EventBridge (an upload
// starts its import), and CORS open to PUT and GET, so that a browser can
// upload to and download from the presigned URLs the API hands out.
func (st *Stack) addBulkBucket(settings stageSettings) {
	st.BulkBucket = awss3.NewBucket(st.Stack, jsii.String("BulkBucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Expiration:                          awscdk.Duration_Days(jsii.Number(deploy.BulkRetentionDays)),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(deploy.BulkAbortUploadDays)),
		}},
		Cors: &[]*awss3.CorsRule{{
			AllowedMethods: &[]awss3.HttpMethods{awss3.HttpMethods_PUT, awss3.HttpMethods_GET},
			AllowedOrigins: jsii.Strings("*"),
			AllowedHeaders: jsii.Strings("*"),
			ExposedHeaders: jsii.Strings("ETag"),
			MaxAge:         jsii.Number(3600),
		}},
		RemovalPolicy:     settings.removal(),
		AutoDeleteObjects: jsii.Bool(false),
	})
	// Events to EventBridge, set on the bucket itself: the construct's
	// EventBridgeEnabled would add a custom resource (a Lambda function
	// with a managed policy) to set it.
	cfn := st.BulkBucket.Node().DefaultChild().(awss3.CfnBucket)
	cfn.SetNotificationConfiguration(&awss3.CfnBucket_NotificationConfigurationProperty{
		EventBridgeConfiguration: &awss3.CfnBucket_EventBridgeConfigurationProperty{EventBridgeEnabled: jsii.Bool(true)},
	})
}

// addJobs adds the job state machine over the runner (the function the
// run state machine invokes), the EventBridge rule that starts it on an
// import's upload (S3's Object Created event for keys matching
// deploy.BulkUploadPattern), and the grants: the functions that create
// jobs presign uploads and downloads and start exports; the runner reads
// and writes the jobs' objects.
func (st *Stack) addJobs(settings stageSettings) {
	st.JobStateMachine, st.JobStateMachineLogs = st.runnerMachine(settings, "JobStateMachine", "the job state machine",
		st.Model.JobDefinition(*st.Functions[st.Runner].FunctionArn()))
	st.UploadRule = awsevents.NewRule(st.Stack, jsii.String("ImportUploadRule"), &awsevents.RuleProps{
		Description: jsii.String("starts the job state machine when an import's file is uploaded (" + deploy.BulkUploadPattern + ")"),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings("aws.s3"),
			DetailType: jsii.Strings("Object Created"),
			Detail: &map[string]interface{}{
				"bucket": map[string]interface{}{"name": []interface{}{*st.BulkBucket.BucketName()}},
				"object": map[string]interface{}{"key": []interface{}{map[string]interface{}{"wildcard": deploy.BulkUploadPattern}}},
			},
		},
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewSfnStateMachine(st.JobStateMachine, nil)},
	})

	bucket := *st.BulkBucket.BucketArn()
	objects := func(prefixes ...string) *[]*string {
		var out []*string
		for _, p := range prefixes {
			out = append(out, jsii.String(bucket+"/"+p+"*"))
		}
		return &out
	}
	for _, f := range st.deployed() {
		doc := st.Policies[f.Name]
		switch {
		case f.RunsJobs:
			doc.AddStatements(
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(deploy.BulkUploadActions...), Resources: objects(deploy.BulkImportsPrefix)}),
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(deploy.BulkDownloadActions...),
					Resources: objects(deploy.BulkImportsPrefix, deploy.BulkExportsPrefix)}),
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(deploy.StartJobActions...),
					Resources: jsii.Strings(*st.JobStateMachine.StateMachineArn())}),
			)
		case deploy.IsJobRunner(f):
			doc.AddStatements(
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(deploy.BulkRunActions...),
					Resources: objects(deploy.BulkImportsPrefix, deploy.BulkExportsPrefix)}),
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(deploy.BulkListActions...), Resources: jsii.Strings(bucket)}),
			)
		}
		if f.ManagesTenants {
			// The tenant lifecycle: an organization's export under orgs/,
			// and its deletion of its files under every prefix; listing
			// only those prefixes.
			doc.AddStatements(
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(deploy.BulkTenantActions...),
					Resources: objects(deploy.BulkTenantPrefixes...)}),
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(deploy.BulkListActions...),
					Resources: jsii.Strings(bucket), Conditions: &map[string]any{"StringLike": deploy.BulkTenantListCondition()["StringLike"]}}),
			)
		}
	}
}
