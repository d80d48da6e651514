package runs_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/runs"
)

// The webhook path's whole work is the run service's, without HTTP: the
// handler only reads the request and writes the answer.
func TestReceiveVerifiesADeliveryBuildsTheRunInputAndStartsOneRunPerDeliveryID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, wf := setup(t, `[]`, runs.UseEngine(held{}))
	delivery := func(secret, id string) runs.Delivery {
		h := http.Header{}
		h.Set("X-Service-Webhook-Secret", secret)
		h.Set("X-GitHub-Delivery", id)
		h.Set("X-Custom", "yes")
		return runs.Delivery{Slug: wf.Trigger.Slug, Header: h, Query: url.Values{"a": {"1"}, "b": {"2", "3"}}, Body: []byte(`{"n":1}`)}
	}

	if _, _, err := svc.Receive(ctx, delivery("wrong", "d1")); !errors.Is(err, inbound.ErrInvalidSignature) {
		t.Fatalf("a wrong secret: err %v, want inbound.ErrInvalidSignature", err)
	}
	// An unknown slug is refused as a wrong secret is, so that slugs cannot be probed.
	if _, _, err := svc.Receive(ctx, runs.Delivery{Slug: "nope", Header: http.Header{}}); err != inbound.ErrInvalidSignature {
		t.Fatalf("an unknown slug: err %v, want inbound.ErrInvalidSignature", err)
	}

	run, replayed, err := svc.Receive(ctx, delivery(wf.Trigger.Secret, "d1"))
	if err != nil || replayed {
		t.Fatalf("first delivery: replayed %v, err %v", replayed, err)
	}
	if run.StartedBy != runs.StartedByWebhook || run.WorkflowID != wf.ID {
		t.Errorf("run %+v, want a webhook run of %s", run, wf.ID)
	}
	hook, _ := run.Input["webhook"].(map[string]any)
	headers, _ := hook["headers"].(map[string]any)
	query, _ := hook["query"].(map[string]any)
	if headers["x-custom"] != "yes" || headers["x-service-webhook-secret"] != nil {
		t.Errorf("input headers %v, want x-custom and never the secret", headers)
	}
	if query["a"] != "1" || len(query["b"].([]string)) != 2 {
		t.Errorf("input query %v, want a=1 and b's two values", query)
	}
	if payload, _ := hook["payload"].(map[string]any); payload == nil || payload["n"] == nil {
		t.Errorf("input payload %v, want the JSON body", hook["payload"])
	}

	again, replayed, err := svc.Receive(ctx, delivery(wf.Trigger.Secret, "d1"))
	if err != nil || !replayed || again.ID != run.ID {
		t.Fatalf("repeated delivery: run %v replayed %v err %v, want run %s replayed", again, replayed, err, run.ID)
	}
	other, replayed, err := svc.Receive(ctx, delivery(wf.Trigger.Secret, "d2"))
	if err != nil || replayed || other.ID == run.ID {
		t.Fatalf("another delivery id: replayed %v err %v, want a new run", replayed, err)
	}
}
