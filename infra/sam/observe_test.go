package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/sourcebase/sourcebase/infra/deploy"
)

// rawResources are the committed template's resources (intrinsics kept as
// by keep), by logical id.
func rawResources(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for id, r := range raw(t, readFile(t, TemplatePath))["Resources"].(map[string]any) {
		out[id] = r.(map[string]any)
	}
	return out
}

// dimensionExpr is d's value as keep writes it in the template.
func dimensionExpr(t *testing.T, d deploy.Dimension) string {
	t.Helper()
	e, err := targetExpr(d.Value)
	if d.Value.Kind == "" {
		return d.Value.Name
	}
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(e, ".QueueName") {
		return "GetAtt(" + e + ")"
	}
	return "Ref(" + e + ")"
}

func wantDims(t *testing.T, m deploy.Metric) []any {
	var out []any
	for _, d := range m.Dimensions {
		out = append(out, map[string]any{"Name": d.Name, "Value": dimensionExpr(t, d)})
	}
	return out
}

// Every alarm of deploy.Alarms (the embedded search engine's, as the
// template deploys) is in the template as the CDK stack has it: named by
// the stack and its stable name, on exactly its metric (namespace, name,
// dimensions naming the template's resources, statistic, period) or its
// metric math over exactly its metrics, with its threshold, comparison,
// periods and missing data, notifying the alarm topic on ALARM and OK;
// and no other alarm is.
func TestEveryAlarmIsOnItsMetricWithItsThresholdAndNotifiesTheAlarmTopic(t *testing.T) {
	res := rawResources(t)
	want := deploy.Alarms(model(), false)
	n := 0
	for _, r := range res {
		if r["Type"] == "AWS::CloudWatch::Alarm" {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("%d alarms, want %d", n, len(want))
	}
	for _, a := range want {
		r, ok := res[AlarmID(a.Name)]
		if !ok || r["Type"] != "AWS::CloudWatch::Alarm" {
			t.Errorf("no alarm %s (%s)", a.Name, AlarmID(a.Name))
			continue
		}
		p := r["Properties"].(map[string]any)
		for k, v := range map[string]any{
			"AlarmName":          "Sub(${AWS::StackName}-" + a.Name + ")",
			"AlarmDescription":   a.Description,
			"Threshold":          a.Threshold,
			"ComparisonOperator": a.Comparison,
			"EvaluationPeriods":  float64(a.EvaluationPeriods),
			"DatapointsToAlarm":  float64(a.DatapointsToAlarm),
			"TreatMissingData":   "notBreaching",
			"AlarmActions":       []any{"Ref(" + AlarmTopicID + ")"},
			"OKActions":          []any{"Ref(" + AlarmTopicID + ")"},
		} {
			if !reflect.DeepEqual(p[k], v) {
				t.Errorf("%s: %s %v, want %v", a.Name, k, p[k], v)
			}
		}
		period := a.Period.Seconds()
		if a.Metric != nil {
			m := *a.Metric
			statKey := "Statistic"
			if strings.HasPrefix(m.Stat, "p") {
				statKey = "ExtendedStatistic"
			}
			if p["Namespace"] != m.Namespace || p["MetricName"] != m.Name || p[statKey] != m.Stat || p["Period"] != period || p["Metrics"] != nil {
				t.Errorf("%s: metric %v %v %v=%v every %v, want %s %s %s every %v", a.Name, p["Namespace"], p["MetricName"], statKey, p[statKey], p["Period"], m.Namespace, m.Name, m.Stat, period)
			}
			if !reflect.DeepEqual(p["Dimensions"], wantDims(t, m)) {
				t.Errorf("%s: dimensions %v, want %v", a.Name, p["Dimensions"], wantDims(t, m))
			}
			continue
		}
		metrics, _ := p["Metrics"].([]any)
		if len(metrics) != len(a.Metrics)+1 {
			t.Errorf("%s: %d metrics, want the expression and %d", a.Name, len(metrics), len(a.Metrics))
			continue
		}
		// A setting in the expression (the stage's steady rate) is the
		// template's parameter, substituted.
		wantExpr := a.Expression
		if strings.Contains(wantExpr, deploy.SettingAPIRateLimit) {
			wantExpr = "Sub(" + strings.ReplaceAll(wantExpr, deploy.SettingAPIRateLimit, "${"+APIRateLimitParam+"}") + ")"
		}
		if e := metrics[0].(map[string]any); e["Expression"] != wantExpr || e["ReturnData"] != true {
			t.Errorf("%s: expression %v, want %s returned", a.Name, e, wantExpr)
		}
		for i, m := range a.Metrics {
			want := map[string]any{"Id": m.ID, "ReturnData": false, "MetricStat": map[string]any{
				"Metric": map[string]any{"Namespace": m.Namespace, "MetricName": m.Name, "Dimensions": wantDims(t, m)},
				"Period": period, "Stat": m.Stat,
			}}
			if !reflect.DeepEqual(metrics[i+1], want) {
				t.Errorf("%s: metric %d %v, want %v", a.Name, i, metrics[i+1], want)
			}
		}
	}
}

// The alarm topic is encrypted with a rotated key of its own whose policy
// lets CloudWatch use it, denies requests without TLS, lets this account's
// alarms publish, and is an output with the dashboard's name.
func TestTheAlarmTopicIsEncryptedTLSOnlyAndAnOutput(t *testing.T) {
	res := rawResources(t)
	topic := res[AlarmTopicID]["Properties"].(map[string]any)
	if topic["KmsMasterKeyId"] != "Ref("+AlarmTopicKeyID+")" {
		t.Errorf("topic %v", topic)
	}
	key := res[AlarmTopicKeyID]
	kp, _ := json.Marshal(key["Properties"])
	if key["Type"] != "AWS::KMS::Key" || key["DeletionPolicy"] != "Delete" || !strings.Contains(string(kp), `"EnableKeyRotation":true`) ||
		!strings.Contains(string(kp), `"Principal":{"Service":"cloudwatch.amazonaws.com"}`) || !strings.Contains(string(kp), `"kms:GenerateDataKey*"`) {
		t.Errorf("key %s", kp)
	}
	pol, _ := json.Marshal(res[AlarmTopicPolicyID]["Properties"])
	for _, want := range []string{`"Topics":["Ref(AlarmTopic)"]`, `"Effect":"Deny"`, `"aws:SecureTransport":"false"`, `"Service":"cloudwatch.amazonaws.com"`, `"Action":"sns:Publish"`} {
		if !strings.Contains(string(pol), want) {
			t.Errorf("topic policy %s has no %s", pol, want)
		}
	}
	outputs := raw(t, readFile(t, TemplatePath))["Outputs"].(map[string]any)
	if o, _ := outputs["AlarmTopicArn"].(map[string]any); o["Value"] != "Ref("+AlarmTopicID+")" {
		t.Errorf("AlarmTopicArn output %v", o)
	}
	if o, _ := outputs["DashboardName"].(map[string]any); o["Value"] != "Ref("+DashboardID+")" {
		t.Errorf("DashboardName output %v", o)
	}
}

// yamlDoc is the committed template as YAML nodes (its conditions'
// intrinsics untouched).
func yamlDoc(t *testing.T) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(readFile(t, TemplatePath), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func child(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		var next *yaml.Node
		for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// eval evaluates the intrinsics the email slots use (!Ref of a
// CommaDelimitedList, !Join, !Split, !Select, !Equals, !Not) with params.
func eval(t *testing.T, n *yaml.Node, params map[string][]string) any {
	t.Helper()
	args := func() []any {
		var out []any
		for _, c := range n.Content {
			out = append(out, eval(t, c, params))
		}
		return out
	}
	switch n.Tag {
	case "!Ref":
		return params[n.Value]
	case "!Join":
		a := args()
		var parts []string
		switch l := a[1].(type) {
		case []string:
			parts = l
		case []any:
			for _, x := range l {
				parts = append(parts, fmt.Sprint(x))
			}
		}
		return strings.Join(parts, a[0].(string))
	case "!Split":
		a := args()
		return strings.Split(a[1].(string), a[0].(string))
	case "!Select":
		a := args()
		i, _ := strconv.Atoi(fmt.Sprint(a[0]))
		return a[1].([]string)[i]
	case "!Equals":
		a := args()
		return a[0] == a[1]
	case "!Not":
		return !args()[0].(bool)
	}
	if n.Kind == yaml.SequenceNode {
		return args()
	}
	return n.Value
}

// The AlarmEmails parameter subscribes each address it names by email (up
// to deploy.MaxAlarmEmails, a conditional slot each), and none when empty.
func TestTheAlarmEmailsParameterSubscribesEachAddressItNames(t *testing.T) {
	doc := yamlDoc(t)
	p := child(doc, "Parameters", AlarmEmailsParam)
	if child(p, "Type").Value != "CommaDelimitedList" || child(p, "Default").Value != "" {
		t.Errorf("parameter %s: type %s, default %q", AlarmEmailsParam, child(p, "Type").Value, child(p, "Default").Value)
	}
	for _, emails := range [][]string{{""}, {"ops@example.com"}, {"a@x.io", "b@x.io", "c@x.io", "d@x.io", "e@x.io"}} {
		params := map[string][]string{AlarmEmailsParam: emails}
		var subscribed []string
		for i := 1; i <= deploy.MaxAlarmEmails; i++ {
			sub := child(doc, "Resources", AlarmEmailID(i))
			if child(sub, "Type").Value != "AWS::SNS::Subscription" || child(sub, "Condition").Value != HasAlarmEmail(i) ||
				child(sub, "Properties", "Protocol").Value != "email" || child(sub, "Properties", "TopicArn").Tag != "!Ref" {
				t.Fatalf("subscription %d is not an email subscription of the topic under its condition", i)
			}
			if eval(t, child(doc, "Conditions", HasAlarmEmail(i)), params).(bool) {
				subscribed = append(subscribed, eval(t, child(sub, "Properties", "Endpoint"), params).(string))
			}
		}
		want := slices.DeleteFunc(slices.Clone(emails), func(s string) bool { return s == "" })
		if !slices.Equal(subscribed, want) {
			t.Errorf("AlarmEmails %q subscribes %q", emails, subscribed)
		}
	}
}

// The dashboard has a row per path, in order, each starting with a text
// widget naming it at the left, and every alarm's metric (each of a
// metric math alarm's) with its dimensions and statistic, as the CDK
// stack's.
func TestTheDashboardHasARowPerPathAndEveryAlarmsMetric(t *testing.T) {
	p := rawResources(t)[DashboardID]["Properties"].(map[string]any)
	if p["DashboardName"] != "Sub(${AWS::StackName}-${AWS::Region})" {
		t.Errorf("dashboard name %v", p["DashboardName"])
	}
	body, ok := strings.CutPrefix(fmt.Sprint(p["DashboardBody"]), "Sub(")
	body = strings.TrimSuffix(body, ")")
	var b struct {
		Widgets []struct {
			Type       string
			X, Y       int
			Width      int
			Properties struct {
				Markdown, Title, Region string
				Metrics                 [][]any
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &b); !ok || err != nil {
		t.Fatalf("dashboard body is not !Sub of JSON: %v", err)
	}
	rows := []string{"## API", "## Webhooks in", "## Runs", "## Events and deliveries", "## Jobs", "## Search", "## Table and operator"}
	var texts []string
	lines := map[string]bool{}
	for _, w := range b.Widgets {
		switch w.Type {
		case "text":
			if w.X != 0 {
				t.Errorf("text widget %q at x=%d", w.Properties.Markdown, w.X)
			}
			texts = append(texts, strings.SplitN(w.Properties.Markdown, "\n", 2)[0])
		case "metric":
			if w.Properties.Region != "${AWS::Region}" || w.X < TextWidthOf() {
				t.Errorf("graph %q: region %q, x=%d", w.Properties.Title, w.Properties.Region, w.X)
			}
			for _, line := range w.Properties.Metrics {
				if len(line) < 3 {
					continue
				}
				opts, _ := line[len(line)-1].(map[string]any)
				var dims []string
				for i := 2; i+1 < len(line)-1; i += 2 {
					dims = append(dims, fmt.Sprintf("%v=%v", line[i], line[i+1]))
				}
				sort.Strings(dims)
				lines[fmt.Sprintf("%v %v %s %v", line[0], line[1], strings.Join(dims, " "), opts["stat"])] = true
			}
		}
	}
	if !slices.Equal(texts, rows) {
		t.Errorf("rows %q, want %q", texts, rows)
	}
	for _, a := range deploy.Alarms(model(), false) {
		for _, m := range a.AllMetrics() {
			var dims []string
			for _, d := range m.Dimensions {
				v := d.Value.Name
				if d.Value.Kind != "" {
					e, _ := targetExpr(d.Value)
					v = "${" + e + "}"
				}
				dims = append(dims, d.Name+"="+v)
			}
			sort.Strings(dims)
			if l := fmt.Sprintf("%s %s %s %s", m.Namespace, m.Name, strings.Join(dims, " "), m.Stat); !lines[l] {
				t.Errorf("alarm %s: its metric %s is not on the dashboard", a.Name, l)
			}
		}
	}
}

// TextWidthOf is the width of a row's text widget.
func TextWidthOf() int { return deploy.TextWidth }

// Every function is traced (Active, PassThrough when the Tracing parameter
// is false), and the sampling rule, there only with tracing, covers the
// stack's functions with the TraceSampleRate and TraceReservoir
// parameters.
func TestEveryFunctionIsTracedAndTheSamplingRuleCoversTheStacksFunctions(t *testing.T) {
	res := rawResources(t)
	for _, f := range deployed() {
		p := res[LogicalID(f.Name)]["Properties"].(map[string]any)
		if p["Tracing"] != `If(["TracingOn","Active","PassThrough"])` {
			t.Errorf("%s: tracing %v", f.Name, p["Tracing"])
		}
	}
	doc := yamlDoc(t)
	cond := child(doc, "Conditions", TracingOn)
	if cond.Tag != "!Equals" || cond.Content[0].Value != TracingParam || cond.Content[1].Value != "true" {
		t.Errorf("condition %s is not Tracing = true", TracingOn)
	}
	rule := res[SamplingRuleID]
	if rule["Type"] != "AWS::XRay::SamplingRule" || rule["Condition"] != TracingOn {
		t.Fatalf("sampling rule %v", rule)
	}
	sr := rule["Properties"].(map[string]any)["SamplingRule"].(map[string]any)
	for k, v := range map[string]any{
		"Priority": float64(deploy.SamplingRulePriority), "FixedRate": "Ref(" + TraceSampleRateParam + ")", "ReservoirSize": "Ref(" + TraceReservoirParam + ")",
		"ServiceName": "Sub(${AWS::StackName}-*)", "ServiceType": "AWS::Lambda::Function", "Host": "*", "HTTPMethod": "*", "URLPath": "*", "ResourceARN": "*", "Version": float64(1),
	} {
		if !reflect.DeepEqual(sr[k], v) {
			t.Errorf("sampling rule %s = %v, want %v", k, sr[k], v)
		}
	}
	if child(doc, "Resources", SamplingRuleID, "Properties", "SamplingRule", "RuleName").Tag != "!Join" {
		t.Error("the sampling rule's name is not made from the stack id")
	}
}

// Every limit and setting is a parameter with the CDK context's default
// and bounds (the deployment limits' own test checks the four limits):
// AlarmEmails (above), Tracing, TraceSampleRate, TraceReservoir and
// LogRetentionDays, which every log group keeps its events for.
func TestTheOpsSettingsAreParametersWithTheCDKStacksDefaults(t *testing.T) {
	tmpl := raw(t, readFile(t, TemplatePath))
	params := tmpl["Parameters"].(map[string]any)
	days := []any{}
	for _, d := range deploy.LogRetentionDays {
		days = append(days, float64(d))
	}
	for name, want := range map[string]map[string]any{
		TracingParam:          {"Type": "String", "Default": "true", "AllowedValues": []any{"true", "false"}},
		TraceSampleRateParam:  {"Type": "Number", "Default": deploy.DefaultTraceSampleRate, "MinValue": float64(0), "MaxValue": float64(1)},
		TraceReservoirParam:   {"Type": "Number", "Default": float64(deploy.DefaultTraceReservoir), "MinValue": float64(0), "MaxValue": float64(deploy.MaxTraceReservoir)},
		LogRetentionDaysParam: {"Type": "Number", "Default": float64(deploy.SAMLogRetentionDays), "AllowedValues": days},
		AlarmEmailsParam:      {"Type": "CommaDelimitedList", "Default": ""},
	} {
		p, _ := params[name].(map[string]any)
		if p["Description"] == nil {
			t.Errorf("parameter %s has no description", name)
		}
		for k, v := range want {
			if !reflect.DeepEqual(p[k], v) {
				t.Errorf("parameter %s: %s %v, want %v", name, k, p[k], v)
			}
		}
	}
	groups := 0
	for id, r := range tmpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] != "AWS::Logs::LogGroup" {
			continue
		}
		groups++
		if got := r["Properties"].(map[string]any)["RetentionInDays"]; got != "Ref("+LogRetentionDaysParam+")" {
			t.Errorf("log group %s keeps events %v, want the %s parameter", id, got, LogRetentionDaysParam)
		}
	}
	if groups != len(deployed())+3 {
		t.Errorf("%d log groups, want the functions', the API's and the state machines'", groups)
	}
}
