package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/infra/deploy"
)

func TestTheBulkBucketIsPrivateEncryptedTLSOnlyExpiringAndSendsItsEventsToEventBridge(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		id := s.logicalID(s.stack.BulkBucket)
		p := s.t.Resources[id].Properties
		want := map[string]any{
			"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
				map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}}}},
			"PublicAccessBlockConfiguration": map[string]any{"BlockPublicAcls": true, "BlockPublicPolicy": true,
				"IgnorePublicAcls": true, "RestrictPublicBuckets": true},
			"OwnershipControls":         map[string]any{"Rules": []any{map[string]any{"ObjectOwnership": "BucketOwnerEnforced"}}},
			"NotificationConfiguration": map[string]any{"EventBridgeConfiguration": map[string]any{"EventBridgeEnabled": true}},
			"LifecycleConfiguration": map[string]any{"Rules": []any{map[string]any{"Status": "Enabled",
				"ExpirationInDays": deploy.BulkRetentionDays, "AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": deploy.BulkAbortUploadDays}}}},
		}
		for k, v := range want {
			if !jsonEqual(p[k], v) {
				t.Errorf("bucket %s = %s, want %s", k, js(p[k]), js(v))
			}
		}
		cors := js(p["CorsConfiguration"])
		for _, part := range []string{`"PUT"`, `"GET"`, `"AllowedOrigins":["*"]`, `"ExposedHeaders":["ETag"]`} {
			if !strings.Contains(cors, part) {
				t.Errorf("CORS %s lacks %s", cors, part)
			}
		}
		// TLS only: the bucket policy denies requests without it.
		found := false
		for _, pol := range s.t.ofType("AWS::S3::BucketPolicy") {
			if jsonEqual(pol.Properties["Bucket"], ref(id)) && strings.Contains(js(pol.Properties["PolicyDocument"]), `"aws:SecureTransport":"false"`) {
				found = true
			}
		}
		if !found {
			t.Error("no bucket policy denies requests without TLS")
		}
		// No custom resource sets the notifications (a Lambda function of CDK's own).
		if n := len(s.t.ofType("Custom::S3BucketNotifications")); n != 0 {
			t.Errorf("%d custom resources set the bucket's notifications", n)
		}
	})
}

func TestTheJobStateMachineIsTheJobsDefinitionAroundTheRunnerStartedByAnUploadOnly(t *testing.T) {
	const placeholder = "arn:aws:lambda:us-east-1:123456789012:function:runner-placeholder"
	stages(t, func(t *testing.T, s *synthesized) {
		runner := s.logicalID(s.stack.Functions[s.stack.Runner])
		machine := s.t.Resources[s.logicalID(s.stack.JobStateMachine)]
		def := fnJoin(t, machine.Properties["DefinitionString"], func(e any) (string, bool) {
			return placeholder, jsonEqual(e, getAtt(runner, "Arn"))
		})
		if got, want := normalized(t, def), normalized(t, s.stack.Model.JobDefinition(placeholder)); got != want {
			t.Errorf("definition\n%s\nwant\n%s", got, want)
		}
		out, err := exec.Command("node", "../node_modules/asl-validator/dist/bin/asl-validator.js", "--json-definition", def).CombinedOutput()
		if err != nil {
			t.Errorf("asl-validator: %v\n%s", err, out)
		}
		logging := js(machine.Properties["LoggingConfiguration"])
		if !strings.Contains(logging, `"Level":"ALL"`) || !jsonEqual(machine.Properties["TracingConfiguration"], map[string]any{"Enabled": true}) {
			t.Errorf("logging %s, tracing %s", logging, js(machine.Properties["TracingConfiguration"]))
		}
		roleID := s.logicalID(s.stack.JobStateMachine.Role())
		for g := range s.roleGrants(t, roleID) {
			switch {
			case strings.HasPrefix(g, "lambda:"):
				if g != "lambda:InvokeFunction on "+js(getAtt(runner, "Arn")) {
					t.Errorf("the job state machine's role allows %s", g)
				}
			case strings.HasPrefix(g, "logs:") || strings.HasPrefix(g, "xray:"):
			default:
				t.Errorf("the job state machine's role allows %s", g)
			}
		}

		rule := s.t.Resources[s.logicalID(s.stack.UploadRule)].Properties
		wantPattern := map[string]any{"source": []any{"aws.s3"}, "detail-type": []any{"Object Created"}, "detail": map[string]any{
			"bucket": map[string]any{"name": []any{ref(s.logicalID(s.stack.BulkBucket))}},
			"object": map[string]any{"key": []any{map[string]any{"wildcard": deploy.BulkUploadPattern}}}}}
		if !jsonEqual(rule["EventPattern"], wantPattern) {
			t.Errorf("upload rule pattern %s, want %s", js(rule["EventPattern"]), js(wantPattern))
		}
		target := rule["Targets"].([]any)[0].(map[string]any)
		if !jsonEqual(target["Arn"], ref(s.logicalID(s.stack.JobStateMachine))) {
			t.Errorf("upload rule target %s, want the job state machine", js(target["Arn"]))
		}
		for g := range s.roleGrants(t, uploadRuleRole(t, s)) {
			if g != "states:StartExecution on "+js(ref(s.logicalID(s.stack.JobStateMachine))) {
				t.Errorf("the upload rule's role allows %s", g)
			}
		}
	})
}

func TestOnlyTheDataFunctionTheRunnerAndTheOperatorTouchTheBulkObjectsEachWithItsActions(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		bucket := s.logicalID(s.stack.BulkBucket)
		object := func(prefix string) string {
			return js(map[string]any{"Fn::Join": []any{"", []any{getAtt(bucket, "Arn"), "/" + prefix + "*"}}})
		}
		want := map[string]map[string]bool{}
		for _, f := range s.deployed() {
			w := map[string]bool{}
			switch {
			case f.RunsJobs:
				w["s3:PutObject on "+object(deploy.BulkImportsPrefix)] = true
				w["s3:GetObject on "+object(deploy.BulkImportsPrefix)] = true
				w["s3:GetObject on "+object(deploy.BulkExportsPrefix)] = true
			case deploy.IsJobRunner(f):
				for _, a := range deploy.BulkRunActions {
					w[a+" on "+object(deploy.BulkImportsPrefix)] = true
					w[a+" on "+object(deploy.BulkExportsPrefix)] = true
				}
				w["s3:ListBucket on "+js(getAtt(bucket, "Arn"))] = true
			case f.ManagesTenants:
				// The operator function's tenant lifecycle: an
				// organization's files under the three prefixes, listing
				// only those.
				for _, a := range deploy.BulkTenantActions {
					for _, p := range []string{deploy.BulkImportsPrefix, deploy.BulkExportsPrefix, deploy.BulkOrgsPrefix} {
						w[a+" on "+object(p)] = true
					}
				}
				w["s3:ListBucket on "+js(getAtt(bucket, "Arn"))+` if {"StringLike":{"s3:prefix":["imports/*","exports/*","orgs/*"]}}`] = true
			}
			want[f.Name] = w
		}
		for name, role := range s.stack.Roles {
			got := map[string]bool{}
			for g := range s.roleGrants(t, s.logicalID(role)) {
				if strings.HasPrefix(g, "s3:") {
					got[g] = true
				}
			}
			if js(got) != js(want[name]) {
				t.Errorf("function %s's S3 grants:\n%s\nwant\n%s", name, js(got), js(want[name]))
			}
		}
	})
}
