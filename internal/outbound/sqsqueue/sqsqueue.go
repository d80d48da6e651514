// Package sqsqueue is the outbound webhooks' delivery queue of a
// deployment (an SQS FIFO queue) and the deliver function's handler of its
// batches; apart from package endpoints so that only the functions that
// queue or take deliveries link the SQS client.
package sqsqueue

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/telemetry"
)

// MaxVisibility is the longest wait SQS can give a message (12 hours):
// the longest retry of the schedule.
const MaxVisibility = 12 * time.Hour

// Queue is the delivery queue of a deployment: a FIFO queue, one
// message group per endpoint and record, so that a record's deliveries to
// an endpoint are made in order of change while others go on.
type Queue struct {
	Client *sqs.Client
	URL    string
}

// Send queues m. The deduplication id is the delivery's (and the time of
// a manual retry's), so an event published again within SQS's five
// minutes queues it once.
func (q Queue) Send(ctx context.Context, m endpoints.Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	dedup := m.Delivery
	if m.Manual {
		dedup += "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(string(body)),
		MessageGroupId: aws.String(groupID(m.Group)), MessageDeduplicationId: aws.String(dedup)}
	if h := telemetry.TraceHeader(ctx); h != nil { // the trace goes on into the deliver function
		in.MessageSystemAttributes = map[string]sqstypes.MessageSystemAttributeValue{
			string(sqstypes.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: h}}
	}
	_, err = q.Client.SendMessage(ctx, in)
	return awsenv.Classify(err, "the delivery could not be queued")
}

// Release makes the held message m's receipt names visible at once
// (ChangeMessageVisibility to 0): the deliver function gets it again,
// finds its delivery done, and its group goes on. A receipt that no
// longer holds the message (its retry came meanwhile) is an error the
// caller logs.
func (q Queue) Release(ctx context.Context, m endpoints.Message) error {
	if m.Receipt == "" {
		return nil
	}
	_, err := q.Client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL),
		ReceiptHandle: aws.String(m.Receipt), VisibilityTimeout: 0})
	return err
}

// groupID fits a group into SQS's 128 characters.
func groupID(g string) string {
	if len(g) <= 128 {
		return g
	}
	return g[:128]
}

// Handler is the deliver function: it attempts a batch of the FIFO
// queue's messages in order. A message to retry is hidden for its wait
// (ChangeMessageVisibility, at most MaxVisibility) and reported failed,
// with every later message of its group in the batch (FIFO order), which
// are made visible again at once: behind the hidden one, they cannot be
// received before it, and so never hold their group themselves (a
// release of the hidden one, endpoints.Releaser, lets the group go on
// now). One that exhausted its retries is moved to the dead-letter queue
// dlq.
func Handler(s *endpoints.Service, client *sqs.Client, queueURL, dlq string) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		held := map[string]bool{}
		fail := func(m events.SQSMessage) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
		for _, msg := range ev.Records {
			group := msg.Attributes["MessageGroupId"]
			if held[group] {
				fail(msg)
				if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(queueURL),
					ReceiptHandle: aws.String(msg.ReceiptHandle), VisibilityTimeout: 0}); err != nil {
					slog.WarnContext(ctx, "a delivery held behind its group's retry comes back after the queue's visibility timeout", "messageId", msg.MessageId, "error", err)
				}
				continue
			}
			var m endpoints.Message
			if err := json.Unmarshal([]byte(msg.Body), &m); err != nil {
				slog.ErrorContext(ctx, "a delivery message cannot be read; dropped", "messageId", msg.MessageId)
				continue
			}
			m.Receipt = msg.ReceiptHandle
			out, err := s.Attempt(ctx, m)
			switch {
			case err != nil:
				slog.ErrorContext(ctx, "a delivery attempt failed", "delivery", m.Delivery, "error", err)
				held[group] = true
				fail(msg)
			case out.Paused && requeued(ctx, client, queueURL, msg, m):
				// Its organization is suspended: a fresh copy waits in its place (paused.go).
			case out.Retry > 0:
				wait := min(out.Retry, MaxVisibility)
				if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(queueURL),
					ReceiptHandle: aws.String(msg.ReceiptHandle), VisibilityTimeout: int32(wait / time.Second)}); err != nil {
					slog.ErrorContext(ctx, "a delivery's retry cannot be scheduled; it comes back after the queue's visibility timeout", "delivery", m.Delivery, "error", err)
				}
				held[group] = true
				fail(msg)
			case out.Dead:
				if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dlq), MessageBody: aws.String(msg.Body),
					MessageGroupId: aws.String(groupID(m.Group)), MessageDeduplicationId: aws.String(m.Delivery)}); err != nil {
					held[group] = true
					fail(msg)
					slog.ErrorContext(ctx, "a dead delivery cannot be moved to the dead-letter queue", "delivery", m.Delivery, "error", err)
				}
			}
		}
		return resp, nil
	}
}
