package bus_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/history/bus"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestTheEventsOfAnOrganizationThatAskedForItReachTheEventBridgeBusAndItsRules(t *testing.T) {
	ctx := context.Background()
	endpoint := testenv.Moto(t)
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	eb := eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})
	q := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("routed")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: queue.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	if err != nil {
		t.Fatal(err)
	}
	// The customer's own rule: deal events only.
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("deals"),
		EventPattern: aws.String(`{"source":["sourcebase"],"detail-type":[{"prefix":"deal."}]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("deals"),
		Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String(attrs.Attributes["QueueArn"])}}}); err != nil {
		t.Fatal(err)
	}
	b := &bus.Bridge{Client: eb, Bus: "default", Enabled: func(_ context.Context, org string) (bool, error) { return org == "org_on", nil }}
	ev := func(id, typ string) history.Event {
		return history.Event{ID: id, Type: typ, OccurredAt: clock.Now(), Actor: store.Actor{Type: "apiKey", ID: "ck_1"},
			Resource: history.Resource{Type: strings.Split(typ, ".")[0], ID: "x_1"}}
	}
	for _, d := range []history.Derived{
		{Org: "org_on", Event: ev("evt_1", "deal.created")},
		{Org: "org_on", Event: ev("evt_2", "company.created")}, // the rule does not route it
		{Org: "org_off", Event: ev("evt_3", "deal.created")},   // its organization did not ask
	} {
		if err := b.Publish(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	deadline := time.Now().Add(testenv.Scaled(10 * time.Second))
	for time.Now().Before(deadline) {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var e struct {
				Source     string     `json:"source"`
				DetailType string     `json:"detail-type"`
				Detail     bus.Detail `json:"detail"`
			}
			if err := json.Unmarshal([]byte(*m.Body), &e); err != nil {
				t.Fatalf("routed %s: %v", *m.Body, err)
			}
			if e.Source != "sourcebase" || e.DetailType != e.Detail.Type || e.Detail.OrganizationID == "" {
				t.Errorf("routed %s", *m.Body)
			}
			got = append(got, e.Detail.OrganizationID+"/"+e.Detail.ID)
		}
		if len(got) > 0 {
			break
		}
	}
	if len(got) != 1 || got[0] != "org_on/evt_1" {
		t.Fatalf("the rule routed %v, want only org_on's deal event", got)
	}
}
