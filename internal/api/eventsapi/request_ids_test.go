package eventsapi_test

import (
	"encoding/json"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestARequestsIDIsOnTheEventsRunsAndDeliveriesItCauses follows a request
// id (the caller's X-Request-Id) from the answer's header to what the
// request caused: its record's event, the event's delivery (the stored one
// and the payload sent), a delete's event, and a run it started with the
// events of the run's own writes, made later by the runner.
func TestARequestsIDIsOnTheEventsRunsAndDeliveriesItCauses(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	ep := admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL, "eventTypes": []string{"company.created"}}).Want(t, 201).Object(t)

	created := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Traced Co"}, "X-Request-Id", "create-1-"+admin.ClientID).Want(t, 201)
	if got := created.Header.Get("X-Request-Id"); got != "create-1-"+admin.ClientID {
		t.Fatalf("X-Request-Id %q, want the caller's", got)
	}
	company := created.Object(t)
	gone := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Gone Co"}).Want(t, 201).Object(t)
	deleted := admin.Do("DELETE", "/v1/companies/"+apitest.IDOf(t, gone), nil, "X-Request-Id", "delete-1-"+admin.ClientID).Want(t, 204)
	if deleted.Header.Get("X-Request-Id") != "delete-1-"+admin.ClientID {
		t.Fatalf("the delete's X-Request-Id is %q", deleted.Header.Get("X-Request-Id"))
	}
	wf := apitest.WorkflowWith(t, admin, "Traced", apitest.UpsertStep("canonicalName"))
	started := admin.Do("POST", "/v1/workflows/"+wf+"/runs", map[string]any{"input": map[string]any{"canonicalName": "Run Co"}},
		"X-Request-Id", "run-1-"+admin.ClientID).Want(t, 202).Object(t)
	if started["requestId"] != "run-1-"+admin.ClientID {
		t.Fatalf("the run's requestId is %v", started["requestId"])
	}
	run := apitest.AwaitRun(t, admin, apitest.IDOf(t, started))
	apitest.WantStatus(t, run, "completed")
	if run["requestId"] != "run-1-"+admin.ClientID {
		t.Fatalf("the finished run's requestId is %v", run["requestId"])
	}
	apitest.Caught(t, evs)

	one := func(q string) map[string]any {
		t.Helper()
		got := apitest.AllEvents(t, admin, q)
		if len(got) != 1 {
			t.Fatalf("%s: %d events, want 1: %s", q, len(got), apitest.JSONOf(got))
		}
		return got[0]
	}
	if ev := one("type=company.created&resourceId=" + apitest.IDOf(t, company)); ev["requestId"] != "create-1-"+admin.ClientID {
		t.Errorf("the create's event has requestId %v", ev["requestId"])
	}
	if ev := one("type=company.deleted&resourceId=" + apitest.IDOf(t, gone)); ev["requestId"] != "delete-1-"+admin.ClientID {
		t.Errorf("the delete's event has requestId %v", ev["requestId"])
	}
	// The run's writes, made by the runner: the company it upserted and
	// the run's own changes.
	for _, ev := range apitest.AllEvents(t, admin, "actor=workflowRun:"+apitest.IDOf(t, started)) {
		if ev["requestId"] != "run-1-"+admin.ClientID {
			t.Errorf("an event of the run's writes (%s) has requestId %v", ev["type"], ev["requestId"])
		}
	}

	// The deliveries: the payload sent and the stored delivery.
	recv.Wait(t, 3)
	found := false
	for _, r := range recv.All() {
		var ev map[string]any
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatalf("a delivery's body: %v", err)
		}
		if ev["resource"].(map[string]any)["id"] == company["id"] {
			found = true
			if ev["requestId"] != "create-1-"+admin.ClientID {
				t.Errorf("the delivered event has requestId %v", ev["requestId"])
			}
		}
	}
	if !found {
		t.Fatalf("no delivery of the traced company's event")
	}
	ds := admin.Do("GET", "/v1/webhook-endpoints/"+apitest.IDOf(t, ep)+"/deliveries", nil).Want(t, 200).List(t)
	withID := 0
	for _, d := range ds {
		if d["requestId"] == "create-1-"+admin.ClientID {
			withID++
		}
	}
	if withID != 1 {
		t.Errorf("%d stored deliveries carry the create's request id, want 1: %s", withID, apitest.JSONOf(ds))
	}
}
