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
	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

var update = flag.Bool("update", false, "rewrite "+TemplatePath+" and "+LocalEnvPath+" from the code")

func TestMain(m *testing.M) { testenv.Main(m) }

// model is the committed deployment model, which DefaultSpec reads.
func model() *deploymodel.Model { return deploymodel.Default() }

// deployed are the functions of the template: the model's, without the
// OpenSearch indexer.
func deployed() []deploymodel.Function { return model().Deployed(false) }

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
	// The typed view is the template as deployed with its parameters'
	// defaults: a Number parameter's reference is its default (goformation
	// decodes such properties as numbers).
	numbers := map[string]any{}
	for name, p := range raw["Parameters"].(map[string]any) {
		if p, _ := p.(map[string]any); p["Type"] == "Number" {
			numbers["Ref("+name+")"] = p["Default"]
		}
	}
	resolveNumbers(resources, numbers)
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

// resolveNumbers replaces, in v, every string that is a key of numbers
// (a reference to a Number parameter, as keep writes it) by its value.
func resolveNumbers(v any, numbers map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && numbers[s] != nil {
				v[k] = numbers[s]
				continue
			}
			resolveNumbers(x, numbers)
		}
	case []any:
		for i, x := range v {
			if s, ok := x.(string); ok && numbers[s] != nil {
				v[i] = numbers[s]
				continue
			}
			resolveNumbers(x, numbers)
		}
	}
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
		p = append(p, fmt.Sprintf("functions %v, want one per function of the model: %v", got, want))
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
		if f.Reach == deploymodel.ByAPI {
			for _, r := range deploymodel.RoutesOf(s.Routes, f.Name) {
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
	for _, r := range model().Routes {
		if f, _ := model().Function(r.Function); f.Reach == deploymodel.ByURL {
			byURL++
		}
	}
	fallbacks := 0
	for _, f := range deployed() {
		if f.Fallback {
			fallbacks++
		}
	}
	if events+byURL != len(model().Routes)+fallbacks || events == 0 {
		t.Errorf("%d HttpApi events + %d function URL routes, want the %d routes of the route table", events, byURL, len(model().Routes))
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
		if v(lg.RetentionInDays) != deploy.SAMLogRetentionDays { // the parameter's default
			t.Errorf("log group %s keeps logs %d days, want %d", id, v(lg.RetentionInDays), deploy.SAMLogRetentionDays)
		}
	}
	for _, f := range deployed() {
		lg := tmpl.GetAllLogsLogGroupResources()[LogicalID(f.Name)+"Logs"]
		if lg == nil || v(lg.LogGroupName) != "Sub(/aws/lambda/${"+LogicalID(f.Name)+"})" {
			t.Errorf("%s: no log group of its own: %+v", f.Name, lg)
		}
	}
}

func TestOnlyTheWebhookFunctionHasAPublicURLWithReservedConcurrency(t *testing.T) {
	fns := committed(t).GetAllServerlessFunctionResources()
	for _, f := range deployed() {
		fn := fns[LogicalID(f.Name)]
		if f.Reach == deploymodel.ByURL {
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
			allowed := e.Type == "Schedule" || f.Reach == deploymodel.ByAPI && e.Type == "HttpApi" ||
				deploy.IsEventsConsumer(f) && e.Type == "DynamoDB" || deploy.IsDeliverer(f) && e.Type == "SQS"
			if !allowed {
				t.Errorf("%s (%s) has event %s of type %s", f.Name, f.Reach, name, e.Type)
			}
		}
	}
}

func TestFunctionsBehindTheApiTimeOutBeforeApiGatewayAndTheRunnerOutlastsEveryTask(t *testing.T) {
	fns := committed(t).GetAllServerlessFunctionResources()
	var def, jobDef struct {
		States map[string]struct{ TimeoutSeconds int }
	}
	if err := json.Unmarshal([]byte(model().RunDefinition("arn")), &def); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(model().JobDefinition("arn")), &jobDef); err != nil {
		t.Fatal(err)
	}
	for name, s := range jobDef.States {
		def.States["job "+name] = s
	}
	for _, f := range deployed() {
		timeout := v(fns[LogicalID(f.Name)].Timeout)
		switch f.Reach {
		case deploymodel.ByAPI, deploymodel.ByURL:
			const maxStoreTimeout = 25 // s: STORE_TIMEOUT's maximum (app.MaxStoreTimeout)
			if timeout >= 30 || timeout <= maxStoreTimeout {
				t.Errorf("%s: timeout %d s, want above STORE_TIMEOUT's maximum %d s and below API Gateway's 30 s", f.Name, timeout, maxStoreTimeout)
			}
		case deploymodel.ByStateMachine:
			for name, s := range def.States {
				if s.TimeoutSeconds > timeout {
					t.Errorf("runner timeout %d s is shorter than state %s's %d s", timeout, name, s.TimeoutSeconds)
				}
			}
		}
	}
}

// refExpr is each reference of the model's environments as the template
// gives it: a resource's Ref or attribute, a parameter, or a value.
var refExpr = map[deploymodel.Ref]string{
	deploymodel.RefTable:            "Ref(" + TableID + ")",
	deploymodel.RefStateMachine:     "Ref(" + StateMachineID + ")",
	deploymodel.RefWebhookURL:       "GetAtt(WebhookFunctionUrl.FunctionUrl)",
	deploymodel.RefAPIURL:           `If(["UseSearchBaseUrl","Ref(SearchBaseUrl)","Ref(AWS::NoValue)"])`,
	deploymodel.RefDeliverQueue:     "Ref(" + DeliverQueueID + ")",
	deploymodel.RefDeliverDLQ:       "Ref(" + DeliverDLQID + ")",
	deploymodel.RefBulkBucket:       "Ref(" + BulkBucketID + ")",
	deploymodel.RefJobsStateMachine: "Ref(" + JobStateMachineID + ")",
	deploymodel.RefEventBus:         deploy.EventBus,
	deploymodel.RefEmbeddings:       "Ref(" + EmbeddingsParam + ")",
	deploymodel.RefEmbeddingsModel:  "Ref(" + EmbeddingModelIDParam + ")",
}

// envProblems: every function's variables are the model's (the app's
// configuration as internal/deploymodel/derive makes it) with each
// reference to the template's resource, plus the local-only DynamoDB
// endpoint.
func envProblems(tmpl *cloudformation.Template, s Spec) []string {
	var p []string
	for _, f := range s.Functions {
		fn := tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)]
		if fn == nil || fn.Environment == nil {
			p = append(p, f.Name+": no environment")
			continue
		}
		want := map[string]string{}
		for k, val := range f.EnvIn(false) {
			want[k] = val.Value
			if val.Ref != "" {
				want[k] = refExpr[val.Ref]
			}
		}
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
	for _, f := range deployed() {
		vars := tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)].Environment.Variables
		if _, ok := vars["STATE_MACHINE_ARN"]; ok != f.StartsRuns {
			t.Errorf("%s: has STATE_MACHINE_ARN = %v, starts runs = %v", f.Name, ok, f.StartsRuns)
		}
		if _, ok := vars["WEBHOOK_BASE_URL"]; ok != f.WebhookURLs {
			t.Errorf("%s: has WEBHOOK_BASE_URL = %v", f.Name, ok)
		}
		if _, ok := vars["SEARCH_BASE_URL"]; ok != f.SearchesByAPI {
			t.Errorf("%s: has SEARCH_BASE_URL = %v", f.Name, ok)
		}
		// The delivery queue: the functions that queue deliveries and the
		// deliver function; its dead-letter queue: the deliver function.
		if _, ok := vars["DELIVER_QUEUE_URL"]; ok != (f.SendsDeliveries || f.Name == lambdas.Deliver) {
			t.Errorf("%s: has DELIVER_QUEUE_URL = %v", f.Name, ok)
		}
		if _, ok := vars["DELIVER_DLQ_URL"]; ok != (f.Name == lambdas.Deliver) {
			t.Errorf("%s: has DELIVER_DLQ_URL = %v", f.Name, ok)
		}
		if _, ok := vars["WEBHOOKS_ALLOW_LOOPBACK"]; ok {
			t.Errorf("%s: allows webhook endpoints on loopback addresses", f.Name)
		}
		if v := vars["TABLE_NAME"]; v != "Ref("+TableID+")" {
			t.Errorf("%s: TABLE_NAME = %q, want the table's Ref", f.Name, v)
		}
	}
	// The bulk jobs' variables: their own test below. The variables read
	// back as the configuration the functions expect:
	// internal/deploymodel/derive's tests.
	for _, name := range []string{lambdas.Hooks, lambdas.Events} {
		if f, _ := model().Function(name); !f.SendsDeliveries {
			t.Errorf("the %s function does not queue deliveries", name)
		}
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
		for _, ix := range s.Model.Table.Indexes {
			resources = append(resources, "Sub(${Table.Arn}/index/"+ix.Name+")")
		}
		want := []any{map[string]any{
			"Sid": "Table", "Effect": "Allow",
			"Action":   toAny(f.TableActions),
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
		if f.RunsJobs {
			want = append(want, map[string]any{
				"Sid": "UploadImports", "Effect": "Allow",
				"Action":   []any{"s3:PutObject"},
				"Resource": []any{"Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/imports/*)"},
			}, map[string]any{
				"Sid": "DownloadJobFiles", "Effect": "Allow",
				"Action":   []any{"s3:GetObject"},
				"Resource": []any{"Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/imports/*)", "Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/exports/*)"},
			}, map[string]any{
				"Sid": "StartJobs", "Effect": "Allow",
				"Action":   []any{"states:StartExecution"},
				"Resource": "Ref(" + JobStateMachineID + ")",
			})
		}
		if f.Reach == deploymodel.ByStateMachine {
			want = append(want, map[string]any{
				"Sid": "RunJobs", "Effect": "Allow",
				"Action":   []any{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"},
				"Resource": []any{"Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/imports/*)", "Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/exports/*)"},
			}, map[string]any{
				"Sid": "ListJobFiles", "Effect": "Allow",
				"Action":   []any{"s3:ListBucket"},
				"Resource": "GetAtt(" + BulkBucketID + ".Arn)",
			})
		}
		if f.ManagesTenants {
			want = append(want, map[string]any{
				"Sid": "TenantFiles", "Effect": "Allow",
				"Action": []any{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"},
				"Resource": []any{"Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/imports/*)", "Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/exports/*)",
					"Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/orgs/*)"},
			}, map[string]any{
				"Sid": "ListTenantFiles", "Effect": "Allow",
				"Action":    []any{"s3:ListBucket"},
				"Resource":  "GetAtt(" + BulkBucketID + ".Arn)",
				"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": []any{"imports/*", "exports/*", "orgs/*"}}},
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
		if f.Embeds {
			// Invoking the embedding model, only when the Embeddings
			// parameter is bedrock (embed_test.go checks it closely).
			want = append(want, invokeEmbeddingModel)
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

// stateMachineProblems: state machine id of tmpl is definition with the
// runner's ARN substituted, may invoke the runner only, and logs to its own
// log group with tracing on.
func stateMachineProblems(tmpl *cloudformation.Template, id string, definition func(functionARN string) string) []string {
	sm := tmpl.GetAllServerlessStateMachineResources()[id]
	if sm == nil {
		return []string{"no state machine " + id}
	}
	var p []string
	if got := sm.DefinitionSubstitutions; !reflect.DeepEqual(got, map[string]string{RunnerArnVar: "GetAtt(RunnerFunction.Arn)"}) {
		p = append(p, fmt.Sprintf("%s: DefinitionSubstitutions %v", id, got))
	}
	if v(sm.Type) != "STANDARD" {
		p = append(p, fmt.Sprintf("%s: type %q, want STANDARD", id, v(sm.Type)))
	}
	raw, err := json.Marshal(sm.Definition)
	if err != nil {
		return append(p, err.Error())
	}
	const arn = "arn:aws:lambda:eu-west-1:123456789012:function:runner"
	var got, want any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "${"+RunnerArnVar+"}", arn)), &got); err != nil {
		return append(p, err.Error())
	}
	if err := json.Unmarshal([]byte(definition(arn)), &want); err != nil {
		return append(p, err.Error())
	}
	if !reflect.DeepEqual(got, want) {
		p = append(p, fmt.Sprintf("%s: definition after substitution:\n%s\nwant:\n%s", id, raw, definition(arn)))
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
		p = append(p, fmt.Sprintf("%s: LambdaInvokePolicy for %v, want the runner only", id, invoke))
	}
	if sm.Logging == nil || sm.Logging.Level != "ALL" || len(sm.Logging.Destinations) != 1 ||
		sm.Logging.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn != "GetAtt("+id+"Logs.Arn)" {
		p = append(p, fmt.Sprintf("%s: logging %+v, want ALL to its own log group %sLogs", id, sm.Logging, id))
	}
	if sm.Tracing == nil || !v(sm.Tracing.Enabled) {
		p = append(p, fmt.Sprintf("%s: tracing %+v", id, sm.Tracing))
	}
	return p
}

func TestTheStateMachineIsTheRunDefinitionInvokingTheRunnerWithLoggingAndTracing(t *testing.T) {
	tmpl := committed(t)
	if sms := tmpl.GetAllServerlessStateMachineResources(); !slices.Equal(slices.Sorted(maps.Keys(sms)), []string{JobStateMachineID, StateMachineID}) {
		t.Fatalf("state machines %v, want %s and %s", slices.Sorted(maps.Keys(sms)), StateMachineID, JobStateMachineID)
	}
	for _, p := range stateMachineProblems(tmpl, StateMachineID, model().RunDefinition) {
		t.Error(p)
	}
	if ev := tmpl.GetAllServerlessStateMachineResources()[StateMachineID].Events; len(ev) != 0 {
		t.Errorf("the run state machine has events %v: only the functions that start runs start it", ev)
	}
}

func TestTheTableHasTheModelsKeysIndexesAndTimeToLiveWithRecovery(t *testing.T) {
	tmpl := committed(t)
	tables := tmpl.GetAllDynamoDBTableResources()
	tb := tables[TableID]
	if len(tables) != 1 || tb == nil {
		t.Fatalf("tables %v", tables)
	}
	def := model().Table
	if v(tb.BillingMode) != def.BillingMode || v(tb.BillingMode) != "PAY_PER_REQUEST" {
		t.Errorf("billing %q", v(tb.BillingMode))
	}
	type key struct{ name, kind string }
	keys := func(ks []deploymodel.Key) []key {
		var out []key
		for _, k := range ks {
			out = append(out, key{k.Attribute, k.Type})
		}
		return out
	}
	var got []key
	for _, k := range tb.KeySchema {
		got = append(got, key{k.AttributeName, k.KeyType})
	}
	if want := keys(def.KeySchema); !slices.Equal(got, want) || want[0] != (key{"pk", "HASH"}) {
		t.Errorf("key schema %v, want %v", got, want)
	}
	gsis := map[string][]key{}
	for _, g := range tb.GlobalSecondaryIndexes {
		for _, k := range g.KeySchema {
			gsis[g.IndexName] = append(gsis[g.IndexName], key{k.AttributeName, k.KeyType})
		}
		want := "ALL"
		for _, ix := range def.Indexes {
			if ix.Name == g.IndexName {
				want = ix.Projection
			}
		}
		if g.Projection.ProjectionType == nil || *g.Projection.ProjectionType != want {
			t.Errorf("index %s projects %v, want %s (the store's)", g.IndexName, g.Projection.ProjectionType, want)
		}
	}
	wantGSIs := map[string][]key{}
	for _, ix := range def.Indexes {
		wantGSIs[ix.Name] = keys(ix.KeySchema)
	}
	if !reflect.DeepEqual(gsis, wantGSIs) || len(wantGSIs) == 0 {
		t.Errorf("GSIs %v, want %v", gsis, wantGSIs)
	}
	attrs := map[string]string{}
	for _, a := range tb.AttributeDefinitions {
		attrs[a.AttributeName] = a.AttributeType
	}
	wantAttrs := map[string]string{}
	for _, a := range def.Attributes {
		wantAttrs[a.Name] = a.Type
	}
	if !reflect.DeepEqual(attrs, wantAttrs) {
		t.Errorf("attributes %v, want %v", attrs, wantAttrs)
	}
	if tb.TimeToLiveSpecification == nil || v(tb.TimeToLiveSpecification.AttributeName) != def.TimeToLiveAttribute || !tb.TimeToLiveSpecification.Enabled || def.TimeToLiveAttribute != "ttl" {
		t.Errorf("TTL %+v, want on %q", tb.TimeToLiveSpecification, def.TimeToLiveAttribute)
	}
	if tb.PointInTimeRecoverySpecification == nil || !v(tb.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled) {
		t.Error("point-in-time recovery is off")
	}
	// The stream, always: the events function reads it.
	if tb.StreamSpecification == nil || tb.StreamSpecification.StreamViewType != def.StreamViewType ||
		tb.StreamSpecification.StreamViewType != "NEW_AND_OLD_IMAGES" {
		t.Errorf("stream %+v, want new and old images", tb.StreamSpecification)
	}
	if tb.AWSCloudFormationDeletionPolicy != "Retain" || tb.AWSCloudFormationUpdateReplacePolicy != "Retain" {
		t.Errorf("deletion %q, replace %q: want the data retained", tb.AWSCloudFormationDeletionPolicy, tb.AWSCloudFormationUpdateReplacePolicy)
	}
}

// The log groups and queues say what happens to them when the stack is
// deleted or they are replaced (cfn-lint's I3011): deleted, as in the CDK
// stack's dev stage, the stage samconfig.toml deploys the template as;
// only the table is retained (checked above).
func TestTheLogGroupsAndQueuesAreDeletedWithTheStackAsInTheDevStage(t *testing.T) {
	tmpl := raw(t, readFile(t, TemplatePath))
	want := map[string]int{"AWS::Logs::LogGroup": len(deployed()) + 3, "AWS::SQS::Queue": 3} // + the API's, the two state machines'
	got := map[string]int{}
	for id, r := range tmpl["Resources"].(map[string]any) {
		r, _ := r.(map[string]any)
		typ := fmt.Sprint(r["Type"])
		if _, ok := want[typ]; !ok {
			continue
		}
		got[typ]++
		if r["DeletionPolicy"] != "Delete" || r["UpdateReplacePolicy"] != "Delete" {
			t.Errorf("%s %s: DeletionPolicy %v, UpdateReplacePolicy %v; want Delete and Delete", typ, id, r["DeletionPolicy"], r["UpdateReplacePolicy"])
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("resources by type %v, want %v", got, want)
	}
}

func TestTheOutputsNameTheApiWebhookTableStateMachinesQueuesAndBulkBucket(t *testing.T) {
	outs := committed(t).Outputs
	for name, want := range map[string]string{
		"ApiUrl":          "Sub(https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/)",
		"WebhookUrl":      "GetAtt(WebhookFunctionUrl.FunctionUrl)",
		"TableName":       "Ref(Table)",
		"StateMachineArn": "Ref(RunStateMachine)",
		"DeliverQueueUrl": "Ref(" + DeliverQueueID + ")",
		"DeliverDlqUrl":   "Ref(" + DeliverDLQID + ")",
		// The bulk jobs' bucket (a bucket's Ref is its name) and the job
		// state machine (its Ref is its ARN).
		"BulkBucketName":     "Ref(" + BulkBucketID + ")",
		"JobStateMachineArn": "Ref(" + JobStateMachineID + ")",
	} {
		if o, ok := outs[name]; !ok || o.Value != want {
			t.Errorf("output %s = %v, want %s", name, o.Value, want)
		}
	}
	for name, words := range map[string][]string{
		"BulkBucketName":     {"bulk jobs", "uploads", "exports", fmt.Sprintf("%d days", deploy.BulkRetentionDays)},
		"JobStateMachineArn": {"job state machine", "imports and exports"},
	} {
		for _, w := range words {
			if d := v(outs[name].Description); !strings.Contains(d, w) {
				t.Errorf("output %s: description %q does not say %q", name, d, w)
			}
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
	all := model().Routes
	i := slices.IndexFunc(all, func(r deploymodel.Route) bool { return r.Function == lambdas.Companies && r.Method == "DELETE" })
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
	runner := tmpl.GetAllServerlessFunctionResources()[LogicalID(lambdas.Runner)]
	if runner == nil {
		t.Fatal("no runner function")
	}
	ev, ok := runner.Events[ScheduleEventName]
	if !ok || ev.Type != "Schedule" || ev.Properties == nil || ev.Properties.ScheduleEvent == nil || ev.Properties.ScheduleEvent.Schedule != "rate(5 minutes)" {
		t.Fatalf("runner events %+v, want %s: Schedule rate(5 minutes)", runner.Events, ScheduleEventName)
	}
	for _, f := range deployed() {
		for name, e := range tmpl.GetAllServerlessFunctionResources()[LogicalID(f.Name)].Events {
			if e.Type == "Schedule" && f.Name != lambdas.Runner {
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
		if s.Functions[i].Name == lambdas.Runner {
			s.Functions[i].Schedule = "rate(1 hour)"
		}
	}
	if p := eventProblems(tmpl, s); len(p) != 1 || !strings.HasPrefix(p[0], "runner: Schedule event") {
		t.Errorf("problems with the runner declared on another schedule %q, want the runner's Schedule event", p)
	}
}

func TestAFunctionThatStartedRunsOrAccessedMoreWouldBeCaught(t *testing.T) {
	s := DefaultSpec()
	s.Model = s.Model.Clone()
	s.Functions = s.Model.Deployed(false)
	for i := range s.Functions {
		f := &s.Functions[i]
		if f.Name == lambdas.Companies {
			// As the model declares a function that starts runs.
			f.StartsRuns = true
			f.Env["STATE_MACHINE_ARN"] = deploymodel.EnvValue{Ref: deploymodel.RefStateMachine}
		}
		if f.Name == lambdas.Runner {
			f.TableActions = append(slices.Clone(f.TableActions), "dynamodb:DescribeTable", "dynamodb:DescribeTimeToLive")
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
	if p := functionProblems(tmpl, Spec{Model: model(), Functions: append(deployed(), deploymodel.Function{Name: "search", Reach: deploymodel.ByAPI})}); len(p) == 0 {
		t.Error("a function missing from the template was not reported")
	}
}

func TestTheGeneratorRejectsWhatTheTemplateCannotExpress(t *testing.T) {
	for name, s := range map[string]Spec{
		"a route of an undeclared group": func() Spec {
			s := DefaultSpec()
			s.Routes = append(slices.Clone(s.Routes), deploymodel.Route{Function: "nope", Method: "GET", Path: "/v1/nope"})
			return s
		}(),
		"a name the Makefile cannot map back": func() Spec {
			s := DefaultSpec()
			s.Functions = append(slices.Clone(s.Functions), deploymodel.Function{Name: "Search-Index", Reach: deploymodel.ByOperator})
			return s
		}(),
		"two webhook functions": func() Spec {
			s := DefaultSpec()
			s.Functions = append(slices.Clone(s.Functions), deploymodel.Function{Name: "hooks2", Reach: deploymodel.ByURL})
			return s
		}(),
		"the OpenSearch indexer (no collection in the template)": func() Spec {
			s := DefaultSpec()
			s.Functions = model().Deployed(true)
			return s
		}(),
		"a second events function on the stream": func() Spec {
			s := DefaultSpec()
			s.Functions = append(slices.Clone(s.Functions), deploymodel.Function{Name: "events2", Reach: deploymodel.ByStream})
			return s
		}(),
		"no deliver function": func() Spec {
			s := DefaultSpec()
			s.Functions = slices.DeleteFunc(slices.Clone(s.Functions), func(f deploymodel.Function) bool { return f.Reach == deploymodel.ByQueue })
			return s
		}(),
		"no model": {Functions: deployed(), Routes: model().Routes},
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
	if env["Parameters"][EnvDynamoDBEndpoint] != "http://host.docker.internal:8000" || env["Parameters"]["TABLE_NAME"] != model().DefaultTable || model().DefaultTable != "sourcebase" {
		t.Errorf("Parameters %v", env["Parameters"])
	}
	for _, f := range deployed() {
		if f.StartsRuns && env[LogicalID(f.Name)]["STATE_MACHINE_ARN"] == "" {
			t.Errorf("%s starts runs and refuses to start without %s; the local environment has none", f.Name, "STATE_MACHINE_ARN")
		}
		// sam local's requests come to the container as localhost: the
		// mcp function reaches the API on the host instead.
		if got, want := env[LogicalID(f.Name)]["SEARCH_BASE_URL"], "http://host.docker.internal:3000"; f.SearchesByAPI && got != want {
			t.Errorf("%s searches through the API; its local %s is %q, want %q", f.Name, "SEARCH_BASE_URL", got, want)
		}
		// The events and deliver functions refuse to start without their
		// queues: sam local invoke of their samples needs a value (they
		// send nothing); behind start-api, the hooks function has none.
		local, declared := env[LogicalID(f.Name)]["DELIVER_QUEUE_URL"]
		switch {
		case f.Reach == deploymodel.ByStream || f.Reach == deploymodel.ByQueue:
			if local != LocalDeliverQueueURL {
				t.Errorf("%s: local %s %q, want %q", f.Name, "DELIVER_QUEUE_URL", local, LocalDeliverQueueURL)
			}
		case f.SendsDeliveries:
			if !declared || local != "" {
				t.Errorf("%s: local %s %q (set %v), want empty", f.Name, "DELIVER_QUEUE_URL", local, declared)
			}
		}
		if got := env[LogicalID(f.Name)]["DELIVER_DLQ_URL"]; (f.Reach == deploymodel.ByQueue) != (got == LocalDeliverDLQURL) {
			t.Errorf("%s: local %s %q", f.Name, "DELIVER_DLQ_URL", got)
		}
	}
}

// Under sam local there is no S3 and no Step Functions: the bulk jobs'
// bucket and state machine are blanked wherever the template declares
// them (the data function's job routes answer 503, the runner refuses job
// tasks), never left to sam local's reading of !Ref BulkBucket and never
// pointed at a bucket that does not exist; the local directory of make
// run-lambdas (BULK_DIR) is not sam local's.
func TestTheLocalEnvironmentBlanksTheBulkJobsBucketAndStateMachine(t *testing.T) {
	var env map[string]map[string]string
	if err := json.Unmarshal(readFile(t, LocalEnvPath), &env); err != nil {
		t.Fatal(err)
	}
	for _, f := range deployed() {
		local := env[LogicalID(f.Name)]
		for k, want := range map[string]bool{
			"BULK_BUCKET":            f.RunsJobs || f.Name == lambdas.Runner || f.Name == lambdas.Admin,
			"JOBS_STATE_MACHINE_ARN": f.RunsJobs,
		} {
			got, set := local[k]
			if set != want || got != "" {
				t.Errorf("%s: local %s %q (set %v), want it set (blank) %v", f.Name, k, got, set, want)
			}
		}
		for _, k := range []string{"BULK_DIR", "BULK_FILES_URL", "BULK_FILES_SECRET"} {
			if _, set := local[k]; set {
				t.Errorf("%s: local %s set", f.Name, k)
			}
		}
	}
	if _, set := env["Parameters"]["BULK_BUCKET"]; set {
		t.Error("Parameters sets BULK_BUCKET for every function")
	}
}

// The events function reads the table's stream as the CDK stack's does:
// from the trim horizon, batches of deploy.EventsBatchSize in order (one
// per shard), partial batch failures reported and a failing batch
// bisected, retried, then kept in EventsFailures; and it is invoked only
// for the item types that have events: the filter criteria name exactly
// the model's event item types (the event catalog's), in the new image or
// the old.
func TestTheEventsFunctionReadsTheTablesStreamFilteredToTheItemTypesThatHaveEvents(t *testing.T) {
	tmpl := raw(t, readFile(t, TemplatePath))
	_, props := rawResource(t, tmpl, LogicalID(lambdas.Events))
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
	wantTypes := model().EventItemTypes
	if !slices.Contains(wantTypes, "COMPANY") || slices.Contains(wantTypes, "DELETED") {
		t.Fatalf("the model's event item types %v", wantTypes)
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
			if got := attrs[model().Table.ItemTypeAttribute]["S"]; !slices.Equal(got, wantTypes) {
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
	_, props := rawResource(t, tmpl, LogicalID(lambdas.Deliver))
	events, _ := props["Events"].(map[string]any)
	ev, _ := events[QueueEventName].(map[string]any)
	if len(events) != 1 || ev["Type"] != "SQS" {
		t.Fatalf("deliver function events %v, want one SQS event %s", events, QueueEventName)
	}
	want := map[string]any{
		"Queue":                 "GetAtt(" + DeliverQueueID + ".Arn)",
		"BatchSize":             float64(model().DeliverBatchSize),
		"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		"ScalingConfig":         map[string]any{"MaximumConcurrency": "Ref(" + DeliverConcurrencyParam + ")"},
	}
	if p := ev["Properties"]; !reflect.DeepEqual(p, want) {
		t.Errorf("the delivery queue event %v, want %v", p, want)
	}
	if batch := model().DeliverBatchSize; batch < 1 || batch > 10 || deploy.DeliverMaxConcurrency < 2 {
		t.Errorf("batch size %d (a FIFO queue gives at most 10), maximum concurrency %d (at least 2)", batch, deploy.DeliverMaxConcurrency)
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
	deliver := tmpl.GetAllServerlessFunctionResources()[LogicalID(lambdas.Deliver)]
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

// The bulk jobs' bucket, as the CDK stack's (infra/jobs.go): private
// (every public access block, objects owned by the bucket: no ACLs),
// SSE-S3, objects expiring after deploy.BulkRetentionDays and unfinished
// multipart uploads removed after deploy.BulkAbortUploadDays, its events
// sent to EventBridge (an upload starts its import), and CORS open to PUT
// and GET from any origin, so that browsers can use the presigned URLs.
func TestTheBulkBucketIsPrivateEncryptedExpiringWithEventsToEventBridgeAndCORSForPresignedURLs(t *testing.T) {
	if buckets := committed(t).GetAllS3BucketResources(); !slices.Equal(slices.Sorted(maps.Keys(buckets)), []string{BulkBucketID}) {
		t.Fatalf("buckets %v, want %s only", slices.Sorted(maps.Keys(buckets)), BulkBucketID)
	}
	typ, props := rawResource(t, raw(t, readFile(t, TemplatePath)), BulkBucketID)
	if typ != "AWS::S3::Bucket" {
		t.Fatalf("%s is a %s", BulkBucketID, typ)
	}
	if deploy.BulkRetentionDays != 7 || deploy.BulkAbortUploadDays != 1 {
		t.Fatalf("retention %d days, abort after %d days: the bucket below expects 7 and 1", deploy.BulkRetentionDays, deploy.BulkAbortUploadDays)
	}
	want := map[string]any{
		"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
			map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
		}},
		"PublicAccessBlockConfiguration": map[string]any{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
		},
		"OwnershipControls": map[string]any{"Rules": []any{map[string]any{"ObjectOwnership": "BucketOwnerEnforced"}}},
		"LifecycleConfiguration": map[string]any{"Rules": []any{map[string]any{
			"Id": "ExpireJobFiles", "Status": "Enabled",
			"ExpirationInDays":               float64(7),
			"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": float64(1)},
		}}},
		"NotificationConfiguration": map[string]any{"EventBridgeConfiguration": map[string]any{"EventBridgeEnabled": true}},
		"CorsConfiguration": map[string]any{"CorsRules": []any{map[string]any{
			"AllowedMethods": []any{"PUT", "GET"},
			"AllowedOrigins": []any{"*"},
			"AllowedHeaders": []any{"*"},
			"ExposedHeaders": []any{"ETag"},
			"MaxAge":         float64(3600),
		}}},
	}
	for k, w := range want {
		if !reflect.DeepEqual(props[k], w) {
			t.Errorf("%s: %v, want %v", k, props[k], w)
		}
	}
	for k := range props {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected bucket property %s: %v (a fixed BucketName, say, would keep two stacks apart only by luck)", k, props[k])
		}
	}
}

// The bucket's policy denies every request without TLS, to the bucket and
// to its objects, as the CDK stack's EnforceSSL does; it grants nothing
// (the functions' roles do).
func TestTheBulkBucketDeniesRequestsWithoutTLS(t *testing.T) {
	tmpl := committed(t)
	policies := tmpl.GetAllS3BucketPolicyResources()
	if !slices.Equal(slices.Sorted(maps.Keys(policies)), []string{BulkBucketID + "Policy"}) {
		t.Fatalf("bucket policies %v, want %sPolicy", slices.Sorted(maps.Keys(policies)), BulkBucketID)
	}
	p := policies[BulkBucketID+"Policy"]
	if p.Bucket != "Ref("+BulkBucketID+")" {
		t.Errorf("the policy is on %q, want the bulk bucket", p.Bucket)
	}
	want := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid": "EnforceTLS", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
			"Resource":  []any{"GetAtt(" + BulkBucketID + ".Arn)", "Sub(${" + BulkBucketID + ".Arn}/*)"},
			"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
		}},
	}
	if !reflect.DeepEqual(p.PolicyDocument, want) {
		t.Errorf("policy document %v, want %v", p.PolicyDocument, want)
	}
}

// The job state machine is the model's job definition
// (jobs.StateMachineDefinition) over the runner
// (the run state machine's function), with its own log group and tracing,
// and bounded by deploy.JobsStateMachineTimeout.
func TestTheJobStateMachineIsTheJobDefinitionInvokingTheRunnerWithLoggingAndTracing(t *testing.T) {
	tmpl := committed(t)
	for _, p := range stateMachineProblems(tmpl, JobStateMachineID, model().JobDefinition) {
		t.Error(p)
	}
	lg := tmpl.GetAllLogsLogGroupResources()[JobStateMachineID+"Logs"]
	if lg == nil || v(lg.LogGroupName) != "Sub(/aws/vendedlogs/states/${AWS::StackName}-jobs)" || v(lg.RetentionInDays) != deploy.SAMLogRetentionDays {
		t.Errorf("the job state machine's log group %+v", lg)
	}
	var def struct{ TimeoutSeconds int }
	if err := json.Unmarshal([]byte(model().JobDefinition("arn")), &def); err != nil {
		t.Fatal(err)
	}
	if def.TimeoutSeconds != int(deploy.JobsStateMachineTimeout.Seconds()) {
		t.Errorf("the job state machine times out after %d s, want deploy.JobsStateMachineTimeout %s", def.TimeoutSeconds, deploy.JobsStateMachineTimeout)
	}
	// The same checks catch a state machine on another definition.
	if p := stateMachineProblems(tmpl, JobStateMachineID, model().RunDefinition); len(p) != 1 || !strings.Contains(p[0], "definition after substitution") {
		t.Errorf("problems of the job state machine read as the run definition: %q", p)
	}
}

// An import's upload starts the job state machine: its one event is an
// EventBridge rule on S3's Object Created events of the bulk bucket for
// the keys of uploads (deploy.BulkUploadPattern), the runner's errors
// files under imports/ excepted. SAM makes the rule and the role that
// lets EventBridge start executions of this state machine only.
func TestAnImportsUploadStartsTheJobStateMachineThroughAnEventBridgeRule(t *testing.T) {
	_, props := rawResource(t, raw(t, readFile(t, TemplatePath)), JobStateMachineID)
	events, _ := props["Events"].(map[string]any)
	ev, _ := events[UploadEventName].(map[string]any)
	if len(events) != 1 || ev["Type"] != "EventBridgeRule" {
		t.Fatalf("job state machine events %v, want one EventBridgeRule event %s", events, UploadEventName)
	}
	want := map[string]any{"Pattern": map[string]any{
		"source":      []any{"aws.s3"},
		"detail-type": []any{"Object Created"},
		"detail": map[string]any{
			"bucket": map[string]any{"name": []any{"Ref(" + BulkBucketID + ")"}},
			"object": map[string]any{"key": []any{map[string]any{"wildcard": "imports/*/*/upload"}}},
		},
	}}
	if !reflect.DeepEqual(ev["Properties"], want) {
		t.Errorf("the upload event %v, want %v", ev["Properties"], want)
	}
	// No input of its own: the definition reads the event
	// ($.detail.object.key and .size), and the default bus (S3 sends
	// there).
	if deploy.BulkUploadPattern != "imports/*/*/upload" || !strings.HasPrefix(deploy.BulkUploadPattern, deploy.BulkImportsPrefix) {
		t.Errorf("deploy.BulkUploadPattern %q", deploy.BulkUploadPattern)
	}
	for _, key := range []string{"$.detail.object.key", "$.detail.object.size"} {
		if !strings.Contains(model().JobDefinition("arn"), `"`+key+`"`) {
			t.Errorf("the job definition does not read %s from S3's event", key)
		}
	}
}

// Only the functions that create jobs (the data function) and the runner
// know the bulk bucket, by its name; only the former know the job state
// machine, by its ARN. Nothing local-only (BULK_DIR and its URL and
// secret) is ever deployed.
func TestOnlyTheFunctionsThatCreateOrRunJobsKnowTheBulkBucketAndOnlyCreatorsTheJobStateMachine(t *testing.T) {
	fns := committed(t).GetAllServerlessFunctionResources()
	creators := 0
	for _, f := range deployed() {
		vars := fns[LogicalID(f.Name)].Environment.Variables
		creators += map[bool]int{true: 1}[f.RunsJobs]
		wantBucket, wantMachine := f.Name == lambdas.Data || f.Name == lambdas.Runner || f.Name == lambdas.Admin, f.Name == lambdas.Data
		if got, ok := vars["BULK_BUCKET"]; ok != wantBucket || ok && got != "Ref("+BulkBucketID+")" {
			t.Errorf("%s: %s = %q (set %v), want set %v to the bucket's Ref", f.Name, "BULK_BUCKET", got, ok, wantBucket)
		}
		if got, ok := vars["JOBS_STATE_MACHINE_ARN"]; ok != wantMachine || ok && got != "Ref("+JobStateMachineID+")" {
			t.Errorf("%s: %s = %q (set %v), want set %v to the job state machine's Ref", f.Name, "JOBS_STATE_MACHINE_ARN", got, ok, wantMachine)
		}
		for _, k := range []string{"BULK_DIR", "BULK_FILES_URL", "BULK_FILES_SECRET"} {
			if _, ok := vars[k]; ok {
				t.Errorf("%s: has the local-only %s", f.Name, k)
			}
		}
	}
	if creators != 1 {
		t.Errorf("%d functions create jobs, the test expects the data function only", creators)
	}
}

// The exact statements on the bulk jobs' resources: the data function
// presigns uploads to imports/ and downloads of imports/ and exports/ and
// starts the job state machine; the runner reads and writes imports/ and
// exports/ and lists the bucket (to tell a missing object from a
// forbidden one); no other function has any S3 action or may start jobs.
func TestTheFunctionsThatCreateOrRunJobsMayDoExactlyTheirBulkActions(t *testing.T) {
	fns := committed(t).GetAllServerlessFunctionResources()
	bulk := func(name string) []any {
		var out []any
		for _, st := range (*fns[LogicalID(name)].Policies.IAMPolicyDocumentArray)[0].Statement {
			m, _ := st.(map[string]any)
			b, _ := json.Marshal(m)
			if strings.Contains(string(b), `"s3:`) || strings.Contains(string(b), JobStateMachineID) || strings.Contains(string(b), BulkBucketID) {
				out = append(out, m)
			}
		}
		return out
	}
	imports := "Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/imports/*)"
	exports := "Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/exports/*)"
	want := map[string][]any{
		lambdas.Data: {
			map[string]any{"Sid": "UploadImports", "Effect": "Allow", "Action": []any{"s3:PutObject"}, "Resource": []any{imports}},
			map[string]any{"Sid": "DownloadJobFiles", "Effect": "Allow", "Action": []any{"s3:GetObject"}, "Resource": []any{imports, exports}},
			map[string]any{"Sid": "StartJobs", "Effect": "Allow", "Action": []any{"states:StartExecution"}, "Resource": "Ref(JobStateMachine)"},
		},
		lambdas.Runner: {
			map[string]any{"Sid": "RunJobs", "Effect": "Allow", "Action": []any{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}, "Resource": []any{imports, exports}},
			map[string]any{"Sid": "ListJobFiles", "Effect": "Allow", "Action": []any{"s3:ListBucket"}, "Resource": "GetAtt(BulkBucket.Arn)"},
		},
		// The tenant lifecycle (export-org, delete-org): an organization's
		// files under the three prefixes, listing only them.
		lambdas.Admin: {
			map[string]any{"Sid": "TenantFiles", "Effect": "Allow", "Action": []any{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"},
				"Resource": []any{imports, exports, "Sub(arn:${AWS::Partition}:s3:::${BulkBucket}/orgs/*)"}},
			map[string]any{"Sid": "ListTenantFiles", "Effect": "Allow", "Action": []any{"s3:ListBucket"}, "Resource": "GetAtt(BulkBucket.Arn)",
				"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": []any{"imports/*", "exports/*", "orgs/*"}}}},
		},
	}
	for _, f := range deployed() {
		if got := bulk(f.Name); !reflect.DeepEqual(got, want[f.Name]) {
			t.Errorf("%s: bulk statements %v, want %v", f.Name, got, want[f.Name])
		}
	}
	// They are deploy's, which the CDK stack grants too.
	for name, pair := range map[string][2][]string{
		"upload":   {deploy.BulkUploadActions, {"s3:PutObject"}},
		"download": {deploy.BulkDownloadActions, {"s3:GetObject"}},
		"run":      {deploy.BulkRunActions, {"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}},
		"list":     {deploy.BulkListActions, {"s3:ListBucket"}},
		"start":    {deploy.StartJobActions, {"states:StartExecution"}},
	} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Errorf("deploy's %s actions %v, this test expects %v", name, pair[0], pair[1])
		}
	}
	if deploy.BulkImportsPrefix != "imports/" || deploy.BulkExportsPrefix != "exports/" {
		t.Errorf("prefixes %q and %q", deploy.BulkImportsPrefix, deploy.BulkExportsPrefix)
	}
}

// A function declared to create jobs that the committed template does not
// equip is reported by the environment and policy checks, by name.
func TestAFunctionThatCreatedJobsWouldBeCaught(t *testing.T) {
	s := DefaultSpec()
	s.Model = s.Model.Clone()
	s.Functions = s.Model.Deployed(false)
	for i := range s.Functions {
		if f := &s.Functions[i]; f.Name == lambdas.Catalog {
			// As the model declares a function that creates jobs.
			f.RunsJobs = true
			f.Env["BULK_BUCKET"] = deploymodel.EnvValue{Ref: deploymodel.RefBulkBucket}
			f.Env["JOBS_STATE_MACHINE_ARN"] = deploymodel.EnvValue{Ref: deploymodel.RefJobsStateMachine}
		}
	}
	tmpl := committed(t)
	env, pol := envProblems(tmpl, s), policyProblems(tmpl, s)
	if len(env) != 1 || !strings.HasPrefix(env[0], "catalog:") {
		t.Errorf("env problems %q, want the catalog function's", env)
	}
	if len(pol) != 1 || !strings.HasPrefix(pol[0], "catalog:") {
		t.Errorf("policy problems %q, want the catalog function's", pol)
	}
	// Generated from that spec, the template gives it the data function's
	// variables and statements.
	out, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	if p := append(envProblems(parse(t, out), s), policyProblems(parse(t, out), s)...); len(p) != 0 {
		t.Errorf("problems of the template generated with catalog creating jobs: %q", p)
	}
}

// A function that ships the documentation pages beside its bootstrap says
// so where its code comes from (the build target copies them: targets_test),
// and the template follows the function table: a function's Pages changed
// there makes the committed template stale.
func TestTheTemplateSaysWhichFunctionsShipTheDocumentationPagesBesideTheirBootstrap(t *testing.T) {
	text := string(readFile(t, TemplatePath))
	for _, f := range deployed() {
		block := text[strings.Index(text, "\n  "+LogicalID(f.Name)+":\n"):]
		block = block[:strings.Index(block, "CodeUri:")]
		if says := strings.Contains(block, "copies the documentation pages (docs/*.md) into "+model().PagesDir+"/"); says != f.Pages {
			t.Errorf("%s: the template says it ships the documentation pages: %v, want %v (routes.Function.Pages)", LogicalID(f.Name), says, f.Pages)
		}
	}
	s := DefaultSpec()
	s.Functions = slices.Clone(s.Functions)
	i := slices.IndexFunc(s.Functions, func(f deploymodel.Function) bool { return f.Pages })
	if i < 0 {
		t.Fatal("no function ships the documentation pages; the MCP function offers them as resources")
	}
	s.Functions[i].Pages = false
	if stale, err := staleFiles(root(t), s); err != nil || !slices.Contains(stale, TemplatePath) {
		t.Errorf("with %s's pages left out of the function table, staleFiles = %v, %v; want %s", s.Functions[i].Name, stale, err, TemplatePath)
	}
}

// TestTheDeploymentLimitsAreParametersWithTheCDKStacksDefaults holds the
// template's deployment limits to the CDK stack's context values: the
// HTTP API's throttle, the webhook function's reserved concurrency and the
// deliveries in flight are Number parameters whose defaults and bounds are
// the stack's (infra/deploy), and the resources read them.
func TestTheDeploymentLimitsAreParametersWithTheCDKStacksDefaults(t *testing.T) {
	tmpl := raw(t, readFile(t, TemplatePath))
	params, _ := tmpl["Parameters"].(map[string]any)
	for name, want := range map[string][3]float64{
		APIRateLimitParam:       {deploy.APIRateLimit, 1, 100000},
		APIBurstLimitParam:      {deploy.APIBurstLimit, 1, 100000},
		WebhookConcurrencyParam: {deploy.WebhookConcurrency, 1, 100000},
		DeliverConcurrencyParam: {deploy.DeliverMaxConcurrency, 2, 1000},
	} {
		p, _ := params[name].(map[string]any)
		if p["Type"] != "Number" || p["Default"] != want[0] || p["MinValue"] != want[1] || p["MaxValue"] != want[2] || p["Description"] == nil {
			t.Errorf("parameter %s: %v, want a described Number defaulting to %v within [%v, %v]", name, p, want[0], want[1], want[2])
		}
	}
	_, api := rawResource(t, tmpl, HttpAPIID)
	want := map[string]any{"ThrottlingRateLimit": "Ref(" + APIRateLimitParam + ")", "ThrottlingBurstLimit": "Ref(" + APIBurstLimitParam + ")"}
	if got := api["DefaultRouteSettings"]; !reflect.DeepEqual(got, want) {
		t.Errorf("the HTTP API's DefaultRouteSettings %v, want %v", got, want)
	}
	for _, f := range deployed() {
		if f.Reach != deploymodel.ByURL {
			continue
		}
		if _, props := rawResource(t, tmpl, LogicalID(f.Name)); props["ReservedConcurrentExecutions"] != "Ref("+WebhookConcurrencyParam+")" {
			t.Errorf("%s: reserved concurrency %v, want the %s parameter", f.Name, props["ReservedConcurrentExecutions"], WebhookConcurrencyParam)
		}
	}
}
