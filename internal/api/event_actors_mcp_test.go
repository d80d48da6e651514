package api_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestARunsWritesAreItsStartersThroughTheRunAndItsWorkflow stays here, not
// in eventsapi with the other actor tests: it reads the events through the
// MCP tool as well, which the whole service serves.
func TestARunsWritesAreItsStartersThroughTheRunAndItsWorkflow(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	upsert := apitest.Step("up", "upsertCompany", map[string]any{"externalId.$": "$.input.id", "canonicalName.$": "$.input.name"})
	wfID := apitest.WorkflowWith(t, admin, "Intake", upsert)
	run := apitest.AwaitRun(t, member, apitest.IDOf(t, member.Do("POST", "/v1/workflows/"+wfID+"/runs",
		map[string]any{"input": map[string]any{"id": "crm-1", "name": "Run Co"}}).Want(t, 202).Object(t)))
	apitest.WantStatus(t, run, "completed")
	runID := apitest.IDOf(t, run)
	h := apitest.NewHook(t, admin, nil, apitest.Step("up", "upsertCompany", map[string]any{"externalId": "crm-2", "canonicalName": "Hook Co"}))
	hooked := apitest.AwaitRun(t, admin, apitest.IDOf(t, apitest.Deliver(t, e, h.Slug, "", `{}`, "X-Service-Webhook-Secret", h.Secret).Want(t, 202).Object(t)))
	apitest.WantStatus(t, hooked, "completed")
	apitest.Caught(t, evs)

	viaRun := map[string]any{"type": "workflowRun", "id": runID, "workflowId": wfID}
	byRun := apitest.AllEvents(t, admin, "actor=workflowRun:"+runID+"&direction=asc")
	byType := map[string][]map[string]any{}
	for _, ev := range byRun {
		byType[ev["type"].(string)] = append(byType[ev["type"].(string)], ev)
	}
	if len(byType) != 2 || len(byType["company.created"]) != 1 || len(byType["workflowRun.updated"]) == 0 {
		t.Fatalf("actor=workflowRun:<the run>: %v, want the upserted company and the run's status changes", apitest.EventTypes(byRun))
	}
	apitest.WantActor(t, "the run's upsert and status", byRun, "apiKey", member.ClientID, viaRun)
	// The run's creation is the request's, not the run's.
	created := apitest.AllEvents(t, admin, "resourceId="+runID+"&type=workflowRun.created")
	apitest.WantActor(t, "the run's creation", created, "apiKey", member.ClientID, nil)
	if got := apitest.AllEvents(t, admin, "type=company.created&actor=apiKey:"+member.ClientID); len(got) != 1 ||
		got[0]["resource"].(map[string]any)["id"] != byType["company.created"][0]["resource"].(map[string]any)["id"] {
		t.Errorf("actor=apiKey:<the run's starter>: %v, want the company its run upserted", apitest.EventTypes(got))
	}

	// A run its trigger started is the webhook's.
	byHook := apitest.AllEvents(t, admin, "type=company.created&actor=workflowRun:"+apitest.IDOf(t, hooked))
	apitest.WantActor(t, "the webhook run's upsert", byHook, "webhook", h.WorkflowID,
		map[string]any{"type": "workflowRun", "id": apitest.IDOf(t, hooked), "workflowId": h.WorkflowID})
	if got := apitest.AllEvents(t, admin, "type=company.created&actor=workflowRun"); len(got) != 2 {
		t.Errorf("actor=workflowRun: %v, want both runs' companies", apitest.EventTypes(got))
	}

	// The MCP tool shows the same actor.
	out, _ := call(t, mcpSession(t, e, admin), "list_events", map[string]any{"actor": "workflowRun:" + runID, "type": "company.created"}, false)
	if list, _ := out["data"].([]any); len(list) != 1 || apitest.JSONOf(apitest.ViaOf(list[0].(map[string]any))) != apitest.JSONOf(viaRun) {
		t.Errorf("list_events actor=workflowRun:<the run>: %s", apitest.JSONOf(out))
	}
}
