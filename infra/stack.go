package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchserverless"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/sizing"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Stack is the service's stack, with the parts the tests look at.
type Stack struct {
	awscdk.Stack
	Options Options

	Table awsdynamodb.Table
	// By routes.Function.Name: every function, its role and log group.
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
	// routes.Function.Schedule, by function name: each invokes its
	// function with the standard Scheduled Event.
	Schedules map[string]awsevents.Rule

	// Policies are the functions' inline policy documents, by name.
	Policies map[string]awsiam.PolicyDocument
	// Search on OpenSearch (Options.OpenSearch): the collection, and the
	// queue of stream batches the indexer gave up on.
	Collection      awsopensearchserverless.CfnCollection
	IndexerFailures awssqs.Queue

	// The change history and outbound webhooks: the queue of stream
	// batches the events function gave up on, the deliveries' FIFO queue
	// and its FIFO dead-letter queue (see events.go).
	EventsFailures awssqs.Queue
	DeliverQueue   awssqs.Queue
	DeliverDLQ     awssqs.Queue
}

// deployed are the functions of this stack.
func (st *Stack) deployed() []routes.Function { return routes.Deployed(st.Options.OpenSearch()) }

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

// HTTP API default stage throttling (every route): a cap for one
// deployment far below the account's 10,000 requests per second, so a
// runaway client cannot exhaust the functions' concurrency or the table's
// on-demand throughput; API keys are checked in code, after this.
const (
	apiRateLimit  = 100 // requests per second, steady
	apiBurstLimit = 200
)

// settings per stage.
type stageSettings struct {
	protect      bool // table deletion protection, retained table and logs
	logRetention awslogs.RetentionDays
}

func settingsOf(s Stage) stageSettings {
	if s == Prod {
		return stageSettings{protect: true, logRetention: awslogs.RetentionDays_THREE_MONTHS}
	}
	return stageSettings{protect: false, logRetention: awslogs.RetentionDays_ONE_WEEK}
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

// NewStack builds the stack in scope from the declarations: the table from
// store.TableDefinition, a function per routes.Functions entry, the HTTP
// API from api.Routes(), the state machine from runs.StateMachineDefinition,
// and the change history's stream source and delivery queues (events.go).
func NewStack(scope constructs.Construct, o Options) (*Stack, error) {
	settings := settingsOf(o.Stage)
	st := &Stack{
		Stack: awscdk.NewStack(scope, jsii.String(StackName(o.Stage)), &awscdk.StackProps{
			Description: jsii.String(fmt.Sprintf("Sourcebase (%s): HTTP API, Lambda functions, DynamoDB table and its stream, run and job state machines, bulk jobs' bucket, webhook delivery queues", o.Stage)),
		}),
		Options:      o,
		Functions:    map[string]awslambda.Function{},
		Roles:        map[string]awsiam.Role{},
		LogGroups:    map[string]awslogs.LogGroup{},
		Integrations: map[string]awsapigatewayv2integrations.HttpLambdaIntegration{},
		Schedules:    map[string]awsevents.Rule{},
	}
	awscdk.Tags_Of(st.Stack).Add(jsii.String("project"), jsii.String("sourcebase"), nil)
	awscdk.Tags_Of(st.Stack).Add(jsii.String("stage"), jsii.String(string(o.Stage)), nil)

	table, err := newTable(st.Stack, settings)
	if err != nil {
		return nil, err
	}
	st.Table = table
	st.addDeliveryQueues(settings)
	st.addBulkBucket(settings)

	policies := map[string]awsiam.PolicyDocument{}
	st.Policies = policies
	for _, f := range st.deployed() {
		size, err := sizing.Of(f)
		if err != nil {
			return nil, err
		}
		id := constructID(f.Name)
		logs := awslogs.NewLogGroup(st.Stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
			Retention:     settings.logRetention,
			RemovalPolicy: settings.removal(),
		})
		doc := awsiam.NewPolicyDocument(nil)
		role := awsiam.NewRole(st.Stack, jsii.String(id+"Role"), &awsiam.RoleProps{
			AssumedBy:      awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
			Description:    jsii.String("the " + f.Name + " function: " + f.Describe(api.Routes())),
			InlinePolicies: &map[string]awsiam.PolicyDocument{"access": doc},
		})
		// Writing to its own log group: what AWSLambdaBasicExecutionRole
		// grants on every log group, limited to this one (it exists, so
		// no CreateLogGroup).
		doc.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(LogWriteActions...),
			Resources: jsii.Strings(*logs.LogGroupArn()),
		}))
		doc.AddStatements(tableStatements(table, f.Access(api.Routes()))...)
		props := &awslambda.FunctionProps{
			Description:  jsii.String(f.Describe(api.Routes())),
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         awslambda.Code_FromAsset(jsii.String(assetPath(o.AssetDir, f.Asset(o.OpenSearch()))), nil), // the build for its search engine
			MemorySize:   jsii.Number(size.MemoryMB),                                                                 // sizing.Of says why
			Timeout:      awscdk.Duration_Seconds(jsii.Number(size.Timeout.Seconds())),
			Role:         role,
			LogGroup:     logs,
		}
		if f.Reach == routes.ByURL {
			props.ReservedConcurrentExecutions = jsii.Number(o.WebhookConcurrency)
		}
		st.Functions[f.Name] = awslambda.NewFunction(st.Stack, jsii.String(id+"Function"), props)
		st.Roles[f.Name], st.LogGroups[f.Name], policies[f.Name] = role, logs, doc
	}

	if err := st.addStateMachine(settings); err != nil {
		return nil, err
	}
	st.addJobs(settings)
	for _, f := range routes.Functions {
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
	// The environment comes last: the mcp function's names the API's
	// endpoint (the API itself does not depend on the functions, only its
	// routes and integrations do, so there is no cycle).
	for _, f := range st.deployed() {
		env := st.Config(f).Env()
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

// Config is the configuration function f runs with: the defaults, the
// table, the state machine where f starts runs, the webhook base URL
// where f shows trigger urls (the workflows group), the HTTP API's
// endpoint where f searches through it (the mcp function), and the
// delivery queue (and its dead-letter queue) where f queues or makes
// deliveries (deploy.Config).
func (st *Stack) Config(f routes.Function) app.Config {
	cfg := deploy.Config(app.DefaultConfig(), f, deploy.Refs{
		Table:               *st.Table.TableName(),
		StateMachineARN:     *st.StateMachine.StateMachineArn(),
		WebhookURL:          *st.WebhookURL.Url(),
		APIURL:              *st.Api.ApiEndpoint(),
		DeliverQueueURL:     *st.DeliverQueue.QueueUrl(),
		DeliverDLQURL:       *st.DeliverDLQ.QueueUrl(),
		BulkBucket:          *st.BulkBucket.BucketName(),
		JobsStateMachineARN: *st.JobStateMachine.StateMachineArn(),
	})
	if st.Options.OpenSearch() {
		cfg = deploy.OpenSearch(cfg, f, *st.Collection.AttrCollectionEndpoint())
	}
	return cfg
}

// LogWriteActions let a function write to its log group.
var LogWriteActions = []string{"logs:CreateLogStream", "logs:PutLogEvents"}

// StartRunActions let a function start runs.
var StartRunActions = []string{"states:StartExecution"}

// tableStatements grant the table actions of access: on the table, and
// the read actions on each index where the function reads.
func tableStatements(table awsdynamodb.Table, access []store.Access) []awsiam.PolicyStatement {
	if len(access) == 0 {
		return nil
	}
	out := []awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(store.IAMActions(access...)...),
		Resources: jsii.Strings(*table.TableArn()),
	})}
	if slices.Contains(access, store.Read) {
		out = append(out, awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(store.IAMActions(store.Read)...),
			Resources: jsii.Strings(IndexARNs(*table.TableArn())...),
		}))
	}
	return out
}

// IndexARNs are the ARNs of store.Indexes of the table with ARN tableARN.
func IndexARNs(tableARN string) []string {
	var out []string
	for _, ix := range store.Indexes {
		out = append(out, tableARN+"/index/"+ix.Name)
	}
	return out
}

// assetPath is the code directory name in dir (routes.Function.Asset).
func assetPath(dir, name string) string { return strings.TrimRight(dir, "/") + "/" + name }

// addStateMachine adds the run state machine over the runner function.
func (st *Stack) addStateMachine(settings stageSettings) error {
	var runners []string
	for _, f := range routes.Functions {
		if f.Reach == routes.ByStateMachine {
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
		runs.StateMachineDefinition(*st.Functions[st.Runner].FunctionArn()))
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
	logs := awslogs.NewLogGroup(st.Stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     settings.logRetention,
		RemovalPolicy: settings.removal(),
	})
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
	var groups []string
	for _, r := range api.Routes() {
		if strings.HasPrefix(r.Path, workflows.WebhookPath) && !slices.Contains(groups, r.Function) {
			groups = append(groups, r.Function)
		}
	}
	if len(groups) != 1 {
		return fmt.Errorf("want one function serving %s, have %v", workflows.WebhookPath, groups)
	}
	f, ok := routes.FunctionNamed(groups[0])
	if !ok || f.Reach != routes.ByURL {
		return fmt.Errorf("the function serving %s (%s) must be reached by a function URL", workflows.WebhookPath, groups[0])
	}
	for _, g := range routes.Functions {
		if g.Reach == routes.ByURL && g.Name != f.Name {
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
	logs := awslogs.NewLogGroup(st.Stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     settings.logRetention,
		RemovalPolicy: settings.removal(),
	})
	st.ApiAccessLogs = logs
	st.ApiStage = st.Api.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle:   &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(apiRateLimit), BurstLimit: jsii.Number(apiBurstLimit)},
	})
	st.ApiStage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: logs.LogGroupArn(),
		Format:         jsii.String(AccessLogFormat),
	})
	for _, r := range api.Routes() {
		f, ok := routes.FunctionNamed(r.Function)
		if !ok {
			return fmt.Errorf("route %s: no function %q", r.Pattern(), r.Function)
		}
		if f.Reach != routes.ByAPI {
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
	for _, f := range routes.Functions {
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
