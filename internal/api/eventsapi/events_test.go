package eventsapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

func TestEveryChangeOfARecordIsOneEventWithItsActorAndWhatChanged(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	cmp := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme Robotics", "website": "https://acme.example"}).Want(t, 201).Object(t)
	id := cmp["id"].(string)
	admin.Do("PUT", "/v1/companies/"+id, map[string]any{"website": "https://acme2.example"}).Want(t, 200)
	admin.Do("PUT", "/v1/companies/"+id, map[string]any{"website": "https://acme2.example"}).Want(t, 200) // no change: no event
	admin.Do("DELETE", "/v1/companies/"+id, nil).Want(t, 204)
	apitest.Caught(t, evs)

	got := apitest.AllEvents(t, admin, "resourceId="+id+"&direction=asc")
	if want := []string{"company.created", "company.updated", "company.deleted"}; !slices.Equal(apitest.EventTypes(got), want) {
		t.Fatalf("the company's events are %v, want %v", apitest.EventTypes(got), want)
	}
	for _, ev := range got {
		actor := ev["actor"].(map[string]any)
		if actor["type"] != "apiKey" || actor["id"] != admin.ClientID {
			t.Errorf("%s: actor %v, want the admin key %s", ev["type"], actor, admin.ClientID)
		}
		res := ev["resource"].(map[string]any)
		if res["type"] != "company" || res["id"] != id {
			t.Errorf("%s: resource %v", ev["type"], res)
		}
		if _, err := time.Parse(time.RFC3339Nano, ev["occurredAt"].(string)); err != nil {
			t.Errorf("%s: occurredAt %v", ev["type"], ev["occurredAt"])
		}
	}
	if data, _ := got[0]["data"].(map[string]any); data["website"] != "https://acme.example" || data["id"] != id {
		t.Errorf("the create's data is not the record: %v", got[0]["data"])
	}
	changes, _ := got[1]["changes"].(map[string]any)
	if w, _ := changes["website"].(map[string]any); w["from"] != "https://acme.example" || w["to"] != "https://acme2.example" {
		t.Errorf("the update's changes are %v, want website from the old to the new value", changes)
	}
	if _, ok := got[1]["data"]; ok {
		t.Errorf("an update carries data: %v", got[1])
	}
	if data, _ := got[2]["data"].(map[string]any); data["website"] != "https://acme2.example" {
		t.Errorf("the delete's data is not the last state: %v", got[2]["data"])
	}
	one := admin.Do("GET", "/v1/events/"+got[1]["id"].(string), nil).Want(t, 200).Object(t)
	if one["id"] != got[1]["id"] || one["type"] != "company.updated" {
		t.Errorf("GET /v1/events/{id} answers %v", one)
	}
	admin.Do("GET", "/v1/events/evt_nope", nil).Want(t, 404)
}

func TestEventsOfWorkflowsRunsKeysAndDeclaredResourcesNameTheirActorsAndHideSecrets(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	deal := member.Do("POST", "/v1/deals", map[string]any{"name": "Series A"}).Want(t, 201).Object(t)
	wf := admin.Do("POST", "/v1/workflows", map[string]any{"name": "intake", "steps": []any{}}).Want(t, 201).Object(t)
	wfID := wf["id"].(string)
	rotated := admin.Do("POST", "/v1/workflows/"+wfID+"/trigger/webhook-secret/rotate", nil).Want(t, 200).Object(t)
	secret, _ := rotated["secret"].(string)
	run := admin.Do("POST", "/v1/workflows/"+wfID+"/runs", map[string]any{"input": map[string]any{}}).Want(t, 202).Object(t)
	admin.Do("DELETE", "/v1/keys/"+member.ClientID, nil).Want(t, 204)
	apitest.WaitFor(t, "the run to finish", func() bool {
		r := admin.Do("GET", "/v1/workflow-runs/"+run["id"].(string), nil).Object(t)
		return r["status"] == "completed" || r["status"] == "failed"
	})
	apitest.Caught(t, evs)

	all := apitest.AllEvents(t, admin, "direction=asc")
	body, _ := json.Marshal(all)
	if secret == "" || bytes.Contains(body, []byte(secret)) {
		t.Fatalf("the history shows a trigger secret (or none was answered): %s", secret)
	}
	if bytes.Contains(body, []byte("secretHash")) || bytes.Contains(body, []byte("triggerSecret")) {
		t.Fatalf("the history shows a stored secret field: %s", body)
	}
	byType := map[string][]map[string]any{}
	for _, ev := range all {
		byType[ev["type"].(string)] = append(byType[ev["type"].(string)], ev)
	}
	if d := byType["deal.created"]; len(d) != 1 || d[0]["resource"].(map[string]any)["id"] != deal["id"] ||
		d[0]["actor"].(map[string]any)["id"] != member.ClientID {
		t.Errorf("deal.created: %v", d)
	}
	var rotation map[string]any
	for _, ev := range byType["workflow.updated"] {
		if ch, _ := ev["changes"].(map[string]any); ch["trigger.secret"] != nil {
			rotation = ch
		}
	}
	if rotation == nil || fmt.Sprint(rotation["trigger.secret"]) != "map[from:[redacted] to:[redacted]]" {
		t.Errorf("the rotation's event does not report the secret as changed and redacted: %v", byType["workflow.updated"])
	}
	runEvents := byType["workflowRun.created"]
	if len(runEvents) != 1 || runEvents[0]["actor"].(map[string]any)["id"] != admin.ClientID {
		t.Errorf("workflowRun.created: %v", runEvents)
	}
	var statuses []string
	for _, ev := range byType["workflowRun.updated"] {
		// The run's starter's, through the run.
		a := ev["actor"].(map[string]any)
		if via, _ := a["via"].(map[string]any); a["type"] != "apiKey" || a["id"] != admin.ClientID ||
			via["type"] != "workflowRun" || via["id"] != run["id"] || via["workflowId"] != wfID {
			t.Errorf("a run's status change is not its starter's through the run: %v", a)
		}
		if st, ok := ev["changes"].(map[string]any)["status"].(map[string]any); ok {
			statuses = append(statuses, fmt.Sprint(st["to"]))
		}
	}
	// A run is marked running only when it executes longer than
	// runs.RunningAfter: this one goes from queued to its outcome.
	if !slices.Equal(statuses, []string{"completed"}) && !slices.Equal(statuses, []string{"running", "completed"}) {
		t.Errorf("the run's status changes are %v, want its outcome (after running, for a long run)", statuses)
	}
	if k := byType["apiKey.deleted"]; len(k) != 1 || k[0]["resource"].(map[string]any)["id"] != member.ClientID ||
		k[0]["actor"].(map[string]any)["id"] != admin.ClientID {
		t.Errorf("apiKey.deleted: %v", k)
	}
	// Filters combine.
	if got := apitest.AllEvents(t, admin, "type=workflow.*,deal.created&actor=apiKey:"+member.ClientID); !slices.Equal(apitest.EventTypes(got), []string{"deal.created"}) {
		t.Errorf("type=workflow.*,deal.created&actor=<member>: %v", apitest.EventTypes(got))
	}
	if got := apitest.AllEvents(t, admin, "actor=workflowRun&resourceType=workflowRun"); len(got) != len(byType["workflowRun.updated"]) {
		t.Errorf("actor=workflowRun: %d events, want the run's %d status changes", len(got), len(byType["workflowRun.updated"]))
	}
	last := all[len(all)-1]["occurredAt"].(string)
	if got := apitest.AllEvents(t, admin, "since="+url.QueryEscape(last)); len(got) == 0 || got[0]["occurredAt"] != last {
		t.Errorf("since=<the last event's time> answers %v", apitest.EventTypes(got))
	}
	if got := apitest.AllEvents(t, admin, "until="+url.QueryEscape(all[0]["occurredAt"].(string))); len(got) != 0 {
		t.Errorf("until=<the first event's time> answers %v", apitest.EventTypes(got))
	}
}

func TestEventListParametersAreCheckedAndPagesFollowTheirCursor(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	for i := range 7 {
		admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprintf("C%d", i)}).Want(t, 201)
	}
	apitest.Caught(t, evs)
	var seen []string
	path := "/v1/events?limit=3&resourceType=company"
	for path != "" {
		r := admin.Do("GET", path, nil).Want(t, 200)
		for _, ev := range r.List(t) {
			seen = append(seen, ev["id"].(string))
		}
		path = ""
		if next := r.Header.Get("X-Next-Cursor"); next != "" {
			path = "/v1/events?limit=3&resourceType=company&cursor=" + url.QueryEscape(next)
		}
	}
	if len(seen) != 7 || !slices.IsSortedFunc(seen, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Fatalf("paging by 3 saw %v, want 7 events newest first", seen)
	}
	for q, param := range map[string]string{
		"type=nope.created":          "type",
		"resourceType=planet":        "resourceType",
		"actor=robot:1":              "actor",
		"since=yesterday":            "since",
		"direction=up":               "direction",
		"color=red":                  "color",
		"cursor=garbage":             "cursor",
		"limit=x":                    "limit",
		"type=company.*&type=deal.*": "type",
	} {
		msg := admin.Do("GET", "/v1/events?"+q, nil).Want(t, 400).Error(t)
		if !strings.Contains(msg, param) {
			t.Errorf("GET /v1/events?%s: %q does not name %s", q, msg, param)
		}
	}
}

func TestNoEventEndpointOrDeliveryOfOneOrganizationReachesAnother(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	a, b := e.Org(t), e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	epA := a.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/a"}).Want(t, 201).Object(t)
	cmp := a.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Secret Co"}).Want(t, 201).Object(t)
	b.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Other Co"}).Want(t, 201)
	apitest.Caught(t, evs)
	recv.Wait(t, 2) // A's endpoint and company
	for _, ev := range apitest.AllEvents(t, b, "") {
		if ev["resource"].(map[string]any)["id"] == cmp["id"] || ev["resource"].(map[string]any)["id"] == epA["id"] {
			t.Fatalf("organization B sees A's event %v", ev)
		}
	}
	b.Do("GET", "/v1/events?resourceId="+cmp["id"].(string), nil).Want(t, 200)
	if got := apitest.AllEvents(t, b, "resourceId="+cmp["id"].(string)); len(got) != 0 {
		t.Fatalf("B reads A's company's history: %v", got)
	}
	aEvents := apitest.AllEvents(t, a, "")
	b.Do("GET", "/v1/events/"+aEvents[0]["id"].(string), nil).Want(t, 404)
	id := epA["id"].(string)
	for _, call := range [][2]string{{"GET", "/v1/webhook-endpoints/" + id}, {"PATCH", "/v1/webhook-endpoints/" + id},
		{"DELETE", "/v1/webhook-endpoints/" + id}, {"GET", "/v1/webhook-endpoints/" + id + "/deliveries"},
		{"POST", "/v1/webhook-endpoints/" + id + "/test"}, {"POST", "/v1/webhook-endpoints/" + id + "/secret/rotate"}} {
		var body any
		if call[0] == "PATCH" {
			body = map[string]any{"enabled": false}
		}
		b.Do(call[0], call[1], body).Want(t, 404)
	}
	if got := b.Do("GET", "/v1/webhook-endpoints", nil).Want(t, 200).List(t); len(got) != 0 {
		t.Fatalf("B lists A's endpoints: %v", got)
	}
	for _, req := range recv.All() {
		if strings.Contains(string(req.Body), "Other Co") {
			t.Fatalf("A's endpoint got B's event: %s", req.Body)
		}
	}
	// The member keys of A may read the history but not manage endpoints.
	member := e.Key(t, a.Org, "member")
	member.Do("GET", "/v1/events", nil).Want(t, 200)
	member.Do("GET", "/v1/webhook-endpoints", nil).Want(t, 403)
	member.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL}).Want(t, 403)
}

func TestAWebhookEndpointIsCheckedWhenSaved(t *testing.T) {
	t.Parallel()
	e := apitest.NewWith(t, apitest.Options{})
	admin := e.Org(t)
	for body, param := range map[string]string{
		`{}`:                            "url",
		`{"url":"ftp://example.com/x"}`: "url",
		`{"url":"http://169.254.169.254/latest"}`:                       "url",
		`{"url":"http://10.0.0.7/hook"}`:                                "url",
		`{"url":"https://user:pw@example.com/"}`:                        "url",
		`{"url":"https://example.com","color":"red"}`:                   "color",
		`{"url":"https://example.com","eventTypes":["planet.created"]}`: "eventTypes[0]",
		`{"url":"https://example.com","eventTypes":[]}`:                 "eventTypes",
		`{"url":"https://example.com","enabled":null}`:                  "enabled",
		`{"url":"https://example.com","description":7}`:                 "description",
	} {
		msg := admin.Do("POST", "/v1/webhook-endpoints", body).Want(t, 400).Error(t)
		if !strings.Contains(msg, param) {
			t.Errorf("POST %s: %q does not name %s", body, msg, param)
		}
	}
	if got := admin.Do("GET", "/v1/webhook-endpoints", nil).Want(t, 200).List(t); len(got) != 0 {
		t.Fatalf("a refused endpoint was saved: %v", got)
	}
}

// verifyWithReference has the Standard Webhooks reference implementation
// (npm standardwebhooks) verify each request with secret; it returns
// which verified.
func verifyWithReference(t *testing.T, secret string, reqs []apitest.Received) []bool {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	type kase struct {
		Secret    string            `json:"secret"`
		Headers   map[string]string `json:"headers"`
		Body      string            `json:"body"`
		ID        string            `json:"id"`
		Timestamp int64             `json:"timestamp"`
	}
	var cases []kase
	for _, r := range reqs {
		h := map[string]string{}
		for k := range r.Header {
			h[strings.ToLower(k)] = r.Header.Get(k)
		}
		var ts int64
		fmt.Sscan(r.Header.Get("webhook-timestamp"), &ts)
		cases = append(cases, kase{secret, h, base64.StdEncoding.EncodeToString(r.Body), r.Header.Get("webhook-id"), ts})
	}
	in, _ := json.Marshal(cases)
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	testinputs.Files("package-lock.json", "internal/outbound/testdata/verify.mjs")
	cmd := exec.Command("node", filepath.Join(root, "internal", "outbound", "testdata", "verify.mjs"))
	cmd.Dir = root
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the reference verifier failed: %v (run npm ci)", err)
	}
	var res []struct {
		Verified bool   `json:"verified"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(reqs) {
		t.Fatalf("the reference verifier answered %s", out)
	}
	var ok []bool
	for _, r := range res {
		ok = append(ok, r.Verified)
	}
	return ok
}

func TestDeliveriesAreSignedPerStandardWebhooksAndVerifyWithTheReferenceImplementation(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	ep := admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/hooks", "eventTypes": []string{"company.*"},
		"description": "CRM sync"}).Want(t, 201).Object(t)
	secret := ep["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || ep["enabled"] != true {
		t.Fatalf("the endpoint answers %v", ep)
	}
	if got := admin.Do("GET", "/v1/webhook-endpoints/"+ep["id"].(string), nil).Want(t, 200); bytes.Contains(got.Body, []byte(secret)) {
		t.Fatal("GET shows the endpoint's secret")
	}
	c := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Signed Co"}).Want(t, 201).Object(t)
	admin.Do("POST", "/v1/deals", map[string]any{"name": "not subscribed"}).Want(t, 201)
	apitest.Caught(t, evs)
	reqs := recv.Wait(t, 1)
	time.Sleep(testenv.Scaled(200 * time.Millisecond)) // a delivery not subscribed to would arrive by now
	reqs = recv.All()
	if len(reqs) != 1 {
		t.Fatalf("%d deliveries, want the company's one (deals are not subscribed to)", len(reqs))
	}
	var ev map[string]any
	json.Unmarshal(reqs[0].Body, &ev)
	if ev["type"] != "company.created" || ev["resource"].(map[string]any)["id"] != c["id"] {
		t.Fatalf("delivered %s", reqs[0].Body)
	}
	if ok := verifyWithReference(t, secret, reqs); !ok[0] {
		t.Fatalf("the reference implementation refuses the delivery's signature: %v", reqs[0].Header)
	}
	if reqs[0].Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(reqs[0].Header.Get("webhook-id"), "msg_") {
		t.Errorf("headers %v", reqs[0].Header)
	}

	// A rotation keeps the old secret signing beside the new one.
	rot := admin.Do("POST", "/v1/webhook-endpoints/"+ep["id"].(string)+"/secret/rotate", map[string]any{"overlapSeconds": 3600}).Want(t, 200).Object(t)
	newSecret := rot["secret"].(string)
	test := admin.Do("POST", "/v1/webhook-endpoints/"+ep["id"].(string)+"/test", nil).Want(t, 200).Object(t)
	if test["status"] != "succeeded" || test["eventType"] != "webhookEndpoint.test" {
		t.Fatalf("the test delivery: %v", test)
	}
	last := recv.All()[len(recv.All())-1]
	if sigs := strings.Fields(last.Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("during the overlap a delivery carries %d signatures, want 2: %v", len(sigs), sigs)
	}
	for _, s := range []string{secret, newSecret} {
		if ok := verifyWithReference(t, s, []apitest.Received{last}); !ok[0] {
			t.Errorf("during the overlap, a receiver knowing one secret cannot verify")
		}
	}
	if ok := verifyWithReference(t, "whsec_"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)), []apitest.Received{last}); ok[0] {
		t.Error("a wrong secret verifies")
	}
	admin.Do("POST", "/v1/webhook-endpoints/"+ep["id"].(string)+"/secret/rotate", map[string]any{"overlapSeconds": 0}).Want(t, 200)
	admin.Do("POST", "/v1/webhook-endpoints/"+ep["id"].(string)+"/test", nil).Want(t, 200)
	last = recv.All()[len(recv.All())-1]
	if sigs := strings.Fields(last.Header.Get("webhook-signature")); len(sigs) != 1 {
		t.Errorf("after a rotation without overlap a delivery carries %d signatures, want 1", len(sigs))
	}
}

func TestFailedDeliveriesAreRetriedOnTheScheduleWithTheSameWebhookIDUntilTheyExhaustIt(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	e.Deps.Endpoints.Scale = 1e-5 // the day-long schedule in about a second
	admin := e.Org(t)
	flaky := apitest.NewReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "down for maintenance")
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	closedURL := testenv.Unanswering(t) // connections closed unanswered
	epFlaky := admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": flaky.URL, "eventTypes": []string{"deal.*"}}).Want(t, 201).Object(t)
	epDead := admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": closedURL, "eventTypes": []string{"deal.*"}}).Want(t, 201).Object(t)
	admin.Do("POST", "/v1/deals", map[string]any{"name": "retry me"}).Want(t, 201)
	apitest.Caught(t, evs)

	reqs := flaky.Wait(t, 3)
	id := reqs[0].Header.Get("webhook-id")
	for _, r := range reqs {
		if r.Header.Get("webhook-id") != id || !bytes.Equal(r.Body, reqs[0].Body) {
			t.Fatalf("a retry changed the webhook-id or the body: %q vs %q", r.Header.Get("webhook-id"), id)
		}
	}
	if ok := verifyWithReference(t, epFlaky["secret"].(string), reqs); slices.Contains(ok, false) {
		t.Errorf("a retry's signature does not verify: %v", ok)
	}
	deliveries := func(ep map[string]any) []map[string]any {
		return admin.Do("GET", "/v1/webhook-endpoints/"+ep["id"].(string)+"/deliveries", nil).Want(t, 200).List(t)
	}
	apitest.WaitFor(t, "the flaky endpoint's delivery to succeed", func() bool {
		d := deliveries(epFlaky)
		return len(d) == 1 && d[0]["status"] == "succeeded"
	})
	d := deliveries(epFlaky)[0]
	attempts := d["attempts"].([]any)
	if len(attempts) != 3 {
		t.Fatalf("%d attempts, want 2 failures and a success: %v", len(attempts), attempts)
	}
	first := attempts[0].(map[string]any)
	if first["status"] != float64(500) || first["response"] != "down for maintenance" {
		t.Errorf("a failed attempt shows %v", first)
	}

	apitest.WaitFor(t, "the dead endpoint's delivery to exhaust its retries", func() bool {
		d := deliveries(epDead)
		return len(d) == 1 && d[0]["status"] == "failed"
	})
	dead := deliveries(epDead)[0]
	if n := len(dead["attempts"].([]any)); n != 8 {
		t.Errorf("the exhausted delivery made %d attempts, want 8 (1 and 7 retries)", n)
	}
	if a := dead["attempts"].([]any)[0].(map[string]any); a["error"] == nil || a["status"] != nil {
		t.Errorf("a refused connection's attempt shows %v", a)
	}
	letters := evs.Queue.DeadLetters()
	if len(letters) != 1 || letters[0].Delivery != dead["id"] {
		t.Errorf("the dead-letter queue holds %v, want the exhausted delivery %s", letters, dead["id"])
	}

	// A retry asked for queues it again with the same id.
	admin.Do("POST", "/v1/webhook-endpoints/"+epFlaky["id"].(string)+"/deliveries/"+d["id"].(string)+"/retry", nil).Want(t, 202)
	again := flaky.Wait(t, 4)
	if again[3].Header.Get("webhook-id") != id {
		t.Errorf("a manual retry sent webhook-id %q, want %q", again[3].Header.Get("webhook-id"), id)
	}
	admin.Do("POST", "/v1/webhook-endpoints/"+epFlaky["id"].(string)+"/deliveries/msg_nope/retry", nil).Want(t, 404)
	admin.Do("POST", "/v1/webhook-endpoints/"+epDead["id"].(string)+"/deliveries/"+d["id"].(string)+"/retry", nil).Want(t, 404)
}

func TestAnEndpointFailingForDaysIsDisabledWithAnEvent(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	e.Deps.Endpoints.Scale = 1e-6                          // the retries at once
	e.Deps.Endpoints.DisableAfter = 200 * time.Millisecond // "failing for days"
	admin := e.Org(t)
	down := apitest.NewReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) })
	ep := admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": down.URL, "eventTypes": []string{"deal.created"}}).Want(t, 201).Object(t)
	for i := range 3 {
		admin.Do("POST", "/v1/deals", map[string]any{"name": fmt.Sprint("d", i)}).Want(t, 201)
		time.Sleep(testenv.Scaled(150 * time.Millisecond))
	}
	apitest.Caught(t, evs)
	apitest.WaitFor(t, "the endpoint to be disabled", func() bool {
		return admin.Do("GET", "/v1/webhook-endpoints/"+ep["id"].(string), nil).Want(t, 200).Object(t)["enabled"] == false
	})
	got := admin.Do("GET", "/v1/webhook-endpoints/"+ep["id"].(string), nil).Object(t)
	if got["disabledReason"] == nil || got["failingSince"] == nil {
		t.Errorf("the disabled endpoint shows %v", got)
	}
	apitest.Caught(t, evs)
	disabled := apitest.AllEvents(t, admin, "type=webhookEndpoint.disabled")
	if len(disabled) != 1 || disabled[0]["actor"].(map[string]any)["type"] != "system" {
		t.Fatalf("webhookEndpoint.disabled events: %v", disabled)
	}
	again := admin.Do("PATCH", "/v1/webhook-endpoints/"+ep["id"].(string), map[string]any{"enabled": true}).Want(t, 200).Object(t)
	if again["enabled"] != true || again["disabledReason"] != nil || again["failingSince"] != nil {
		t.Errorf("enabling again answers %v", again)
	}
}

func TestABurstOfWritesIsDeliveredCompletelyAndInOrderPerRecord(t *testing.T) {
	testenv.Long(t, "a burst of writes through the change history")
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL, "eventTypes": []string{"company.*"}}).Want(t, 201)
	const records, updates = 50, 19 // 1,000 writes: each record created, then updated 19 times
	ids := make([]string, records)
	var wg sync.WaitGroup
	for r := range records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[r] = admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprint("Burst ", r)}).Want(t, 201).Object(t)["id"].(string)
			for u := range updates {
				admin.Do("PUT", "/v1/companies/"+ids[r], map[string]any{"description": fmt.Sprint("v", u+1)}).Want(t, 200)
			}
		}()
	}
	wg.Wait()
	apitest.Caught(t, evs)
	const total = records * (1 + updates)
	if got := apitest.AllEvents(t, admin, "resourceType=company"); len(got) != total {
		t.Fatalf("%d events in the history, want %d", len(got), total)
	}
	reqs := recv.Wait(t, total)
	seen := map[string]bool{}
	last := map[string]int{}
	for _, r := range reqs {
		var ev map[string]any
		json.Unmarshal(r.Body, &ev)
		seen[ev["id"].(string)] = true
		id := ev["resource"].(map[string]any)["id"].(string)
		n := 0
		if ch, ok := ev["changes"].(map[string]any); ok {
			fmt.Sscanf(fmt.Sprint(ch["description"].(map[string]any)["to"]), "v%d", &n)
		}
		if n < last[id] || (n == last[id] && n > 0) {
			t.Fatalf("record %s: version v%d delivered after v%d", id, n, last[id])
		}
		last[id] = n
	}
	if len(seen) != total {
		t.Fatalf("%d distinct events delivered, want %d", len(seen), total)
	}
}

func TestAStoppedEventsProcessLosesNoEventAndDuplicatesNone(t *testing.T) {
	t.Parallel()
	e := apitest.NewWith(t, apitest.Options{})
	admin := e.Org(t)
	first := e.StartEvents(t)
	for i := range 10 {
		admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprint("before ", i)}).Want(t, 201)
	}
	apitest.Caught(t, first)
	first.Stop()
	for i := range 10 {
		admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprint("while stopped ", i)}).Want(t, 201)
	}
	second := e.StartEvents(t) // reads the stream again from its start
	apitest.Caught(t, second)
	got := apitest.AllEvents(t, admin, "resourceType=company")
	ids := map[string]bool{}
	for _, ev := range got {
		ids[ev["id"].(string)] = true
	}
	if len(got) != 20 || len(ids) != 20 {
		t.Fatalf("%d events (%d distinct), want the 20 creates once each", len(got), len(ids))
	}
}

// stallEvents answers 500 to every write of an event item while stalled:
// the table stalls for the events code only.
type stallEvents struct{ stalled, refused atomic.Int32 }

func (s *stallEvents) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.stalled.Load() == 1 && r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"type":{"S":"EVENT"}`)) {
			s.refused.Add(1)
			return &http.Response{StatusCode: 500, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
				Body:    io.NopCloser(strings.NewReader(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"stalled"}`)),
				Request: r}, nil
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestAStalledTableDelaysEventsButLosesNoneAndDuplicatesNone(t *testing.T) {
	t.Parallel()
	stall := &stallEvents{}
	e := apitest.NewWith(t, apitest.Options{Transport: stall})
	admin := e.Org(t)
	stall.stalled.Store(1)
	evs := e.StartEvents(t)
	for i := range 10 {
		admin.Do("POST", "/v1/deals", map[string]any{"name": fmt.Sprint("stalled ", i)}).Want(t, 201)
	}
	apitest.WaitFor(t, "the events code to meet the stalled table", func() bool { return stall.refused.Load() > 3 })
	if got := apitest.AllEvents(t, admin, "resourceType=deal"); len(got) != 0 {
		t.Fatalf("%d events kept while the table refused them", len(got))
	}
	stall.stalled.Store(0)
	apitest.Caught(t, evs)
	got := apitest.AllEvents(t, admin, "resourceType=deal")
	ids := map[string]bool{}
	for _, ev := range got {
		ids[ev["id"].(string)] = true
	}
	if len(got) != 10 || len(ids) != 10 {
		t.Fatalf("after the stall %d events (%d distinct), want the 10 creates once each", len(got), len(ids))
	}
}
