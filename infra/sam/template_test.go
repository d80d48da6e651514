package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite "+TemplatePath+" and "+LocalEnvPath+" from the code")

func TestMain(m *testing.M) { testenv.Main(m) }

// root is the repository root (tests run in infra/sam).
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Intrinsic functions are kept as readable strings such as Ref(Table),
// GetAtt(RunnerFunction.Arn), Sub(...) and If([...]), so that they
// survive goformation's typed fields (by default it resolves !Ref of a
// resource and !GetAtt to nothing).
func keep(kind string) intrinsics.IntrinsicHandler {
	return func(_ string, input any, _ any) any {
		if parts, ok := input.([]any); ok && kind == "GetAtt" {
			var s []string
			for _, p := range parts {
				s = append(s, fmt.Sprint(p))
			}
			return kind + "(" + strings.Join(s, ".") + ")"
		}
		if parts, ok := input.([]any); ok {
			b, _ := json.Marshal(parts)
			return kind + "(" + string(b) + ")"
		}
		return fmt.Sprintf("%s(%v)", kind, input)
	}
}

// parse reads a SAM template with goformation v7.14.9.
//
// goformation names the HttpApi access log property AccessLogSetting where
// SAM's is AccessLogSettings (and rejects unknown fields), so the property
// is renamed between goformation's intrinsic processing and its typed
// decoding; the template keeps SAM's name.
func parse(t *testing.T, data []byte) *cloudformation.Template {
	t.Helper()
	js, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
		"Ref": keep("Ref"), "Fn::GetAtt": keep("GetAtt"), "Fn::Sub": keep("Sub"), "Fn::If": keep("If"),
	}})
	if err != nil {
		t.Fatalf("goformation: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	resources, _ := raw["Resources"].(map[string]any)
	for _, r := range resources {
		r, _ := r.(map[string]any)
		if props, ok := r["Properties"].(map[string]any); ok && r["Type"] == "AWS::Serverless::HttpApi" {
			if v, ok := props["AccessLogSettings"]; ok {
				props["AccessLogSetting"] = v
				delete(props, "AccessLogSettings")
			}
		}
	}
	if js, err = json.Marshal(raw); err != nil {
		t.Fatal(err)
	}
	tmpl, err := goformation.ParseJSONWithOptions(js, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatalf("goformation: %v", err)
	}
	return tmpl
}

// raw is a SAM template as JSON values, intrinsic functions kept as by
// parse: for the properties goformation v7.14.9 does not know (an event
// source's FilterCriteria, FunctionResponseTypes, ScalingConfig), which
// make it drop the whole event's properties.
func raw(t *testing.T, data []byte) map[string]any {
	t.Helper()
	js, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
		"Ref": keep("Ref"), "Fn::GetAtt": keep("GetAtt"), "Fn::Sub": keep("Sub"), "Fn::If": keep("If"),
	}})
	if err != nil {
		t.Fatalf("goformation: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// rawResource is the resource id of a raw template, with its properties.
func rawResource(t *testing.T, tmpl map[string]any, id string) (string, map[string]any) {
	t.Helper()
	r, _ := tmpl["Resources"].(map[string]any)[id].(map[string]any)
	if r == nil {
		t.Fatalf("no resource %s", id)
	}
	props, _ := r["Properties"].(map[string]any)
	return fmt.Sprint(r["Type"]), props
}

func committed(t *testing.T) *cloudformation.Template {
	t.Helper()
	return parse(t, readFile(t, TemplatePath))
}

func TestTheCommittedTemplateAndLocalEnvironmentAreWhatTheCodeGenerates(t *testing.T) {
	files, err := generated(DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		for path, data := range files {
			if err := os.WriteFile(filepath.Join(root(t), path), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	stale, err := staleFiles(root(t), DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("%v differ from what the code generates: run `make generate` (or `make sam-template`, or go test ./sam -update in infra/) and commit them", stale)
	}
}

func TestGeneratingTwiceGivesTheSameBytes(t *testing.T) {
	a, err := Generate(DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(DefaultSpec())
	if !bytes.Equal(a, b) {
		t.Fatal("two generations differ: the output depends on map order")
	}
}

func TestTheTemplateSaysItIsGeneratedAndHowToRegenerateIt(t *testing.T) {
	head := string(readFile(t, TemplatePath)[:600])
	for _, want := range []string{"# GENERATED", "make sam-template", "go run ./sam -write", "go test ./sam"} {
		if !strings.Contains(head, want) {
			t.Errorf("the template's header does not say %q", want)
		}
	}
}

// The checks below read a parsed template against a Spec and return what
// differs, so that the drift tests can run them against a changed spec.

func functionProblems(tmpl *cloudformation.Template, s Spec) []string {
	var p []string
	fns := tmpl.GetAllServerlessFunctionResources()
	var want, got []string
	for _, f := range s.Functions {
		want = append(want, LogicalID(f.Name))
	}
	for id := range fns {
		got = append(got, id)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		p = append(p, fmt.Sprintf("functions %v, want one per routes.Functions entry: %v", got, want))
	}
	for _, f := range s.Functions {
		fn := fns[LogicalID(f.Name)]
		if fn == nil {
			continue
		}
		if v(fn.Runtime) != "provided.al2023" || v(fn.Handler) != "bootstrap" || !slices.Equal(fn.Architectures, []string{"arm64"}) {
			p = append(p, fmt.Sprintf("%s: runtime %q handler %q architectures %v, want provided.al2023, bootstrap, [arm64]", f.Name, v(fn.Runtime), v(fn.Handler), fn.Architectures))
		}
		if fn.CodeUri == nil || v(fn.CodeUri.String) != "../" || fn.AWSCloudFormationMetadata["BuildMethod"] != "makefile" {
			p = append(p, fmt.Sprintf("%s: want CodeUri ../ (the repository root) built by the Makefile (BuildMethod makefile)", f.Name))
		}
		if fn.MemorySize == nil || fn.Timeout == nil {
			p = append(p, f.Name+": no MemorySize or Timeout")
		}
	}
	return p
}

func v[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// eventProblems: each function's HttpApi events are exactly the routes of
// its group (API functions), or none.
func eventProblems(tmpl *cloudformation.Template, s Spec) []string {
	var p []string
	for _, f := range s.Functions {
		fn := tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)]
		if fn == nil {
			continue
		}
		want := map[string]bool{}
		if f.Reach == routes.ByAPI {
			for _, r := range routes.Of(s.Routes, f.Name) {
				want[r.Pattern()] = true
			}
		}
		if f.Fallback {
			want["$default"] = true
		}
		got := map[string]bool{}
		schedules, sources := 0, 0
		for name, e := range fn.Events {
			switch {
			case e.Type == "DynamoDB" && deploy.IsEventsConsumer(f) && name == StreamEventName,
				e.Type == "SQS" && deploy.IsDeliverer(f) && name == QueueEventName:
				// Their properties: TestTheEventsFunctionReadsTheTablesStream...
				// and TestTheDeliverFunctionTakesTheDeliveryQueue...
				sources++
				continue
			case e.Type == "DynamoDB" || e.Type == "SQS":
				p = append(p, fmt.Sprintf("%s (%s): event %s of type %s", f.Name, f.Reach, name, e.Type))
				sources++
				continue
			}
			if e.Type == "Schedule" {
				schedules++
				if name != ScheduleEventName || e.Properties == nil || e.Properties.ScheduleEvent == nil || e.Properties.ScheduleEvent.Schedule != f.Schedule || f.Schedule == "" {
					p = append(p, fmt.Sprintf("%s: Schedule event %s %+v, want %s on the declared schedule %q", f.Name, name, e.Properties, ScheduleEventName, f.Schedule))
				} else if se := e.Properties.ScheduleEvent; se.Input != nil || (se.Enabled != nil && !*se.Enabled) {
					p = append(p, fmt.Sprintf("%s: Schedule event %s has an input or is disabled: want the Scheduled Event itself", f.Name, name))
				}
				continue
			}
			if e.Type != "HttpApi" || e.Properties == nil || e.Properties.HttpApiEvent == nil {
				p = append(p, fmt.Sprintf("%s: event %s is not an HttpApi event", f.Name, name))
				continue
			}
			h := e.Properties.HttpApiEvent
			if v(h.ApiId) != "Ref("+HttpAPIID+")" {
				p = append(p, fmt.Sprintf("%s: event %s is on API %q, want the one HttpApi", f.Name, name, v(h.ApiId)))
			}
			if key := v(h.Method) + " " + v(h.Path); key != " " {
				got[key] = true
			} else {
				got["$default"] = true // no method and path: SAM's $default route
			}
		}
		for r := range want {
			if !got[r] {
				p = append(p, fmt.Sprintf("%s: route %s of the route table has no HttpApi event", f.Name, r))
			}
		}
		for r := range got {
			if !want[r] {
				p = append(p, fmt.Sprintf("%s: HttpApi event %s is not a route of its group in the route table", f.Name, r))
			}
		}
		if len(got) != len(fn.Events)-schedules-sources {
			p = append(p, fmt.Sprintf("%s: %d HttpApi events for %d distinct routes", f.Name, len(fn.Events)-schedules-sources, len(got)))
		}
		if want := map[bool]int{true: 1}[deploy.IsEventsConsumer(f) || deploy.IsDeliverer(f)]; sources != want {
			p = append(p, fmt.Sprintf("%s: %d stream or queue events, want %d", f.Name, sources, want))
		}
		if want := map[bool]int{true: 1}[f.Schedule != ""]; schedules != want {
			p = append(p, fmt.Sprintf("%s: %d Schedule events, want %d (schedule %q)", f.Name, schedules, want, f.Schedule))
		}
	}
	return p
}

func TestThereIsOneFunctionPerDeclaredFunctionBuiltFromTheRepositoryForArm64(t *testing.T) {
	for _, p := range functionProblems(committed(t), DefaultSpec()) {
		t.Error(p)
	}
}

func TestEachFunctionsHttpApiEventsAreExactlyTheRoutesOfItsGroup(t *testing.T) {
	tmpl := committed(t)
	for _, p := range eventProblems(tmpl, DefaultSpec()) {
		t.Error(p)
	}
	// Every route is served: by an HttpApi event, or (webhook) by the
	// function URL.
	events := 0
	for _, fn := range tmpl.GetAllServerlessFunctionResources() {
		for _, e := range fn.Events {
			if e.Type == "HttpApi" {
				events++
			}
		}
	}
	byURL := 0
	for _, r := range api.Routes() {
		if f, _ := routes.FunctionNamed(r.Function); f.Reach == routes.ByURL {
			byURL++
		}
	}
	fallbacks := 0
	for _, f := range routes.Deployed(false) {
		if f.Fallback {
			fallbacks++
		}
	}
	if events+byURL != len(api.Routes())+fallbacks || events == 0 {
		t.Errorf("%d HttpApi events + %d function URL routes, want the %d routes of the route table", events, byURL, len(api.Routes()))
	}
	if len(tmpl.GetAllServerlessHttpApiResources()) != 1 {
		t.Errorf("want one HttpApi, have %d", len(tmpl.GetAllServerlessHttpApiResources()))
	}
}

func TestTheHttpApiWritesAccessLogsToALogGroupWithRetention(t *testing.T) {
	tmpl := committed(t)
	a := tmpl.GetAllServerlessHttpApiResources()[HttpAPIID]
	if a == nil || a.AccessLogSetting == nil || v(a.AccessLogSetting.DestinationArn) != "GetAtt(HttpApiAccessLogs.Arn)" || !json.Valid([]byte(v(a.AccessLogSetting.Format))) {
		t.Fatalf("HttpApi access logs: %+v", a)
	}
	for id, lg := range tmpl.GetAllLogsLogGroupResources() {
		if v(lg.RetentionInDays) != logRetentionDays {
			t.Errorf("log group %s keeps logs %d days, want %d", id, v(lg.RetentionInDays), logRetentionDays)
		}
	}
	for _, f := range routes.Deployed(false) {
		lg := tmpl.GetAllLogsLogGroupResources()[LogicalID(f.Name)+"Logs"]
		if lg == nil || v(lg.LogGroupName) != "Sub(/aws/lambda/${"+LogicalID(f.Name)+"})" {
			t.Errorf("%s: no log group of its own: %+v", f.Name, lg)
		}
	}
}

func TestOnlyTheWebhookFunctionHasAPublicURLWithReservedConcurrency(t *testing.T) {
	fns := committed(t).GetAllServerlessFunctionResources()
	for _, f := range routes.Deployed(false) {
		fn := fns[LogicalID(f.Name)]
		if f.Reach == routes.ByURL {
			if fn.FunctionUrlConfig == nil || fn.FunctionUrlConfig.AuthType != "NONE" {
				t.Errorf("%s: want FunctionUrlConfig AuthType NONE, have %+v", f.Name, fn.FunctionUrlConfig)
			}
			if v(fn.ReservedConcurrentExecutions) <= 0 {
				t.Errorf("%s: no reserved concurrency", f.Name)
			}
			continue
		}
		if fn.FunctionUrlConfig != nil {
			t.Errorf("%s has a function URL", f.Name)
		}
		for name, e := range fn.Events {
			allowed := e.Type == "Schedule" || f.Reach == routes.ByAPI && e.Type == "HttpApi" ||
				deploy.IsEventsConsumer(f) && e.Type == "DynamoDB" || deploy.IsDeliverer(f) && e.Type == "SQS"
			if !allowed {
				t.Errorf("%s (%s) has event %s of type %s", f.Name, f.Reach, name, e.Type)
			}
		}
	}
}

func TestFunctionsBehindTheApiTimeOutBeforeApiGatewayAndTheRunnerOutlastsEveryTask(t *testing.T) {
	fns := committed(t).GetAllServerlessFunctionResources()
	var def struct {
		States map[string]struct{ TimeoutSeconds int }
	}
	if err := json.Unmarshal([]byte(runs.StateMachineDefinition("arn")), &def); err != nil {
		t.Fatal(err)
	}
	for _, f := range routes.Deployed(false) {
		timeout := v(fns[LogicalID(f.Name)].Timeout)
		switch f.Reach {
		case routes.ByAPI, routes.ByURL:
			if timeout >= 30 || timeout*1000 <= int(app.MaxStoreTimeout.Milliseconds()) {
				t.Errorf("%s: timeout %d s, want above STORE_TIMEOUT's maximum %s and below API Gateway's 30 s", f.Name, timeout, app.MaxStoreTimeout)
			}
		case routes.ByStateMachine:
			for name, s := range def.States {
				if s.TimeoutSeconds > timeout {
					t.Errorf("runner timeout %d s is shorter than state %s's %d s", timeout, name, s.TimeoutSeconds)
				}
			}
		}
	}
}

// envProblems: every function's variables are app.Config.Env() with the
// table, the state machine where it starts runs and the webhook URL for
// workflows, plus the local-only DynamoDB endpoint.
func envProblems(tmpl *cloudformation.Template, s Spec) []string {
	var p []string
	for _, f := range s.Functions {
		fn := tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)]
		if fn == nil || fn.Environment == nil {
			p = append(p, f.Name+": no environment")
			continue
		}
		cfg := s.Config
		cfg.StateMachineARN, cfg.WebhookBaseURL, cfg.SearchBaseURL = "", "", ""
		if f.StartsRuns {
			cfg.StateMachineARN = "Ref(" + StateMachineID + ")"
		}
		if f.WebhookURLs {
			cfg.WebhookBaseURL = "GetAtt(WebhookFunctionUrl.FunctionUrl)"
		}
		if f.SearchesByAPI {
			cfg.SearchBaseURL = `If(["UseSearchBaseUrl","Ref(SearchBaseUrl)","Ref(AWS::NoValue)"])`
		}
		cfg.DeliverQueueURL, cfg.DeliverDLQURL, cfg.WebhooksAllowLoopback = "", "", false
		if f.SendsDeliveries || deploy.IsDeliverer(f) {
			cfg.DeliverQueueURL = "Ref(" + DeliverQueueID + ")"
		}
		if deploy.IsDeliverer(f) {
			cfg.DeliverDLQURL = "Ref(" + DeliverDLQID + ")"
		}
		cfg.EventBusName = ""
		if deploy.IsEventsConsumer(f) {
			cfg.EventBusName = deploy.EventBus
		}
		cfg.Table = "Ref(" + TableID + ")"
		want := cfg.Env()
		want[EnvDynamoDBEndpoint] = `If(["UseDynamoDBEndpoint","Ref(DynamoDBEndpoint)","Ref(AWS::NoValue)"])`
		if !reflect.DeepEqual(fn.Environment.Variables, want) {
			p = append(p, fmt.Sprintf("%s: environment %v, want %v", f.Name, fn.Environment.Variables, want))
		}
	}
	return p
}

func TestEachFunctionsEnvironmentIsTheAppConfigurationWithItsOwnResources(t *testing.T) {
	tmpl := committed(t)
	for _, p := range envProblems(tmpl, DefaultSpec()) {
		t.Error(p)
	}
	// Only what starts runs knows the state machine; only workflows shows
	// the webhook URL.
	for _, f := range routes.Deployed(false) {
		vars := tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)].Environment.Variables
		if _, ok := vars[app.EnvStateMachineARN]; ok != f.StartsRuns {
			t.Errorf("%s: has %s = %v, starts runs = %v", f.Name, app.EnvStateMachineARN, ok, f.StartsRuns)
		}
		if _, ok := vars[app.EnvWebhookBaseURL]; ok != f.WebhookURLs {
			t.Errorf("%s: has %s = %v", f.Name, app.EnvWebhookBaseURL, ok)
		}
		if _, ok := vars[app.EnvSearchBaseURL]; ok != f.SearchesByAPI {
			t.Errorf("%s: has %s = %v", f.Name, app.EnvSearchBaseURL, ok)
		}
		// The delivery queue: the functions that queue deliveries and the
		// deliver function; its dead-letter queue: the deliver function.
		if _, ok := vars[app.EnvDeliverQueueURL]; ok != (f.SendsDeliveries || f.Name == fn.Deliver) {
			t.Errorf("%s: has %s = %v", f.Name, app.EnvDeliverQueueURL, ok)
		}
		if _, ok := vars[app.EnvDeliverDLQURL]; ok != (f.Name == fn.Deliver) {
			t.Errorf("%s: has %s = %v", f.Name, app.EnvDeliverDLQURL, ok)
		}
		if _, ok := vars[app.EnvWebhooksAllowLoopback]; ok {
			t.Errorf("%s: allows webhook endpoints on loopback addresses", f.Name)
		}
	}
	for _, name := range []string{fn.Hooks, fn.Events} {
		if f, _ := routes.FunctionNamed(name); !f.SendsDeliveries {
			t.Errorf("the %s function does not queue deliveries", name)
		}
	}
	// The values read back as the configuration the functions expect.
	vars := tmpl.GetAllServerlessFunctionResources()[LogicalID(fn.Companies)].Environment.Variables
	for k, val := range vars {
		t.Setenv(k, val)
	}
	cfg, err := app.ConfigFromEnv()
	want := app.DefaultConfig()
	want.Table = "Ref(" + TableID + ")"
	if err != nil || cfg != want {
		t.Errorf("ConfigFromEnv over the companies function's variables = %+v, %v; want %+v", cfg, err, want)
	}
}

// policyProblems: each function may do exactly the table actions of its
// access on the table and its indexes, and start runs where it does.
func policyProblems(tmpl *cloudformation.Template, s Spec) []string {
	var p []string
	for _, f := range s.Functions {
		fn := tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)]
		if fn == nil || fn.Policies == nil || fn.Policies.IAMPolicyDocumentArray == nil || len(*fn.Policies.IAMPolicyDocumentArray) != 1 {
			p = append(p, f.Name+": want one inline policy document")
			continue
		}
		// The table and each of its indexes by name: no index/* wildcard.
		resources := []any{"GetAtt(Table.Arn)"}
		for _, ix := range store.Indexes {
			resources = append(resources, "Sub(${Table.Arn}/index/"+ix.Name+")")
		}
		want := []any{map[string]any{
			"Sid": "Table", "Effect": "Allow",
			"Action":   toAny(store.IAMActions(f.Access(s.Routes)...)),
			"Resource": resources,
		}}
		if f.StartsRuns {
			want = append(want, map[string]any{
				"Sid": "StartRuns", "Effect": "Allow",
				"Action":   []any{"states:StartExecution"},
				"Resource": "Ref(" + StateMachineID + ")",
			})
		}
		if f.SendsDeliveries {
			want = append(want, map[string]any{
				"Sid": "QueueDeliveries", "Effect": "Allow",
				"Action":   []any{"sqs:SendMessage"},
				"Resource": "GetAtt(" + DeliverQueueID + ".Arn)",
			})
		}
		if deploy.IsEventsConsumer(f) {
			want = append(want, map[string]any{
				"Sid": "PublishEvents", "Effect": "Allow",
				"Action":   []any{"events:PutEvents"},
				"Resource": "Sub(arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/" + deploy.EventBus + ")",
			})
		}
		if deploy.IsDeliverer(f) {
			want = append(want, map[string]any{
				"Sid": "ScheduleRetries", "Effect": "Allow",
				"Action":   []any{"sqs:ChangeMessageVisibility"},
				"Resource": "GetAtt(" + DeliverQueueID + ".Arn)",
			}, map[string]any{
				"Sid": "DeadLetters", "Effect": "Allow",
				"Action":   []any{"sqs:SendMessage"},
				"Resource": "GetAtt(" + DeliverDLQID + ".Arn)",
			})
		}
		if got := (*fn.Policies.IAMPolicyDocumentArray)[0].Statement; !reflect.DeepEqual(got, want) {
			p = append(p, fmt.Sprintf("%s: statements %v, want %v", f.Name, got, want))
		}
	}
	return p
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func TestEachFunctionMayDoExactlyTheTableActionsOfItsAccessAndStartRunsOnlyWhereItDoes(t *testing.T) {
	for _, p := range policyProblems(committed(t), DefaultSpec()) {
		t.Error(p)
	}
}

func TestTheStateMachineIsTheRunDefinitionInvokingTheRunnerWithLoggingAndTracing(t *testing.T) {
	tmpl := committed(t)
	sms := tmpl.GetAllServerlessStateMachineResources()
	sm := sms[StateMachineID]
	if len(sms) != 1 || sm == nil {
		t.Fatalf("state machines %v, want %s", sms, StateMachineID)
	}
	if got := sm.DefinitionSubstitutions; !reflect.DeepEqual(got, map[string]string{RunnerArnVar: "GetAtt(RunnerFunction.Arn)"}) {
		t.Errorf("DefinitionSubstitutions %v", got)
	}
	raw, err := json.Marshal(sm.Definition)
	if err != nil {
		t.Fatal(err)
	}
	const arn = "arn:aws:lambda:eu-west-1:123456789012:function:runner"
	var got, want any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "${"+RunnerArnVar+"}", arn)), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(runs.StateMachineDefinition(arn)), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("definition after substitution:\n%s\nwant runs.StateMachineDefinition:\n%s", raw, runs.StateMachineDefinition(arn))
	}
	var invoke []string
	if sm.Policies != nil && sm.Policies.SAMPolicyTemplateArray != nil {
		for _, pt := range *sm.Policies.SAMPolicyTemplateArray {
			if pt.LambdaInvokePolicy != nil {
				invoke = append(invoke, pt.LambdaInvokePolicy.FunctionName)
			}
		}
	}
	if !slices.Equal(invoke, []string{"Ref(RunnerFunction)"}) {
		t.Errorf("LambdaInvokePolicy for %v, want the runner only", invoke)
	}
	if sm.Logging == nil || sm.Logging.Level != "ALL" || len(sm.Logging.Destinations) != 1 ||
		sm.Logging.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn != "GetAtt("+StateMachineID+"Logs.Arn)" {
		t.Errorf("logging %+v", sm.Logging)
	}
	if sm.Tracing == nil || !v(sm.Tracing.Enabled) {
		t.Errorf("tracing %+v", sm.Tracing)
	}
}

func TestTheTableHasTheStoresKeysIndexesAndTimeToLiveWithRecovery(t *testing.T) {
	tmpl := committed(t)
	tables := tmpl.GetAllDynamoDBTableResources()
	tb := tables[TableID]
	if len(tables) != 1 || tb == nil {
		t.Fatalf("tables %v", tables)
	}
	def := store.TableDefinition("")
	if v(tb.BillingMode) != string(def.BillingMode) || v(tb.BillingMode) != "PAY_PER_REQUEST" {
		t.Errorf("billing %q", v(tb.BillingMode))
	}
	type key struct{ name, kind string }
	var got, want []key
	for _, k := range tb.KeySchema {
		got = append(got, key{k.AttributeName, k.KeyType})
	}
	for _, k := range def.KeySchema {
		want = append(want, key{*k.AttributeName, string(k.KeyType)})
	}
	if !slices.Equal(got, want) || want[0] != (key{store.AttrPK, "HASH"}) {
		t.Errorf("key schema %v, want %v", got, want)
	}
	gsis := map[string][]key{}
	for _, g := range tb.GlobalSecondaryIndexes {
		for _, k := range g.KeySchema {
			gsis[g.IndexName] = append(gsis[g.IndexName], key{k.AttributeName, k.KeyType})
		}
		if g.Projection.ProjectionType == nil || *g.Projection.ProjectionType != "ALL" {
			t.Errorf("index %s does not project all attributes", g.IndexName)
		}
	}
	wantGSIs := map[string][]key{}
	for _, ix := range store.Indexes {
		wantGSIs[ix.Name] = []key{{ix.PK, "HASH"}, {ix.SK, "RANGE"}}
	}
	if !reflect.DeepEqual(gsis, wantGSIs) {
		t.Errorf("GSIs %v, want %v", gsis, wantGSIs)
	}
	attrs := map[string]string{}
	for _, a := range tb.AttributeDefinitions {
		attrs[a.AttributeName] = a.AttributeType
	}
	wantAttrs := map[string]string{}
	for _, a := range def.AttributeDefinitions {
		wantAttrs[*a.AttributeName] = string(a.AttributeType)
	}
	if !reflect.DeepEqual(attrs, wantAttrs) {
		t.Errorf("attributes %v, want %v", attrs, wantAttrs)
	}
	if tb.TimeToLiveSpecification == nil || v(tb.TimeToLiveSpecification.AttributeName) != store.AttrExpires || !tb.TimeToLiveSpecification.Enabled {
		t.Errorf("TTL %+v, want on %q", tb.TimeToLiveSpecification, store.AttrExpires)
	}
	if tb.PointInTimeRecoverySpecification == nil || !v(tb.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled) {
		t.Error("point-in-time recovery is off")
	}
	// The stream, always: the events function reads it.
	if tb.StreamSpecification == nil || tb.StreamSpecification.StreamViewType != string(def.StreamSpecification.StreamViewType) ||
		tb.StreamSpecification.StreamViewType != "NEW_AND_OLD_IMAGES" || !v(def.StreamSpecification.StreamEnabled) {
		t.Errorf("stream %+v, want new and old images", tb.StreamSpecification)
	}
	if tb.AWSCloudFormationDeletionPolicy != "Retain" || tb.AWSCloudFormationUpdateReplacePolicy != "Retain" {
		t.Errorf("deletion %q, replace %q: want the data retained", tb.AWSCloudFormationDeletionPolicy, tb.AWSCloudFormationUpdateReplacePolicy)
	}
}

func TestTheOutputsNameTheApiWebhookTableAndStateMachine(t *testing.T) {
	outs := committed(t).Outputs
	for name, want := range map[string]string{
		"ApiUrl":          "Sub(https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/)",
		"WebhookUrl":      "GetAtt(WebhookFunctionUrl.FunctionUrl)",
		"TableName":       "Ref(Table)",
		"StateMachineArn": "Ref(RunStateMachine)",
		"DeliverQueueUrl": "Ref(" + DeliverQueueID + ")",
		"DeliverDlqUrl":   "Ref(" + DeliverDLQID + ")",
	} {
		if o, ok := outs[name]; !ok || o.Value != want {
			t.Errorf("output %s = %v, want %s", name, o.Value, want)
		}
	}
}

func TestTheTemplateHasNoGlobalsSinceGoformationDoesNotMergeThem(t *testing.T) {
	if g := committed(t).Globals; len(g) > 0 {
		t.Errorf("Globals %v: goformation does not merge them, so the checks above would miss them", g)
	}
}

// withoutRoute is the default spec with route i removed from the route
// table.
func withoutRoute(i int) Spec {
	s := DefaultSpec()
	s.Routes = slices.Delete(slices.Clone(s.Routes), i, i+1)
	return s
}

func TestARouteRemovedFromTheRouteTableMakesTheCommittedTemplateStale(t *testing.T) {
	all := api.Routes()
	i := slices.IndexFunc(all, func(r routes.Route) bool { return r.Function == fn.Companies && r.Method == "DELETE" })
	s := withoutRoute(i)
	out, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out, readFile(t, TemplatePath)) {
		t.Fatal("the template generated without a route equals the committed one")
	}
	if stale, _ := staleFiles(root(t), s); !slices.Contains(stale, TemplatePath) {
		t.Fatalf("staleFiles = %v, want %s", stale, TemplatePath)
	}
	// And the committed template, read against that route table, shows the
	// extra event by name.
	problems := eventProblems(committed(t), s)
	want := "companies: HttpApi event " + all[i].Pattern() + " is not a route of its group in the route table"
	if !slices.Contains(problems, want) {
		t.Errorf("problems %q, want %q", problems, want)
	}
	// The template generated from it has lost exactly that event.
	if p := eventProblems(parse(t, out), DefaultSpec()); !slices.Equal(p, []string{"companies: route " + all[i].Pattern() + " of the route table has no HttpApi event"}) {
		t.Errorf("problems of the generated template against the full route table: %q", p)
	}
}

// The runner sweeps in AWS: its one Schedule event, on the declared
// schedule, with no input of its own (SAM makes it the rule and the
// permission); no other function has one, and a schedule that is not the
// declared one is caught.
func TestTheRunnerHasAScheduleEventOnItsDeclaredScheduleAndNoOtherFunctionHasOne(t *testing.T) {
	tmpl := committed(t)
	runner := tmpl.GetAllServerlessFunctionResources()[LogicalID(fn.Runner)]
	if runner == nil {
		t.Fatal("no runner function")
	}
	ev, ok := runner.Events[ScheduleEventName]
	if !ok || ev.Type != "Schedule" || ev.Properties == nil || ev.Properties.ScheduleEvent == nil || ev.Properties.ScheduleEvent.Schedule != "rate(5 minutes)" || routes.SweepSchedule != "rate(5 minutes)" {
		t.Fatalf("runner events %+v, want %s: Schedule rate(5 minutes)", runner.Events, ScheduleEventName)
	}
	for _, f := range routes.Deployed(false) {
		for name, e := range tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)].Events {
			if e.Type == "Schedule" && f.Name != fn.Runner {
				t.Errorf("%s has Schedule event %s", f.Name, name)
			}
		}
	}
	if p := eventProblems(tmpl, DefaultSpec()); len(p) != 0 {
		t.Errorf("event problems: %q", p)
	}
	s := DefaultSpec()
	s.Functions = slices.Clone(s.Functions)
	for i := range s.Functions {
		if s.Functions[i].Name == fn.Runner {
			s.Functions[i].Schedule = "rate(1 hour)"
		}
	}
	if p := eventProblems(tmpl, s); len(p) != 1 || !strings.HasPrefix(p[0], "runner: Schedule event") {
		t.Errorf("problems with the runner declared on another schedule %q, want the runner's Schedule event", p)
	}
}

func TestAFunctionThatStartedRunsOrAccessedMoreWouldBeCaught(t *testing.T) {
	s := DefaultSpec()
	s.Functions = slices.Clone(s.Functions)
	for i := range s.Functions {
		if s.Functions[i].Name == fn.Companies {
			s.Functions[i].StartsRuns = true
		}
		if s.Functions[i].Name == fn.Runner {
			s.Functions[i].Table = append(slices.Clone(s.Functions[i].Table), store.Describe)
		}
	}
	tmpl := committed(t)
	env, pol := envProblems(tmpl, s), policyProblems(tmpl, s)
	if len(env) != 1 || !strings.HasPrefix(env[0], "companies:") {
		t.Errorf("env problems %q, want the companies function's", env)
	}
	if len(pol) != 2 {
		t.Errorf("policy problems %q, want the companies and runner functions'", pol)
	}
	if p := functionProblems(tmpl, Spec{Functions: append(slices.Clone(routes.Deployed(false)), routes.Function{Name: "search", Reach: routes.ByAPI})}); len(p) == 0 {
		t.Error("a function missing from the template was not reported")
	}
}

func TestTheGeneratorRejectsWhatTheTemplateCannotExpress(t *testing.T) {
	for name, s := range map[string]Spec{
		"a route of an undeclared group": func() Spec {
			s := DefaultSpec()
			s.Routes = append(slices.Clone(s.Routes), routes.Route{Function: "nope", Method: "GET", Path: "/v1/nope"})
			return s
		}(),
		"a name the Makefile cannot map back": func() Spec {
			s := DefaultSpec()
			s.Functions = append(slices.Clone(s.Functions), routes.Function{Name: "Search-Index", Reach: routes.ByOperator})
			return s
		}(),
		"two webhook functions": func() Spec {
			s := DefaultSpec()
			s.Functions = append(slices.Clone(s.Functions), routes.Function{Name: "hooks2", Reach: routes.ByURL})
			return s
		}(),
		"the OpenSearch indexer (no collection in the template)": func() Spec {
			s := DefaultSpec()
			s.Functions = routes.Deployed(true)
			return s
		}(),
		"a second events function on the stream": func() Spec {
			s := DefaultSpec()
			s.Functions = append(slices.Clone(s.Functions), routes.Function{Name: "events2", Reach: routes.ByStream})
			return s
		}(),
		"no deliver function": func() Spec {
			s := DefaultSpec()
			s.Functions = slices.DeleteFunc(slices.Clone(s.Functions), func(f routes.Function) bool { return f.Reach == routes.ByQueue })
			return s
		}(),
	} {
		if _, err := Generate(s); err == nil {
			t.Errorf("%s: generated", name)
		}
	}
}

func TestTheLocalEnvironmentOverridesOnlyVariablesTheTemplateDeclares(t *testing.T) {
	var env map[string]map[string]string
	if err := json.Unmarshal(readFile(t, LocalEnvPath), &env); err != nil {
		t.Fatal(err)
	}
	fns := committed(t).GetAllServerlessFunctionResources()
	for scope, vars := range env {
		for k := range vars {
			declared := 0
			for id, fn := range fns {
				if _, ok := fn.Environment.Variables[k]; ok && (scope == "Parameters" || scope == id) {
					declared++
				}
			}
			if declared == 0 {
				t.Errorf("%s.%s: no function declares it, so sam local would ignore it", scope, k)
			}
		}
	}
	if env["Parameters"][EnvDynamoDBEndpoint] != "http://host.docker.internal:8000" || env["Parameters"][app.EnvTable] != LocalTable {
		t.Errorf("Parameters %v", env["Parameters"])
	}
	for _, f := range routes.Deployed(false) {
		if f.StartsRuns && env[LogicalID(f.Name)][app.EnvStateMachineARN] == "" {
			t.Errorf("%s starts runs and refuses to start without %s; the local environment has none", f.Name, app.EnvStateMachineARN)
		}
		// sam local's requests come to the container as localhost: the
		// mcp function reaches the API on the host instead.
		if got, want := env[LogicalID(f.Name)][app.EnvSearchBaseURL], "http://host.docker.internal:3000"; f.SearchesByAPI && got != want {
			t.Errorf("%s searches through the API; its local %s is %q, want %q", f.Name, app.EnvSearchBaseURL, got, want)
		}
		// The events and deliver functions refuse to start without their
		// queues: sam local invoke of their samples needs a value (they
		// send nothing); behind start-api, the hooks function has none.
		local, declared := env[LogicalID(f.Name)][app.EnvDeliverQueueURL]
		switch {
		case f.Reach == routes.ByStream || f.Reach == routes.ByQueue:
			if local != LocalDeliverQueueURL {
				t.Errorf("%s: local %s %q, want %q", f.Name, app.EnvDeliverQueueURL, local, LocalDeliverQueueURL)
			}
		case f.SendsDeliveries:
			if !declared || local != "" {
				t.Errorf("%s: local %s %q (set %v), want empty", f.Name, app.EnvDeliverQueueURL, local, declared)
			}
		}
		if got := env[LogicalID(f.Name)][app.EnvDeliverDLQURL]; (f.Reach == routes.ByQueue) != (got == LocalDeliverDLQURL) {
			t.Errorf("%s: local %s %q", f.Name, app.EnvDeliverDLQURL, got)
		}
	}
}

// The events function reads the table's stream as the CDK stack's does:
// from the trim horizon, batches of deploy.EventsBatchSize in order (one
// per shard), partial batch failures reported and a failing batch
// bisected, retried, then kept in EventsFailures; and it is invoked only
// for the item types that have events: the filter criteria name exactly
// the store types of api.EventCatalog(), in the new image or the old.
func TestTheEventsFunctionReadsTheTablesStreamFilteredToTheItemTypesThatHaveEvents(t *testing.T) {
	tmpl := raw(t, readFile(t, TemplatePath))
	_, props := rawResource(t, tmpl, LogicalID(fn.Events))
	events, _ := props["Events"].(map[string]any)
	ev, _ := events[StreamEventName].(map[string]any)
	if len(events) != 1 || ev["Type"] != "DynamoDB" {
		t.Fatalf("events function events %v, want one DynamoDB event %s", events, StreamEventName)
	}
	p, _ := ev["Properties"].(map[string]any)
	for k, want := range map[string]any{
		"Stream":                     "GetAtt(" + TableID + ".StreamArn)",
		"StartingPosition":           "TRIM_HORIZON",
		"BatchSize":                  float64(deploy.EventsBatchSize),
		"BisectBatchOnFunctionError": true,
		"FunctionResponseTypes":      []any{"ReportBatchItemFailures"},
		"MaximumRetryAttempts":       float64(deploy.StreamRetryAttempts),
		"ParallelizationFactor":      float64(1),
		"DestinationConfig":          map[string]any{"OnFailure": map[string]any{"Type": "SQS", "Destination": "GetAtt(" + EventsFailuresID + ".Arn)"}},
	} {
		if !reflect.DeepEqual(p[k], want) {
			t.Errorf("%s: %v, want %v", k, p[k], want)
		}
	}
	var wantTypes []string
	for _, k := range api.EventCatalog().Kinds() {
		wantTypes = append(wantTypes, k.StoreType)
	}
	if !slices.Contains(wantTypes, "COMPANY") || slices.Contains(wantTypes, store.TypeDeleted) {
		t.Fatalf("the catalog's store types %v", wantTypes)
	}
	filters, _ := p["FilterCriteria"].(map[string]any)["Filters"].([]any)
	images := map[string]bool{}
	for _, f := range filters {
		pattern, _ := f.(map[string]any)["Pattern"].(string)
		var parsed map[string]map[string]map[string]map[string][]string
		if err := json.Unmarshal([]byte(pattern), &parsed); err != nil || len(parsed) != 1 || len(parsed["dynamodb"]) != 1 {
			t.Errorf("filter %q is not {\"dynamodb\":{\"<image>\":{\"type\":{\"S\":[...]}}}}: %v", pattern, err)
			continue
		}
		if len(pattern) > 4096 {
			t.Errorf("filter pattern of %d characters: Lambda takes at most 4096", len(pattern))
		}
		for image, attrs := range parsed["dynamodb"] {
			images[image] = true
			if got := attrs[store.AttrType]["S"]; !slices.Equal(got, wantTypes) {
				t.Errorf("%s filter: types %v, want the catalog's %v", image, got, wantTypes)
			}
		}
	}
	if len(filters) != 2 || !images["NewImage"] || !images["OldImage"] {
		t.Errorf("filters %v, want one on the new image and one on the old", filters)
	}
}

// The deliver function takes the delivery queue's batches with partial
// batch failures, at a bounded concurrency.
func TestTheDeliverFunctionTakesTheDeliveryQueueWithPartialFailuresAtABoundedConcurrency(t *testing.T) {
	tmpl := raw(t, readFile(t, TemplatePath))
	_, props := rawResource(t, tmpl, LogicalID(fn.Deliver))
	events, _ := props["Events"].(map[string]any)
	ev, _ := events[QueueEventName].(map[string]any)
	if len(events) != 1 || ev["Type"] != "SQS" {
		t.Fatalf("deliver function events %v, want one SQS event %s", events, QueueEventName)
	}
	want := map[string]any{
		"Queue":                 "GetAtt(" + DeliverQueueID + ".Arn)",
		"BatchSize":             float64(deploy.DeliverBatchSize),
		"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		"ScalingConfig":         map[string]any{"MaximumConcurrency": float64(deploy.DeliverMaxConcurrency)},
	}
	if p := ev["Properties"]; !reflect.DeepEqual(p, want) {
		t.Errorf("the delivery queue event %v, want %v", p, want)
	}
	if deploy.DeliverBatchSize > 10 || deploy.DeliverMaxConcurrency < 2 {
		t.Errorf("batch size %d (a FIFO queue gives at most 10), maximum concurrency %d (at least 2)", deploy.DeliverBatchSize, deploy.DeliverMaxConcurrency)
	}
}

// The delivery queue and its dead-letter queue are FIFO without content
// based deduplication, encrypted and TLS only; the queue's visibility
// timeout is at least six times the deliver function's timeout, and it
// redrives to the dead-letter queue; EventsFailures keeps 14 days.
func TestTheDeliveryQueuesAreFIFOEncryptedTLSOnlyWithTheirRetentionAndRedrive(t *testing.T) {
	tmpl := committed(t)
	queues := tmpl.GetAllSQSQueueResources()
	if len(queues) != 3 {
		t.Errorf("queues %v, want the delivery queue, its DLQ and EventsFailures", slices.Sorted(maps.Keys(queues)))
	}
	deliver := tmpl.GetAllServerlessFunctionResources()[LogicalID(fn.Deliver)]
	day := 24 * 60 * 60
	for id, want := range map[string]struct {
		fifo      bool
		retention int
	}{
		DeliverQueueID:   {true, deploy.DeliverRetentionDays * day},
		DeliverDLQID:     {true, deploy.DeliverDLQRetentionDays * day},
		EventsFailuresID: {false, 14 * day},
	} {
		q := queues[id]
		if q == nil {
			t.Errorf("no queue %s", id)
			continue
		}
		if v(q.FifoQueue) != want.fifo || v(q.ContentBasedDeduplication) || !v(q.SqsManagedSseEnabled) || v(q.MessageRetentionPeriod) != want.retention || q.QueueName != nil {
			t.Errorf("queue %s: fifo %v, content based deduplication %v, SQS-managed encryption %v, retention %d s, name %v; want fifo %v, no content based deduplication, encrypted, %d s, no fixed name",
				id, v(q.FifoQueue), v(q.ContentBasedDeduplication), v(q.SqsManagedSseEnabled), v(q.MessageRetentionPeriod), v(q.QueueName), want.fifo, want.retention)
		}
		tls := 0
		for _, p := range tmpl.GetAllSQSQueuePolicyResources() {
			b, _ := json.Marshal(p.PolicyDocument)
			if slices.Equal(p.Queues, []string{"Ref(" + id + ")"}) && strings.Contains(string(b), `"aws:SecureTransport":"false"`) && strings.Contains(string(b), `"Effect":"Deny"`) {
				tls++
			}
		}
		if tls != 1 {
			t.Errorf("queue %s: %d policies denying requests without TLS, want 1", id, tls)
		}
	}
	q := queues[DeliverQueueID]
	if q == nil {
		t.FailNow()
	}
	if got, min := v(q.VisibilityTimeout), 6*v(deliver.Timeout); got < min || got > 12*60*60 {
		t.Errorf("visibility timeout %d s, want at least six times the deliver function's %d s", got, v(deliver.Timeout))
	}
	if got, want := q.RedrivePolicy, map[string]any{"deadLetterTargetArn": "GetAtt(" + DeliverDLQID + ".Arn)", "maxReceiveCount": float64(deploy.DeliverMaxReceiveCount)}; !reflect.DeepEqual(got, want) {
		t.Errorf("redrive policy %v, want %v", got, want)
	}
	if v(q.DeduplicationScope) != "messageGroup" || v(q.FifoThroughputLimit) != "perMessageGroupId" {
		t.Errorf("deduplication scope %q, throughput limit %q: want high throughput FIFO", v(q.DeduplicationScope), v(q.FifoThroughputLimit))
	}
}
