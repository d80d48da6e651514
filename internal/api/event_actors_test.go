package api_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/jobs"
)

// actorOf is an event's actor.
func actorOf(ev map[string]any) map[string]any {
	a, _ := ev["actor"].(map[string]any)
	return a
}

// viaOf is what an event's actor wrote through, nil for a direct write.
func viaOf(ev map[string]any) map[string]any {
	v, _ := actorOf(ev)["via"].(map[string]any)
	return v
}

// wantActor fails unless every event is the key's, through via (nil: a
// direct write, which has no via at all).
func wantActor(t *testing.T, what string, evs []map[string]any, typ, id string, via map[string]any) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("%s: no events", what)
	}
	for _, ev := range evs {
		a := actorOf(ev)
		_, hasVia := a["via"]
		switch {
		case a["type"] != typ || a["id"] != id:
			t.Errorf("%s: %s's actor is %s, want %s:%s", what, ev["type"], apitest.JSONOf(a), typ, id)
		case via == nil && hasVia:
			t.Errorf("%s: %s's actor %s has a via; a direct write has none", what, ev["type"], apitest.JSONOf(a))
		case via != nil && apitest.JSONOf(viaOf(ev)) != apitest.JSONOf(via):
			t.Errorf("%s: %s's actor is %s, want via %s", what, ev["type"], apitest.JSONOf(a), apitest.JSONOf(via))
		}
	}
}

// eventIDs are the events' ids, sorted.
func eventIDs(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev["id"].(string))
	}
	slices.Sort(out)
	return out
}

func TestAnImportsRowsAreTheImportingKeysThroughTheImportAndTheActorFilterFindsThem(t *testing.T) {
	t.Parallel()
	e, evs := eventsEnv(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	j := apitest.RunImport(t, member, map[string]any{"resource": "companies", "format": "csv", "mapping": apitest.ImportMapping()}, apitest.CompanyCSV(3))
	if j["status"] != jobs.StatusCompleted || apitest.Num(j["created"]) != 3 {
		t.Fatalf("import ended %s", apitest.JSONOf(j))
	}
	imp := apitest.IDOf(t, j)
	direct := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Typed In"}).Want(t, 201).Object(t)
	caught(t, evs)

	created := allEvents(t, admin, "type=company.created")
	var imported, typed []map[string]any
	for _, ev := range created {
		if ev["resource"].(map[string]any)["id"] == direct["id"] {
			typed = append(typed, ev)
		} else {
			imported = append(imported, ev)
		}
	}
	if len(imported) != 3 {
		t.Fatalf("%d imported company.created events, want 3: %s", len(imported), apitest.JSONOf(created))
	}
	wantActor(t, "the imported rows", imported, "apiKey", member.ClientID, map[string]any{"type": "import", "id": imp})
	wantActor(t, "a company typed in", typed, "apiKey", admin.ClientID, nil)

	// The import's own filter: exactly its rows.
	if got := allEvents(t, admin, "actor=import:"+imp); !slices.Equal(eventIDs(got), eventIDs(imported)) {
		t.Errorf("actor=import:<the import>: %s, want its 3 rows", apitest.JSONOf(got))
	}
	if got := allEvents(t, admin, "actor=import"); !slices.Equal(eventIDs(got), eventIDs(imported)) {
		t.Errorf("actor=import: %s, want the import's 3 rows", apitest.JSONOf(got))
	}
	// The key's filter: its direct writes and its imports'.
	if got := allEvents(t, admin, "type=company.created&actor=apiKey:"+member.ClientID); !slices.Equal(eventIDs(got), eventIDs(imported)) {
		t.Errorf("actor=apiKey:<the importing key>: %s, want the import's 3 rows", apitest.JSONOf(got))
	}
	if got := allEvents(t, admin, "actor=import:imp_nope"); len(got) != 0 {
		t.Errorf("actor=import:<another import>: %s", apitest.JSONOf(got))
	}
}

func TestABatchsOperationsAreTheKeysThroughTheBatchNamedByItsRequestID(t *testing.T) {
	t.Parallel()
	e, evs := eventsEnv(t)
	admin := e.Org(t)
	recv := newReceiver(t, nil)
	admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL, "eventTypes": []string{"company.*"}}).Want(t, 201)
	gone := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Gone Co"}).Want(t, 201).Object(t)
	one := admin.Do("POST", "/v1/companies/batch", map[string]any{"operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Batch One"}},
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Batch Two"}},
		map[string]any{"op": "delete", "id": gone["id"]},
	}}).Want(t, 200)
	wantStatuses(t, one.List(t), 201, 201, 204)
	oneID := one.Header.Get("X-Request-Id")
	// An atomic batch, named by the caller's own request id.
	two := admin.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Atomic One"}},
	}}, "X-Request-Id", "crm-sync-"+admin.ClientID).Want(t, 200)
	twoID := two.Header.Get("X-Request-Id")
	if oneID == "" || twoID != "crm-sync-"+admin.ClientID {
		t.Fatalf("the batches' request ids are %q and %q", oneID, twoID)
	}
	caught(t, evs)

	byOne := allEvents(t, admin, "actor=batch:"+oneID+"&direction=asc")
	if want := []string{"company.created", "company.created", "company.deleted"}; !slices.Equal(types(byOne), want) {
		t.Fatalf("actor=batch:<the first batch>: %v, want %v", types(byOne), want)
	}
	wantActor(t, "the first batch", byOne, "apiKey", admin.ClientID, map[string]any{"type": "batch", "id": oneID})
	byTwo := allEvents(t, admin, "actor=batch:"+twoID)
	if !slices.Equal(types(byTwo), []string{"company.created"}) {
		t.Fatalf("actor=batch:<the atomic batch>: %v, want its create", types(byTwo))
	}
	wantActor(t, "the atomic batch", byTwo, "apiKey", admin.ClientID, map[string]any{"type": "batch", "id": twoID})
	if got := allEvents(t, admin, "actor=batch"); len(got) != 4 {
		t.Errorf("actor=batch: %v, want the 4 operations' events", types(got))
	}
	direct := allEvents(t, admin, "resourceId="+gone["id"].(string)+"&type=company.created")
	wantActor(t, "a create outside a batch", direct, "apiKey", admin.ClientID, nil)

	// The webhook payloads carry the via as the history does.
	recv.wait(t, 5)
	batched := 0
	for _, r := range recv.all() {
		var ev map[string]any
		if err := json.Unmarshal(r.body, &ev); err != nil {
			t.Fatalf("a delivery's body: %v: %s", err, r.body)
		}
		if v := viaOf(ev); v != nil {
			batched++
			if v["type"] != "batch" || (v["id"] != oneID && v["id"] != twoID) {
				t.Errorf("a delivery's actor is %s", apitest.JSONOf(actorOf(ev)))
			}
		}
	}
	if batched != 4 {
		t.Errorf("%d deliveries carry the batch as via, want 4", batched)
	}
}

func TestARunsWritesAreItsStartersThroughTheRunAndItsWorkflow(t *testing.T) {
	t.Parallel()
	e, evs := eventsEnv(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	upsert := step("up", "upsertCompany", map[string]any{"externalId.$": "$.input.id", "canonicalName.$": "$.input.name"})
	wfID := workflowWith(t, admin, "Intake", upsert)
	run := apitest.AwaitRun(t, member, apitest.IDOf(t, member.Do("POST", "/v1/workflows/"+wfID+"/runs",
		map[string]any{"input": map[string]any{"id": "crm-1", "name": "Run Co"}}).Want(t, 202).Object(t)))
	apitest.WantStatus(t, run, "completed")
	runID := apitest.IDOf(t, run)
	h := newHook(t, admin, nil, step("up", "upsertCompany", map[string]any{"externalId": "crm-2", "canonicalName": "Hook Co"}))
	hooked := apitest.AwaitRun(t, admin, apitest.IDOf(t, deliver(t, e, h.slug, "", `{}`, "X-Service-Webhook-Secret", h.secret).Want(t, 202).Object(t)))
	apitest.WantStatus(t, hooked, "completed")
	caught(t, evs)

	viaRun := map[string]any{"type": "workflowRun", "id": runID, "workflowId": wfID}
	byRun := allEvents(t, admin, "actor=workflowRun:"+runID+"&direction=asc")
	byType := map[string][]map[string]any{}
	for _, ev := range byRun {
		byType[ev["type"].(string)] = append(byType[ev["type"].(string)], ev)
	}
	if len(byType) != 2 || len(byType["company.created"]) != 1 || len(byType["workflowRun.updated"]) == 0 {
		t.Fatalf("actor=workflowRun:<the run>: %v, want the upserted company and the run's status changes", types(byRun))
	}
	wantActor(t, "the run's upsert and status", byRun, "apiKey", member.ClientID, viaRun)
	// The run's creation is the request's, not the run's.
	created := allEvents(t, admin, "resourceId="+runID+"&type=workflowRun.created")
	wantActor(t, "the run's creation", created, "apiKey", member.ClientID, nil)
	if got := allEvents(t, admin, "type=company.created&actor=apiKey:"+member.ClientID); len(got) != 1 ||
		got[0]["resource"].(map[string]any)["id"] != byType["company.created"][0]["resource"].(map[string]any)["id"] {
		t.Errorf("actor=apiKey:<the run's starter>: %v, want the company its run upserted", types(got))
	}

	// A run its trigger started is the webhook's.
	byHook := allEvents(t, admin, "type=company.created&actor=workflowRun:"+apitest.IDOf(t, hooked))
	wantActor(t, "the webhook run's upsert", byHook, "webhook", h.workflowID,
		map[string]any{"type": "workflowRun", "id": apitest.IDOf(t, hooked), "workflowId": h.workflowID})
	if got := allEvents(t, admin, "type=company.created&actor=workflowRun"); len(got) != 2 {
		t.Errorf("actor=workflowRun: %v, want both runs' companies", types(got))
	}

	// The MCP tool shows the same actor.
	out, _ := call(t, mcpSession(t, e, admin), "list_events", map[string]any{"actor": "workflowRun:" + runID, "type": "company.created"}, false)
	if list, _ := out["data"].([]any); len(list) != 1 || apitest.JSONOf(viaOf(list[0].(map[string]any))) != apitest.JSONOf(viaRun) {
		t.Errorf("list_events actor=workflowRun:<the run>: %s", apitest.JSONOf(out))
	}
}

// The actor filter takes what an actor writes through, and refuses what
// is neither.
func TestTheActorFilterTakesViaTypes(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	for _, q := range []string{"import", "batch:req_1", "workflowRun:run_1", "apiKey", "system:sourcebase"} {
		c.Do("GET", "/v1/events?actor="+q, nil).Want(t, 200)
	}
	for _, q := range []string{"robot", "export:exp_1", "run:run_1"} {
		c.Do("GET", "/v1/events?actor="+q, nil).Want(t, 400)
	}
}
