package service_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/serve"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// sampleEventsDir holds the sample events, relative to this package.
const sampleEventsDir = "../../events"

// functionURL is the webhook function's public base in the sample events.
const functionURL = "https://abcdefg.lambda-url.us-east-1.on.aws"

// lambdaHandler is what a Lambda function of an HTTP group runs.
type lambdaHandler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// webhookFunction is the webhook Lambda over a fresh table, with runs
// executed in process, and one organization with an admin key.
type webhookFunction struct {
	deps             service.Deps
	org              string
	clientID, secret string
	handle           lambdaHandler
}

func newWebhookFunction(t *testing.T) *webhookFunction {
	t.Helper()
	st := testenv.Store(t)
	deps := service.Build(st, service.Config{Table: st.Table, CacheTTL: auth.MaxCacheTTL, WebhookBaseURL: functionURL}, service.InProcessRuns())
	engine := service.InProcess(deps)
	t.Cleanup(func() { engine.Close(testenv.Scaled(5 * time.Second)) })
	ctx := context.Background()
	org, err := deps.Keys.CreateOrg(ctx, "Webhook Org", 0)
	if err != nil {
		t.Fatal(err)
	}
	key, err := deps.Keys.CreateKey(ctx, org.ID, "webhook test", "admin")
	if err != nil {
		t.Fatal(err)
	}
	return &webhookFunction{deps: deps, org: org.ID, clientID: key.ClientID, secret: key.Secret,
		handle: serve.Handler(deps, lambdas.Webhook)}
}

// workflow creates a workflow from a create body; its trigger carries the secret.
func (f *webhookFunction) workflow(t *testing.T, body string) *workflows.Workflow {
	t.Helper()
	in, err := workflows.DecodeCreate([]byte(body))
	if err != nil {
		t.Fatalf("workflow body %s: %v", body, err)
	}
	wf, err := f.deps.Workflows.Create(context.Background(), f.org, in)
	if err != nil {
		t.Fatal(err)
	}
	if wf.Trigger.Secret == "" || wf.Trigger.URL != functionURL+"/webhooks/workflows/"+wf.Trigger.Slug {
		t.Fatalf("created trigger %+v, want a secret and a url under %s", wf.Trigger, functionURL)
	}
	return wf
}

// runsOf lists the workflow's runs.
func (f *webhookFunction) runsOf(t *testing.T, workflowID string) []runs.Run {
	t.Helper()
	rs, err := f.deps.Runs.List(context.Background(), f.org, workflowID, store.Query{Limit: 100, Desc: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs.Items
}

// awaitFinished reads the run until it has finished (a generous wait for
// the in-process engine, not a timing assertion).
func (f *webhookFunction) awaitFinished(t *testing.T, id string) *runs.Run {
	t.Helper()
	deadline := time.Now().Add(testenv.Scaled(30 * time.Second))
	for {
		r, err := f.deps.Runs.Get(context.Background(), f.org, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Done() {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is still %s after 10s", id, r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loadFunctionURLEvent reads a sample event strictly (only fields of the
// payload v2 shape) after replacing each old, new pair of replace.
func loadFunctionURLEvent(t *testing.T, name string, replace ...string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleEventsDir, name))
	if err != nil {
		t.Fatalf("read sample event: %v", err)
	}
	s := string(raw)
	if len(replace) > 0 {
		s = strings.NewReplacer(replace...).Replace(s)
	}
	var ev events.APIGatewayV2HTTPRequest
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("%s is not a function URL (payload v2) event: %v", name, err)
	}
	return ev
}

// eventBody returns the body bytes the sender sent: decoded when base64.
func eventBody(t *testing.T, ev events.APIGatewayV2HTTPRequest) []byte {
	t.Helper()
	if !ev.IsBase64Encoded {
		return []byte(ev.Body)
	}
	b, err := base64.StdEncoding.DecodeString(ev.Body)
	if err != nil {
		t.Fatalf("body is not base64: %v", err)
	}
	return b
}

// signEvent puts the hex HMAC-SHA256 of data under secret in place of the
// SIGNATURE_REPLACE placeholder of every header.
func signEvent(ev *events.APIGatewayV2HTTPRequest, secret string, data []byte) {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(data)
	sig := hex.EncodeToString(m.Sum(nil))
	for k, v := range ev.Headers {
		ev.Headers[k] = strings.ReplaceAll(v, "SIGNATURE_REPLACE", sig)
	}
}

// callFunction invokes a function handler; a handler error fails the test.
func callFunction(t *testing.T, h lambdaHandler, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	res, err := h(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s %s: handler error: %v", ev.RequestContext.HTTP.Method, ev.RawPath, err)
	}
	if ct := res.Headers["Content-Type"]; ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	return res
}

// plainJSON round-trips v through JSON, so values decoded by different
// paths compare equal.
func plainJSON(t *testing.T, v any) any { return apitest.JSONCopy(t, v) }

// webhookEventCase is a sample event, the trigger it is meant for, and how
// a sender proves (or fails to prove) it holds the secret.
type webhookEventCase struct {
	event    string
	workflow string // create body
	// prepare returns the event as the sender would send it with secret.
	prepare func(t *testing.T, slug, secret string) events.APIGatewayV2HTTPRequest
	query   map[string]any
	// seen and hidden are header names the run must and must not see.
	seen, hidden []string
}

func webhookEventCases() []webhookEventCase {
	return []webhookEventCase{
		{
			event:    "webhook-shared-secret.json",
			workflow: `{"name":"CRM deals"}`,
			prepare: func(t *testing.T, slug, secret string) events.APIGatewayV2HTTPRequest {
				return loadFunctionURLEvent(t, "webhook-shared-secret.json", "wh_REPLACE", slug, "whsec_REPLACE", secret)
			},
			query:  map[string]any{"source": "crm", "attempt": "1"},
			seen:   []string{"x-crm-event", "user-agent", "content-type"},
			hidden: []string{"x-service-webhook-secret"},
		},
		{
			event:    "webhook-hmac-base64.json",
			workflow: `{"name":"GitHub pushes","trigger":{"scheme":"hmac-sha256"}}`,
			prepare: func(t *testing.T, slug, secret string) events.APIGatewayV2HTTPRequest {
				ev := loadFunctionURLEvent(t, "webhook-hmac-base64.json", "wh_REPLACE", slug)
				signEvent(&ev, secret, eventBody(t, ev)) // the signature covers the decoded bytes
				return ev
			},
			query:  map[string]any{},
			seen:   []string{"x-github-event", "x-github-delivery", "user-agent"},
			hidden: []string{"x-hub-signature"},
		},
	}
}

func TestTheWebhookFunctionStartsARunFromEachSampleFunctionURLEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range webhookEventCases() {
		t.Run(tc.event, func(t *testing.T) {
			t.Parallel()
			f := newWebhookFunction(t)
			wf := f.workflow(t, tc.workflow)
			ev := tc.prepare(t, wf.Trigger.Slug, wf.Trigger.Secret)
			body := eventBody(t, ev)

			res := callFunction(t, f.handle, ev)
			if res.StatusCode != 202 {
				t.Fatalf("status %d, want 202; body %s", res.StatusCode, res.Body)
			}
			var accepted struct {
				Data runs.Run `json:"data"`
			}
			if err := json.Unmarshal([]byte(res.Body), &accepted); err != nil {
				t.Fatalf("body %s: %v", res.Body, err)
			}
			if accepted.Data.ID == "" || accepted.Data.WorkflowID != wf.ID || accepted.Data.StartedBy != runs.StartedByWebhook ||
				accepted.Data.Status != runs.Queued {
				t.Errorf("accepted %s, want a queued webhook run of %s", res.Body, wf.ID)
			}

			run := f.awaitFinished(t, accepted.Data.ID)
			if run.Status != runs.Completed {
				t.Fatalf("run %+v, want completed", run)
			}
			wh, _ := plainJSON(t, run.Input).(map[string]any)["webhook"].(map[string]any)
			var payload any
			if err := json.Unmarshal(body, &payload); err != nil {
				t.Fatalf("sample body is not JSON: %v", err)
			}
			if !reflect.DeepEqual(wh["payload"], payload) {
				t.Errorf("webhook.payload %v, want the decoded body %s", wh["payload"], body)
			}
			if !reflect.DeepEqual(wh["query"], tc.query) {
				t.Errorf("webhook.query %v, want %v", wh["query"], tc.query)
			}
			headers, _ := wh["headers"].(map[string]any)
			for _, h := range tc.seen {
				if headers[h] != ev.Headers[h] {
					t.Errorf("webhook.headers[%s] = %v, want %q", h, headers[h], ev.Headers[h])
				}
			}
			for _, h := range tc.hidden {
				if v, ok := headers[h]; ok {
					t.Errorf("webhook.headers exposes the credential header %s: %v", h, v)
				}
			}
			if !reflect.DeepEqual(plainJSON(t, run.Output), plainJSON(t, run.Input)) {
				t.Errorf("output %v, want the input (no steps)", run.Output)
			}
		})
	}
}

func TestTheWebhookFunctionRefusesAWrongSignatureWith401(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, workflow string
		prepare        func(t *testing.T, slug, secret string) events.APIGatewayV2HTTPRequest
	}{
		{"a wrong shared secret", `{"name":"CRM"}`, func(t *testing.T, slug, _ string) events.APIGatewayV2HTTPRequest {
			return loadFunctionURLEvent(t, "webhook-shared-secret.json", "wh_REPLACE", slug, "whsec_REPLACE", "whsec_wrong")
		}},
		{"no shared secret", `{"name":"CRM"}`, func(t *testing.T, slug, _ string) events.APIGatewayV2HTTPRequest {
			ev := loadFunctionURLEvent(t, "webhook-shared-secret.json", "wh_REPLACE", slug)
			delete(ev.Headers, "x-service-webhook-secret")
			return ev
		}},
		{"an HMAC with a wrong secret", `{"name":"GH","trigger":{"scheme":"hmac-sha256"}}`,
			func(t *testing.T, slug, _ string) events.APIGatewayV2HTTPRequest {
				ev := loadFunctionURLEvent(t, "webhook-hmac-base64.json", "wh_REPLACE", slug)
				signEvent(&ev, "whsec_wrong", eventBody(t, ev))
				return ev
			}},
		{"an HMAC of the base64 text instead of the body", `{"name":"GH","trigger":{"scheme":"hmac-sha256"}}`,
			func(t *testing.T, slug, secret string) events.APIGatewayV2HTTPRequest {
				ev := loadFunctionURLEvent(t, "webhook-hmac-base64.json", "wh_REPLACE", slug)
				signEvent(&ev, secret, []byte(ev.Body))
				return ev
			}},
		{"an HMAC event for a shared-secret trigger", `{"name":"CRM"}`,
			func(t *testing.T, slug, secret string) events.APIGatewayV2HTTPRequest {
				ev := loadFunctionURLEvent(t, "webhook-hmac-base64.json", "wh_REPLACE", slug)
				signEvent(&ev, secret, eventBody(t, ev))
				return ev
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newWebhookFunction(t)
			wf := f.workflow(t, tc.workflow)
			res := callFunction(t, f.handle, tc.prepare(t, wf.Trigger.Slug, wf.Trigger.Secret))
			if res.StatusCode != 401 || strings.TrimSuffix(res.Body, "\n") != `{"error":"invalid signature"}` {
				t.Errorf("answered %d %s, want 401 {\"error\":\"invalid signature\"}", res.StatusCode, res.Body)
			}
			if rs := f.runsOf(t, wf.ID); len(rs) != 0 {
				t.Errorf("a refused webhook started %d runs", len(rs))
			}
		})
	}
}

func TestTheWebhookFunctionAnswers404ForOtherFunctionsRoutes(t *testing.T) {
	t.Parallel()
	f := newWebhookFunction(t)
	wf := f.workflow(t, `{"name":"CRM"}`)
	creds := []string{"ck_REPLACE", f.clientID, "sk_REPLACE", f.secret}
	apiGet := func(path string) events.APIGatewayV2HTTPRequest {
		ev := loadFunctionURLEvent(t, "companies-list.json", creds...)
		ev.RawPath, ev.RequestContext.HTTP.Path, ev.RawQueryString = path, path, ""
		ev.RequestContext.HTTP.Method, ev.RouteKey, ev.RequestContext.RouteKey = "GET", "GET "+path, "GET "+path
		return ev
	}
	cases := []struct {
		name string
		ev   events.APIGatewayV2HTTPRequest
	}{
		{"the companies list with a valid API key", loadFunctionURLEvent(t, "companies-list.json", creds...)},
		{"the keys list with a valid API key", loadFunctionURLEvent(t, "keys-list.json", creds...)},
		{"a workflow", apiGet("/v1/workflows/" + wf.ID)},
		{"the workflow list", apiGet("/v1/workflows")},
		{"the run list", apiGet("/v1/workflow-runs")},
		{"the health check", apiGet("/healthz")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := callFunction(t, f.handle, tc.ev)
			// Routes of other functions are unknown endpoints here.
			want := `{"error":"no such endpoint: ` + tc.ev.RequestContext.HTTP.Method + " " + tc.ev.RawPath + `"}`
			if res.StatusCode != 404 || strings.TrimSuffix(res.Body, "\n") != want {
				t.Errorf("%s %s answered %d %s, want 404 %s", tc.ev.RequestContext.HTTP.Method, tc.ev.RawPath,
					res.StatusCode, res.Body, want)
			}
		})
	}
	if rs := f.runsOf(t, wf.ID); len(rs) != 0 {
		t.Errorf("requests to other routes started %d runs", len(rs))
	}
}

func TestTheWebhookFunctionAnswersAnUnknownSlugExactlyAsAWrongSecret(t *testing.T) {
	t.Parallel()
	f := newWebhookFunction(t)
	wf := f.workflow(t, `{"name":"CRM"}`)
	// What a known slug is answered for a wrong secret.
	want := callFunction(t, f.handle, loadFunctionURLEvent(t, "webhook-shared-secret.json",
		"wh_REPLACE", wf.Trigger.Slug, "whsec_REPLACE", "whsec_wrong"))
	if want.StatusCode != 401 || strings.TrimSuffix(want.Body, "\n") != `{"error":"invalid signature"}` {
		t.Fatalf("a wrong secret answered %d %s, want 401 invalid signature", want.StatusCode, want.Body)
	}
	comparable := func(res events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
		res.Headers = maps.Clone(res.Headers)
		delete(res.Headers, "X-Request-Id")
		delete(res.Headers, "Date")
		return res
	}
	for _, slug := range []string{"wh_doesnotexist", wf.Trigger.Slug + "x", "wh_" + strings.Repeat("a", 2048)} {
		for _, secret := range []string{wf.Trigger.Secret, "whsec_wrong"} {
			got := callFunction(t, f.handle, loadFunctionURLEvent(t, "webhook-shared-secret.json",
				"wh_REPLACE", slug, "whsec_REPLACE", secret))
			if !reflect.DeepEqual(comparable(got), comparable(want)) || got.Headers["X-Request-Id"] == "" {
				t.Errorf("slug %.40s with a secret answered %+v, want exactly what a wrong secret is answered: %+v", slug, got, want)
			}
		}
	}
	if rs := f.runsOf(t, wf.ID); len(rs) != 0 {
		t.Errorf("deliveries to unknown slugs started %d runs", len(rs))
	}
}

var functionURLDomain = regexp.MustCompile(`^[a-z0-9]+\.lambda-url\.[a-z]{2}-[a-z]+-[0-9]\.on\.aws$`)

func TestWebhookSampleEventsHaveTheShapeOfFunctionURLEvents(t *testing.T) {
	t.Parallel()
	webhookRoute := false
	for _, r := range api.Routes() {
		webhookRoute = webhookRoute || (r.Function == lambdas.Webhook && r.Method == "POST" && r.Path == "/webhooks/workflows/{slug}")
	}
	if !webhookRoute {
		t.Fatal("the route table has no POST /webhooks/workflows/{slug} in the webhook group")
	}
	for _, tc := range webhookEventCases() {
		t.Run(tc.event, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join(sampleEventsDir, tc.event))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(raw), "\n") {
				t.Errorf("no final newline")
			}
			ev := loadFunctionURLEvent(t, tc.event)
			rc := ev.RequestContext
			if ev.Version != "2.0" || ev.RouteKey != "$default" || rc.RouteKey != "$default" || rc.Stage != "$default" {
				t.Errorf("version %q, routeKey %q/%q, stage %q: want a function URL's 2.0, $default, $default", ev.Version, ev.RouteKey,
					rc.RouteKey, rc.Stage)
			}
			if ev.RawPath != "/webhooks/workflows/wh_REPLACE" || rc.HTTP.Path != ev.RawPath || rc.HTTP.Method != "POST" {
				t.Errorf("%s %s (rawPath %s), want POST /webhooks/workflows/wh_REPLACE", rc.HTTP.Method, rc.HTTP.Path, ev.RawPath)
			}
			if !functionURLDomain.MatchString(rc.DomainName) || ev.Headers["host"] != rc.DomainName ||
				!strings.HasPrefix(rc.DomainName, rc.DomainPrefix+".") || rc.APIID != rc.DomainPrefix || rc.RequestID == "" {
				t.Errorf("domain %q (prefix %q, apiId %q, host %q): want a Lambda function URL domain", rc.DomainName, rc.DomainPrefix,
					rc.APIID, ev.Headers["host"])
			}
			for k := range ev.Headers {
				if k != strings.ToLower(k) {
					t.Errorf("header %q is not lower case as function URLs send it", k)
				}
			}
			body := eventBody(t, ev)
			if ev.Headers["content-length"] != strconv.Itoa(len(body)) {
				t.Errorf("content-length %s, the body has %d bytes", ev.Headers["content-length"], len(body))
			}
			if !json.Valid(body) {
				t.Errorf("the body is not JSON: %s", body)
			}
			placeholder := "whsec_REPLACE"
			if ev.IsBase64Encoded {
				placeholder = "sha256=SIGNATURE_REPLACE"
			}
			if !strings.Contains(string(raw), placeholder) {
				t.Errorf("no %s placeholder for the credential", placeholder)
			}
		})
	}
}
