package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/service"
)

// functionIDs maps each function's logical id to its name.
func (s *synthesized) functionIDs() map[string]string {
	out := map[string]string{}
	for name, fn := range s.stack.Functions {
		out[s.logicalID(fn)] = name
	}
	return out
}

func (s *synthesized) fn(t *testing.T, name string) resource {
	t.Helper()
	r, ok := s.t.Resources[s.logicalID(s.stack.Functions[name])]
	if !ok || r.Type != "AWS::Lambda::Function" {
		t.Fatalf("no function %s in the template", name)
	}
	return r
}

func TestTheHTTPAPIHasExactlyTheRoutesOfTheRouteTableEachToItsGroupsFunction(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		want := map[string]string{}
		for _, r := range s.stack.Model.Routes {
			if f, _ := s.stack.Model.Function(r.Function); f.Reach == deploymodel.ByAPI {
				want[r.Method+" "+r.Path] = r.Function
			}
		}
		// Requests no route matches reach the fallback function.
		for _, f := range s.deployed() {
			if f.Fallback {
				want["$default"] = f.Name
			}
		}
		if len(want) == 0 {
			t.Fatal("the route table has no API routes")
		}
		fns := s.functionIDs()
		integrations := map[string]string{} // integration id -> function name
		for id, r := range s.t.ofType("AWS::ApiGatewayV2::Integration") {
			p := r.Properties
			if p["IntegrationType"] != "AWS_PROXY" || p["PayloadFormatVersion"] != "2.0" {
				t.Errorf("integration %s: type %v, payload %v; want AWS_PROXY, 2.0", id, p["IntegrationType"], p["PayloadFormatVersion"])
			}
			uri, _ := p["IntegrationUri"].(map[string]any)["Fn::GetAtt"].([]any)
			if len(uri) != 2 || fns[fmt.Sprint(uri[0])] == "" {
				t.Fatalf("integration %s: uri %s is not a function's ARN", id, js(p["IntegrationUri"]))
			}
			integrations[id] = fns[fmt.Sprint(uri[0])]
		}
		got := map[string]string{}
		for id, r := range s.t.ofType("AWS::ApiGatewayV2::Route") {
			key := fmt.Sprint(r.Properties["RouteKey"])
			if _, dup := got[key]; dup {
				t.Errorf("route %s twice", key)
			}
			target := fnJoin(t, r.Properties["Target"], func(e any) (string, bool) {
				m, _ := e.(map[string]any)
				id, ok := m["Ref"].(string)
				return integrations[id], ok && integrations[id] != ""
			})
			fn, ok := strings.CutPrefix(target, "integrations/")
			if !ok {
				t.Errorf("route %s (%s): target %q is not an integration", key, id, target)
			}
			got[key] = fn
		}
		if !maps.Equal(got, want) {
			for k, v := range want {
				if got[k] != v {
					t.Errorf("route %s: function %q, want %q", k, got[k], v)
				}
			}
			for k, v := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("route %s (function %s) is not an API route of the route table", k, v)
				}
			}
		}
		perFunction := map[string]int{}
		for _, fn := range integrations {
			perFunction[fn]++
		}
		for fn, n := range perFunction {
			if n != 1 {
				t.Errorf("function %s has %d integrations, want one", fn, n)
			}
		}
	})
}

func TestTheAPIStageLogsEveryRequestAsJSONToALogGroupWithRetentionAndThrottles(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		stages := s.t.ofType("AWS::ApiGatewayV2::Stage")
		if len(stages) != 1 {
			t.Fatalf("%d stages, want one", len(stages))
		}
		for id, r := range stages {
			p := r.Properties
			if p["StageName"] != "$default" || p["AutoDeploy"] != true {
				t.Errorf("stage %s: name %v, auto deploy %v; want $default, true", id, p["StageName"], p["AutoDeploy"])
			}
			logs, _ := p["AccessLogSettings"].(map[string]any)
			var format map[string]string
			if err := json.Unmarshal([]byte(fmt.Sprint(logs["Format"])), &format); err != nil || len(format) == 0 {
				t.Errorf("access log format %v is not a JSON object: %v", logs["Format"], err)
			}
			for k, v := range format {
				if !strings.HasPrefix(v, "$context.") {
					t.Errorf("access log field %s = %q, want a $context variable", k, v)
				}
			}
			for _, field := range []string{"requestId", "status", "routeKey", "ip"} {
				if format[field] == "" {
					t.Errorf("access log has no %s", field)
				}
			}
			wantDest := getAtt(s.logicalID(s.stack.ApiAccessLogs), "Arn")
			if !jsonEqual(logs["DestinationArn"], wantDest) {
				t.Errorf("access logs go to %s, want %s", js(logs["DestinationArn"]), js(wantDest))
			}
			throttle, _ := p["DefaultRouteSettings"].(map[string]any)
			if throttle["ThrottlingRateLimit"] != float64(deploy.APIRateLimit) || throttle["ThrottlingBurstLimit"] != float64(deploy.APIBurstLimit) {
				t.Errorf("default route throttling %s, want rate %d burst %d", js(throttle), deploy.APIRateLimit, deploy.APIBurstLimit)
			}
		}
	})
}

func TestEveryFunctionRunsItsArm64BootstrapOnProvidedAL2023SizedByHowItIsReached(t *testing.T) {
	storeTimeout := service.DefaultConfig().StoreTimeout
	stages(t, func(t *testing.T, s *synthesized) {
		runnerTimeout := executeTimeout(t, s.stack.Model)
		if n, want := len(s.t.ofType("AWS::Lambda::Function")), len(s.deployed()); n != want {
			t.Errorf("%d functions, want %d (the model's Deployed)", n, want)
		}
		for _, f := range s.deployed() {
			p := s.fn(t, f.Name).Properties
			if p["Runtime"] != "provided.al2023" || !jsonEqual(p["Architectures"], []string{"arm64"}) || p["Handler"] != "bootstrap" {
				t.Errorf("%s: runtime %v, architectures %v, handler %v; want provided.al2023, [arm64], bootstrap", f.Name, p["Runtime"], p["Architectures"], p["Handler"])
			}
			timeout := time.Duration(p["Timeout"].(float64)) * time.Second
			switch f.Reach {
			case deploymodel.ByAPI, deploymodel.ByURL:
				if timeout >= 30*time.Second || timeout <= storeTimeout {
					t.Errorf("%s: timeout %s, want below API Gateway's 30s and above STORE_TIMEOUT's %s", f.Name, timeout, storeTimeout)
				}
			case deploymodel.ByStateMachine:
				if timeout != runnerTimeout {
					t.Errorf("%s: timeout %s, want the state machine's Execute timeout %s", f.Name, timeout, runnerTimeout)
				}
			case deploymodel.ByOperator, deploymodel.ByStream, deploymodel.ByQueue:
				if timeout <= storeTimeout {
					t.Errorf("%s: timeout %s, want above STORE_TIMEOUT's %s", f.Name, timeout, storeTimeout)
				}
			}
			if m, _ := p["MemorySize"].(float64); m < 128 {
				t.Errorf("%s: memory %v MB", f.Name, p["MemorySize"])
			}
			if p["FunctionName"] != nil {
				t.Errorf("%s: a fixed function name %v", f.Name, p["FunctionName"])
			}
		}
	})
}

// executeTimeout is the TimeoutSeconds of the run definition's Execute task.
func executeTimeout(t *testing.T, m *deploymodel.Model) time.Duration {
	var def struct {
		States map[string]struct{ TimeoutSeconds int }
	}
	if err := json.Unmarshal([]byte(m.RunDefinition("x")), &def); err != nil {
		t.Fatal(err)
	}
	return time.Duration(def.States["Execute"].TimeoutSeconds) * time.Second
}

func TestEveryFunctionHasExactlyTheEnvironmentOfItsConfiguration(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		table := ref(s.logicalID(s.stack.Table))
		machine := ref(s.logicalID(s.stack.StateMachine))
		url := getAtt(s.logicalID(s.stack.WebhookURL), "FunctionUrl")
		for _, f := range s.deployed() {
			// The configuration a function should get, with placeholders
			// for the deploy-time values.
			cfg := service.DefaultConfig()
			cfg.Table = "<table>"
			if f.StartsRuns {
				cfg.StateMachineARN = "<machine>"
			}
			if f.WebhookURLs {
				cfg.WebhookBaseURL = "<url>"
			}
			// The mcp function searches through the HTTP API.
			if f.SearchesByAPI {
				cfg.SearchBaseURL = "<api>"
			}
			// The functions that queue deliveries (hooks, events) and the
			// deliver function know the delivery queue; the deliver
			// function also its dead-letter queue.
			if f.SendsDeliveries || f.Name == lambdas.Deliver {
				cfg.DeliverQueueURL = "<queue>"
			}
			if f.Name == lambdas.Deliver {
				cfg.DeliverDLQURL = "<dlq>"
			}
			// The events function publishes to the account's default bus
			// for the organizations that asked for it.
			if f.Name == lambdas.Events {
				cfg.EventBusName = deploy.EventBus
			}
			// The data function creates bulk jobs (their bucket, and the
			// job state machine it starts exports on); the runner runs them.
			if f.RunsJobs || f.Name == lambdas.Runner || f.Name == lambdas.Admin { // the admin: the tenant lifecycle's files
				cfg.BulkBucket = "<bucket>"
			}
			if f.RunsJobs {
				cfg.JobsStateMachineARN = "<jobs>"
			}
			// With OpenSearch, the search function and the indexer are
			// told its engine and the collection's endpoint.
			// (and the operator function, which deletes an organization's
			// documents).
			if s.stack.Options.OpenSearch() && (f.HoldsIndexes || f.Name == lambdas.Indexer || f.Name == lambdas.Admin) {
				cfg.SearchEngine, cfg.OpenSearchEndpoint = service.SearchOpenSearch, "<collection>"
			}
			want := map[string]any{}
			for k, v := range cfg.Env() {
				switch v {
				case "<table>":
					want[k] = table
				case "<machine>":
					want[k] = machine
				case "<url>":
					want[k] = url
				case "<api>":
					want[k] = getAtt(s.logicalID(s.stack.Api), "ApiEndpoint")
				case "<collection>":
					want[k] = getAtt(s.logicalID(s.stack.Collection), "CollectionEndpoint")
				case "<queue>":
					want[k] = ref(s.logicalID(s.stack.DeliverQueue))
				case "<dlq>":
					want[k] = ref(s.logicalID(s.stack.DeliverDLQ))
				case "<bucket>":
					want[k] = ref(s.logicalID(s.stack.BulkBucket))
				case "<jobs>":
					want[k] = ref(s.logicalID(s.stack.JobStateMachine))
				default:
					want[k] = v
				}
			}
			// The functions that embed are told the deployment's provider
			// and model, the model's even when it is the default
			// (embed_test.go checks them closely).
			if f.Embeds {
				want[service.EnvEmbeddings], want[service.EnvEmbeddingsModel] = s.stack.Options.Embeddings, s.stack.Options.EmbeddingModel
			}
			env, _ := s.fn(t, f.Name).Properties["Environment"].(map[string]any)
			if got := env["Variables"]; !jsonEqual(got, want) {
				t.Errorf("%s: environment %s, want %s", f.Name, js(got), js(want))
			}
		}
		// The runner and the admin never show trigger urls or start runs.
		for _, name := range []string{s.stack.Runner, lambdas.Admin} {
			vars := s.fn(t, name).Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			if vars[service.EnvStateMachineARN] != nil || vars[service.EnvWebhookBaseURL] != nil {
				t.Errorf("%s: environment %s", name, js(vars))
			}
		}
		// The delivery queue only where deliveries are queued or made, its
		// dead-letter queue only for the deliver function, and webhook
		// endpoints on loopback addresses nowhere.
		for _, f := range s.deployed() {
			vars := s.fn(t, f.Name).Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			queued := slices.Contains([]string{lambdas.Hooks, lambdas.Events, lambdas.Deliver}, f.Name)
			if (vars[service.EnvDeliverQueueURL] != nil) != queued || (vars[service.EnvDeliverDLQURL] != nil) != (f.Name == lambdas.Deliver) || vars[service.EnvWebhooksAllowLoopback] != nil {
				t.Errorf("%s: environment %s", f.Name, js(vars))
			}
		}
	})
}

// grants are the (action, resource) pairs a role allows, resources as JSON.
type grants map[string]bool

func (g grants) add(actions, resources any) { g.addIf(actions, resources, nil) }

// addIf adds the pairs under condition (none when nil).
func (g grants) addIf(actions, resources, condition any) {
	for _, a := range list(actions) {
		for _, r := range list(resources) {
			k := fmt.Sprint(a) + " on " + js(r)
			if condition != nil {
				k += " if " + js(condition)
			}
			g[k] = true
		}
	}
}

func list(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if l, ok := v.([]string); ok {
		var out []any
		for _, s := range l {
			out = append(out, s)
		}
		return out
	}
	return []any{v}
}

// roleGrants collects every statement of the role: its inline policies and
// every AWS::IAM::Policy attached to it; it fails on managed policies and
// on anything but plain Allow statements.
func (s *synthesized) roleGrants(t *testing.T, roleID string) grants {
	t.Helper()
	role, ok := s.t.Resources[roleID]
	if !ok || role.Type != "AWS::IAM::Role" {
		t.Fatalf("no role %s", roleID)
	}
	if m := role.Properties["ManagedPolicyArns"]; m != nil {
		t.Errorf("role %s has managed policies %s", roleID, js(m))
	}
	var docs []any
	for _, p := range list(role.Properties["Policies"]) {
		if p != nil {
			docs = append(docs, p.(map[string]any)["PolicyDocument"])
		}
	}
	for _, p := range s.t.ofType("AWS::IAM::Policy") {
		for _, r := range list(p.Properties["Roles"]) {
			if jsonEqual(r, ref(roleID)) {
				docs = append(docs, p.Properties["PolicyDocument"])
			}
		}
	}
	g := grants{}
	for _, d := range docs {
		for _, st := range list(d.(map[string]any)["Statement"]) {
			st := st.(map[string]any)
			for k := range st {
				if k != "Effect" && k != "Action" && k != "Resource" && k != "Condition" {
					t.Errorf("role %s: statement with %s: %s", roleID, k, js(st))
				}
			}
			if st["Effect"] != "Allow" {
				t.Errorf("role %s: statement %s", roleID, js(st))
			}
			g.addIf(st["Action"], st["Resource"], st["Condition"])
		}
	}
	return g
}

func TestEveryFunctionRoleAllowsExactlyTheGeneratedActions(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		tableARN := getAtt(s.logicalID(s.stack.Table), "Arn")
		var indexARNs []any
		for _, ix := range s.stack.Model.Table.Indexes {
			indexARNs = append(indexARNs, map[string]any{"Fn::Join": []any{"", []any{tableARN, "/index/" + ix.Name}}})
		}
		for _, f := range s.deployed() {
			want := grants{}
			want.add([]string{"logs:CreateLogStream", "logs:PutLogEvents"}, getAtt(s.logicalID(s.stack.LogGroups[f.Name]), "Arn"))
			want.add(f.TableActions, tableARN)
			if len(f.IndexActions) > 0 {
				want.add(f.IndexActions, indexARNs)
			}
			if f.StartsRuns {
				want.add("states:StartExecution", ref(s.logicalID(s.stack.StateMachine)))
			}
			// The bulk jobs' objects (jobs_test.go checks them one by one).
			bucketARN := getAtt(s.logicalID(s.stack.BulkBucket), "Arn")
			objects := func(prefixes ...string) []any {
				var out []any
				for _, p := range prefixes {
					out = append(out, map[string]any{"Fn::Join": []any{"", []any{bucketARN, "/" + p + "*"}}})
				}
				return out
			}
			if f.RunsJobs {
				want.add(deploy.BulkUploadActions, objects(deploy.BulkImportsPrefix))
				want.add(deploy.BulkDownloadActions, objects(deploy.BulkImportsPrefix, deploy.BulkExportsPrefix))
				want.add(deploy.StartJobActions, ref(s.logicalID(s.stack.JobStateMachine)))
			}
			if deploy.IsJobRunner(f) {
				want.add(deploy.BulkRunActions, objects(deploy.BulkImportsPrefix, deploy.BulkExportsPrefix))
				want.add(deploy.BulkListActions, bucketARN)
			}
			if f.Name == lambdas.Admin {
				// The tenant lifecycle: an organization's files under the
				// three prefixes, listing only them.
				want.add(deploy.BulkTenantActions, objects(deploy.BulkImportsPrefix, deploy.BulkExportsPrefix, deploy.BulkOrgsPrefix))
				want.addIf(deploy.BulkListActions, bucketARN, map[string]any{"StringLike": map[string]any{"s3:prefix": []any{"imports/*", "exports/*", "orgs/*"}}})
			}
			// The embedding model, where the function embeds
			// (embed_test.go checks the statement itself).
			if f.Embeds && s.stack.Options.Embeddings == "bedrock" {
				want.add("bedrock:InvokeModel", modelARN(s.stack.Options.EmbeddingModel))
			}
			// X-Ray tracing: every function (no resource-level permissions).
			want.add([]string{"xray:PutTraceSegments", "xray:PutTelemetryRecords"}, "*")
			if s.stack.Options.OpenSearch() && (f.HoldsIndexes || f.Name == lambdas.Indexer || f.Name == lambdas.Admin) {
				want.add("aoss:APIAccessAll", getAtt(s.logicalID(s.stack.Collection), "Arn"))
			}
			if f.Reach == deploymodel.ByStream {
				// The stream it reads (ListStreams takes no resource), and
				// the queue of the batches it gave up on: the indexer's,
				// or the events function's.
				failures := s.stack.EventsFailures
				if f.Name == lambdas.Indexer {
					failures = s.stack.IndexerFailures
				}
				want.add([]string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}, getAtt(s.logicalID(s.stack.Table), "StreamArn"))
				want.add("dynamodb:ListStreams", "*")
				want.add([]string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}, getAtt(s.logicalID(failures), "Arn"))
			}
			if f.Name == lambdas.Events {
				want.add("events:PutEvents", map[string]any{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":events:",
					ref("AWS::Region"), ":", ref("AWS::AccountId"), ":event-bus/" + deploy.EventBus}}})
			}
			queue, dlq := getAtt(s.logicalID(s.stack.DeliverQueue), "Arn"), getAtt(s.logicalID(s.stack.DeliverDLQ), "Arn")
			if f.SendsDeliveries {
				// Queuing deliveries: sending, on the delivery queue only.
				want.add("sqs:SendMessage", queue)
			}
			if f.Reach == deploymodel.ByQueue {
				// The delivery queue's consumer (receive, delete, and the
				// visibility of a retry), and moving exhausted deliveries
				// to the dead-letter queue: sending only.
				want.add([]string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}, queue)
				want.add("sqs:SendMessage", dlq)
			}
			roleID := s.logicalID(s.stack.Roles[f.Name])
			if got := s.fn(t, f.Name).Properties["Role"]; !jsonEqual(got, getAtt(roleID, "Arn")) {
				t.Errorf("%s: role %s, want its own %s", f.Name, js(got), roleID)
			}
			got := s.roleGrants(t, roleID)
			for g := range got {
				if !want[g] {
					t.Errorf("%s: allows %s, which its declarations do not generate", f.Name, g)
				}
			}
			for g := range want {
				if !got[g] {
					t.Errorf("%s: does not allow %s", f.Name, g)
				}
			}
		}
	})
}

func TestOnlyTheFunctionsThatStartRunsMayStartExecutionsAndTheMachineInvokesOnlyTheRunner(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		starters := map[string]bool{}
		for _, f := range s.deployed() {
			if f.StartsRuns || f.RunsJobs {
				starters[s.logicalID(s.stack.Roles[f.Name])] = true
			}
		}
		// The rule that starts an import's execution on its upload.
		starters[uploadRuleRole(t, s)] = true
		if len(starters) == 0 {
			t.Fatal("no function starts runs")
		}
		for id := range s.t.ofType("AWS::IAM::Role") {
			starts := false
			for g := range s.roleGrants(t, id) {
				if strings.HasPrefix(g, "states:") {
					starts = true
					if !strings.HasPrefix(g, "states:StartExecution on ") {
						t.Errorf("role %s allows %s", id, g)
					}
				}
			}
			if starts != starters[id] {
				t.Errorf("role %s: may start executions %v, want %v", id, starts, starters[id])
			}
		}

		machine := s.t.Resources[s.logicalID(s.stack.StateMachine)]
		roleID := s.logicalID(s.stack.StateMachine.Role())
		if !jsonEqual(machine.Properties["RoleArn"], getAtt(roleID, "Arn")) {
			t.Errorf("state machine role %s, want %s", js(machine.Properties["RoleArn"]), roleID)
		}
		runnerARN := js(getAtt(s.logicalID(s.stack.Functions[s.stack.Runner]), "Arn"))
		for g := range s.roleGrants(t, roleID) {
			switch {
			case strings.HasPrefix(g, "lambda:"):
				if g != "lambda:InvokeFunction on "+runnerARN {
					t.Errorf("the state machine's role allows %s, want lambda:InvokeFunction on the runner only", g)
				}
			case strings.HasPrefix(g, "logs:") || strings.HasPrefix(g, "xray:"):
				// log delivery and tracing, added by CDK (resource "*", see nag.go)
			default:
				t.Errorf("the state machine's role allows %s", g)
			}
		}
	})
}

func TestTheStateMachineIsTheRunsDefinitionAroundTheRunnerAndIsValidStatesLanguage(t *testing.T) {
	const placeholder = "arn:aws:lambda:us-east-1:123456789012:function:runner-placeholder"
	stages(t, func(t *testing.T, s *synthesized) {
		machines := s.t.ofType("AWS::StepFunctions::StateMachine")
		if len(machines) != 2 {
			t.Fatalf("%d state machines, want two: runs' and jobs'", len(machines))
		}
		runner := s.logicalID(s.stack.Functions[s.stack.Runner])
		def := fnJoin(t, s.t.Resources[s.logicalID(s.stack.StateMachine)].Properties["DefinitionString"], func(e any) (string, bool) {
			return placeholder, jsonEqual(e, getAtt(runner, "Arn"))
		})
		if got, want := normalized(t, def), normalized(t, s.stack.Model.RunDefinition(placeholder)); got != want {
			t.Errorf("definition\n%s\nwant\n%s", got, want)
		}
		out, err := exec.Command("node", "../node_modules/asl-validator/dist/bin/asl-validator.js", "--json-definition", def).CombinedOutput()
		if err != nil {
			t.Errorf("asl-validator: %v\n%s", err, out)
		}
	})
}

func normalized(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func TestTheStateMachineLogsEverythingIsTracedAndTimesOut(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		p := s.t.Resources[s.logicalID(s.stack.StateMachine)].Properties
		logging, _ := p["LoggingConfiguration"].(map[string]any)
		if logging["Level"] != "ALL" || logging["IncludeExecutionData"] != true {
			t.Errorf("logging %s, want level ALL with execution data", js(logging))
		}
		dest := getAtt(s.logicalID(s.stack.StateMachineLogs), "Arn")
		if !jsonEqual(logging["Destinations"], []any{map[string]any{"CloudWatchLogsLogGroup": map[string]any{"LogGroupArn": dest}}}) {
			t.Errorf("log destinations %s, want the state machine's log group", js(logging["Destinations"]))
		}
		if !jsonEqual(p["TracingConfiguration"], map[string]any{"Enabled": true}) {
			t.Errorf("tracing %s", js(p["TracingConfiguration"]))
		}
		if p["StateMachineType"] != "STANDARD" {
			t.Errorf("type %v", p["StateMachineType"])
		}
		var def struct{ TimeoutSeconds int }
		if err := json.Unmarshal([]byte(s.stack.Model.RunDefinition("x")), &def); err != nil {
			t.Fatal(err)
		}
		if limit, execute := time.Duration(def.TimeoutSeconds)*time.Second, executeTimeout(t, s.stack.Model); limit <= execute {
			t.Errorf("execution timeout %s, want one above the Execute task's %s", limit, execute)
		}
	})
}

func TestTheTableIsTheModelsTableWithTheStagesProtection(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		def := s.stack.Model.Table
		tables := s.t.ofType("AWS::DynamoDB::Table")
		if len(tables) != 1 {
			t.Fatalf("%d tables, want one", len(tables))
		}
		r := s.t.Resources[s.logicalID(s.stack.Table)]
		p := r.Properties
		keySchema := func(ks []deploymodel.Key) []map[string]string {
			var out []map[string]string
			for _, k := range ks {
				out = append(out, map[string]string{"AttributeName": k.Attribute, "KeyType": k.Type})
			}
			return out
		}
		if want := keySchema(def.KeySchema); !jsonEqual(p["KeySchema"], want) || len(want) != 2 {
			t.Errorf("key schema %s, want %s", js(p["KeySchema"]), js(want))
		}
		var attrs []map[string]string
		for _, a := range def.Attributes {
			attrs = append(attrs, map[string]string{"AttributeName": a.Name, "AttributeType": a.Type})
		}
		if !jsonEqual(p["AttributeDefinitions"], attrs) {
			t.Errorf("attributes %s, want %s", js(p["AttributeDefinitions"]), js(attrs))
		}
		var want []map[string]any
		for _, ix := range def.Indexes {
			want = append(want, map[string]any{
				"IndexName":  ix.Name,
				"KeySchema":  keySchema(ix.KeySchema),
				"Projection": map[string]string{"ProjectionType": ix.Projection},
			})
		}
		if !jsonEqual(p["GlobalSecondaryIndexes"], want) || len(want) == 0 {
			t.Errorf("indexes %s, want the model's %s", js(p["GlobalSecondaryIndexes"]), js(want))
		}
		if p["BillingMode"] != "PAY_PER_REQUEST" || p["ProvisionedThroughput"] != nil {
			t.Errorf("billing %v, want on demand", p["BillingMode"])
		}
		if !jsonEqual(p["PointInTimeRecoverySpecification"], map[string]any{"PointInTimeRecoveryEnabled": true}) {
			t.Errorf("point in time recovery %s", js(p["PointInTimeRecoverySpecification"]))
		}
		if !jsonEqual(p["TimeToLiveSpecification"], map[string]any{"AttributeName": def.TimeToLiveAttribute, "Enabled": true}) || def.TimeToLiveAttribute == "" {
			t.Errorf("time to live %s, want on %s", js(p["TimeToLiveSpecification"]), def.TimeToLiveAttribute)
		}
		if p["TableName"] != nil {
			t.Errorf("a fixed table name %v", p["TableName"])
		}
		prod := s.stack.Options.Stage == Prod
		policy := map[bool]string{true: "Retain", false: "Delete"}[prod]
		if p["DeletionProtectionEnabled"] != prod || r.DeletionPolicy != policy || r.UpdateReplacePolicy != policy {
			t.Errorf("deletion protection %v, policies %s/%s; want %v, %s", p["DeletionProtectionEnabled"], r.DeletionPolicy, r.UpdateReplacePolicy, prod, policy)
		}
	})
}

func TestEveryLogGroupHasTheStagesRetentionAndRemovalPolicyAndEachFunctionLogsToItsOwn(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		days := map[Stage]float64{Dev: 7, Prod: 90}[s.stack.Options.Stage]
		policy := map[Stage]string{Dev: "Delete", Prod: "Retain"}[s.stack.Options.Stage]
		for id, r := range s.t.ofType("AWS::Logs::LogGroup") {
			if r.Properties["RetentionInDays"] != days {
				t.Errorf("log group %s: retention %v days, want %v", id, r.Properties["RetentionInDays"], days)
			}
			if r.DeletionPolicy != policy || r.UpdateReplacePolicy != policy {
				t.Errorf("log group %s: policies %s/%s, want %s", id, r.DeletionPolicy, r.UpdateReplacePolicy, policy)
			}
			if r.Properties["LogGroupName"] != nil {
				t.Errorf("log group %s: a fixed name %v", id, r.Properties["LogGroupName"])
			}
		}
		for _, f := range s.deployed() {
			lc, _ := s.fn(t, f.Name).Properties["LoggingConfig"].(map[string]any)
			if !jsonEqual(lc["LogGroup"], ref(s.logicalID(s.stack.LogGroups[f.Name]))) {
				t.Errorf("%s logs to %s, want its own log group", f.Name, js(lc["LogGroup"]))
			}
		}
		if n := len(s.t.ofType("Custom::LogRetention")); n > 0 {
			t.Errorf("%d LogRetention custom resources", n)
		}
	})
}

func TestTheWebhookFunctionIsPublicOnlyThroughItsURLWithReservedConcurrency(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		webhook := s.logicalID(s.stack.Functions[s.stack.Webhook])
		urls := s.t.ofType("AWS::Lambda::Url")
		if len(urls) != 1 {
			t.Fatalf("%d function URLs, want one", len(urls))
		}
		for _, u := range urls {
			if u.Properties["AuthType"] != "NONE" || !jsonEqual(u.Properties["TargetFunctionArn"], getAtt(webhook, "Arn")) {
				t.Errorf("function URL %s, want auth NONE on the webhook function", js(u.Properties))
			}
		}
		if got := s.fn(t, s.stack.Webhook).Properties["ReservedConcurrentExecutions"]; got != float64(DefaultWebhookConcurrency) {
			t.Errorf("webhook reserved concurrency %v, want %d", got, DefaultWebhookConcurrency)
		}
		// Who may invoke what: API Gateway the API functions, anyone the
		// webhook through its URL, EventBridge the functions with a
		// schedule (the runner) from their rule only; nobody the admin.
		fns := s.functionIDs()
		for id, p := range s.t.ofType("AWS::Lambda::Permission") {
			target, _ := p.Properties["FunctionName"].(map[string]any)["Fn::GetAtt"].([]any)
			name := fns[fmt.Sprint(target[0])]
			f, _ := s.stack.Model.Function(name)
			switch p.Properties["Principal"] {
			case "apigateway.amazonaws.com":
				if f.Reach != deploymodel.ByAPI {
					t.Errorf("permission %s: API Gateway may invoke %s (%s)", id, name, f.Reach)
				}
			case "*":
				if name != s.stack.Webhook {
					t.Errorf("permission %s: anyone may invoke %s", id, name)
				}
			case "events.amazonaws.com":
				rule, ok := s.stack.Schedules[name]
				if f.Schedule == "" || !ok || !jsonEqual(p.Properties["SourceArn"], getAtt(s.logicalID(rule), "Arn")) {
					t.Errorf("permission %s: EventBridge may invoke %s (schedule %q) from %s", id, name, f.Schedule, js(p.Properties["SourceArn"]))
				}
			default:
				t.Errorf("permission %s: %s", id, js(p.Properties))
			}
		}
		for _, f := range s.deployed() {
			if f.Reach != deploymodel.ByURL && s.fn(t, f.Name).Properties["ReservedConcurrentExecutions"] != nil {
				t.Errorf("%s has reserved concurrency", f.Name)
			}
		}
	})
	s := synth(t, map[string]string{CtxStage: "dev", CtxWebhookConcurrency: "3", CtxAPIRateLimit: "20000", CtxAPIBurstLimit: "7000", CtxDeliverConcurrency: "200"})
	if got := s.fn(t, s.stack.Webhook).Properties["ReservedConcurrentExecutions"]; got != float64(3) {
		t.Errorf("with -c %s=3: reserved concurrency %v", CtxWebhookConcurrency, got)
	}
	for _, stage := range s.t.ofType("AWS::ApiGatewayV2::Stage") {
		throttle, _ := stage.Properties["DefaultRouteSettings"].(map[string]any)
		if throttle["ThrottlingRateLimit"] != float64(20000) || throttle["ThrottlingBurstLimit"] != float64(7000) {
			t.Errorf("with -c %s=20000 -c %s=7000: the stage throttles at %s", CtxAPIRateLimit, CtxAPIBurstLimit, js(throttle))
		}
	}
	scaled := 0
	for id, m := range s.t.ofType("AWS::Lambda::EventSourceMapping") {
		if sc, ok := m.Properties["ScalingConfig"].(map[string]any); ok {
			scaled++
			if sc["MaximumConcurrency"] != float64(200) {
				t.Errorf("with -c %s=200: %s scales to %v", CtxDeliverConcurrency, id, sc["MaximumConcurrency"])
			}
		}
	}
	if scaled != 1 {
		t.Errorf("%d event source mappings with a maximum concurrency, want the delivery queue's", scaled)
	}
}

// TestTheDeploymentLimitsRefuseValuesOutsideTheirRange holds the context's
// deployment limits to what AWS accepts: a stage throttle or concurrency
// that is not a whole number, below 1 or above its bound, and a delivery
// concurrency outside SQS's 2 to 1,000, fail the synthesis with a message
// that names the key.
func TestTheDeploymentLimitsRefuseValuesOutsideTheirRange(t *testing.T) {
	for key, bad := range map[string]string{CtxAPIRateLimit: "0", CtxAPIBurstLimit: "lots", CtxDeliverConcurrency: "1", CtxWebhookConcurrency: "-2"} {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{CtxStage: "dev", CtxAssets: testAssets, key: bad}})
		_, err := build(app)
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("-c %s=%s: %v, want an error naming %s", key, bad, err, key)
		}
	}
}

// The runner sweeps in AWS: one EventBridge rule per function with a
// Schedule (routes.Function.Schedule: the runner only), enabled, on exactly that
// schedule, targeting the function with the rule's own Scheduled Event (no
// Input: the runner tells it from a state machine task by its source and
// detail-type), and a permission letting EventBridge invoke the function
// from that rule only.
func TestTheRunnerIsInvokedOnItsDeclaredScheduleByAnEventBridgeRule(t *testing.T) {
	runner, _ := deploymodel.Default().Function(lambdas.Runner)
	if runner.Schedule != "rate(5 minutes)" {
		t.Fatalf("the runner's schedule is %q, want rate(5 minutes) (routes.SweepSchedule)", runner.Schedule)
	}
	stages(t, func(t *testing.T, s *synthesized) {
		want := map[string]bool{}
		for _, f := range s.deployed() {
			if f.Schedule != "" {
				want[f.Name] = true
			}
		}
		rules := s.t.ofType("AWS::Events::Rule")
		delete(rules, s.logicalID(s.stack.UploadRule)) // not a schedule: jobs_test.go
		if len(rules) != len(want) || len(s.stack.Schedules) != len(want) || !want[lambdas.Runner] {
			t.Fatalf("%d rules (%d in the stack) for the scheduled functions %v, want one each, the runner's among them", len(rules), len(s.stack.Schedules), want)
		}
		fns := s.functionIDs()
		for name := range want {
			f, _ := s.stack.Model.Function(name)
			ruleID := s.logicalID(s.stack.Schedules[name])
			rule, ok := rules[ruleID]
			if !ok {
				t.Fatalf("no rule %s for %s", ruleID, name)
			}
			p := rule.Properties
			if p["ScheduleExpression"] != f.Schedule || p["State"] != "ENABLED" || p["EventPattern"] != nil {
				t.Errorf("rule of %s: %s, want enabled on %s", name, js(p), f.Schedule)
			}
			targets := list(p["Targets"])
			if len(targets) != 1 {
				t.Fatalf("rule of %s has targets %s, want its function only", name, js(p["Targets"]))
			}
			target, _ := targets[0].(map[string]any)
			if !jsonEqual(target["Arn"], getAtt(s.logicalID(s.stack.Functions[name]), "Arn")) {
				t.Errorf("rule of %s targets %s", name, js(target["Arn"]))
			}
			for _, k := range []string{"Input", "InputPath", "InputTransformer"} {
				if target[k] != nil {
					t.Errorf("rule of %s: target %s %s; want the Scheduled Event itself", name, k, js(target[k]))
				}
			}
			allowed := 0
			for _, perm := range s.t.ofType("AWS::Lambda::Permission") {
				fnRef, _ := perm.Properties["FunctionName"].(map[string]any)["Fn::GetAtt"].([]any)
				if perm.Properties["Principal"] != "events.amazonaws.com" || len(fnRef) == 0 || fns[fmt.Sprint(fnRef[0])] != name {
					continue
				}
				allowed++
				if perm.Properties["Action"] != "lambda:InvokeFunction" || !jsonEqual(perm.Properties["SourceArn"], getAtt(ruleID, "Arn")) {
					t.Errorf("permission of %s's rule: %s", name, js(perm.Properties))
				}
			}
			if allowed != 1 {
				t.Errorf("%d permissions let EventBridge invoke %s, want 1", allowed, name)
			}
		}
	})
}

// uploadRuleRole is the logical id of the role the upload rule's target
// starts executions with.
func uploadRuleRole(t *testing.T, s *synthesized) string {
	t.Helper()
	rule := s.t.Resources[s.logicalID(s.stack.UploadRule)]
	targets, _ := rule.Properties["Targets"].([]any)
	if len(targets) != 1 {
		t.Fatalf("the upload rule has %d targets, want 1", len(targets))
	}
	arn, _ := targets[0].(map[string]any)["RoleArn"].(map[string]any)["Fn::GetAtt"].([]any)
	if len(arn) != 2 {
		t.Fatalf("the upload rule's target has no role: %s", js(targets[0]))
	}
	return arn[0].(string)
}

func TestTheOutputsAreTheAPIURLWebhookURLTableNameAndStateMachineARN(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		apiID := s.logicalID(s.stack.Api)
		want := map[string]any{
			OutApiURL:             map[string]any{"Fn::Join": []any{"", []any{"https://", ref(apiID), ".execute-api.", ref("AWS::Region"), ".", ref("AWS::URLSuffix"), "/"}}},
			OutWebhookURL:         getAtt(s.logicalID(s.stack.WebhookURL), "FunctionUrl"),
			OutTableName:          ref(s.logicalID(s.stack.Table)),
			OutStateMachineARN:    ref(s.logicalID(s.stack.StateMachine)),
			OutDeliverQueueURL:    ref(s.logicalID(s.stack.DeliverQueue)),
			OutDeliverDLQURL:      ref(s.logicalID(s.stack.DeliverDLQ)),
			OutBulkBucket:         ref(s.logicalID(s.stack.BulkBucket)),
			OutJobStateMachineARN: ref(s.logicalID(s.stack.JobStateMachine)),
			OutAlarmTopicARN:      ref(s.logicalID(s.stack.AlarmTopic)),
			OutDashboardName:      ref(s.logicalID(s.stack.Dashboard)),
		}
		if s.stack.Options.OpenSearch() {
			want[OutSearchEndpoint] = getAtt(s.logicalID(s.stack.Collection), "CollectionEndpoint")
		}
		if len(s.t.Outputs) != len(want) {
			t.Errorf("%d outputs, want %d", len(s.t.Outputs), len(want))
		}
		for k, v := range want {
			if !jsonEqual(s.t.Outputs[k].Value, v) {
				t.Errorf("output %s = %s, want %s", k, js(s.t.Outputs[k].Value), js(v))
			}
		}
	})
}

func TestCdkNagAwsSolutionsReportsNoUnsuppressedFinding(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		nag := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
		for what, found := range map[string]*[]*cxapi.SynthesisMessage{
			"error":   s.annotations.FindError(jsii.String("*"), nag),
			"warning": s.annotations.FindWarning(jsii.String("*"), nag),
		} {
			for _, m := range *found {
				t.Errorf("cdk-nag %s at %s: %v", what, *m.Id, m.Entry.Data)
			}
		}
	})
}

func TestTheStackNamesNoAccountRegionOrResourceName(t *testing.T) {
	account := regexp.MustCompile(`\b\d{12}\b`)
	region := regexp.MustCompile(`\b(us|eu|ap|sa|ca|me|af|il|mx)-(east|west|north|south|central|northeast|southeast|northwest|southwest)-\d\b`)
	stages(t, func(t *testing.T, s *synthesized) {
		if m := account.FindString(s.t.raw); m != "" {
			t.Errorf("the template names account %s", m)
		}
		if m := region.FindString(s.t.raw); m != "" {
			t.Errorf("the template names region %s", m)
		}
		if env := s.stack.Stack.Environment(); !strings.Contains(*env, "unknown-account") {
			t.Errorf("stack environment %s, want environment-agnostic", *env)
		}
		for id, r := range s.t.Resources {
			for _, k := range []string{"TableName", "FunctionName", "RoleName", "StateMachineName", "LogGroupName", "QueueName"} {
				// A permission and an event source mapping name the
				// function they belong to by reference.
				if _, ok := r.Properties[k]; ok && r.Type != "AWS::Lambda::Permission" && r.Type != "AWS::Lambda::EventSourceMapping" {
					t.Errorf("%s (%s) has a fixed %s", id, r.Type, k)
				}
			}
		}
	})
}

func TestTheStageContextIsDevByDefaultAndOnlyDevOrProd(t *testing.T) {
	for in, want := range map[string]Stage{"": Dev, "dev": Dev, "prod": Prod} {
		if got, err := ParseStage(in); got != want || err != nil {
			t.Errorf("ParseStage(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"staging", "Prod", "production"} {
		_, err := ParseStage(in)
		if err == nil || !strings.Contains(err.Error(), "dev, prod") {
			t.Errorf("ParseStage(%q): error %v, want one naming dev, prod", in, err)
		}
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{CtxStage: "qa", CtxAssets: testAssets}})
	if _, err := build(app); err == nil || !strings.Contains(err.Error(), `"qa"`) {
		t.Errorf("stage qa: error %v", err)
	}
	app = awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{CtxStage: "dev", CtxAssets: t.TempDir()}})
	if _, err := build(app); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("no bootstraps: error %v, want one naming make build", err)
	}
	app = awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{CtxWebhookConcurrency: "0", CtxAssets: testAssets}})
	if _, err := build(app); err == nil || !strings.Contains(err.Error(), CtxWebhookConcurrency) {
		t.Errorf("webhookConcurrency 0: error %v", err)
	}
}

func TestSearchingWithOpenSearchAddsTheCollectionAndTheIndexerOnTheStreamAndOnlyThen(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		table := s.t.Resources[s.logicalID(s.stack.Table)].Properties
		collections := s.t.ofType("AWS::OpenSearchServerless::Collection")
		// The stream is there in every deployment: the events function
		// reads it.
		if !jsonEqual(table["StreamSpecification"], map[string]any{"StreamViewType": "NEW_AND_OLD_IMAGES"}) {
			t.Errorf("stream %s, want new and old images", js(table["StreamSpecification"]))
		}
		indexer := map[string]resource{}
		for id, m := range s.t.ofType("AWS::Lambda::EventSourceMapping") {
			if s.stack.Functions[lambdas.Indexer] != nil && jsonEqual(m.Properties["FunctionName"], ref(s.logicalID(s.stack.Functions[lambdas.Indexer]))) {
				indexer[id] = m
			}
		}
		if !s.stack.Options.OpenSearch() {
			if len(collections) != 0 || s.stack.Functions[lambdas.Indexer] != nil || s.stack.IndexerFailures != nil {
				t.Errorf("the embedded engine's stack has %d collections, an indexer %v, its failure queue %v", len(collections), s.stack.Functions[lambdas.Indexer] != nil, s.stack.IndexerFailures != nil)
			}
			return
		}
		for _, c := range collections {
			if c.Properties["Type"] != "SEARCH" || c.Properties["Name"] != CollectionName(s.stack.Options.Stage) {
				t.Errorf("collection %s", js(c.Properties))
			}
		}
		if len(collections) != 1 || len(indexer) != 1 {
			t.Fatalf("%d collections and %d event source mappings of the indexer, want one each", len(collections), len(indexer))
		}
		for _, m := range indexer {
			p := m.Properties
			if !jsonEqual(p["EventSourceArn"], getAtt(s.logicalID(s.stack.Table), "StreamArn")) ||
				p["StartingPosition"] != "TRIM_HORIZON" || p["BatchSize"] != float64(deploy.IndexerBatchSize) || p["BisectBatchOnFunctionError"] != true ||
				!jsonEqual(p["FunctionResponseTypes"], []any{"ReportBatchItemFailures"}) || p["FilterCriteria"] != nil ||
				!jsonEqual(p["DestinationConfig"], map[string]any{"OnFailure": map[string]any{"Destination": getAtt(s.logicalID(s.stack.IndexerFailures), "Arn")}}) {
				t.Errorf("the indexer's event source %s", js(p))
			}
		}
		policies := map[string]map[string]any{}
		for _, p := range s.t.ofType("AWS::OpenSearchServerless::SecurityPolicy") {
			policies[fmt.Sprint(p.Properties["Type"])] = p.Properties
		}
		for _, p := range s.t.ofType("AWS::OpenSearchServerless::AccessPolicy") {
			policies[fmt.Sprint(p.Properties["Type"])] = p.Properties
		}
		if enc := js(policies["encryption"]["Policy"]); !strings.Contains(enc, `AWSOwnedKey\":true`) {
			t.Errorf("encryption policy %s", enc)
		}
		if policies["network"] == nil || policies["data"] == nil {
			t.Fatalf("policies %v, want encryption, network and data", policies)
		}
		data := js(policies["data"]["Policy"])
		// The events function reads the stream too, but not the indexes.
		if strings.Contains(data, s.logicalID(s.stack.Roles[lambdas.Events])) {
			t.Errorf("the data access policy names the events function's role: %s", data)
		}
		for name, perms := range map[string][]string{lambdas.Search: SearchIndexPermissions, lambdas.Indexer: IndexerIndexPermissions} {
			if !strings.Contains(data, s.logicalID(s.stack.Roles[name])) {
				t.Errorf("the data access policy does not name the %s function's role: %s", name, data)
			}
			for _, p := range perms {
				if !strings.Contains(data, p) {
					t.Errorf("the data access policy does not grant %s: %s", p, data)
				}
			}
		}
	})
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{CtxSearch: "elastic", CtxAssets: testAssets}})
	if _, err := build(app); err == nil || !strings.Contains(err.Error(), CtxSearch) {
		t.Errorf("search=elastic: error %v, want one naming %s", err, CtxSearch)
	}
}

// TestTheTemplateHasNoDependencyCycle: CloudFormation refuses a template
// whose resources depend on each other in a circle (through Ref, GetAtt,
// Sub or DependsOn), which synthesis does not catch: the mcp function's
// environment names the HTTP API, whose routes name the functions.
func TestTheTemplateHasNoDependencyCycle(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		deps := map[string][]string{}
		for id, r := range s.t.Resources {
			deps[id] = dependencies(r, s.t.Resources)
		}
		const (
			unvisited = iota
			visiting
			done
		)
		state := map[string]int{}
		var path []string
		var visit func(id string) bool
		visit = func(id string) bool {
			switch state[id] {
			case visiting:
				t.Errorf("dependency cycle: %s -> %s", strings.Join(path, " -> "), id)
				return false
			case done:
				return true
			}
			state[id] = visiting
			path = append(path, id)
			for _, d := range deps[id] {
				if !visit(d) {
					return false
				}
			}
			path = path[:len(path)-1]
			state[id] = done
			return true
		}
		for _, id := range slices.Sorted(maps.Keys(deps)) {
			if !visit(id) {
				return
			}
		}
		mcp := s.logicalID(s.stack.Functions[lambdas.MCP])
		if !slices.Contains(deps[mcp], s.logicalID(s.stack.Api)) {
			t.Errorf("the mcp function (%s) does not depend on the API: %v", mcp, deps[mcp])
		}
	})
}

// subRef is a ${Name} or ${Name.Attribute} of an Fn::Sub string.
var subRef = regexp.MustCompile(`\$\{([A-Za-z0-9]+)[.}]`)

// dependencies are the resources of all that r refers to or depends on.
func dependencies(r resource, all map[string]resource) []string {
	found := map[string]bool{}
	switch d := r.DependsOn.(type) { // a name or a list of names
	case string:
		found[d] = true
	case []any:
		for _, n := range d {
			found[fmt.Sprint(n)] = true
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "Ref":
					if id, ok := x.(string); ok {
						found[id] = true
					}
				case "Fn::GetAtt":
					if l, ok := x.([]any); ok && len(l) > 0 {
						found[fmt.Sprint(l[0])] = true
					}
				case "Fn::Sub":
					str := x
					if l, ok := x.([]any); ok && len(l) > 0 {
						str = l[0]
						walk(l[1:])
					}
					if str, ok := str.(string); ok {
						for _, m := range subRef.FindAllStringSubmatch(str, -1) {
							found[m[1]] = true
						}
					}
				default:
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(r.Properties)
	var out []string
	for id := range found {
		if _, ok := all[id]; ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// TestEachFunctionDeploysTheBuildOfItsSearchEngine: the code of every
// function is its bootstrap from the asset directory, and a deployment on
// OpenSearch deploys the search function's OpenSearch build (no bleve).
func TestEachFunctionDeploysTheBuildOfItsSearchEngine(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		for _, f := range s.deployed() {
			staged, _ := s.fn(t, f.Name).Metadata["aws:asset:path"].(string)
			if staged == "" {
				t.Fatalf("%s: no aws:asset:path in its metadata", f.Name)
			}
			got, err := os.ReadFile(filepath.Join(s.outdir, staged, "bootstrap"))
			if err != nil {
				t.Fatalf("%s: the staged asset: %v", f.Name, err)
			}
			asset := f.AssetIn(s.stack.Options.OpenSearch())
			want, err := os.ReadFile(filepath.Join(testAssets, asset, "bootstrap"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the deployed bootstrap is not %s/bootstrap", f.Name, asset)
			}
		}
	})
}
