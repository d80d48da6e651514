package eventsapi_test

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 45, item 11: a sender that puts the trigger's secret (or one
// rotated away) in the query string or the body starts a run whose input,
// events and deliveries hold "[redacted]" in its place, never the secret.
func TestAWebhookRunNeverHoldsTheTriggersSecretSentInTheQueryOrBody(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	recv := apitest.NewReceiver(t, nil) // on 127.0.0.1
	admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/runs", "eventTypes": []string{"workflowRun.*"}}).Want(t, 201)

	h := apitest.NewHook(t, admin, nil)
	old := h.Secret
	rot := admin.Do("POST", "/v1/workflows/"+h.WorkflowID+"/trigger/webhook-secret/rotate", nil).Want(t, 200).Object(t)
	_, secret := apitest.SlugAndSecret(t, rot)
	if secret == "" || secret == old {
		t.Fatalf("the rotation answered %s", apitest.JSONOf(rot))
	}

	query := "?" + url.Values{"token": {secret}, "secret": {old}, "source": {"crm"}, "tag": {"a", secret}}.Encode()
	body := map[string]any{
		"event": "deal.created",
		"auth":  map[string]any{"secret": secret, "previous": " " + old + " ", "hint": "not a secret"},
		"list":  []any{old, "keep", map[string]any{"deep": []any{secret}}},
		"note":  "sent with " + secret,
	}
	r := apitest.Deliver(t, e, h.Slug, query, body, "X-Service-Webhook-Secret", secret).Want(t, 202)
	run := apitest.AwaitRun(t, admin, apitest.IDOf(t, r.Object(t)))
	apitest.WantStatus(t, run, "completed")
	runID := apitest.IDOf(t, run)

	leaks := func(what, raw string) {
		t.Helper()
		for name, s := range map[string]string{"the current secret": secret, "the rotated-away secret": old} {
			if strings.Contains(raw, s) {
				t.Errorf("BUG: %s holds %s: %s", what, name, raw)
			}
		}
	}

	wh := apitest.ObjectAt(t, run, "input", "webhook")
	wantQuery := map[string]any{"token": "[redacted]", "secret": "[redacted]", "source": "crm", "tag": []any{"a", "[redacted]"}}
	if !reflect.DeepEqual(wh["query"], wantQuery) {
		t.Errorf("webhook.query %s, want %s", apitest.JSONOf(wh["query"]), apitest.JSONOf(wantQuery))
	}
	wantPayload := map[string]any{
		"event": "deal.created",
		"auth":  map[string]any{"secret": "[redacted]", "previous": "[redacted]", "hint": "not a secret"},
		"list":  []any{"[redacted]", "keep", map[string]any{"deep": []any{"[redacted]"}}},
		"note":  "[redacted]",
	}
	if !reflect.DeepEqual(wh["payload"], wantPayload) {
		t.Errorf("webhook.payload %s, want %s", apitest.JSONOf(wh["payload"]), apitest.JSONOf(wantPayload))
	}
	leaks("the run", apitest.JSONOf(run))

	apitest.Caught(t, evs)
	runEvents := apitest.AllEvents(t, admin, "resourceId="+runID)
	if len(runEvents) == 0 || !strings.Contains(apitest.JSONOf(runEvents), "[redacted]") {
		t.Fatalf("the run's events %s, want its creation with the redacted input", apitest.JSONOf(runEvents))
	}
	leaks("GET /v1/events", apitest.JSONOf(apitest.AllEvents(t, admin, "")))

	// The run's creation is delivered with its input (its status changes
	// may come before it).
	apitest.WaitFor(t, "the delivery of the run's creation", func() bool {
		for _, req := range recv.All() {
			if strings.Contains(string(req.Body), "workflowRun.created") {
				return true
			}
		}
		return false
	})
	reqs := recv.All()
	redacted := false
	for _, req := range reqs {
		var ev map[string]any
		if err := json.Unmarshal(req.Body, &ev); err != nil {
			t.Fatalf("a delivery's body: %v: %s", err, req.Body)
		}
		leaks("a delivery", string(req.Body))
		redacted = redacted || strings.Contains(string(req.Body), "[redacted]")
	}
	if !redacted {
		t.Errorf("no delivery holds the run's redacted input: %d deliveries", len(reqs))
	}
}
