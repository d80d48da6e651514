package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sourcebase/sourcebase/internal/store"
)

// An actor is stored with what it wrote through, and read back; what was
// stored before actors had a via reads as it did.
func TestAnActorIsStoredWithItsViaAndOlderValuesStillRead(t *testing.T) {
	for _, a := range []store.Actor{
		{Type: store.ActorAPIKey, ID: "ck_1"},
		{Type: store.ActorAPIKey, ID: "ck_1", Via: store.Via{Type: store.ViaImport, ID: "imp_1"}},
		{Type: store.ActorAPIKey, ID: "ck_1", Via: store.Via{Type: store.ViaBatch, ID: "crm-sync.42"}},
		{Type: store.ActorWebhook, ID: "wf_1", Via: store.Via{Type: store.ViaWorkflowRun, ID: "run_1", WorkflowID: "wf_1"}},
	} {
		if got := store.ParseActor(a.String()); got != a {
			t.Errorf("%+v stored as %q reads as %+v", a, a.String(), got)
		}
	}
	for stored, want := range map[string]store.Actor{
		"apiKey:ck_1":       {Type: store.ActorAPIKey, ID: "ck_1"},
		"workflowRun:run_1": {Type: store.ActorWorkflowRun, ID: "run_1"},
		"system:sourcebase": {Type: store.ActorSystem, ID: "sourcebase"},
		"":                  {Type: store.ActorSystem, ID: "sourcebase"},
		"apiKey:ck_1|":      {Type: store.ActorAPIKey, ID: "ck_1"},
	} {
		if got := store.ParseActor(stored); got != want {
			t.Errorf("%q reads as %+v, want %+v", stored, got, want)
		}
	}
	if got := (store.Actor{Type: "apiKey", ID: "ck_1"}).String(); got != "apiKey:ck_1" {
		t.Errorf("an actor without a via is stored as %q, as before vias", got)
	}
}

// In JSON, via is left out when there is none, and a run's names its
// workflow.
func TestAnActorsJSONShowsItsViaOnlyWhenItHasOne(t *testing.T) {
	for a, want := range map[store.Actor]string{
		{Type: "apiKey", ID: "ck_1"}: `{"type":"apiKey","id":"ck_1"}`,
		{Type: "apiKey", ID: "ck_1", Via: store.Via{Type: "import", ID: "imp_1"}}:                          `{"type":"apiKey","id":"ck_1","via":{"type":"import","id":"imp_1"}}`,
		{Type: "apiKey", ID: "ck_1", Via: store.Via{Type: "workflowRun", ID: "run_1", WorkflowID: "wf_1"}}: `{"type":"apiKey","id":"ck_1","via":{"type":"workflowRun","id":"run_1","workflowId":"wf_1"}}`,
	} {
		if b, _ := json.Marshal(a); string(b) != want {
			t.Errorf("%+v is %s, want %s", a, b, want)
		}
	}
}

// WithVia keeps ctx's actor and adds what it writes through.
func TestWithViaKeepsTheActor(t *testing.T) {
	ctx := store.WithActor(context.Background(), store.Actor{Type: store.ActorAPIKey, ID: "ck_1"})
	got := store.ActorOf(store.WithVia(ctx, store.Via{Type: store.ViaBatch, ID: "req_1"}))
	if got != (store.Actor{Type: store.ActorAPIKey, ID: "ck_1", Via: store.Via{Type: store.ViaBatch, ID: "req_1"}}) {
		t.Errorf("WithVia: %+v", got)
	}
	if got := store.ActorOf(store.WithVia(context.Background(), store.Via{Type: store.ViaImport, ID: "imp_1"})); got.Type != store.ActorSystem {
		t.Errorf("WithVia of no actor: %+v, want the system's", got)
	}
}
