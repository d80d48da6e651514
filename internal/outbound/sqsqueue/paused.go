package sqsqueue

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
)

// A delivery of a suspended organization waits in the queue
// (endpoints.Outcome.Paused: hidden for endpoints.PausedWait, again and
// again). SQS would drop it after the queue's retention (4 days), or
// move it to the dead-letter queue after the redrive's receive count
// (100): a message that has waited PausedRequeueAfter, or been received
// PausedRequeueReceives times, is sent again as a fresh message and the
// old one let go, so that a suspension of any length loses none. The
// fresh message goes behind its group's later messages: a record's
// deliveries to an endpoint that were queued before a suspension longer
// than that may go out of order after it ends.
const (
	PausedRequeueAfter    = 2 * 24 * time.Hour
	PausedRequeueReceives = 50
)

// stalePaused reports whether a paused message should be sent again.
func stalePaused(msg events.SQSMessage, now time.Time) bool {
	if n, err := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"]); err == nil && n >= PausedRequeueReceives {
		return true
	}
	ms, err := strconv.ParseInt(msg.Attributes["SentTimestamp"], 10, 64)
	return err == nil && now.Sub(time.UnixMilli(ms)) >= PausedRequeueAfter
}

// requeued sends a paused message again as a fresh one when it is stale
// (stalePaused), and reports whether it did: the old one is then let go.
func requeued(ctx context.Context, client *sqs.Client, queueURL string, msg events.SQSMessage, m endpoints.Message) bool {
	now := time.Now()
	if !stalePaused(msg, now) {
		return false
	}
	_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(msg.Body),
		MessageGroupId: aws.String(groupID(m.Group)), MessageDeduplicationId: aws.String(m.Delivery + "-p" + strconv.FormatInt(now.UnixNano(), 36))})
	if err != nil {
		slog.WarnContext(ctx, "a paused delivery could not be queued afresh; it waits as it is", "delivery", m.Delivery, "error", err)
		return false
	}
	return true
}
