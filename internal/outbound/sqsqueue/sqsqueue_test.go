package sqsqueue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	evs "github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/outbound/sqsqueue"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// motoSQS is an SQS client of a moto_server of the test.
func motoSQS(t *testing.T) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(testenv.Moto(t)),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

func fifo(t *testing.T, c *sqs.Client, name string) string {
	t.Helper()
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"}})
	if err != nil {
		t.Fatal(err)
	}
	return *out.QueueUrl
}

// receive takes the queue's visible messages as the Lambda event source
// hands them to the deliver function.
func receive(t *testing.T, c *sqs.Client, queue string) events.SQSEvent {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(queue), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: *m.MessageId, ReceiptHandle: *m.ReceiptHandle, Body: *m.Body,
			Attributes: m.Attributes})
	}
	return ev
}

func TestTheDeliverFunctionRetriesByVisibilityAndMovesWhatExhaustsItsRetriesToTheDeadLetterQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := motoSQS(t)
	queue, dlq := fifo(t, c, "deliveries"), fifo(t, c, "deliveries-dlq")
	var hits atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(recv.Close)

	st := testenv.Store(t)
	svc := endpoints.New(st, kinds.Events(), &outbound.Client{AllowLoopback: true}, sqsqueue.Queue{Client: c, URL: queue})
	svc.Scale = 1e-9 // every wait rounds to a visibility of 0 s: retried at once
	ep, err := svc.Create(ctx, "org_1", endpoints.Input{URL: aws.String(recv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	ev := evs.Event{ID: "evt_01m8a0000000000000000000001", Type: "deal.created", OccurredAt: clock.Now(),
		Actor: store.Actor{Type: store.ActorSystem, ID: "test"}, Resource: evs.Resource{Type: "deal", ID: "deal_1"}}
	if err := svc.Publish(ctx, evs.Derived{Org: "org_1", Event: ev}); err != nil {
		t.Fatal(err)
	}
	// Published again (a stream batch retried): SQS deduplicates it.
	if err := svc.Publish(ctx, evs.Derived{Org: "org_1", Event: ev}); err != nil {
		t.Fatal(err)
	}
	handle := sqsqueue.Handler(svc, c, queue, dlq)
	for round := 0; ; round++ {
		batch := receive(t, c, queue)
		if len(batch.Records) == 0 {
			break
		}
		if len(batch.Records) != 1 || batch.Records[0].Attributes["MessageGroupId"] != ep.ID+"/deal_1" {
			t.Fatalf("round %d: %d messages (group %q), want the one delivery in its endpoint and record's group", round, len(batch.Records), batch.Records[0].Attributes["MessageGroupId"])
		}
		resp, err := handle(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		if int(hits.Load()) < 8 && len(resp.BatchItemFailures) != 1 {
			t.Fatalf("round %d: a delivery to retry is not reported failed: %+v", round, resp)
		}
		if round > 20 {
			t.Fatal("the delivery never exhausted its retries")
		}
	}
	if n := hits.Load(); n != 8 {
		t.Errorf("%d attempts, want 8", n)
	}
	dead := receive(t, c, dlq)
	if len(dead.Records) != 1 {
		t.Fatalf("the dead-letter queue holds %d messages, want the exhausted delivery", len(dead.Records))
	}
	p, err := svc.Deliveries(ctx, "org_1", ep.ID, endpoints.Failed, 10, 0, "")
	if err != nil || len(p.Items) != 1 || len(p.Items[0].Attempts) != 8 {
		t.Fatalf("the delivery is not failed with its 8 attempts: %+v %v", p.Items, err)
	}
}
