package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
)

// Names of the outputs of what the ops team watches.
const (
	OutAlarmTopicARN = "AlarmTopicArn"
	OutDashboardName = "DashboardName"
)

// DashboardName is the stack's dashboard's name: the stack's and the
// region's (a dashboard's name is unique in an account, across regions).
func DashboardName(stack string) string { return stack + "-" + *awscdk.Aws_REGION() }

// addAlarms adds what the ops team watches (deploy.Alarms and
// deploy.Dashboard, the same as the SAM template's): the alarm topic
// (encrypted with a key of its own that CloudWatch may use, TLS only,
// subscribed to by Options.AlarmEmails), every alarm sending its ALARM and
// OK notifications to it, and the dashboard.
func (st *Stack) addAlarms(settings stageSettings) {
	// The topic's key: SNS's AWS managed key (alias/aws/sns) does not let
	// CloudWatch publish to the topic it encrypts, so the topic has a key
	// of its own, rotated yearly, whose policy lets CloudWatch use it.
	st.AlarmKey = awskms.NewKey(st.Stack, jsii.String("AlarmTopicKey"), &awskms.KeyProps{
		Description:       jsii.String("encrypts the alarm topic of " + *st.Stack.StackName()),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     settings.removal(),
	})
	st.AlarmKey.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarms"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings(AlarmKeyActions...),
		Resources:  jsii.Strings("*"), // a key policy's resource is the key itself
	}), nil)
	st.AlarmTopic = awssns.NewTopic(st.Stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Sourcebase alarms (" + string(st.Options.Stage) + ")"),
		MasterKey:   st.AlarmKey,
		EnforceSSL:  jsii.Bool(true),
	})
	st.AlarmTopic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarms"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  jsii.Strings(*st.AlarmTopic.TopicArn()),
		Conditions: &map[string]any{
			"ArnLike":      map[string]any{"aws:SourceArn": *awscdk.Arn_Format(&awscdk.ArnComponents{Service: jsii.String("cloudwatch"), Resource: jsii.String("alarm"), ResourceName: jsii.String("*"), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME}, st.Stack)},
			"StringEquals": map[string]any{"aws:SourceAccount": *awscdk.Aws_ACCOUNT_ID()},
		},
	}))
	for _, addr := range st.Options.AlarmEmails {
		st.AlarmTopic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(addr), nil))
	}

	action := awscloudwatchactions.NewSnsAction(st.AlarmTopic)
	for _, a := range deploy.Alarms(st.Model, st.Options.OpenSearch()) {
		var metric awscloudwatch.IMetric
		if a.Metric != nil {
			metric = st.metric(*a.Metric, a.Period)
		} else {
			using := map[string]awscloudwatch.IMetric{}
			for _, m := range a.Metrics {
				using[m.ID] = st.metric(m, a.Period)
			}
			metric = awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
				Expression:   jsii.String(strings.ReplaceAll(a.Expression, deploy.SettingAPIRateLimit, strconv.Itoa(st.Options.APIRateLimit))),
				UsingMetrics: &using,
				Period:       awscdk.Duration_Seconds(jsii.Number(a.Period.Seconds())),
				Label:        jsii.String(a.Name),
			})
		}
		alarm := awscloudwatch.NewAlarm(st.Stack, jsii.String("Alarm"+constructID(a.Name)), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(StackName(st.Options.Stage) + "-" + a.Name),
			AlarmDescription:   jsii.String(a.Description),
			Metric:             metric,
			Threshold:          jsii.Number(a.Threshold),
			ComparisonOperator: awscloudwatch.ComparisonOperator(comparisons[a.Comparison]),
			EvaluationPeriods:  jsii.Number(a.EvaluationPeriods),
			DatapointsToAlarm:  jsii.Number(a.DatapointsToAlarm),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		alarm.AddAlarmAction(action)
		alarm.AddOkAction(action)
		st.Alarms[a.Name] = alarm
	}

	body := deploy.DashboardBody(deploy.Dashboard(st.Model, st.Options.OpenSearch()), *awscdk.Aws_REGION(), func(t deploy.Target) string {
		v, err := st.targetName(t)
		if err != nil {
			panic(err) // deploy.Dashboard names only what the stack has
		}
		return v
	})
	st.Dashboard = awscloudwatch.NewCfnDashboard(st.Stack, jsii.String("Dashboard"), &awscloudwatch.CfnDashboardProps{
		DashboardName: jsii.String(DashboardName(StackName(st.Options.Stage))),
		DashboardBody: jsii.String(body),
	})
	awscdk.NewCfnOutput(st.Stack, jsii.String(OutAlarmTopicARN), &awscdk.CfnOutputProps{
		Value: st.AlarmTopic.TopicArn(), Description: jsii.String("the alarm topic: every alarm's ALARM and OK notifications (subscribe with -c alarmEmails or to the topic itself)"),
	})
	awscdk.NewCfnOutput(st.Stack, jsii.String(OutDashboardName), &awscdk.CfnOutputProps{
		Value: st.Dashboard.Ref(), Description: jsii.String("the CloudWatch dashboard: one row per path (API, webhooks in, runs, events and deliveries, jobs, search, table and operator)"),
	})
}

// AlarmKeyActions are what CloudWatch does with the alarm topic's key to
// publish to the topic.
var AlarmKeyActions = []string{"kms:Decrypt", "kms:GenerateDataKey*"}

// comparisons are the CDK's comparison operators of deploy's.
var comparisons = map[string]string{
	deploy.GreaterThan:        string(awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD),
	deploy.GreaterThanOrEqual: string(awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD),
}

// metric is m over period, its dimensions resolved.
func (st *Stack) metric(m deploy.Metric, period interface{ Seconds() float64 }) awscloudwatch.Metric {
	dims := map[string]*string{}
	for _, d := range m.Dimensions {
		v, err := st.dimensionValue(d)
		if err != nil {
			panic(err)
		}
		dims[d.Name] = jsii.String(v)
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(m.Namespace),
		MetricName:    jsii.String(m.Name),
		DimensionsMap: &dims,
		Statistic:     jsii.String(m.Stat),
		Period:        awscdk.Duration_Seconds(jsii.Number(period.Seconds())),
	})
}

func (st *Stack) dimensionValue(d deploy.Dimension) (string, error) {
	if d.Value.Kind == "" {
		return d.Value.Name, nil
	}
	return st.targetName(d.Value)
}

// targetName is the name (a state machine's ARN) of what t names.
func (st *Stack) targetName(t deploy.Target) (string, error) {
	switch t.Kind {
	case deploy.TargetFunction:
		if f, ok := st.Functions[t.Name]; ok {
			return *f.FunctionName(), nil
		}
	case deploy.TargetTable:
		return *st.Table.TableName(), nil
	case deploy.TargetQueue:
		q := map[string]awssqs.Queue{
			deploy.QueueEventsFailures: st.EventsFailures, deploy.QueueIndexerFailures: st.IndexerFailures,
			deploy.QueueDeliver: st.DeliverQueue, deploy.QueueDeliverDLQ: st.DeliverDLQ,
		}[t.Name]
		if q != nil {
			return *q.QueueName(), nil
		}
	case deploy.TargetAPI:
		return *st.Api.ApiId(), nil
	case deploy.TargetStateMachine:
		sm := map[string]awsstepfunctions.StateMachine{deploy.StateMachineRun: st.StateMachine, deploy.StateMachineJob: st.JobStateMachine}[t.Name]
		if sm != nil {
			return *sm.StateMachineArn(), nil
		}
	}
	return "", fmt.Errorf("the stack has no %s %q for a metric", t.Kind, t.Name)
}
