package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// SendDeliveryActions let a function queue deliveries (on the delivery
// queue) or move an exhausted one (on its dead-letter queue): nothing
// else, as the code sends with the queue's URL.
var SendDeliveryActions = []string{"sqs:SendMessage"}

// addDeliveryQueues adds the outbound webhooks' delivery queue and its
// dead-letter queue, both FIFO (one message group per endpoint and record:
// a record's deliveries to an endpoint keep their order) with SQS-managed
// encryption and TLS enforced (deploy says why each setting). Content
// based deduplication is off: every message carries its delivery's
// MessageDeduplicationId, so an event published again (a stream batch
// retried) is queued once. The queue is in high throughput mode
// (deduplication and throughput per message group), which the per-group
// deduplication ids allow.
func (st *Stack) addDeliveryQueues(settings stageSettings) {
	st.DeliverDLQ = awssqs.NewQueue(st.Stack, jsii.String("DeliverDeadLetters"), &awssqs.QueueProps{
		Fifo:                      jsii.Bool(true),
		ContentBasedDeduplication: jsii.Bool(false),
		Encryption:                awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:                jsii.Bool(true),
		RetentionPeriod:           awscdk.Duration_Days(jsii.Number(deploy.DeliverDLQRetentionDays)),
		RemovalPolicy:             settings.removal(),
	})
	st.DeliverQueue = awssqs.NewQueue(st.Stack, jsii.String("DeliverQueue"), &awssqs.QueueProps{
		Fifo:                      jsii.Bool(true),
		ContentBasedDeduplication: jsii.Bool(false),
		DeduplicationScope:        awssqs.DeduplicationScope_MESSAGE_GROUP,
		FifoThroughputLimit:       awssqs.FifoThroughputLimit_PER_MESSAGE_GROUP_ID,
		Encryption:                awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:                jsii.Bool(true),
		VisibilityTimeout:         awscdk.Duration_Seconds(jsii.Number(deploy.DeliverVisibilityTimeout(st.Model).Seconds())),
		RetentionPeriod:           awscdk.Duration_Days(jsii.Number(deploy.DeliverRetentionDays)),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           st.DeliverDLQ,
			MaxReceiveCount: jsii.Number(deploy.DeliverMaxReceiveCount),
		},
		RemovalPolicy: settings.removal(),
	})
}

// addEvents wires the change history and the outbound webhooks: the
// functions that queue deliveries may send to the delivery queue; the
// events function reads the table's stream (filtered to the item types
// that have events); the deliver function takes the delivery queue's
// batches and may move exhausted deliveries to the dead-letter queue.
func (st *Stack) addEvents(settings stageSettings) error {
	consumers, deliverers := 0, 0
	for _, f := range st.deployed() {
		if f.SendsDeliveries {
			st.Policies[f.Name].AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings(SendDeliveryActions...),
				Resources: jsii.Strings(*st.DeliverQueue.QueueArn()),
			}))
		}
		switch {
		case deploy.IsEventsConsumer(f):
			consumers++
			var filters []*map[string]any
			for _, p := range deploy.EventsFilterPatterns(st.Model) {
				filters = append(filters, &map[string]any{"pattern": jsii.String(p)})
			}
			st.EventsFailures = st.addStreamSource(f, "EventsFailures", deploy.EventsBatchSize, filters, settings)
			// The organizations that asked for it also get their events
			// on the account's default bus.
			st.Policies[f.Name].AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings(deploy.PublishEventsActions...),
				Resources: jsii.Strings(*awscdk.Arn_Format(&awscdk.ArnComponents{Service: jsii.String("events"),
					Resource: jsii.String("event-bus"), ResourceName: jsii.String(deploy.EventBus)}, st.Stack)),
			}))
		case deploy.IsDeliverer(f):
			deliverers++
			if f.SendsDeliveries {
				return fmt.Errorf("function %s: the deliver function takes deliveries, it does not queue them", f.Name)
			}
			st.Policies[f.Name].AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings(SendDeliveryActions...),
				Resources: jsii.Strings(*st.DeliverDLQ.QueueArn()),
			}))
			// Its partial batch failures are the messages to retry (their
			// visibility set to the wait) and those held behind them in
			// their group; the event source grants receiving, deleting
			// and changing the visibility of the queue's messages.
			st.Functions[f.Name].AddEventSource(awslambdaeventsources.NewSqsEventSource(st.DeliverQueue, &awslambdaeventsources.SqsEventSourceProps{
				BatchSize:               jsii.Number(st.Model.DeliverBatchSize),
				ReportBatchItemFailures: jsii.Bool(true),
				MaxConcurrency:          jsii.Number(st.Options.DeliverConcurrency),
			}))
		}
	}
	if consumers != 1 || deliverers != 1 {
		return fmt.Errorf("want one events function on the table's stream and one function on the delivery queue, have %d and %d", consumers, deliverers)
	}
	return nil
}

// addStreamSource feeds f from the table's stream: batches of batchSize
// in order (one batch per shard at a time), its partial batch failures
// retried (bisected), only the records matching one of filters (none: every
// record), and what still fails kept for 14 days in the queue it returns.
func (st *Stack) addStreamSource(f deploymodel.Function, failuresID string, batchSize int, filters []*map[string]any, settings stageSettings) awssqs.Queue {
	failures := awssqs.NewQueue(st.Stack, jsii.String(failuresID), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(deploy.FailureRetentionDays)),
		RemovalPolicy:   settings.removal(),
	})
	props := &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(float64(batchSize)),
		BisectBatchOnError:      jsii.Bool(true),
		ReportBatchItemFailures: jsii.Bool(true),
		RetryAttempts:           jsii.Number(deploy.StreamRetryAttempts),
		ParallelizationFactor:   jsii.Number(1), // a record's changes in order
		OnFailure:               awslambdaeventsources.NewSqsDlq(failures),
	}
	if len(filters) > 0 {
		props.Filters = &filters
	}
	st.Functions[f.Name].AddEventSource(awslambdaeventsources.NewDynamoEventSource(st.Table, props))
	return failures
}
