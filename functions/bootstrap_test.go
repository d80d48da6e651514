package functions_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/localsfn"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
)

// eventsDir holds the sample events, relative to this package.
var eventsDir = filepath.Join(repoRoot, "events")

// samples is every file of events/ and the function it is a sample of.
// A file missing here, or listed and not invoked, fails the tests.
var samples = map[string]string{
	"admin-create-org.json":         lambdas.Admin,
	"admin-create-key.json":         lambdas.Admin,
	"admin-list-keys.json":          lambdas.Admin,
	"admin-set-limits.json":         lambdas.Admin,
	"admin-revoke-key.json":         lambdas.Admin,
	"keys-list.json":                lambdas.Keys,
	"keys-fallback.json":            lambdas.Keys,
	"companies-create.json":         lambdas.Companies,
	"companies-get.json":            lambdas.Companies,
	"companies-list.json":           lambdas.Companies,
	"search-companies.json":         lambdas.Search,
	"mcp-search-companies.json":     lambdas.MCP,
	"catalog-create-industry.json":  lambdas.Catalog,
	"crm-create-deal.json":          lambdas.CRM,
	"data-metric-series.json":       lambdas.Data,
	"documents-create.json":         lambdas.Documents,
	"scoring-create-framework.json": lambdas.Scoring,
	"workflows-create.json":         lambdas.Workflows,
	"workflows-start-run.json":      lambdas.Workflows,
	"workflows-get-run.json":        lambdas.Workflows,
	"webhook-shared-secret.json":    lambdas.Webhook,
	"webhook-hmac-base64.json":      lambdas.Webhook,
	"runner-execute.json":           lambdas.Runner,
	"runner-fail.json":              lambdas.Runner,
	"runner-schedule.json":          lambdas.Runner,
	"indexer-stream.json":           lambdas.Indexer,
	"hooks-list-events.json":        lambdas.Hooks,
	"events-stream.json":            lambdas.Events,
	"deliver-queue.json":            lambdas.Deliver,
}

var (
	usedMu sync.Mutex
	used   = map[string]bool{}
)

// sample reads a sample event with each old, new pair of replace applied;
// no placeholder may remain.
func sample(t *testing.T, name string, replace ...string) []byte {
	t.Helper()
	s := sampleWith(t, name, replace...)
	if bytes.Contains(s, []byte("_REPLACE")) {
		t.Fatalf("%s keeps a placeholder after replacing %v", name, replace)
	}
	return s
}

// sampleWith reads a sample event with each old, new pair of replace applied.
func sampleWith(t *testing.T, name string, replace ...string) []byte {
	t.Helper()
	if _, ok := samples[name]; !ok {
		t.Fatalf("%s is not listed in samples", name)
	}
	raw, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	usedMu.Lock()
	used[name] = true
	usedMu.Unlock()
	return []byte(strings.NewReplacer(replace...).Replace(string(raw)))
}

func TestEveryFileInEventsIsASampleOfAFunctionAndEveryFunctionHasOne(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(eventsDir)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
		if _, ok := samples[e.Name()]; !ok {
			t.Errorf("events/%s is used by no test: add it to samples (functions/bootstrap_test.go) and invoke it", e.Name())
		}
	}
	covered := map[string]bool{}
	for name, fn := range samples {
		covered[fn] = true
		if !have[name] {
			t.Errorf("samples lists %s, which is not in events/", name)
		}
	}
	for _, f := range routes.Functions {
		if !covered[f.Name] {
			t.Errorf("the %s function has no sample event", f.Name)
		}
	}
}

func TestEverySampleHTTPEventHasTheShapeAPIGatewaySends(t *testing.T) {
	t.Parallel()
	table := map[string]bool{}
	for _, r := range api.Routes() {
		table[r.Pattern()] = true
	}
	for name, fn := range samples {
		f, _ := routes.FunctionNamed(fn)
		if f.Reach != routes.ByAPI && f.Reach != routes.ByURL {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(eventsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var ev events.APIGatewayV2HTTPRequest
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			t.Errorf("%s is not a payload v2 event: %v", name, err)
			continue
		}
		rc := ev.RequestContext
		if ev.Version != "2.0" || rc.Stage != "$default" || ev.RouteKey != rc.RouteKey || rc.HTTP.Path != ev.RawPath ||
			rc.RequestID == "" || rc.DomainName == "" || rc.TimeEpoch == 0 || rc.HTTP.Method == "" {
			t.Errorf("%s does not have the shape of a payload v2 event", name)
		}
		for k := range ev.Headers {
			if k != strings.ToLower(k) {
				t.Errorf("%s: header %q is not lowercase", name, k)
			}
		}
		if ev.Body != "" && !ev.IsBase64Encoded && ev.Headers["content-length"] != strconv.Itoa(len(ev.Body)) {
			t.Errorf("%s: content-length %s, body has %d bytes", name, ev.Headers["content-length"], len(ev.Body))
		}
		switch {
		case f.Reach == routes.ByURL || f.Fallback && ev.RouteKey == "$default":
			// A function URL, and API Gateway's $default route, send the
			// route key $default and no path parameters.
			if ev.RouteKey != "$default" || ev.PathParameters != nil {
				t.Errorf("%s: route key %q, path parameters %v; want $default and none", name, ev.RouteKey, ev.PathParameters)
			}
			if f.Reach == routes.ByAPI && table[rc.HTTP.Method+" "+ev.RawPath] {
				t.Errorf("%s: a $default event for %s %s, which a route matches", name, rc.HTTP.Method, ev.RawPath)
			}
		default:
			if !table[ev.RouteKey] {
				t.Errorf("%s: route key %q is not in the route table", name, ev.RouteKey)
				continue
			}
			if r := routeOf(ev.RouteKey); r.Function != fn {
				t.Errorf("%s: route %s is served by %s, not %s", name, ev.RouteKey, r.Function, fn)
			}
			method, pattern, _ := strings.Cut(ev.RouteKey, " ")
			if method != rc.HTTP.Method {
				t.Errorf("%s: method %s, route key %s", name, rc.HTTP.Method, ev.RouteKey)
			}
			// Path parameters are exactly the route's, with the values of rawPath.
			want := map[string]string{}
			ps, rs := strings.Split(pattern, "/"), strings.Split(ev.RawPath, "/")
			if len(ps) != len(rs) {
				t.Errorf("%s: rawPath %s does not match %s", name, ev.RawPath, pattern)
				continue
			}
			for i, p := range ps {
				if strings.HasPrefix(p, "{") {
					want[strings.Trim(p, "{}")] = rs[i]
				} else if p != rs[i] {
					t.Errorf("%s: rawPath %s does not match %s", name, ev.RawPath, pattern)
				}
			}
			if fmt.Sprint(ev.PathParameters) != fmt.Sprint(want) && !(len(want) == 0 && ev.PathParameters == nil) {
				t.Errorf("%s: path parameters %v, want %v", name, ev.PathParameters, want)
			}
		}
		if f.Reach == routes.ByAPI && (ev.Headers["x-service-client-id"] != "ck_REPLACE" || ev.Headers["x-service-api-key"] != "sk_REPLACE") {
			t.Errorf("%s: credential headers must be the placeholders ck_REPLACE and sk_REPLACE", name)
		}
	}
}

func routeOf(key string) routes.Route {
	for _, r := range api.Routes() {
		if r.Pattern() == key {
			return r
		}
	}
	return routes.Route{}
}

// data decodes the response's {"data": ...} after checking its status.
func data[T any](t *testing.T, what string, res events.APIGatewayV2HTTPResponse, status int) T {
	t.Helper()
	var body struct {
		Data T `json:"data"`
	}
	if res.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, res.StatusCode, status, res.Body)
	}
	if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
		t.Fatalf("%s: body %s: %v", what, res.Body, err)
	}
	return body.Data
}

type record = map[string]any

// TestEveryFunctionsBootstrapAnswersItsSampleEvents starts each built
// bootstrap under the Runtime API with the environment the stack gives it
// and invokes it with its samples (placeholders replaced by what earlier
// samples created): the admin function makes the organization and key the
// HTTP samples use; the runs the workflows and webhook samples start are
// executions of the state machine in localsfn, whose tasks invoke the
// runner bootstrap, and they end completed in the table.
func TestEveryFunctionsBootstrapAnswersItsSampleEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	// The operator's samples make the organization and its admin key.
	var org, key record
	json.Unmarshal(e.invoke(lambdas.Admin, sample(t, "admin-create-org.json")), &org)
	orgID, _ := org["id"].(string)
	if !strings.HasPrefix(orgID, "org_") || org["name"] != "Acme Capital" {
		t.Fatalf("create-org: %v", org)
	}
	json.Unmarshal(e.invoke(lambdas.Admin, sample(t, "admin-create-key.json", "org_REPLACE", orgID)), &key)
	clientID, _ := key["clientId"].(string)
	secret, _ := key["secret"].(string)
	if !strings.HasPrefix(clientID, "ck_") || secret == "" || key["role"] != "admin" {
		t.Fatalf("create-key: %v", key)
	}
	var keys []record
	json.Unmarshal(e.invoke(lambdas.Admin, sample(t, "admin-list-keys.json", "org_REPLACE", orgID)), &keys)
	if len(keys) != 1 || keys[0]["clientId"] != clientID {
		t.Fatalf("list-keys: %v", keys)
	}
	var limits record
	json.Unmarshal(e.invoke(lambdas.Admin, sample(t, "admin-set-limits.json", "org_REPLACE", orgID)), &limits)
	if l, _ := limits["limits"].(map[string]any); l["keyPerMinute"] != 120000.0 || l["webhookPerMinute"] != 12000.0 {
		t.Fatalf("set-limits: %v", limits)
	}
	creds := []string{"ck_REPLACE", clientID, "sk_REPLACE", secret}
	req := func(name string, replace ...string) []byte { return sample(t, name, append(replace, creds...)...) }

	listed := data[[]record](t, "keys-list", e.http(lambdas.Keys, req("keys-list.json")), 200)
	if len(listed) != 1 || listed[0]["clientId"] != clientID {
		t.Errorf("keys-list: %v", listed)
	}

	company := data[record](t, "companies-create", e.http(lambdas.Companies, req("companies-create.json")), 201)
	companyID, _ := company["id"].(string)
	if !strings.HasPrefix(companyID, "cmp_") || company["canonicalName"] != "Acme Robotics" {
		t.Fatalf("companies-create: %v", company)
	}
	if got := data[record](t, "companies-get", e.http(lambdas.Companies, req("companies-get.json", "cmp_REPLACE", companyID)), 200); got["id"] != companyID {
		t.Errorf("companies-get: %v", got)
	}
	if got := data[[]record](t, "companies-list", e.http(lambdas.Companies, req("companies-list.json")), 200); len(got) != 1 || got[0]["id"] != companyID {
		t.Errorf("companies-list: %v", got)
	}
	// The search function finds the company the companies function wrote.
	if got := data[[]record](t, "search-companies", e.http(lambdas.Search, req("search-companies.json")), 200); len(got) != 1 || got[0]["id"] != companyID {
		t.Errorf("search-companies: %v", got)
	}

	// An agent's MCP call: a stateless tools/call the mcp function answers
	// as JSON, its search sent through the HTTP API to the search function.
	res := e.http(lambdas.MCP, req("mcp-search-companies.json"))
	var rpc struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Data []record `json:"data"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &rpc) != nil || rpc.Result.IsError ||
		len(rpc.Result.StructuredContent.Data) != 1 || rpc.Result.StructuredContent.Data[0]["id"] != companyID {
		t.Errorf("mcp-search-companies: status %d, body %s", res.StatusCode, res.Body)
	}
	// The documentation pages it offers as resources ship beside its
	// bootstrap (routes.Function.Pages), not inside it.
	var ev record
	if err := json.Unmarshal(req("mcp-search-companies.json"), &ev); err != nil {
		t.Fatal(err)
	}
	ev["body"] = `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"sourcebase://docs/getting-started.md"}}`
	raw, _ := json.Marshal(ev)
	if res = e.http(lambdas.MCP, raw); res.StatusCode != 200 || !strings.Contains(res.Body, `"text":"# Getting started`) {
		t.Errorf("mcp resources/read of a docs page: status %d, body %.300s", res.StatusCode, res.Body)
	}

	// API Gateway sends a request no route matches to the keys function
	// ($default), which answers as the whole service: the path exists,
	// not with this method.
	res = e.http(lambdas.Keys, req("keys-fallback.json"))
	if res.StatusCode != 405 || !strings.Contains(res.Headers["Allow"], "POST") || !strings.Contains(res.Headers["Allow"], "GET") {
		t.Errorf("keys-fallback: status %d, Allow %q, body %s; want 405 allowing GET and POST", res.StatusCode, res.Headers["Allow"], res.Body)
	}

	if got := data[record](t, "catalog-create-industry", e.http(lambdas.Catalog, req("catalog-create-industry.json")), 201); !strings.HasPrefix(fmt.Sprint(got["id"]), "ind_") || got["name"] != "Robotics" {
		t.Errorf("catalog-create-industry: %v", got)
	}
	if got := data[record](t, "crm-create-deal", e.http(lambdas.CRM, req("crm-create-deal.json", "cmp_REPLACE", companyID)), 201); !strings.HasPrefix(fmt.Sprint(got["id"]), "deal_") || got["companyId"] != companyID || got["status"] != "open" {
		t.Errorf("crm-create-deal: %v", got)
	}
	if got := data[record](t, "data-metric-series", e.http(lambdas.Data, req("data-metric-series.json", "cmp_REPLACE", companyID)), 200); got["resource"] != "companies:"+companyID || got["key"] != "metric:revenue" || got["points"] == nil {
		t.Errorf("data-metric-series: %v", got)
	}
	if got := data[record](t, "documents-create", e.http(lambdas.Documents, req("documents-create.json", "cmp_REPLACE", companyID)), 201); !strings.HasPrefix(fmt.Sprint(got["id"]), "doc_") || got["companyId"] != companyID {
		t.Errorf("documents-create: %v", got)
	}
	if got := data[record](t, "scoring-create-framework", e.http(lambdas.Scoring, req("scoring-create-framework.json")), 201); got["name"] != "Growth" || len(got["elements"].([]any)) != 2 {
		t.Errorf("scoring-create-framework: %v", got)
	}

	// A workflow, and a run started through the API: the workflows
	// function starts the execution, the runner executes the run.
	wf := data[record](t, "workflows-create", e.http(lambdas.Workflows, req("workflows-create.json")), 201)
	wfID, _ := wf["id"].(string)
	trigger, _ := wf["trigger"].(map[string]any)
	slug, _ := trigger["slug"].(string)
	whSecret, _ := trigger["secret"].(string)
	if !strings.HasPrefix(wfID, "wf_") || slug == "" || whSecret == "" || trigger["url"] != functionURL+"/webhooks/workflows/"+slug {
		t.Fatalf("workflows-create: %v", wf)
	}
	started := data[record](t, "workflows-start-run", e.http(lambdas.Workflows, req("workflows-start-run.json", "wf_REPLACE", wfID)), 202)
	runID, _ := started["id"].(string)
	if !strings.HasPrefix(runID, "run_") || started["status"] != runs.Queued || started["title"] != "Backfill Acme Robotics" {
		t.Fatalf("workflows-start-run: %v", started)
	}
	if ex := e.awaitExecution(runID); ex.Status != localsfn.Succeeded {
		t.Fatalf("the run's execution: %+v", ex)
	}
	got := data[record](t, "workflows-get-run", e.http(lambdas.Workflows, req("workflows-get-run.json", "run_REPLACE", runID)), 200)
	if out, _ := got["output"].(map[string]any); got["status"] != runs.Completed || out["source"] != "crm" || fmt.Sprint(out["deal"]) != fmt.Sprint(started["input"]) {
		t.Errorf("workflows-get-run: %v", got)
	}

	// Each webhook sample starts a run of its trigger's workflow, executed
	// the same way.
	hmacWF := e.workflow(orgID, `{"name":"GitHub pushes","trigger":{"scheme":"hmac-sha256"},"steps":[{"id":"record","type":"set","with":{"payload.$":"$.input.webhook"}}]}`)
	for _, wh := range []struct {
		name string
		ev   []byte
	}{
		{"webhook-shared-secret.json", sample(t, "webhook-shared-secret.json", "wh_REPLACE", slug, "whsec_REPLACE", whSecret)},
		{"webhook-hmac-base64.json", signed(t, sampleWith(t, "webhook-hmac-base64.json", "wh_REPLACE", hmacWF.Trigger.Slug), hmacWF.Trigger.Secret)},
	} {
		run := data[runs.Run](t, wh.name, e.http(lambdas.Webhook, wh.ev), 202)
		if run.StartedBy != runs.StartedByWebhook || run.Status != runs.Queued {
			t.Errorf("%s: %+v", wh.name, run)
		}
		if ex := e.awaitExecution(run.ID); ex.Status != localsfn.Succeeded {
			t.Errorf("%s: the run's execution %+v", wh.name, ex)
		}
		if r := e.run(orgID, run.ID); r.Status != runs.Completed || len(r.Output) == 0 {
			t.Errorf("%s: run %s %v %+v, want completed", wh.name, r.Status, r.Output, r.Error)
		}
	}

	// The runner's samples, as the state machine sends them.
	quiet := e.workflow(orgID, `{"name":"Quiet","steps":[{"id":"s","type":"set","with":{"ok":true}}]}`)
	toExecute, toFail := e.queued(orgID, quiet, nil), e.queued(orgID, quiet, nil)
	var done runs.TaskResult
	json.Unmarshal(e.invoke(lambdas.Runner, sample(t, "runner-execute.json", "org_REPLACE", orgID, "run_REPLACE", toExecute.ID)), &done)
	if done != (runs.TaskResult{RunID: toExecute.ID, Status: runs.Completed}) || e.run(orgID, toExecute.ID).Status != runs.Completed {
		t.Errorf("runner-execute: %+v", done)
	}
	json.Unmarshal(e.invoke(lambdas.Runner, sample(t, "runner-fail.json", "org_REPLACE", orgID, "run_REPLACE", toFail.ID)), &done)
	if r := e.run(orgID, toFail.ID); done.Status != runs.Failed || r.Status != runs.Failed || r.Error == nil || !strings.Contains(r.Error.Message, "States.Timeout") {
		t.Errorf("runner-fail: %+v, run %+v", done, r.Error)
	}

	// The runner's schedule sample, as the EventBridge rule sends it: the
	// sweeps complete the purge a deleted company left pending (none of
	// the runs is stale yet).
	purge, err := e.deps.Enrichment.PurgeOp(orgID, "companies", "cmp_deleted")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.Transact(context.Background(), nil, purge); err != nil {
		t.Fatal(err)
	}
	var swept service.SweepResult
	json.Unmarshal(e.invoke(lambdas.Runner, sample(t, "runner-schedule.json")), &swept)
	if swept != (service.SweepResult{FailedRuns: 0, CompletedPurges: 1}) {
		t.Errorf("runner-schedule: %+v, want the pending purge completed and no run failed", swept)
	}

	// The indexer's sample, a batch of the table's stream: one _bulk
	// request with an action per searchable record, no batch failures.
	var indexed events.DynamoDBEventResponse
	json.Unmarshal(e.invoke(lambdas.Indexer, sample(t, "indexer-stream.json")), &indexed)
	e.openSearch.mu.Lock()
	bulks, created := e.openSearch.actions, e.openSearch.indexes
	e.openSearch.mu.Unlock()
	if len(indexed.BatchItemFailures) != 0 || len(bulks) != 1 || len(bulks[0]) == 0 || len(created) == 0 {
		t.Errorf("indexer-stream: failures %v, bulk requests %v, indexes created %v", indexed.BatchItemFailures, bulks, created)
	}

	// The events function's sample, a batch of the table's stream as its
	// event source mapping hands it over: a company created with the key
	// above (the item's actor and write time; now, so that the event is
	// within its retention) becomes an event of the change history, read
	// back through the hooks function (GET /v1/events) and in this
	// process. The organization has no webhook endpoints: nothing is
	// queued.
	var streamed events.DynamoDBEventResponse
	json.Unmarshal(e.invoke(lambdas.Events, req("events-stream.json", "org_REPLACE", orgID,
		"2026-11-22T07:41:30.123456789Z", time.Now().UTC().Format(time.RFC3339Nano))), &streamed)
	if len(streamed.BatchItemFailures) != 0 {
		t.Errorf("events-stream: batch item failures %v", streamed.BatchItemFailures)
	}
	const streamedCompany = "cmp_01JD8WZZ9Y8X7W6V5T4S3R2Q1P"
	var eventID string
	for _, ev := range data[[]record](t, "hooks-list-events", e.http(lambdas.Hooks, req("hooks-list-events.json")), 200) {
		res, _ := ev["resource"].(map[string]any)
		actor, _ := ev["actor"].(map[string]any)
		if res["id"] != streamedCompany {
			continue
		}
		eventID, _ = ev["id"].(string)
		d, _ := ev["data"].(map[string]any)
		if ev["type"] != "company.created" || res["type"] != "company" || actor["type"] != "apiKey" || actor["id"] != clientID || d["canonicalName"] != "Acme Robotics" {
			t.Errorf("events-stream: the event %v", ev)
		}
	}
	if !strings.HasPrefix(eventID, "evt_") {
		t.Fatalf("hooks-list-events: no event of the streamed company %s", streamedCompany)
	}
	if raw, err := e.deps.History.Get(context.Background(), orgID, eventID); err != nil || !strings.Contains(string(raw), streamedCompany) {
		t.Errorf("the history's event %s: %s, %v", eventID, raw, err)
	}

	// The deliver function's sample, a batch of the delivery queue: its
	// delivery does not exist (expired, or its endpoint's organization
	// gone), so the message is dropped: no batch item failure, nothing
	// sent to SQS (no retry's visibility, no dead letter).
	var delivered events.SQSEventResponse
	json.Unmarshal(e.invoke(lambdas.Deliver, req("deliver-queue.json", "org_REPLACE", orgID)), &delivered)
	if len(delivered.BatchItemFailures) != 0 {
		t.Errorf("deliver-queue: batch item failures %v", delivered.BatchItemFailures)
	}
	if calls := e.sqs.Calls(); len(calls) != 0 {
		t.Errorf("SQS calls %v, want none (no endpoint, no delivery)", calls)
	}

	var revoked record
	json.Unmarshal(e.invoke(lambdas.Admin, sample(t, "admin-revoke-key.json", "ck_REPLACE", clientID)), &revoked)
	if revoked["clientId"] != clientID || revoked["revoked"] != true {
		t.Errorf("revoke-key: %v", revoked)
	}

	usedMu.Lock()
	for name := range samples {
		if !used[name] {
			t.Errorf("%s was not invoked", name)
		}
	}
	usedMu.Unlock()
	logSizesAndColdStarts(t, e)
}

// signed replaces SIGNATURE_REPLACE with the HMAC-SHA256 of the event's
// body (the decoded bytes of a base64 body), as the sender signs it.
func signed(t *testing.T, ev []byte, secret string) []byte {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(ev, &req); err != nil {
		t.Fatal(err)
	}
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			t.Fatal(err)
		}
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	out := []byte(strings.ReplaceAll(string(ev), "SIGNATURE_REPLACE", hex.EncodeToString(m.Sum(nil))))
	if bytes.Contains(out, []byte("_REPLACE")) {
		t.Fatalf("the signed event keeps a placeholder: %s", out)
	}
	return out
}

// TestEveryBootstrapButTheEmbeddedSearchEngineIsAtMost12MB holds each
// function's bootstrap (linux/arm64, stripped) to the size its cold start
// is kept to (routes.Function.MaxBootstrapBytes: 12 MB, the mcp function's
// 13), but the embedded engine's build of the search function (bleve alone
// is about 12 MB; a deployment that wants it smaller searches with
// OpenSearch, whose build is within it).
func TestEveryBootstrapButTheEmbeddedSearchEngineIsAtMost12MB(t *testing.T) {
	t.Parallel()
	for _, f := range routes.Functions {
		size, ok := deployedSizes[f.Name]
		switch {
		case !ok:
			t.Errorf("function %s was not built", f.Name)
		case f.EngineBuilds:
			t.Logf("%s: %.1f MB with the embedded engine (accepted above 12 MB)", f.Name, float64(size)/(1<<20))
		case size > f.MaxBootstrapBytes():
			t.Errorf("function %s: its linux/arm64 bootstrap is %.2f MB, more than %d MB", f.Name, float64(size)/(1<<20), f.MaxBootstrapBytes()>>20)
		}
	}
}

// logSizesAndColdStarts logs each function's deployed (linux/arm64,
// stripped) binary size and its cold start here: from the process's start
// to its first response, that first request included.
func logSizesAndColdStarts(t *testing.T, e *env) {
	names := make([]string, 0, len(routes.Functions))
	for _, f := range routes.Functions {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| function | arm64 bootstrap | cold start (first response) |\n|---|---:|---:|\n")
	for _, n := range names {
		cold := "—"
		if cs := e.fn(n).ColdStarts(); len(cs) > 0 {
			cold = fmt.Sprintf("%d ms", cs[0].Milliseconds())
		}
		fmt.Fprintf(&b, "| %s | %.1f MB | %s |\n", n, float64(deployedSizes[n])/(1<<20), cold)
	}
	t.Logf("bootstraps (cold starts on this %s machine):\n%s", runtime.GOARCH, b.String())
}
