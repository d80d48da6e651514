package deploy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// byName are the alarms of a deployment by name.
func byName(t *testing.T, openSearch bool) map[string]Alarm {
	t.Helper()
	out := map[string]Alarm{}
	for _, a := range Alarms(deploymodel.Default(), openSearch) {
		if _, dup := out[a.Name]; dup {
			t.Errorf("two alarms named %s", a.Name)
		}
		out[a.Name] = a
	}
	return out
}

func fnDim(name string) []Dimension {
	return []Dimension{{Name: "Function", Value: Target{Kind: TargetFunction, Name: name}}}
}

// checkMetric fails unless a is on one metric with exactly these
// settings.
func checkMetric(t *testing.T, a Alarm, namespace, metric string, dims []Dimension, stat string, threshold float64, cmp string, period time.Duration, evaluations int) {
	t.Helper()
	if a.Metric == nil || a.Metric.Namespace != namespace || a.Metric.Name != metric || !slices.Equal(a.Metric.Dimensions, dims) || a.Metric.Stat != stat {
		t.Errorf("%s: metric %+v, want %s %s %v %s", a.Name, a.Metric, namespace, metric, dims, stat)
	}
	if a.Threshold != threshold || a.Comparison != cmp || a.Period != period || a.EvaluationPeriods != evaluations || a.DatapointsToAlarm != evaluations ||
		a.TreatMissingData != "notBreaching" || a.Description == "" {
		t.Errorf("%s: %s %v over %s, %d of %d periods, missing %s; want %s %v over %s, %d periods, notBreaching",
			a.Name, a.Comparison, a.Threshold, a.Period, a.DatapointsToAlarm, a.EvaluationPeriods, a.TreatMissingData, cmp, threshold, period, evaluations)
	}
}

// The alarms are the ops team's list (issue 49), on the Embedded Metric
// Format contract's metrics (namespace Sourcebase, dimension Function the
// function's name) and AWS's, each with the threshold the list says.
func TestTheAlarmsAreTheOpsTeamsListOnTheEMFContractsAndAWSsMetrics(t *testing.T) {
	if MetricsNamespace != "Sourcebase" || DimFunction != "Function" || MetricErrors5xx != "Errors5xx" || MetricRequests != "Requests" ||
		MetricLatency != "Latency" || MetricEndpointConsecutiveFailures != "EndpointConsecutiveFailures" || MetricJobsStuck != "JobsStuck" {
		t.Fatal("the EMF contract's names changed")
	}
	for _, openSearch := range []bool{false, true} {
		m := deploymodel.Default()
		alarms := byName(t, openSearch)
		seen := map[string]bool{}
		check := func(name string) Alarm {
			t.Helper()
			a, ok := alarms[name]
			if !ok {
				t.Fatalf("no alarm %s (OpenSearch %v)", name, openSearch)
			}
			seen[name] = true
			return a
		}
		for _, f := range m.Deployed(openSearch) {
			if f.Reach == deploymodel.ByAPI {
				a := check(f.Name + "-5xx-rate")
				if a.Metric != nil || a.Expression != "FILL(errors5xx, 0) / requests" || len(a.Metrics) != 2 ||
					!reflect.DeepEqual(a.Metrics[0], Metric{ID: "errors5xx", Namespace: "Sourcebase", Name: "Errors5xx", Stat: "Sum", Label: f.Name, Dimensions: fnDim(f.Name)}) ||
					!reflect.DeepEqual(a.Metrics[1], Metric{ID: "requests", Namespace: "Sourcebase", Name: "Requests", Stat: "Sum", Label: f.Name, Dimensions: fnDim(f.Name)}) ||
					a.Threshold != 0.05 || a.Comparison != GreaterThan || a.Period != 5*time.Minute || a.TreatMissingData != "notBreaching" {
					t.Errorf("%s: %+v", a.Name, a)
				}
				checkMetric(t, check(f.Name+"-latency-p99"), "Sourcebase", "Latency", fnDim(f.Name), "p99", 3000, GreaterThan, 5*time.Minute, 3)
			}
			lambda := []Dimension{{Name: "FunctionName", Value: Target{Kind: TargetFunction, Name: f.Name}}}
			checkMetric(t, check(f.Name+"-errors"), "AWS/Lambda", "Errors", lambda, "Sum", 0, GreaterThan, 5*time.Minute, 1)
			checkMetric(t, check(f.Name+"-throttles"), "AWS/Lambda", "Throttles", lambda, "Sum", 0, GreaterThan, 5*time.Minute, 1)
			checkMetric(t, check(f.Name+"-duration-p99"), "AWS/Lambda", "Duration", lambda, "p99", float64(f.TimeoutSeconds*800), // 80% of the timeout, in ms
				GreaterThan, 5*time.Minute, 1)
			if f.Reach == deploymodel.ByStream {
				checkMetric(t, check(f.Name+"-iterator-age"), "AWS/Lambda", "IteratorAge", lambda, "Maximum", 300000, GreaterThan, 5*time.Minute, 2)
			}
			if f.Reach == deploymodel.ByQueue {
				checkMetric(t, check("deliver-endpoint-consecutive-failures"), "Sourcebase", "EndpointConsecutiveFailures", fnDim(f.Name), "Maximum", 5, GreaterThanOrEqual, 5*time.Minute, 1)
			}
			if f.Reach == deploymodel.ByAPI || f.Reach == deploymodel.ByURL {
				checkMetric(t, check(f.Name+"-rate-limited"), "Sourcebase", "RateLimited", fnDim(f.Name), "Sum", 100, GreaterThanOrEqual, 5*time.Minute, 1)
			}
			if f.Reach == deploymodel.ByStateMachine {
				checkMetric(t, check("runner-jobs-stuck"), "Sourcebase", "JobsStuck", fnDim(f.Name), "Maximum", 1, GreaterThanOrEqual, 10*time.Minute, 1)
			}
		}
		queues := map[string]string{"queue-events-failures": QueueEventsFailures, "queue-deliver-dlq": QueueDeliverDLQ}
		if openSearch {
			queues["queue-indexer-failures"] = QueueIndexerFailures
		}
		for name, q := range queues {
			checkMetric(t, check(name), "AWS/SQS", "ApproximateNumberOfMessagesVisible",
				[]Dimension{{Name: "QueueName", Value: Target{Kind: TargetQueue, Name: q}}}, "Maximum", 0, GreaterThan, 5*time.Minute, 1)
		}
		for _, sm := range []string{"run", "job"} {
			dims := []Dimension{{Name: "StateMachineArn", Value: Target{Kind: TargetStateMachine, Name: sm}}}
			checkMetric(t, check(sm+"-executions-failed"), "AWS/States", "ExecutionsFailed", dims, "Sum", 0, GreaterThan, 5*time.Minute, 1)
			checkMetric(t, check(sm+"-executions-timed-out"), "AWS/States", "ExecutionsTimedOut", dims, "Sum", 0, GreaterThan, 5*time.Minute, 1)
		}
		// The table: its and each index's throttle events, added up; its
		// system errors of every operation the functions call.
		table := Dimension{Name: "TableName", Value: Target{Kind: TargetTable}}
		for name, metric := range map[string]string{"table-read-throttles": "ReadThrottleEvents", "table-write-throttles": "WriteThrottleEvents"} {
			a := check(name)
			if len(a.Metrics) != len(m.Table.Indexes)+1 || a.Threshold != 10 || a.Comparison != GreaterThan {
				t.Errorf("%s: %d metrics over %v", name, len(a.Metrics), a.Threshold)
			}
			var ids []string
			for i, x := range a.Metrics {
				want := []Dimension{table}
				if i > 0 {
					want = append(want, Dimension{Name: "GlobalSecondaryIndexName", Value: Target{Name: m.Table.Indexes[i-1].Name}})
				}
				if x.Namespace != "AWS/DynamoDB" || x.Name != metric || x.Stat != "Sum" || !slices.Equal(x.Dimensions, want) {
					t.Errorf("%s: metric %+v", name, x)
				}
				ids = append(ids, x.ID)
			}
			if a.Expression != "SUM([FILL("+strings.Join(ids, ", 0), FILL(")+", 0)])" {
				t.Errorf("%s: expression %q", name, a.Expression)
			}
		}
		// The stage's throttle: requests a second over the minute against
		// the stage's steady rate, which the stack and template fill in.
		stage := check("api-stage-throttle-near")
		if stage.Expression != "requests / 60 / {apiRateLimit}" || len(stage.Metrics) != 1 ||
			!reflect.DeepEqual(stage.Metrics[0], Metric{ID: "requests", Namespace: "AWS/ApiGateway", Name: "Count", Stat: "Sum", Label: "HTTP API Count",
				Dimensions: []Dimension{{Name: "ApiId", Value: Target{Kind: TargetAPI}}}}) ||
			stage.Threshold != 0.8 || stage.Comparison != GreaterThan || stage.Period != time.Minute || stage.EvaluationPeriods != 3 || stage.DatapointsToAlarm != 3 {
			t.Errorf("api-stage-throttle-near: %+v", stage)
		}
		sys := check("table-system-errors")
		if len(sys.Metrics) != 10 || sys.Threshold != 0 || !strings.HasPrefix(sys.Expression, "SUM([FILL(op1, 0), ") {
			t.Errorf("table-system-errors: %+v", sys)
		}
		var ops []string
		for _, x := range sys.Metrics {
			if x.Name != "SystemErrors" || len(x.Dimensions) != 2 || x.Dimensions[0] != table || x.Dimensions[1].Name != "Operation" {
				t.Errorf("table-system-errors: metric %+v", x)
			}
			ops = append(ops, x.Dimensions[1].Value.Name)
		}
		// Every table action of every function is one of the operations
		// (ConditionCheckItem through TransactWriteItems).
		for _, f := range m.Deployed(openSearch) {
			for _, a := range f.TableActions {
				op := strings.TrimPrefix(a, "dynamodb:")
				if op == "ConditionCheckItem" || strings.HasPrefix(op, "Describe") {
					continue
				}
				if !slices.Contains(ops, op) {
					t.Errorf("%s calls %s, whose system errors no alarm reads", f.Name, op)
				}
			}
		}
		for name := range alarms {
			if !seen[name] && name != "table-system-errors" {
				t.Errorf("alarm %s is not in the ops team's list", name)
			}
		}
	}
}

// The dashboard's rows are the paths, in order, each shows metrics, and
// every alarm's metric is on one of its graphs.
func TestTheDashboardShowsEveryAlarmsMetricInARowPerPath(t *testing.T) {
	for _, openSearch := range []bool{false, true} {
		m := deploymodel.Default()
		rows := Dashboard(m, openSearch)
		var titles []string
		shown := map[string]bool{}
		key := func(x Metric) string {
			return fmt.Sprintf("%s %s %s %v", x.Namespace, x.Name, x.Stat, x.Dimensions)
		}
		for _, r := range rows {
			titles = append(titles, r.Title)
			if !strings.HasPrefix(r.Text, "## "+r.Title+"\n") || len(r.Graphs) == 0 {
				t.Errorf("row %s: text %q, %d graphs", r.Title, r.Text, len(r.Graphs))
			}
			for _, g := range r.Graphs {
				for _, x := range append(slices.Clone(g.Metrics), g.Hidden...) {
					shown[key(x)] = true
				}
			}
		}
		want := []string{RowAPI, RowWebhooks, RowRuns, RowEvents, RowJobs, RowSearch, RowTable}
		if !slices.Equal(titles, want) {
			t.Errorf("rows %q, want %q", titles, want)
		}
		for _, a := range Alarms(m, openSearch) {
			for _, x := range a.AllMetrics() {
				if !shown[key(x)] {
					t.Errorf("alarm %s: metric %s is not on the dashboard", a.Name, key(x))
				}
			}
		}
	}
}

func TestTheOpsSettingsParseWhatAWSTakesOnly(t *testing.T) {
	if got, err := ParseAlarmEmails(" ops@example.com, oncall@example.org ,"); err != nil || !slices.Equal(got, []string{"ops@example.com", "oncall@example.org"}) {
		t.Errorf("ParseAlarmEmails: %v, %v", got, err)
	}
	if got, err := ParseAlarmEmails(""); err != nil || len(got) != 0 {
		t.Errorf("ParseAlarmEmails(\"\"): %v, %v", got, err)
	}
	for _, bad := range []string{"ops", "ops@localhost", "Ops <ops@example.com>", "a@x.io,a@x.io", "a@x.io,b@x.io,c@x.io,d@x.io,e@x.io,f@x.io"} {
		if _, err := ParseAlarmEmails(bad); err == nil {
			t.Errorf("ParseAlarmEmails(%q) accepted", bad)
		}
	}
	for _, ok := range []string{"0", "0.05", "1"} {
		if _, err := ParseSampleRate(ok); err != nil {
			t.Errorf("ParseSampleRate(%s): %v", ok, err)
		}
	}
	for _, bad := range []string{"-0.01", "1.01", "x", "NaN"} {
		if _, err := ParseSampleRate(bad); err == nil {
			t.Errorf("ParseSampleRate(%q) accepted", bad)
		}
	}
	for _, d := range []string{"1", "7", "90", "3653"} {
		if _, err := ParseLogRetentionDays(d); err != nil {
			t.Errorf("ParseLogRetentionDays(%s): %v", d, err)
		}
	}
	for _, bad := range []string{"0", "2", "8", "3654", "x"} {
		if _, err := ParseLogRetentionDays(bad); err == nil {
			t.Errorf("ParseLogRetentionDays(%q) accepted", bad)
		}
	}
}
