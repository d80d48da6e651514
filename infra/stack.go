package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchserverless"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchservice"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsxray"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// Stack is the service's stack, with the parts the tests look at.
type Stack struct {
	awscdk.Stack
	Options Options
	// Model is the deployment model the stack is built from.
	Model *deploymodel.Model

	Table awsdynamodb.Table
	// By function name: every function, its role and log group.
	Functions map[string]awslambda.Function
	Roles     map[string]awsiam.Role
	LogGroups map[string]awslogs.LogGroup

	Api           awsapigatewayv2.HttpApi
	ApiStage      awsapigatewayv2.HttpStage
	ApiAccessLogs awslogs.LogGroup
	// Integrations of the API, by function name: one per function.
	Integrations map[string]awsapigatewayv2integrations.HttpLambdaIntegration

	// Webhook is the function serving workflows' webhook path, behind
	// WebhookURL.
	Webhook    string
	WebhookURL awslambda.FunctionUrl

	// Runner is the function the state machine invokes.
	Runner           string
	StateMachine     awsstepfunctions.StateMachine
	StateMachineLogs awslogs.LogGroup
	// BulkBucket holds the bulk jobs' files; JobStateMachine runs the
	// jobs over the runner, started by UploadRule on an import's upload
	// (jobs.go).
	BulkBucket          awss3.Bucket
	JobStateMachine     awsstepfunctions.StateMachine
	JobStateMachineLogs awslogs.LogGroup
	UploadRule          awsevents.Rule

	// Schedules are the EventBridge rules of the functions with a
	// Schedule, by function name: each invokes its
	// function with the standard Scheduled Event.
	Schedules map[string]awsevents.Rule

	// Policies are the functions' inline policy documents, by name.
	Policies map[string]awsiam.PolicyDocument
	// Search on OpenSearch (Options.OpenSearch): the collection, and the
	// queue of stream batches the indexer gave up on.
	Collection      awsopensearchserverless.CfnCollection
	IndexerFailures awssqs.Queue
	// Domain is the OpenSearch Service managed domain instead of the
	// collection (Options.OpenSearchDomain; domain.go).
	Domain awsopensearchservice.Domain

	// The change history and outbound webhooks: the queue of stream
	// batches the events function gave up on, the deliveries' FIFO queue
	// and its FIFO dead-letter queue (see events.go).
	EventsFailures awssqs.Queue
	DeliverQueue   awssqs.Queue
	DeliverDLQ     awssqs.Queue

	// What the ops team watches (alarms.go): the alarms by their stable
	// name (deploy.Alarms), the topic they notify and its key, the
	// dashboard; and the X-Ray sampling rule of the functions (tracing.go;
	// nil when tracing is off).
	Alarms       map[string]awscloudwatch.Alarm
	AlarmTopic   awssns.Topic
	AlarmKey     awskms.Key
	Dashboard    awscloudwatch.CfnDashboard
	SamplingRule awsxray.CfnSamplingRule
}

// deployed are the functions of this stack.
func (st *Stack) deployed() []deploymodel.Function { return st.Model.Deployed(st.Options.OpenSearch()) }

// StackName is the stack's name for a stage: both stages can live in one
// account and region.
func StackName(s Stage) string { return "Sourcebase-" + string(s) }

// Names of the outputs.
const (
	OutApiURL             = "ApiUrl"
	OutWebhookURL         = "WebhookUrl"
	OutTableName          = "TableName"
	OutStateMachineARN    = "StateMachineArn"
	OutBulkBucket         = "BulkBucketName"
	OutJobStateMachineARN = "JobStateMachineArn"
	OutDeliverQueueURL    = "DeliverQueueUrl"
	OutDeliverDLQURL      = "DeliverDlqUrl"
)

// settings per stage.
type stageSettings struct {
	protect bool // table deletion protection, retained table and logs
	// logRetentionDays of every log group: Options.LogRetentionDays, the
	// stage's by default (DefaultLogRetentionDays).
	logRetentionDays int
}

func settingsOf(o Options) stageSettings {
	return stageSettings{protect: o.Stage == Prod, logRetentionDays: o.LogRetentionDays}
}

// newLogGroup adds a log group (id) with the stage's retention and removal
// policy. The retention is set on the resource itself: the construct's
// takes only the named retentions of its enum.
func (st *Stack) newLogGroup(id string, settings stageSettings) awslogs.LogGroup {
	logs := awslogs.NewLogGroup(st.Stack, jsii.String(id), &awslogs.LogGroupProps{RemovalPolicy: settings.removal()})
	logs.Node().DefaultChild().(awslogs.CfnLogGroup).SetRetentionInDays(jsii.Number(settings.logRetentionDays))
	return logs
}

func (s stageSettings) removal() awscdk.RemovalPolicy {
	if s.protect {
		return awscdk.RemovalPolicy_RETAIN
	}
	return awscdk.RemovalPolicy_DESTROY
}

// constructID turns a function name into a construct id prefix.
func constructID(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// NewStack builds the stack in scope from the deployment model (Options.Model):
// the table, a function per function of the model, the HTTP API from its
// routes, the run state machine from its definition, and the change
// history's stream source and delivery queues (events.go).
func NewStack(scope constructs.Construct, o Options) (*Stack, error) {
	o = o.withDefaults()
	settings := settingsOf(o)
	model := o.model()
	st := &Stack{
		Model: model,
		Stack: awscdk.NewStack(scope, jsii.String(StackName(o.Stage)), &awscdk.StackProps{
			Description: jsii.String(fmt.Sprintf("Sourcebase (%s): HTTP API, Lambda functions, DynamoDB table and its stream, run and job state machines, bulk jobs' bucket, webhook delivery queues, alarms and dashboard", o.Stage)),
		}),
		Options:      o,
		Functions:    map[string]awslambda.Function{},
		Roles:        map[string]awsiam.Role{},
		LogGroups:    map[string]awslogs.LogGroup{},
		Integrations: map[string]awsapigatewayv2integrations.HttpLambdaIntegration{},
		Schedules:    map[string]awsevents.Rule{},
		Alarms:       map[string]awscloudwatch.Alarm{},
	}
	// A dashboard takes no tags (CloudFormation's AWS::CloudWatch::Dashboard
	// has none, cfn-lint's E3002), though the CDK would add them.
	untagged := &awscdk.TagProps{ExcludeResourceTypes: jsii.Strings("AWS::CloudWatch::Dashboard")}
	awscdk.Tags_Of(st.Stack).Add(jsii.String("project"), jsii.String("sourcebase"), untagged)
	awscdk.Tags_Of(st.Stack).Add(jsii.String("stage"), jsii.String(string(o.Stage)), untagged)

	table, err := newTable(st.Stack, model.Table, settings)
	if err != nil {
		return nil, err
	}
	st.Table = table
	st.addDeliveryQueues(settings)
	st.addBulkBucket(settings)

	policies := map[string]awsiam.PolicyDocument{}
	st.Policies = policies
	for _, f := range st.deployed() {
		id := constructID(f.Name)
		logs := st.newLogGroup(id+"Logs", settings)
		doc := awsiam.NewPolicyDocument(nil)
		role := awsiam.NewRole(st.Stack, jsii.String(id+"Role"), &awsiam.RoleProps{
			AssumedBy:      awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
			Description:    jsii.String("the " + f.Name + " function: " + f.Description),
			InlinePolicies: &map[string]awsiam.PolicyDocument{"access": doc},
		})
		// Writing to its own log group: what AWSLambdaBasicExecutionRole
		// grants on every log group, limited to this one (it exists, so
		// no CreateLogGroup).
		doc.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(LogWriteActions...),
			Resources: jsii.Strings(*logs.LogGroupArn()),
		}))
		doc.AddStatements(tableStatements(table, model.Table, f)...)
		if deploy.InvokesBedrock(model, f, o.Embeddings) {
			// The embedding model, and nothing else of Bedrock.
			doc.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings(deploy.EmbedActions...),
				Resources: jsii.Strings(deploy.FoundationModelARN(*st.Stack.Partition(), *st.Stack.Region(), o.EmbeddingModel)),
			}))
		}
		props := &awslambda.FunctionProps{
			Description:  jsii.String(f.Description),
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         awslambda.Code_FromAsset(jsii.String(assetPath(o.AssetDir, f.AssetIn(o.OpenSearch()))), nil), // the build for its search engine
			MemorySize:   jsii.Number(f.MemoryMB),                                                                      // f.Sizing says why
			Timeout:      awscdk.Duration_Seconds(jsii.Number(f.TimeoutSeconds)),
			Role:         role,
			LogGroup:     logs,
		}
		if f.Reach == deploymodel.ByURL {
			props.ReservedConcurrentExecutions = jsii.Number(o.WebhookConcurrency)
		}
		st.Functions[f.Name] = awslambda.NewFunction(st.Stack, jsii.String(id+"Function"), props)
		st.traceFunction(st.Functions[f.Name], doc)
		st.Roles[f.Name], st.LogGroups[f.Name], policies[f.Name] = role, logs, doc
	}

	if err := st.addStateMachine(settings); err != nil {
		return nil, err
	}
	st.addJobs(settings)
	for _, f := range model.Functions {
		if f.StartsRuns {
			policies[f.Name].AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings(StartRunActions...),
				Resources: jsii.Strings(*st.StateMachine.StateMachineArn()),
			}))
		}
	}
	st.addSchedules()
	if err := st.addEvents(settings); err != nil {
		return nil, err
	}
	if err := st.addWebhookURL(); err != nil {
		return nil, err
	}
	if o.OpenSearch() {
		st.addOpenSearch(settings)
	}
	if err := st.addAPI(settings); err != nil {
		return nil, err
	}
	st.addAlarms(settings)
	st.addSamplingRule()
	// The environment comes last: the mcp function's names the API's
	// endpoint (the API itself does not depend on the functions, only its
	// routes and integrations do, so there is no cycle).
	for _, f := range st.deployed() {
		env, err := st.Env(f)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			st.Functions[f.Name].AddEnvironment(jsii.String(k), jsii.String(env[k]), nil)
		}
	}

	out := func(id, value, desc string) {
		awscdk.NewCfnOutput(st.Stack, jsii.String(id), &awscdk.CfnOutputProps{Value: jsii.String(value), Description: jsii.String(desc)})
	}
	out(OutApiURL, *st.ApiStage.Url(), "base URL of the HTTP API")
	out(OutWebhookURL, *st.WebhookURL.Url(), "function URL of the webhook function (trigger urls are this + webhooks/workflows/<slug>)")
	out(OutTableName, *table.TableName(), "the DynamoDB table")
	out(OutStateMachineARN, *st.StateMachine.StateMachineArn(), "the run state machine")
	out(OutDeliverQueueURL, *st.DeliverQueue.QueueUrl(), "the outbound webhooks' delivery queue (SQS FIFO)")
	out(OutBulkBucket, *st.BulkBucket.BucketName(), "the bulk jobs' files: imports' uploads, exports, errors files (objects expire after 7 days)")
	out(OutJobStateMachineARN, *st.JobStateMachine.StateMachineArn(), "the job state machine: bulk imports and exports")
	out(OutDeliverDLQURL, *st.DeliverDLQ.QueueUrl(), "the deliveries that exhausted their retries (SQS FIFO dead-letter queue, kept 14 days)")

	suppressFindings(st)
	return st, nil
}

// Env is the environment function f runs with: the model's (deploy.Env),
// with the table's name, the state machines' ARNs, the webhook function's
// URL, the HTTP API's endpoint, the delivery queue's and its dead-letter
// queue's URLs, the bulk bucket's name, the event bus, the OpenSearch
// collection's (or domain's, with OPENSEARCH_SERVICE=es) endpoint, and
// the embedding provider and model (the options') where f's environment
// refers to them.
func (st *Stack) Env(f deploymodel.Function) (map[string]string, error) {
	env, err := st.modelEnv(f)
	if err != nil || st.Domain == nil {
		return env, err
	}
	// A domain's endpoint comes with the service its requests are signed
	// for (the functions' default is OpenSearch Serverless's).
	for _, v := range f.EnvIn(true) {
		if v.Ref == deploymodel.RefOpenSearchEndpoint {
			env[EnvOpenSearchService] = OpenSearchServiceDomain
		}
	}
	return env, nil
}

// modelEnv is f's environment as the model gives it (Env).
func (st *Stack) modelEnv(f deploymodel.Function) (map[string]string, error) {
	return deploy.Env(f, st.Options.OpenSearch(), func(v string) string { return v }, func(r deploymodel.Ref) (string, error) {
		switch r {
		case deploymodel.RefTable:
			return *st.Table.TableName(), nil
		case deploymodel.RefStateMachine:
			return *st.StateMachine.StateMachineArn(), nil
		case deploymodel.RefWebhookURL:
			return *st.WebhookURL.Url(), nil
		case deploymodel.RefAPIURL:
			return *st.Api.ApiEndpoint(), nil
		case deploymodel.RefDeliverQueue:
			return *st.DeliverQueue.QueueUrl(), nil
		case deploymodel.RefDeliverDLQ:
			return *st.DeliverDLQ.QueueUrl(), nil
		case deploymodel.RefBulkBucket:
			return *st.BulkBucket.BucketName(), nil
		case deploymodel.RefJobsStateMachine:
			return *st.JobStateMachine.StateMachineArn(), nil
		case deploymodel.RefEventBus:
			return deploy.EventBus, nil
		case deploymodel.RefOpenSearchEndpoint:
			if st.Collection != nil {
				return *st.Collection.AttrCollectionEndpoint(), nil
			}
			if st.Domain != nil {
				return st.domainURL(), nil
			}
		case deploymodel.RefEmbeddings:
			return st.Options.Embeddings, nil
		case deploymodel.RefEmbeddingsModel:
			return st.Options.EmbeddingModel, nil
		}
		return "", fmt.Errorf("function %s: the stack has no %s for its environment", f.Name, r)
	})
}

// LogWriteActions let a function write to its log group.
var LogWriteActions = []string{"logs:CreateLogStream", "logs:PutLogEvents"}

// StartRunActions let a function start runs.
var StartRunActions = []string{"states:StartExecution"}

// tableStatements grant f's table actions: on the table, and its index
// actions (the reads) on each index.
func tableStatements(table awsdynamodb.Table, def deploymodel.Table, f deploymodel.Function) []awsiam.PolicyStatement {
	if len(f.TableActions) == 0 {
		return nil
	}
	out := []awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(f.TableActions...),
		Resources: jsii.Strings(*table.TableArn()),
	})}
	if len(f.IndexActions) > 0 {
		out = append(out, awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(f.IndexActions...),
			Resources: jsii.Strings(IndexARNs(def, *table.TableArn())...),
		}))
	}
	return out
}

// IndexARNs are the ARNs of the indexes of table def whose ARN is
// tableARN.
func IndexARNs(def deploymodel.Table, tableARN string) []string {
	var out []string
	for _, ix := range def.Indexes {
		out = append(out, tableARN+"/index/"+ix.Name)
	}
	return out
}

// assetPath is the code directory name in dir (deploymodel.Function.AssetIn).
func assetPath(dir, name string) string { return strings.TrimRight(dir, "/") + "/" + name }

// addStateMachine adds the run state machine over the runner function.
func (st *Stack) addStateMachine(settings stageSettings) error {
	var runners []string
	for _, f := range st.Model.Functions {
		if f.Reach == deploymodel.ByStateMachine {
			runners = append(runners, f.Name)
			if f.StartsRuns {
				return fmt.Errorf("function %s: the state machine's function cannot start runs (a circular dependency)", f.Name)
			}
		}
	}
	if len(runners) != 1 {
		return fmt.Errorf("want one function reached by the state machine, have %v", runners)
	}
	st.Runner = runners[0]
	st.StateMachine, st.StateMachineLogs = st.runnerMachine(settings, "RunStateMachine", "the run state machine",
		st.Model.RunDefinition(*st.Functions[st.Runner].FunctionArn()))
	return nil
}

// runnerMachine adds a state machine (id) of definition, whose role may
// invoke the runner function only, logging everything to a log group of
// its own and traced. The timeouts (each task's, and the execution's) are
// part of the definition: CDK applies its timeout property only to
// definitions it builds itself.
func (st *Stack) runnerMachine(settings stageSettings, id, what, definition string) (awsstepfunctions.StateMachine, awslogs.LogGroup) {
	invoke := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("lambda:InvokeFunction"),
			Resources: jsii.Strings(*st.Functions[st.Runner].FunctionArn()),
		}),
	}})
	role := awsiam.NewRole(st.Stack, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy:      awsiam.NewServicePrincipal(jsii.String("states.amazonaws.com"), nil),
		Description:    jsii.String(what + ": invokes the runner function only"),
		InlinePolicies: &map[string]awsiam.PolicyDocument{"invoke-runner": invoke},
	})
	logs := st.newLogGroup(id+"Logs", settings)
	machine := awsstepfunctions.NewStateMachine(st.Stack, jsii.String(id), &awsstepfunctions.StateMachineProps{
		DefinitionBody:   awsstepfunctions.DefinitionBody_FromString(jsii.String(definition)),
		StateMachineType: awsstepfunctions.StateMachineType_STANDARD,
		Role:             role,
		Logs: &awsstepfunctions.LogOptions{
			Destination:          logs,
			Level:                awsstepfunctions.LogLevel_ALL,
			IncludeExecutionData: jsii.Bool(true),
		},
		TracingEnabled: jsii.Bool(true),
		RemovalPolicy:  settings.removal(),
	})
	return machine, logs
}

// addSchedules adds an EventBridge rule per function with a Schedule,
// invoking it with the rule's Scheduled Event (no input of its own: the
// runner tells the event from a state machine task by its source and
// detail-type); the target adds the function's resource policy letting
// events.amazonaws.com invoke it from that rule only.
func (st *Stack) addSchedules() {
	for _, f := range st.deployed() {
		if f.Schedule == "" {
			continue
		}
		st.Schedules[f.Name] = awsevents.NewRule(st.Stack, jsii.String(constructID(f.Name)+"Schedule"), &awsevents.RuleProps{
			Description: jsii.String(fmt.Sprintf("invokes the %s function %s with a Scheduled Event (routes.Function.Schedule)", f.Name, f.Schedule)),
			Schedule:    awsevents.Schedule_Expression(jsii.String(f.Schedule)),
			Targets: &[]awsevents.IRuleTarget{
				awseventstargets.NewLambdaFunction(st.Functions[f.Name], nil),
			},
		})
	}
}

// addWebhookURL puts the function serving workflows' webhook path behind a
// function URL with no IAM auth: senders cannot sign AWS requests; the
// code checks each delivery's signature (and reserved concurrency caps
// what an unsigned flood can use).
func (st *Stack) addWebhookURL() error {
	webhookPath := st.Model.WebhookPath
	var groups []string
	for _, r := range st.Model.Routes {
		if strings.HasPrefix(r.Path, webhookPath) && !slices.Contains(groups, r.Function) {
			groups = append(groups, r.Function)
		}
	}
	if len(groups) != 1 {
		return fmt.Errorf("want one function serving %s, have %v", webhookPath, groups)
	}
	f, ok := st.Model.Function(groups[0])
	if !ok || f.Reach != deploymodel.ByURL {
		return fmt.Errorf("the function serving %s (%s) must be reached by a function URL", webhookPath, groups[0])
	}
	for _, g := range st.Model.Functions {
		if g.Reach == deploymodel.ByURL && g.Name != f.Name {
			return fmt.Errorf("function %s: reached by a function URL but serves no webhook path", g.Name)
		}
	}
	st.Webhook = f.Name
	st.WebhookURL = st.Functions[f.Name].AddFunctionUrl(&awslambda.FunctionUrlOptions{AuthType: awslambda.FunctionUrlAuthType_NONE})
	return nil
}

// AccessLogFormat is the HTTP API's access log line: JSON, one object per
// request.
var AccessLogFormat = func() string {
	b, _ := json.Marshal(map[string]string{
		"requestId":          "$context.requestId",
		"ip":                 "$context.identity.sourceIp",
		"requestTime":        "$context.requestTime",
		"httpMethod":         "$context.httpMethod",
		"path":               "$context.path",
		"routeKey":           "$context.routeKey",
		"status":             "$context.status",
		"protocol":           "$context.protocol",
		"responseLength":     "$context.responseLength",
		"responseLatency":    "$context.responseLatency",
		"integrationLatency": "$context.integrationLatency",
		"integrationError":   "$context.integrationErrorMessage",
	})
	return string(b)
}()

// addAPI adds the HTTP API: one route per route of the table served by an
// API function, each to its function (one integration per function).
func (st *Stack) addAPI(settings stageSettings) error {
	st.Api = awsapigatewayv2.NewHttpApi(st.Stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		Description:        jsii.String("Sourcebase API (" + string(st.Options.Stage) + ")"),
		CreateDefaultStage: jsii.Bool(false),
	})
	logs := st.newLogGroup("ApiAccessLogs", settings)
	st.ApiAccessLogs = logs
	st.ApiStage = st.Api.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle:   &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(st.Options.APIRateLimit), BurstLimit: jsii.Number(st.Options.APIBurstLimit)},
	})
	st.ApiStage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: logs.LogGroupArn(),
		Format:         jsii.String(AccessLogFormat),
	})
	for _, r := range st.Model.Routes {
		f, ok := st.Model.Function(r.Function)
		if !ok {
			return fmt.Errorf("route %s: no function %q", r.Pattern(), r.Function)
		}
		if f.Reach != deploymodel.ByAPI {
			continue
		}
		path, err := GatewayPath(r.Path)
		if err != nil {
			return err
		}
		integ, ok := st.Integrations[f.Name]
		if !ok {
			integ = awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(constructID(f.Name)+"Integration"), st.Functions[f.Name],
				&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
					PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
					// One invoke permission per function (any route of this
					// API), not one per route: the integration is the
					// function's only way in.
					ScopePermissionToRoute: jsii.Bool(false),
				})
			st.Integrations[f.Name] = integ
		}
		st.Api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(r.Method)},
			Integration: integ,
		})
	}
	// $default: a request no route matches goes to the fallback function,
	// which answers it as the service does (401 without credentials, then
	// 405 with Allow or 404 "no such endpoint") instead of API Gateway's
	// own {"message":"Not Found"}.
	for _, f := range st.Model.Functions {
		if !f.Fallback {
			continue
		}
		integ, ok := st.Integrations[f.Name]
		if !ok {
			return fmt.Errorf("the fallback function %s has no routes of its own", f.Name)
		}
		awsapigatewayv2.NewHttpRoute(st.Api, jsii.String("DefaultRoute"), &awsapigatewayv2.HttpRouteProps{
			HttpApi:     st.Api,
			RouteKey:    awsapigatewayv2.HttpRouteKey_DEFAULT(),
			Integration: integ,
		})
	}
	return nil
}

// GatewayPath turns a net/http pattern path into an API Gateway route
// path: {name} is the same, {name...} (the rest of the path) is {name+};
// {$} has no API Gateway equivalent.
func GatewayPath(p string) (string, error) {
	if strings.Contains(p, "{$}") {
		return "", fmt.Errorf("route path %s: {$} has no API Gateway equivalent", p)
	}
	return strings.ReplaceAll(p, "...}", "+}"), nil
}
