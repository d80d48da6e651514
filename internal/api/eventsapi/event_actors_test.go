package eventsapi_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/jobs"
)

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
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	j := apitest.RunImport(t, member, map[string]any{"resource": "companies", "format": "csv", "mapping": apitest.ImportMapping()}, apitest.CompanyCSV(3))
	if j["status"] != jobs.StatusCompleted || apitest.Num(j["created"]) != 3 {
		t.Fatalf("import ended %s", apitest.JSONOf(j))
	}
	imp := apitest.IDOf(t, j)
	direct := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Typed In"}).Want(t, 201).Object(t)
	apitest.Caught(t, evs)

	created := apitest.AllEvents(t, admin, "type=company.created")
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
	apitest.WantActor(t, "the imported rows", imported, "apiKey", member.ClientID, map[string]any{"type": "import", "id": imp})
	apitest.WantActor(t, "a company typed in", typed, "apiKey", admin.ClientID, nil)

	// The import's own filter: exactly its rows.
	if got := apitest.AllEvents(t, admin, "actor=import:"+imp); !slices.Equal(eventIDs(got), eventIDs(imported)) {
		t.Errorf("actor=import:<the import>: %s, want its 3 rows", apitest.JSONOf(got))
	}
	if got := apitest.AllEvents(t, admin, "actor=import"); !slices.Equal(eventIDs(got), eventIDs(imported)) {
		t.Errorf("actor=import: %s, want the import's 3 rows", apitest.JSONOf(got))
	}
	// The key's filter: its direct writes and its imports'.
	if got := apitest.AllEvents(t, admin, "type=company.created&actor=apiKey:"+member.ClientID); !slices.Equal(eventIDs(got), eventIDs(imported)) {
		t.Errorf("actor=apiKey:<the importing key>: %s, want the import's 3 rows", apitest.JSONOf(got))
	}
	if got := apitest.AllEvents(t, admin, "actor=import:imp_nope"); len(got) != 0 {
		t.Errorf("actor=import:<another import>: %s", apitest.JSONOf(got))
	}
}

func TestABatchsOperationsAreTheKeysThroughTheBatchNamedByItsRequestID(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL, "eventTypes": []string{"company.*"}}).Want(t, 201)
	gone := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Gone Co"}).Want(t, 201).Object(t)
	one := admin.Do("POST", "/v1/companies/batch", map[string]any{"operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Batch One"}},
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Batch Two"}},
		map[string]any{"op": "delete", "id": gone["id"]},
	}}).Want(t, 200)
	apitest.WantStatuses(t, one.List(t), 201, 201, 204)
	oneID := one.Header.Get("X-Request-Id")
	// An atomic batch, named by the caller's own request id.
	two := admin.Do("POST", "/v1/companies/batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "create", "data": map[string]any{"canonicalName": "Atomic One"}},
	}}, "X-Request-Id", "crm-sync-"+admin.ClientID).Want(t, 200)
	twoID := two.Header.Get("X-Request-Id")
	if oneID == "" || twoID != "crm-sync-"+admin.ClientID {
		t.Fatalf("the batches' request ids are %q and %q", oneID, twoID)
	}
	apitest.Caught(t, evs)

	byOne := apitest.AllEvents(t, admin, "actor=batch:"+oneID+"&direction=asc")
	if want := []string{"company.created", "company.created", "company.deleted"}; !slices.Equal(apitest.EventTypes(byOne), want) {
		t.Fatalf("actor=batch:<the first batch>: %v, want %v", apitest.EventTypes(byOne), want)
	}
	apitest.WantActor(t, "the first batch", byOne, "apiKey", admin.ClientID, map[string]any{"type": "batch", "id": oneID})
	byTwo := apitest.AllEvents(t, admin, "actor=batch:"+twoID)
	if !slices.Equal(apitest.EventTypes(byTwo), []string{"company.created"}) {
		t.Fatalf("actor=batch:<the atomic batch>: %v, want its create", apitest.EventTypes(byTwo))
	}
	apitest.WantActor(t, "the atomic batch", byTwo, "apiKey", admin.ClientID, map[string]any{"type": "batch", "id": twoID})
	if got := apitest.AllEvents(t, admin, "actor=batch"); len(got) != 4 {
		t.Errorf("actor=batch: %v, want the 4 operations' events", apitest.EventTypes(got))
	}
	direct := apitest.AllEvents(t, admin, "resourceId="+gone["id"].(string)+"&type=company.created")
	apitest.WantActor(t, "a create outside a batch", direct, "apiKey", admin.ClientID, nil)

	// The webhook payloads carry the via as the history does.
	recv.Wait(t, 5)
	batched := 0
	for _, r := range recv.All() {
		var ev map[string]any
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatalf("a delivery's body: %v: %s", err, r.Body)
		}
		if v := apitest.ViaOf(ev); v != nil {
			batched++
			if v["type"] != "batch" || (v["id"] != oneID && v["id"] != twoID) {
				t.Errorf("a delivery's actor is %s", apitest.JSONOf(apitest.ActorOf(ev)))
			}
		}
	}
	if batched != 4 {
		t.Errorf("%d deliveries carry the batch as via, want 4", batched)
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
