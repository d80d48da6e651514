package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/streams"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// image is a stream image of a record of typ written by actor.
func image(t *testing.T, pk, sk, typ, actor string, doc map[string]any) store.Image {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return store.ImageOf(map[string]string{store.AttrPK: pk, store.AttrSK: sk, store.AttrType: typ, store.AttrDoc: string(b),
		store.AttrActor: actor, store.AttrWrittenAt: "2026-01-02T03:04:05.123456789Z"})
}

func TestAnUpdateIsItsChangedFieldsWithSecretsRedactedAndHiddenFieldsLeftOut(t *testing.T) {
	c := kinds.Events()
	pk := store.OrgPartition("org_1", "WORKFLOW")
	before := image(t, pk, "wf_1", "WORKFLOW", "apiKey:ck_1", map[string]any{"id": "wf_1", "name": "a", "triggerSecret": "s1", "pastHeaderNames": []any{"X-A"}})
	after := image(t, pk, "wf_1", "WORKFLOW", "apiKey:ck_2", map[string]any{"id": "wf_1", "name": "b", "triggerSecret": "s2", "pastHeaderNames": []any{"X-B"}})
	d, ok, err := c.Derive(context.Background(), streams.Record{ID: "r1", Name: streams.Modify, Old: before, New: after}, nil)
	if err != nil || !ok {
		t.Fatalf("derive: %v %v", ok, err)
	}
	ev := d.Event
	if d.Org != "org_1" || ev.Type != "workflow.updated" || ev.Resource != (history.Resource{Type: "workflow", ID: "wf_1"}) {
		t.Fatalf("derived %+v of %s", ev, d.Org)
	}
	if ev.Actor != (store.Actor{Type: "apiKey", ID: "ck_2"}) {
		t.Errorf("the actor is the new image's writer: %+v", ev.Actor)
	}
	if got := ev.OccurredAt.Format(time.RFC3339Nano); got != "2026-01-02T03:04:05.123Z" {
		t.Errorf("occurredAt %s, want the write's time to the millisecond", got)
	}
	b, _ := json.Marshal(ev)
	for _, leak := range []string{"s1", "s2", "pastHeaderNames", "X-A", "triggerSecret"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the event shows %q: %s", leak, b)
		}
	}
	if len(ev.Changes) != 2 || string(ev.Changes["name"].From) != `"a"` || string(ev.Changes["trigger.secret"].To) != history.Redacted {
		t.Errorf("changes %s", b)
	}
	again, _, _ := c.Derive(context.Background(), streams.Record{ID: "r1", Name: streams.Modify, Old: before, New: after}, nil)
	if again.Event.ID != ev.ID {
		t.Errorf("the same stream record gives another event id: %s, %s", again.Event.ID, ev.ID)
	}
}

// A write made through something (an import, a batch, a run) is its
// actor's with that via; a run's starter is hidden from its events.
func TestAnEventsActorCarriesWhatItWroteThrough(t *testing.T) {
	c := kinds.Events()
	via := store.Actor{Type: "apiKey", ID: "ck_1", Via: store.Via{Type: store.ViaWorkflowRun, ID: "run_1", WorkflowID: "wf_1"}}
	img := image(t, store.OrgPartition("org_1", store.TypeRun), "run_1", store.TypeRun, via.String(),
		map[string]any{"id": "run_1", "workflowId": "wf_1", "organizationId": "org_1", "starter": "apiKey:ck_1"})
	d, ok, err := c.Derive(context.Background(), streams.Record{ID: "r", Name: streams.Insert, New: img}, nil)
	if err != nil || !ok {
		t.Fatalf("derive: %v %v", ok, err)
	}
	if d.Event.Actor != via {
		t.Errorf("the actor is %+v, want %+v", d.Event.Actor, via)
	}
	if strings.Contains(string(d.Event.Data), "starter") || strings.Contains(string(d.Event.Data), "organizationId") {
		t.Errorf("a run's event shows its stored-only fields: %s", d.Event.Data)
	}
}

func TestItemsThatAreNotRecordsGiveNoEvent(t *testing.T) {
	c := kinds.Events()
	for _, img := range []store.Image{
		image(t, "RATE#key#ck_1", "W#1", store.TypeRate, "system:x", map[string]any{}),
		image(t, store.OrgPartition("org_1", "COMPANY")+"#CHANGES", "123#cmp_1#1", store.TypeChange, "system:x", map[string]any{}),
		image(t, store.OrgPartition("org_1", store.TypeDeleted), "COMPANY#cmp_1", store.TypeDeleted, "apiKey:ck_1", map[string]any{}),
		image(t, store.OrgPartition("org_1", history.TypeEvent), "evt_1", history.TypeEvent, "system:events", map[string]any{}),
	} {
		if _, ok, err := c.Derive(context.Background(), streams.Record{ID: "r", Name: streams.Insert, New: img}, nil); ok || err != nil {
			t.Errorf("%s gives an event (%v)", store.ImageString(img, store.AttrType), err)
		}
	}
	// An update of what clients do not see (a key's last use) is none.
	key := image(t, "APIKEY#ck_1", "APIKEY", store.TypeAPIKey, "system:x", map[string]any{"clientId": "ck_1", "organizationId": "org_1"})
	if _, ok, _ := c.Derive(context.Background(), streams.Record{ID: "r", Name: streams.Modify, Old: key, New: key}, nil); ok {
		t.Error("an update that changes nothing a client sees gives an event")
	}
}

func TestADeleteIsItsMarkersActorsAndAnExpiryIsTheSystems(t *testing.T) {
	c := kinds.Events()
	old := image(t, store.OrgPartition("org_1", "DEAL"), "deal_1", "DEAL", "apiKey:ck_1", map[string]any{"id": "deal_1", "name": "x"})
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	by := func(_ context.Context, org, typ, id string) (store.Actor, time.Time, bool, error) {
		if org != "org_1" || typ != "DEAL" || id != "deal_1" {
			t.Errorf("the marker is looked up as %s %s %s", org, typ, id)
		}
		return store.Actor{Type: "apiKey", ID: "ck_9"}, at, true, nil
	}
	d, ok, err := c.Derive(context.Background(), streams.Record{ID: "r", Name: streams.Remove, Old: old}, by)
	if err != nil || !ok || d.Event.Type != "deal.deleted" || d.Event.Actor.ID != "ck_9" || !d.Event.OccurredAt.Equal(at) {
		t.Fatalf("delete: %+v %v %v", d.Event, ok, err)
	}
	if !strings.Contains(string(d.Event.Data), `"name":"x"`) {
		t.Errorf("a delete's data is the last state: %s", d.Event.Data)
	}
	d, _, _ = c.Derive(context.Background(), streams.Record{ID: "r2", Name: streams.Remove, Old: old, ByTTL: true, At: at}, by)
	if d.Event.Actor != (store.Actor{Type: store.ActorSystem, ID: "expiry"}) {
		t.Errorf("an expiry's actor is %+v", d.Event.Actor)
	}
}

func TestAnEventTooLargeToKeepIsTruncated(t *testing.T) {
	c := kinds.Events()
	big := strings.Repeat("x", history.MaxDataBytes)
	img := image(t, store.OrgPartition("org_1", "DEAL"), "deal_1", "DEAL", "apiKey:ck_1", map[string]any{"id": "deal_1", "notes": big})
	d, _, _ := c.Derive(context.Background(), streams.Record{ID: "r", Name: streams.Insert, New: img}, nil)
	if !d.Event.Truncated || d.Event.Data != nil {
		t.Errorf("a %d-byte record's event is not truncated", len(big))
	}
}

func TestEventTypePatterns(t *testing.T) {
	c := kinds.Events()
	for p, ok := range map[string]bool{"*": true, "company.*": true, "company.updated": true, "webhookEndpoint.disabled": true,
		"company.disabled": false, "planet.*": false, "company": false, "": false} {
		if got := c.CheckPattern(p) == nil; got != ok {
			t.Errorf("CheckPattern(%q) = %v, want %v", p, got, ok)
		}
	}
	if !history.MatchType("company.*", "company.created") || history.MatchType("company.*", "companyX.created") || history.MatchType("deal.*", "company.created") {
		t.Error("MatchType")
	}
}

func TestARecordStoredDeflatedDerivesTheSameEvent(t *testing.T) {
	c := kinds.Events()
	pk := store.OrgPartition("org_1", "WORKFLOW")
	before := image(t, pk, "wf_1", "WORKFLOW", "apiKey:ck_1", map[string]any{"id": "wf_1", "name": "a"})
	after := image(t, pk, "wf_1", "WORKFLOW", "apiKey:ck_2", map[string]any{"id": "wf_1", "name": "b", "description": strings.Repeat("long ", 400)})
	rec := streams.Record{ID: "r1", Name: streams.Modify, Old: before, New: after}
	want, _, err := c.Derive(context.Background(), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The new image as the store writes a doc that saves a write unit.
	rec.New = store.ImageWithDeflatedDoc(after)
	got, ok, err := c.Derive(context.Background(), rec, nil)
	if err != nil || !ok {
		t.Fatalf("derive from the deflated image: %v %v", ok, err)
	}
	g, _ := json.Marshal(got.Event)
	wnt, _ := json.Marshal(want.Event)
	if !bytes.Equal(g, wnt) {
		t.Errorf("from the deflated image:\n%s\nwant\n%s", g, wnt)
	}
}
