package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// targetExpr is the template expression naming t's resource (what a
// dimension's value is): a function's, a table's Ref (its name), a queue's
// QueueName, a state machine's Ref (its ARN).
func (s *synthesized) targetExpr(t *testing.T, d deploy.Dimension) any {
	t.Helper()
	if d.Value.Kind == "" {
		return d.Value.Name
	}
	st := s.stack
	switch d.Value.Kind {
	case deploy.TargetFunction:
		return ref(s.logicalID(st.Functions[d.Value.Name]))
	case deploy.TargetTable:
		return ref(s.logicalID(st.Table))
	case deploy.TargetQueue:
		q := map[string]string{
			deploy.QueueEventsFailures: s.logicalID(st.EventsFailures), deploy.QueueDeliver: s.logicalID(st.DeliverQueue),
			deploy.QueueDeliverDLQ: s.logicalID(st.DeliverDLQ),
		}
		if st.IndexerFailures != nil {
			q[deploy.QueueIndexerFailures] = s.logicalID(st.IndexerFailures)
		}
		if id, ok := q[d.Value.Name]; ok {
			return getAtt(id, "QueueName")
		}
	case deploy.TargetAPI:
		return ref(s.logicalID(st.Api))
	case deploy.TargetStateMachine:
		switch d.Value.Name {
		case deploy.StateMachineRun:
			return ref(s.logicalID(st.StateMachine))
		case deploy.StateMachineJob:
			return ref(s.logicalID(st.JobStateMachine))
		}
	}
	t.Fatalf("no resource for %+v", d)
	return nil
}

// wantDimensions are m's dimensions as the template has them, by name.
func (s *synthesized) wantDimensions(t *testing.T, m deploy.Metric) []any {
	var out []any
	for _, d := range m.Dimensions {
		out = append(out, map[string]any{"Name": d.Name, "Value": s.targetExpr(t, d)})
	}
	return sortedDims(out)
}

func sortedDims(ds []any) []any {
	out := slices.Clone(ds)
	sort.Slice(out, func(i, j int) bool {
		return fmt.Sprint(out[i].(map[string]any)["Name"]) < fmt.Sprint(out[j].(map[string]any)["Name"])
	})
	return out
}

// Every alarm of deploy.Alarms is in the stack, named by the stack and
// its stable name, on exactly its metric (namespace, name, dimensions
// resolved to the stack's resources, statistic, period) or its metric math
// expression over exactly its metrics, with its threshold, comparison,
// periods and missing data, and notifies the alarm topic when it fires and
// when it is OK again; and no other alarm is.
func TestEveryAlarmIsOnItsMetricWithItsThresholdAndNotifiesTheAlarmTopic(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		want := deploy.Alarms(s.stack.Model, s.stack.Options.OpenSearch())
		alarms := s.t.ofType("AWS::CloudWatch::Alarm")
		if len(alarms) != len(want) || len(s.stack.Alarms) != len(want) {
			t.Errorf("%d alarms in the template, %d in the stack, want %d", len(alarms), len(s.stack.Alarms), len(want))
		}
		topic := ref(s.logicalID(s.stack.AlarmTopic))
		for _, a := range want {
			c, ok := s.stack.Alarms[a.Name]
			if !ok {
				t.Errorf("no alarm %s", a.Name)
				continue
			}
			p := alarms[s.logicalID(c)].Properties
			for k, v := range map[string]any{
				"AlarmName":          StackName(s.stack.Options.Stage) + "-" + a.Name,
				"AlarmDescription":   a.Description,
				"Threshold":          a.Threshold,
				"ComparisonOperator": a.Comparison,
				"EvaluationPeriods":  float64(a.EvaluationPeriods),
				"DatapointsToAlarm":  float64(a.DatapointsToAlarm),
				"TreatMissingData":   "notBreaching",
				"AlarmActions":       []any{topic},
				"OKActions":          []any{topic},
			} {
				if !jsonEqual(p[k], v) {
					t.Errorf("%s: %s %s, want %s", a.Name, k, js(p[k]), js(v))
				}
			}
			period := a.Period.Seconds()
			if a.Metric != nil {
				m := *a.Metric
				stat, statKey := m.Stat, "Statistic"
				if strings.HasPrefix(stat, "p") {
					statKey = "ExtendedStatistic"
				}
				if p["Namespace"] != m.Namespace || p["MetricName"] != m.Name || p[statKey] != stat || p["Period"] != period || p["Metrics"] != nil {
					t.Errorf("%s: metric %s %s %s %v %v, want %s %s %s %v", a.Name, p["Namespace"], p["MetricName"], statKey, p[statKey], p["Period"], m.Namespace, m.Name, stat, period)
				}
				if got := sortedDims(list(p["Dimensions"])); !jsonEqual(got, s.wantDimensions(t, m)) {
					t.Errorf("%s: dimensions %s, want %s", a.Name, js(got), js(s.wantDimensions(t, m)))
				}
				continue
			}
			// Metric math: one expression returned, each metric by its id.
			byID := map[string]map[string]any{}
			var exprs []string
			for _, x := range list(p["Metrics"]) {
				x := x.(map[string]any)
				if e, ok := x["Expression"].(string); ok {
					if x["ReturnData"] != nil && x["ReturnData"] != true {
						t.Errorf("%s: expression %s not returned", a.Name, e)
					}
					exprs = append(exprs, e)
					continue
				}
				byID[fmt.Sprint(x["Id"])] = x
			}
			// The stage's steady rate, a setting, is written as its number.
			want := strings.ReplaceAll(a.Expression, deploy.SettingAPIRateLimit, strconv.Itoa(s.stack.Options.APIRateLimit))
			if !slices.Equal(exprs, []string{want}) || len(byID) != len(a.Metrics) {
				t.Errorf("%s: expressions %q over %d metrics, want %q over %d", a.Name, exprs, len(byID), a.Expression, len(a.Metrics))
			}
			for _, m := range a.Metrics {
				x, ok := byID[m.ID]
				ms, _ := x["MetricStat"].(map[string]any)
				metric, _ := ms["Metric"].(map[string]any)
				if !ok || x["ReturnData"] != false || metric["Namespace"] != m.Namespace || metric["MetricName"] != m.Name || ms["Stat"] != m.Stat || ms["Period"] != period ||
					!jsonEqual(sortedDims(list(metric["Dimensions"])), s.wantDimensions(t, m)) {
					t.Errorf("%s: metric %s is %s, want %s %s %s of %s every %v s", a.Name, m.ID, js(x), m.Namespace, m.Name, m.Stat, js(s.wantDimensions(t, m)), period)
				}
			}
		}
	})
}

// The alarm topic is encrypted with a rotated key of its own that
// CloudWatch may use (SNS's AWS managed key would not let it publish),
// refuses requests without TLS, lets CloudWatch's alarms of this account
// publish, and is an output; it has no subscription unless the context
// names addresses.
func TestTheAlarmTopicIsEncryptedTLSOnlyAndAnOutput(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		topicID, keyID := s.logicalID(s.stack.AlarmTopic), s.logicalID(s.stack.AlarmKey)
		topic := s.t.Resources[topicID]
		if !jsonEqual(topic.Properties["KmsMasterKeyId"], getAtt(keyID, "Arn")) {
			t.Errorf("topic key %s, want %s", js(topic.Properties["KmsMasterKeyId"]), keyID)
		}
		key := s.t.Resources[keyID]
		if key.Properties["EnableKeyRotation"] != true || !strings.Contains(js(key.Properties["KeyPolicy"]), `"Principal":{"Service":"cloudwatch.amazonaws.com"}`) ||
			!strings.Contains(js(key.Properties["KeyPolicy"]), `"kms:GenerateDataKey*"`) {
			t.Errorf("key %s", js(key.Properties))
		}
		var tls, cloudwatch bool
		for _, p := range s.t.ofType("AWS::SNS::TopicPolicy") {
			if !jsonEqual(p.Properties["Topics"], []any{ref(topicID)}) {
				continue
			}
			for _, st := range list(p.Properties["PolicyDocument"].(map[string]any)["Statement"]) {
				b := js(st)
				tls = tls || strings.Contains(b, `"Effect":"Deny"`) && strings.Contains(b, `"aws:SecureTransport":"false"`)
				cloudwatch = cloudwatch || strings.Contains(b, `"Effect":"Allow"`) && strings.Contains(b, `"Service":"cloudwatch.amazonaws.com"`) && strings.Contains(b, `"sns:Publish"`)
			}
		}
		if !tls || !cloudwatch {
			t.Errorf("the topic's policy denies requests without TLS %v, lets CloudWatch publish %v", tls, cloudwatch)
		}
		if n := len(s.t.ofType("AWS::SNS::Subscription")); n != 0 {
			t.Errorf("%d subscriptions without -c %s", n, CtxAlarmEmails)
		}
		if !jsonEqual(s.t.Outputs[OutAlarmTopicARN].Value, ref(topicID)) || !jsonEqual(s.t.Outputs[OutDashboardName].Value, ref(s.logicalID(s.stack.Dashboard))) {
			t.Errorf("outputs %s %s", js(s.t.Outputs[OutAlarmTopicARN]), js(s.t.Outputs[OutDashboardName]))
		}
	})
}

// dashboard is the stack's dashboard: its body's Fn::Join resolved, with
// <Id> for a resource's Ref, <Id.Attr> for an attribute and <AWS::Region>.
func (s *synthesized) dashboard(t *testing.T) (name any, widgets []dashboardWidget) {
	t.Helper()
	p := s.t.Resources[s.logicalID(s.stack.Dashboard)].Properties
	body := fnJoin(t, p["DashboardBody"], func(expr any) (string, bool) {
		m, _ := expr.(map[string]any)
		if r, ok := m["Ref"].(string); ok {
			return "<" + r + ">", true
		}
		if g, ok := m["Fn::GetAtt"].([]any); ok {
			return fmt.Sprintf("<%s.%s>", g[0], g[1]), true
		}
		return "", false
	})
	var b struct{ Widgets []dashboardWidget }
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("dashboard body: %v\n%s", err, body)
	}
	return p["DashboardName"], b.Widgets
}

// dashboardWidget is a widget of a dashboard body.
type dashboardWidget struct {
	Type       string
	X, Y       int
	Width      int
	Height     int
	Properties struct {
		Markdown string
		Title    string
		Region   string
		Metrics  [][]any
	}
}

// metricLines are the metrics the dashboard's graphs show or compute
// from, as "namespace name dim=value... stat".
func metricLines(ws []dashboardWidget) map[string]bool {
	out := map[string]bool{}
	for _, w := range ws {
		for _, line := range w.Properties.Metrics {
			opts, _ := line[len(line)-1].(map[string]any)
			if len(line) < 3 {
				continue // an expression
			}
			var dims []string
			for i := 2; i+1 < len(line)-1; i += 2 {
				dims = append(dims, fmt.Sprintf("%v=%v", line[i], line[i+1]))
			}
			sort.Strings(dims)
			out[fmt.Sprintf("%v %v %s %v", line[0], line[1], strings.Join(dims, " "), opts["stat"])] = true
		}
	}
	return out
}

// metricLine is m as metricLines writes it, its dimensions' values by
// value.
func metricLine(m deploy.Metric, value func(deploy.Dimension) string) string {
	var dims []string
	for _, d := range m.Dimensions {
		dims = append(dims, d.Name+"="+value(d))
	}
	sort.Strings(dims)
	return fmt.Sprintf("%s %s %s %s", m.Namespace, m.Name, strings.Join(dims, " "), m.Stat)
}

// The rows the ops team reads, in order, each starting with a text widget
// naming its path at the left: API, webhooks in, runs, events and
// deliveries, jobs, search, table and operator.
var wantRows = []string{"## API", "## Webhooks in", "## Runs", "## Events and deliveries", "## Jobs", "## Search", "## Table and operator"}

// checkDashboardRows checks that the widgets are the rows of wantRows,
// each starting with its text widget, every graph in the stack's region.
func checkDashboardRows(t *testing.T, ws []dashboardWidget, region string) {
	t.Helper()
	var texts []dashboardWidget
	for _, w := range ws {
		switch w.Type {
		case "text":
			texts = append(texts, w)
		case "metric":
			if w.Properties.Region != region || len(w.Properties.Metrics) == 0 || w.Properties.Title == "" {
				t.Errorf("graph %q: region %q, %d metrics", w.Properties.Title, w.Properties.Region, len(w.Properties.Metrics))
			}
		default:
			t.Errorf("a widget of type %q", w.Type)
		}
	}
	if len(texts) != len(wantRows) {
		t.Fatalf("%d text widgets, want one per row %q", len(texts), wantRows)
	}
	for i, w := range texts {
		if !strings.HasPrefix(w.Properties.Markdown, wantRows[i]+"\n") || w.X != 0 {
			t.Errorf("row %d starts with %q at x=%d, want %q at the left", i, w.Properties.Markdown, w.X, wantRows[i])
		}
		end := 1 << 30
		if i+1 < len(texts) {
			end = texts[i+1].Y
		}
		graphs := 0
		for _, g := range ws {
			if g.Type == "metric" && g.Y >= w.Y && g.Y < end {
				graphs++
				if g.X < w.Width {
					t.Errorf("row %q: graph %q overlaps its text widget", wantRows[i], g.Properties.Title)
				}
			}
		}
		if graphs == 0 {
			t.Errorf("row %q has no graph", wantRows[i])
		}
	}
}

// The dashboard has a row per path, each starting with its text widget,
// and shows every alarm's metric (each metric of a metric math alarm),
// with its dimensions and statistic; the search row has the search
// function's requests, latency and 5xx, and the indexer's iterator age
// with OpenSearch.
func TestTheDashboardHasARowPerPathAndEveryAlarmsMetric(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		name, ws := s.dashboard(t)
		if !jsonEqual(name, map[string]any{"Fn::Join": []any{"", []any{StackName(s.stack.Options.Stage) + "-", ref("AWS::Region")}}}) {
			t.Errorf("dashboard name %s", js(name))
		}
		checkDashboardRows(t, ws, "<AWS::Region>")
		lines := metricLines(ws)
		value := func(d deploy.Dimension) string {
			switch v := s.targetExpr(t, d).(type) {
			case string:
				return v
			case map[string]any:
				if r, ok := v["Ref"]; ok {
					return fmt.Sprintf("<%v>", r)
				}
				g := v["Fn::GetAtt"].([]any)
				return fmt.Sprintf("<%v.%v>", g[0], g[1])
			}
			return ""
		}
		for _, a := range deploy.Alarms(s.stack.Model, s.stack.Options.OpenSearch()) {
			for _, m := range a.AllMetrics() {
				if l := metricLine(m, value); !lines[l] {
					t.Errorf("alarm %s: its metric %s is not on the dashboard", a.Name, l)
				}
			}
		}
		var search string
		for _, w := range ws {
			if strings.HasPrefix(w.Properties.Title, "Search") || strings.HasPrefix(w.Properties.Title, "Indexer") {
				search += js(w.Properties.Metrics)
			}
		}
		for _, want := range []string{`"Requests"`, `"Latency"`, `"Errors5xx"`} {
			if !strings.Contains(search, want) {
				t.Errorf("the search row has no %s", want)
			}
		}
		if got := strings.Contains(search, `"IteratorAge"`); got != s.stack.Options.OpenSearch() {
			t.Errorf("the search row shows the indexer's iterator age %v, want %v", got, s.stack.Options.OpenSearch())
		}
	})
}

// Every function is traced by X-Ray (active tracing) and may send its
// traces; the sampling rule covers the stack's functions (their names
// start with the stack's) with the default rate and reservoir.
func TestEveryFunctionIsTracedAndTheSamplingRuleCoversTheStacksFunctions(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		for _, f := range s.deployed() {
			if got := s.fn(t, f.Name).Properties["TracingConfig"]; !jsonEqual(got, map[string]any{"Mode": "Active"}) {
				t.Errorf("%s: tracing %s, want Active", f.Name, js(got))
			}
			if g := s.roleGrants(t, s.logicalID(s.stack.Roles[f.Name])); !g[`xray:PutTraceSegments on "*"`] || !g[`xray:PutTelemetryRecords on "*"`] {
				t.Errorf("%s: its role may not send traces", f.Name)
			}
		}
		checkSamplingRule(t, s, deploy.DefaultTraceSampleRate, deploy.DefaultTraceReservoir)
	})
}

func checkSamplingRule(t *testing.T, s *synthesized, rate float64, reservoir int) {
	t.Helper()
	rules := s.t.ofType("AWS::XRay::SamplingRule")
	if len(rules) != 1 {
		t.Fatalf("%d sampling rules, want 1", len(rules))
	}
	stack := StackName(s.stack.Options.Stage)
	want := map[string]any{
		"RuleName": stack, "Priority": deploy.SamplingRulePriority, "FixedRate": rate, "ReservoirSize": reservoir,
		"ServiceName": stack + "-*", "ServiceType": "AWS::Lambda::Function", "Host": "*", "HTTPMethod": "*", "URLPath": "*", "ResourceARN": "*", "Version": 1,
	}
	for _, r := range rules {
		if got := r.Properties["SamplingRule"]; !jsonEqual(got, want) {
			t.Errorf("sampling rule %s, want %s", js(got), js(want))
		}
	}
}

// Every limit and setting the context takes reaches the stack: the stage's
// throttle, the webhook function's reserved concurrency, the delivery
// concurrency, the alarm topic's email subscriptions, the sampling rule's
// rate and reservoir, every log group's retention; and tracing=false
// turns tracing off (PassThrough, no sampling rule).
func TestEveryContextLimitReachesTheStack(t *testing.T) {
	s := synth(t, map[string]string{CtxStage: string(Dev), CtxAPIRateLimit: "123", CtxAPIBurstLimit: "45", CtxWebhookConcurrency: "7",
		CtxDeliverConcurrency: "9", CtxAlarmEmails: "ops@example.com, oncall@example.org", CtxTraceSampleRate: "0.25", CtxTraceReservoir: "3",
		CtxLogRetentionDays: "30"})
	for _, st := range s.t.ofType("AWS::ApiGatewayV2::Stage") {
		if !jsonEqual(st.Properties["DefaultRouteSettings"], map[string]any{"ThrottlingRateLimit": 123, "ThrottlingBurstLimit": 45}) {
			t.Errorf("the stage's throttle %s", js(st.Properties["DefaultRouteSettings"]))
		}
	}
	if got := s.fn(t, s.stack.Webhook).Properties["ReservedConcurrentExecutions"]; got != float64(7) {
		t.Errorf("webhook reserved concurrency %v", got)
	}
	scaled := 0
	for _, m := range s.t.ofType("AWS::Lambda::EventSourceMapping") {
		if sc, ok := m.Properties["ScalingConfig"].(map[string]any); ok {
			scaled++
			if sc["MaximumConcurrency"] != float64(9) {
				t.Errorf("delivery concurrency %v", sc["MaximumConcurrency"])
			}
		}
	}
	if scaled != 1 {
		t.Errorf("%d scaled mappings", scaled)
	}
	var emails []string
	for _, sub := range s.t.ofType("AWS::SNS::Subscription") {
		if sub.Properties["Protocol"] != "email" || !jsonEqual(sub.Properties["TopicArn"], ref(s.logicalID(s.stack.AlarmTopic))) {
			t.Errorf("subscription %s", js(sub.Properties))
		}
		emails = append(emails, fmt.Sprint(sub.Properties["Endpoint"]))
	}
	slices.Sort(emails)
	if !slices.Equal(emails, []string{"oncall@example.org", "ops@example.com"}) {
		t.Errorf("subscriptions %v", emails)
	}
	checkSamplingRule(t, s, 0.25, 3)
	groups := s.t.ofType("AWS::Logs::LogGroup")
	if len(groups) != len(s.deployed())+3 {
		t.Errorf("%d log groups, want the functions', the API's and the state machines'", len(groups))
	}
	for id, lg := range groups {
		if lg.Properties["RetentionInDays"] != float64(30) {
			t.Errorf("log group %s keeps %v days, want 30", id, lg.Properties["RetentionInDays"])
		}
	}

	off := synth(t, map[string]string{CtxStage: string(Dev), CtxTracing: "false"})
	for _, f := range off.deployed() {
		if got := off.fn(t, f.Name).Properties["TracingConfig"]; !jsonEqual(got, map[string]any{"Mode": "PassThrough"}) {
			t.Errorf("tracing=false: %s traces %s, want PassThrough", f.Name, js(got))
		}
	}
	if n := len(off.t.ofType("AWS::XRay::SamplingRule")); n != 0 {
		t.Errorf("tracing=false: %d sampling rules", n)
	}
}

// The context's new settings refuse what AWS would not take, naming the
// key: a malformed or repeated email address or more than the template's
// slots, tracing other than true or false, a sample rate outside [0, 1],
// a negative reservoir, a retention CloudWatch Logs does not accept.
func TestTheOpsContextRefusesValuesAWSWouldNotTake(t *testing.T) {
	for key, bads := range map[string][]string{
		CtxAlarmEmails:      {"ops", "ops@example.com,ops@example.com", "Ops <ops@example.com>", "a@x.io,b@x.io,c@x.io,d@x.io,e@x.io,f@x.io"},
		CtxTracing:          {"yes"},
		CtxTraceSampleRate:  {"1.5", "-0.1", "some"},
		CtxTraceReservoir:   {"-1", "x"},
		CtxLogRetentionDays: {"8", "0", "forever"},
	} {
		for _, bad := range bads {
			o, err := optionsOf(map[string]any{CtxStage: "dev", CtxAssets: testAssets, key: bad})
			if err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("-c %s=%s: %v (%+v), want an error naming %s", key, bad, err, o, key)
			}
		}
	}
	o, err := optionsOf(map[string]any{CtxStage: "prod", CtxAssets: testAssets})
	if err != nil || o.LogRetentionDays != 90 || !o.Tracing() || o.TraceSampleRate != 0.05 || o.TraceReservoir != 1 || len(o.AlarmEmails) != 0 {
		t.Errorf("prod's defaults %+v, %v", o, err)
	}
	if o, _ := optionsOf(map[string]any{CtxStage: "dev", CtxAssets: testAssets}); o.LogRetentionDays != 7 {
		t.Errorf("dev keeps logs %d days, want 7", o.LogRetentionDays)
	}
}

// The alarms' metrics are the EMF contract's and AWS's: every API
// function has its 5xx rate and p99 latency alarms, every function its
// errors, throttles and duration, every function serving requests its
// rate-limited alarm, every failure queue, stream consumer and state
// machine its own, the table its three, the stage its throttle's; nothing
// is left to chance in
// deploy.Alarms' loops.
func TestEveryFunctionQueueStreamAndStateMachineHasItsAlarms(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		have := map[string]bool{}
		for name := range s.stack.Alarms {
			have[name] = true
		}
		want := []string{deploy.AlarmTableReadThrottles, deploy.AlarmTableWriteThrottles, deploy.AlarmTableSystemErrors,
			deploy.AlarmEndpointConsecutiveFailures, deploy.AlarmJobsStuck,
			"run-executions-failed", "run-executions-timed-out", "job-executions-failed", "job-executions-timed-out",
			"queue-events-failures", "queue-deliver-dlq", "events-iterator-age", deploy.AlarmStageThrottleNear}
		if s.stack.Options.OpenSearch() {
			want = append(want, "queue-indexer-failures", "indexer-iterator-age")
		}
		for _, f := range s.deployed() {
			want = append(want, f.Name+"-errors", f.Name+"-throttles", f.Name+"-duration-p99")
			if f.Reach == deploymodel.ByAPI {
				want = append(want, f.Name+"-5xx-rate", f.Name+"-latency-p99")
			}
			if f.Reach == deploymodel.ByAPI || f.Reach == deploymodel.ByURL {
				want = append(want, f.Name+"-rate-limited")
			}
		}
		for _, n := range want {
			if !have[n] {
				t.Errorf("no alarm %s", n)
			}
			delete(have, n)
		}
		if len(have) > 0 {
			t.Errorf("alarms the test does not expect: %v", have)
		}
	})
}

// optionsOf reads the options from an app with context ctx.
func optionsOf(ctx map[string]any) (Options, error) {
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
	return OptionsFromContext(app.Node())
}
