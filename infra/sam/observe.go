package main

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sourcebase/sourcebase/infra/deploy"
)

// What the ops team watches, as the CDK stack has it (infra/alarms.go,
// infra/tracing.go), from the same declarations (infra/deploy's Alarms
// and Dashboard): the alarm topic and its key, the email subscriptions of
// the AlarmEmails parameter, every alarm, the dashboard, the X-Ray
// sampling rule.

// Logical ids, parameters and conditions of the alarms, the dashboard and
// tracing.
const (
	AlarmTopicID       = "AlarmTopic"
	AlarmTopicKeyID    = "AlarmTopicKey"
	AlarmTopicPolicyID = "AlarmTopicPolicy"
	DashboardID        = "Dashboard"
	SamplingRuleID     = "SamplingRule"

	AlarmEmailsParam      = "AlarmEmails"
	TracingParam          = "Tracing"
	TraceSampleRateParam  = "TraceSampleRate"
	TraceReservoirParam   = "TraceReservoir"
	LogRetentionDaysParam = "LogRetentionDays"

	// TracingOn is the condition "Tracing is true": the functions'
	// tracing is Active and the sampling rule exists (else PassThrough).
	TracingOn = "TracingOn"
)

// AlarmEmailID is the logical id of the i-th (from 1) email subscription,
// and HasAlarmEmail its condition: AlarmEmails names an i-th address.
func AlarmEmailID(i int) string  { return fmt.Sprintf("AlarmEmail%d", i) }
func HasAlarmEmail(i int) string { return fmt.Sprintf("HasAlarmEmail%d", i) }

// AlarmID is the logical id of the alarm named name (deploy.Alarm.Name):
// Alarm and its words capitalized (companies-5xx-rate →
// AlarmCompanies5xxRate).
func AlarmID(name string) string {
	var b strings.Builder
	b.WriteString("Alarm")
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(title(w))
	}
	return b.String()
}

// queueIDs are the logical ids of deploy's queues (the template has no
// OpenSearch indexer, so none of its failures queue).
var queueIDs = map[string]string{
	deploy.QueueEventsFailures: EventsFailuresID,
	deploy.QueueDeliver:        DeliverQueueID,
	deploy.QueueDeliverDLQ:     DeliverDLQID,
}

// targetExpr is what names t in a !Sub string (${...}).
func targetExpr(t deploy.Target) (string, error) {
	switch t.Kind {
	case deploy.TargetFunction:
		return LogicalID(t.Name), nil // a function's Ref is its name
	case deploy.TargetTable:
		return TableID, nil
	case deploy.TargetQueue:
		if id, ok := queueIDs[t.Name]; ok {
			return id + ".QueueName", nil
		}
	case deploy.TargetAPI:
		return HttpAPIID, nil // an HttpApi's Ref is its id
	case deploy.TargetStateMachine:
		switch t.Name {
		case deploy.StateMachineRun:
			return StateMachineID, nil // a state machine's Ref is its ARN
		case deploy.StateMachineJob:
			return JobStateMachineID, nil
		}
	}
	return "", fmt.Errorf("the template has no %s %q for a metric", t.Kind, t.Name)
}

// expression is an alarm's metric math: as it is, or a !Sub of the
// parameters its settings name (deploy.SettingAPIRateLimit).
func expression(e string) any {
	if !strings.Contains(e, deploy.SettingAPIRateLimit) {
		return e
	}
	return sub(strings.ReplaceAll(e, deploy.SettingAPIRateLimit, "${"+APIRateLimitParam+"}"))
}

// dimensionValue is d's value as a template expression.
func dimensionValue(d deploy.Dimension) (*yaml.Node, error) {
	if d.Value.Kind == "" {
		return node(d.Value.Name), nil
	}
	e, err := targetExpr(d.Value)
	if err != nil {
		return nil, err
	}
	if attr, ok := strings.CutSuffix(e, ".QueueName"); ok {
		return getAtt(attr + ".QueueName"), nil
	}
	return ref(e), nil
}

func dimensions(m deploy.Metric) (*yaml.Node, error) {
	var out []any
	for _, d := range m.Dimensions {
		v, err := dimensionValue(d)
		if err != nil {
			return nil, err
		}
		out = append(out, obj(field("Name", d.Name), field("Value", v)))
	}
	return list(out...), nil
}

// isPercentile reports whether stat is a percentile (an alarm's
// ExtendedStatistic), such as p99.
func isPercentile(stat string) bool { return strings.HasPrefix(stat, "p") }

// alarm is the AWS::CloudWatch::Alarm of a, notifying the alarm topic.
func alarm(a deploy.Alarm) (*yaml.Node, error) {
	props := []kv{
		field("AlarmName", sub("${AWS::StackName}-"+a.Name)),
		field("AlarmDescription", a.Description),
	}
	period := int(a.Period.Seconds())
	if a.Metric != nil {
		dims, err := dimensions(*a.Metric)
		if err != nil {
			return nil, err
		}
		props = append(props,
			field("Namespace", a.Metric.Namespace),
			field("MetricName", a.Metric.Name),
			field("Dimensions", dims),
		)
		if isPercentile(a.Metric.Stat) {
			props = append(props, field("ExtendedStatistic", a.Metric.Stat))
		} else {
			props = append(props, field("Statistic", a.Metric.Stat))
		}
		props = append(props, field("Period", period))
	} else {
		metrics := []any{obj(
			field("Id", "alarm"),
			field("Expression", expression(a.Expression)),
			field("Label", a.Name),
			field("ReturnData", true),
		)}
		for _, m := range a.Metrics {
			dims, err := dimensions(m)
			if err != nil {
				return nil, err
			}
			metrics = append(metrics, obj(
				field("Id", m.ID),
				field("MetricStat", obj(
					field("Metric", obj(field("Namespace", m.Namespace), field("MetricName", m.Name), field("Dimensions", dims))),
					field("Period", period),
					field("Stat", m.Stat),
				)),
				field("ReturnData", false),
			))
		}
		props = append(props, field("Metrics", list(metrics...)))
	}
	props = append(props,
		field("EvaluationPeriods", a.EvaluationPeriods),
		field("DatapointsToAlarm", a.DatapointsToAlarm),
		field("Threshold", a.Threshold),
		field("ComparisonOperator", a.Comparison),
		field("TreatMissingData", a.TreatMissingData),
		field("AlarmActions", list(ref(AlarmTopicID))),
		field("OKActions", list(ref(AlarmTopicID))),
	)
	return obj(field("Type", "AWS::CloudWatch::Alarm"), field("Properties", obj(props...))), nil
}

// alarmEmail is the i-th (from 1) address of the AlarmEmails parameter, or
// "" when it names fewer: the list joined, padded with a comma per slot,
// split again.
func alarmEmail(i int) *yaml.Node {
	padded := fnJoin("", list(fnJoin(",", ref(AlarmEmailsParam)), strings.Repeat(",", deploy.MaxAlarmEmails)))
	return fnSelect(i-1, fnSplit(",", padded))
}

// observeParameters are the parameters of the alarms and tracing, and of
// the log groups' retention.
func observeParameters() []kv {
	var days []any
	for _, d := range deploy.LogRetentionDays {
		days = append(days, d)
	}
	return []kv{
		field(AlarmEmailsParam, obj(
			field("Type", "CommaDelimitedList"),
			field("Default", ""),
			field("Description", fmt.Sprintf("Email addresses the alarm topic sends every alarm's ALARM and OK notifications to, comma-separated (at most %d; each confirms its subscription). Empty: none (subscribe to the AlarmTopicArn output yourself).", deploy.MaxAlarmEmails)),
		)),
		field(TracingParam, obj(
			field("Type", "String"),
			field("Default", "true"),
			field("AllowedValues", flow("true", "false")),
			field("Description", "X-Ray active tracing of every function, with the sampling rule below; false: PassThrough (traced only when a caller sampled the request) and no sampling rule."),
		)),
		field(TraceSampleRateParam, obj(
			field("Type", "Number"),
			field("Default", deploy.DefaultTraceSampleRate),
			field("MinValue", 0),
			field("MaxValue", 1),
			field("Description", "The share of the functions' requests traced beyond the reservoir (the sampling rule's fixed rate), 0 to 1."),
		)),
		field(TraceReservoirParam, number(deploy.DefaultTraceReservoir, 0, deploy.MaxTraceReservoir,
			"Requests a second traced before the sample rate applies (the sampling rule's reservoir).")),
		field(LogRetentionDaysParam, obj(
			field("Type", "Number"),
			field("Default", deploy.SAMLogRetentionDays),
			field("AllowedValues", flow(days...)),
			field("Description", "Days every log group keeps its events (the functions', the HTTP API's access logs, the state machines'): a retention CloudWatch Logs accepts."),
		)),
	}
}

// observeConditions are the conditions of tracing and of the email
// subscriptions' slots.
func observeConditions() []kv {
	out := []kv{field(TracingOn, fnEquals(ref(TracingParam), "true"))}
	for i := 1; i <= deploy.MaxAlarmEmails; i++ {
		out = append(out, field(HasAlarmEmail(i), fnNot(fnEquals(alarmEmail(i), ""))))
	}
	return out
}

// resource is one resource of the template, with its comment.
type resource struct {
	comment, id string
	node        *yaml.Node
}

// observeResources are the alarm topic, its key, policy and
// subscriptions, the alarms, the dashboard and the sampling rule.
func observeResources(s Spec) ([]resource, error) {
	out := []resource{
		{"The alarm topic's key: SNS's AWS managed key does not let CloudWatch publish to a topic it encrypts; this one's policy does. Rotated yearly.",
			AlarmTopicKeyID, disposable("AWS::KMS::Key", obj(
				field("Description", sub("encrypts the alarm topic of ${AWS::StackName}")),
				field("EnableKeyRotation", true),
				field("KeyPolicy", obj(
					field("Version", "2012-10-17"),
					field("Statement", list(
						obj(
							field("Sid", "Account"),
							field("Effect", "Allow"),
							field("Principal", obj(field("AWS", sub("arn:${AWS::Partition}:iam::${AWS::AccountId}:root")))),
							field("Action", "kms:*"),
							field("Resource", "*"),
						),
						obj(
							field("Sid", "CloudWatchAlarms"),
							field("Effect", "Allow"),
							field("Principal", obj(field("Service", "cloudwatch.amazonaws.com"))),
							field("Action", strs([]string{"kms:Decrypt", "kms:GenerateDataKey*"})),
							note("A key policy's resource is the key itself.", "Resource", "*"),
						),
					)),
				)),
			))},
		{"Every alarm's ALARM and OK notifications (the AlarmEmails parameter's addresses are subscribed).", AlarmTopicID, obj(
			field("Type", "AWS::SNS::Topic"),
			field("Properties", obj(
				field("DisplayName", "Sourcebase alarms"),
				field("KmsMasterKeyId", ref(AlarmTopicKeyID)),
			)),
		)},
		{"", AlarmTopicPolicyID, obj(
			field("Type", "AWS::SNS::TopicPolicy"),
			field("Properties", obj(
				field("Topics", list(ref(AlarmTopicID))),
				field("PolicyDocument", obj(
					field("Version", "2012-10-17"),
					field("Statement", list(
						obj(
							field("Sid", "EnforceTLS"),
							field("Effect", "Deny"),
							field("Principal", "*"),
							field("Action", "sns:Publish"),
							field("Resource", ref(AlarmTopicID)),
							field("Condition", obj(field("Bool", obj(field("aws:SecureTransport", "false"))))),
						),
						obj(
							field("Sid", "CloudWatchAlarms"),
							field("Effect", "Allow"),
							field("Principal", obj(field("Service", "cloudwatch.amazonaws.com"))),
							field("Action", "sns:Publish"),
							field("Resource", ref(AlarmTopicID)),
							field("Condition", obj(
								field("ArnLike", obj(field("aws:SourceArn", sub("arn:${AWS::Partition}:cloudwatch:${AWS::Region}:${AWS::AccountId}:alarm:*")))),
								field("StringEquals", obj(field("aws:SourceAccount", ref("AWS::AccountId")))),
							)),
						),
					)),
				)),
			)),
		)},
	}
	for i := 1; i <= deploy.MaxAlarmEmails; i++ {
		comment := ""
		if i == 1 {
			comment = fmt.Sprintf("One email subscription per address of the AlarmEmails parameter (%d slots, each there only when the parameter names an address for it).", deploy.MaxAlarmEmails)
		}
		out = append(out, resource{comment, AlarmEmailID(i), obj(
			field("Type", "AWS::SNS::Subscription"),
			field("Condition", HasAlarmEmail(i)),
			field("Properties", obj(
				field("TopicArn", ref(AlarmTopicID)),
				field("Protocol", "email"),
				field("Endpoint", alarmEmail(i)),
			)),
		)})
	}
	for i, a := range deploy.Alarms(s.Model, false) {
		n, err := alarm(a)
		if err != nil {
			return nil, fmt.Errorf("alarm %s: %w", a.Name, err)
		}
		comment := ""
		if i == 0 {
			comment = "The alarms (infra/deploy's Alarms, as the CDK stack's): each notifies the alarm topic when it fires and when it is OK again; missing data is not breaching."
		}
		out = append(out, resource{comment, AlarmID(a.Name), n})
	}
	var bad error
	body := deploy.DashboardBody(deploy.Dashboard(s.Model, false), "${AWS::Region}", func(t deploy.Target) string {
		e, err := targetExpr(t)
		if err != nil {
			bad = err
		}
		return "${" + e + "}"
	})
	if bad != nil {
		return nil, bad
	}
	out = append(out,
		resource{"One row per path (API, webhooks in, runs, events and deliveries, jobs, search, table and operator), each starting with a text widget naming it: the alarms' metrics and more.",
			DashboardID, obj(
				field("Type", "AWS::CloudWatch::Dashboard"),
				field("Properties", obj(
					field("DashboardName", sub("${AWS::StackName}-${AWS::Region}")),
					field("DashboardBody", sub(body)),
				)),
			)},
		resource{"X-Ray sampling of the stack's functions (their names start with the stack's): TraceReservoir requests a second, then TraceSampleRate of the rest. " +
			"Its name (32 characters at most) is made unique by the stack id.", SamplingRuleID, obj(
			field("Type", "AWS::XRay::SamplingRule"),
			field("Condition", TracingOn),
			field("Properties", obj(field("SamplingRule", obj(
				field("RuleName", fnJoin("-", list("sourcebase", fnSelect(0, fnSplit("-", fnSelect(2, fnSplit("/", ref("AWS::StackId")))))))),
				field("Priority", deploy.SamplingRulePriority),
				field("FixedRate", ref(TraceSampleRateParam)),
				field("ReservoirSize", ref(TraceReservoirParam)),
				field("ServiceName", sub("${AWS::StackName}-*")),
				field("ServiceType", deploy.TracingServiceType),
				field("Host", "*"),
				field("HTTPMethod", "*"),
				field("URLPath", "*"),
				field("ResourceARN", "*"),
				field("Version", 1),
			)))),
		)},
	)
	return out, nil
}
