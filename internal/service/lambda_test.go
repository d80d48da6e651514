package service_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/serve"
	"github.com/sourcebase/sourcebase/internal/service"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// eventsDir holds the sample events, relative to this package.
const eventsDir = "../../events"

// lambdaEnv is a fresh table with one organization and an admin key, and
// the Lambda handlers of the two API groups over it.
type lambdaEnv struct {
	deps             service.Deps
	org              string
	clientID, secret string
	companies, keys  func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
}

func newLambdaEnv(t *testing.T) *lambdaEnv {
	t.Helper()
	st := testenv.Store(t)
	deps := service.Build(st, service.Config{Table: st.Table, CacheTTL: auth.MaxCacheTTL}, nil)
	ctx := context.Background()
	org, err := deps.Keys.CreateOrg(ctx, "Lambda Org", 0)
	if err != nil {
		t.Fatal(err)
	}
	key, err := deps.Keys.CreateKey(ctx, org.ID, "lambda test", "admin")
	if err != nil {
		t.Fatal(err)
	}
	return &lambdaEnv{
		deps:      deps,
		org:       org.ID,
		clientID:  key.ClientID,
		secret:    key.Secret,
		companies: serve.Handler(deps, lambdas.Companies),
		keys:      serve.Handler(deps, lambdas.Keys),
	}
}

// event loads a sample event, replacing the placeholder credentials with
// e's and each further old, new pair of replace.
func (e *lambdaEnv) event(t *testing.T, name string, replace ...string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatalf("read sample event: %v", err)
	}
	s := strings.NewReplacer(append([]string{"ck_REPLACE", e.clientID, "sk_REPLACE", e.secret}, replace...)...).Replace(string(raw))
	var ev events.APIGatewayV2HTTPRequest
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields() // the sample must have the shape API Gateway sends
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("%s is not an API Gateway v2 event: %v", name, err)
	}
	return ev
}

func invoke(t *testing.T, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	res, err := h(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s %s: handler error: %v", ev.RequestContext.HTTP.Method, ev.RawPath, err)
	}
	return res
}

// want checks status and content type and returns the {data} of the body.
func want(t *testing.T, res events.APIGatewayV2HTTPResponse, status int) any {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", res.StatusCode, status, res.Body)
	}
	if ct := res.Headers["Content-Type"]; ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json (headers %v)", ct, res.Headers)
	}
	if res.Headers["X-Request-Id"] == "" {
		t.Errorf("no X-Request-Id header: %v", res.Headers)
	}
	if res.IsBase64Encoded {
		t.Errorf("a JSON response was base64-encoded")
	}
	var body struct {
		Data  any     `json:"data"`
		Error *string `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
		t.Fatalf("body is not JSON: %s", res.Body)
	}
	if status < 300 && body.Data == nil {
		t.Fatalf("no data in %s", res.Body)
	}
	return body.Data
}

func errorOf(t *testing.T, res events.APIGatewayV2HTTPResponse, status int) string {
	t.Helper()
	want(t, res, status)
	var body struct {
		Error *string `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.Body), &body); err != nil || body.Error == nil {
		t.Fatalf("not an error body: %s", res.Body)
	}
	return *body.Error
}

// create sends the sample create event and returns the company.
func (e *lambdaEnv) create(t *testing.T) map[string]any {
	t.Helper()
	c, ok := want(t, invoke(t, e.companies, e.event(t, "companies-create.json")), 201).(map[string]any)
	if !ok {
		t.Fatal("created data is not an object")
	}
	return c
}

func TestSampleCreateEventCreatesTheCompany(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	c := e.create(t)
	if c["canonicalName"] != "Acme Robotics" || c["companyType"] != "operating" || c["origin"] != "user" {
		t.Errorf("created %v", c)
	}
	if id, _ := c["id"].(string); !strings.HasPrefix(id, "cmp_") {
		t.Errorf("id %q, want a cmp_ id", c["id"])
	}
	if loc, _ := c["location"].(map[string]any); loc["city"] != "Boston" {
		t.Errorf("location %v", c["location"])
	}
}

func TestBase64EncodedCreateBodyIsDecoded(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	ev := e.event(t, "companies-create.json")
	ev.Body = base64.StdEncoding.EncodeToString([]byte(ev.Body))
	ev.IsBase64Encoded = true
	c, _ := want(t, invoke(t, e.companies, ev), 201).(map[string]any)
	if c["canonicalName"] != "Acme Robotics" {
		t.Errorf("created %v", c)
	}
}

func TestSampleGetEventReadsTheCompany(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	id := e.create(t)["id"].(string)
	c, _ := want(t, invoke(t, e.companies, e.event(t, "companies-get.json", "cmp_REPLACE", id)), 200).(map[string]any)
	if c["id"] != id || c["canonicalName"] != "Acme Robotics" {
		t.Errorf("got %v, want company %s", c, id)
	}
}

func TestSampleListEventAppliesItsQueryString(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	var created []string
	for range 3 {
		created = append(created, e.create(t)["id"].(string))
	}
	ev := e.event(t, "companies-list.json")
	if ev.RawQueryString != "limit=2&direction=asc" {
		t.Fatalf("sample list event has query %q", ev.RawQueryString)
	}
	list, _ := want(t, invoke(t, e.companies, ev), 200).([]any)
	var got []string
	for _, c := range list {
		got = append(got, c.(map[string]any)["id"].(string))
	}
	if strings.Join(got, ",") != strings.Join(created[:2], ",") {
		t.Errorf("listed %v, want the two oldest %v in ascending order", got, created[:2])
	}
}

func TestSampleKeysEventListsKeysWithoutSecrets(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	res := invoke(t, e.keys, e.event(t, "keys-list.json"))
	list, _ := want(t, res, 200).([]any)
	if len(list) != 1 {
		t.Fatalf("listed %d keys, want 1: %s", len(list), res.Body)
	}
	k := list[0].(map[string]any)
	if k["clientId"] != e.clientID || k["role"] != "admin" || k["keyLastFour"] != e.secret[len(e.secret)-4:] {
		t.Errorf("key %v", k)
	}
	if strings.Contains(res.Body, "secretHash") || strings.Contains(res.Body, e.secret) {
		t.Errorf("key listing leaks the secret: %s", res.Body)
	}
}

func TestEscapedCharacterInRawPathIDIsNotFound(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	e.create(t)
	for _, id := range []string{"cmp_x%2Fy", "cmp_x%3Fy", "cmp_%252F", "cmp_x%20y"} {
		res := invoke(t, e.companies, e.event(t, "companies-get.json", "cmp_REPLACE", id))
		if msg := errorOf(t, res, 404); msg != "not found" {
			t.Errorf("GET /v1/companies/%s: error %q, want not found", id, msg)
		}
		// The 404 comes from the company lookup, not from the router: the
		// escaped path matched GET /v1/companies/{id}, which authenticates.
		ev := e.event(t, "companies-get.json", "cmp_REPLACE", id)
		delete(ev.Headers, "x-service-api-key")
		if msg := errorOf(t, invoke(t, e.companies, ev), 401); msg != "invalid api key or clientId" {
			t.Errorf("GET /v1/companies/%s without a secret: error %q, want the 401 of a matched route", id, msg)
		}
	}
}

func TestKeysRouteSentToTheCompaniesFunctionIsNotFound(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	res := invoke(t, e.companies, e.event(t, "keys-list.json"))
	if msg := errorOf(t, res, 404); msg != "no such endpoint: GET /v1/keys" {
		t.Errorf("error %q, want no such endpoint", msg)
	}
	// And the other way round.
	res = invoke(t, e.keys, e.event(t, "companies-list.json"))
	if msg := errorOf(t, res, 404); msg != "no such endpoint: GET /v1/companies" {
		t.Errorf("error %q, want no such endpoint", msg)
	}
}

func TestEventsWithoutValidCredentialsAre401(t *testing.T) {
	t.Parallel()
	e := newLambdaEnv(t)
	const body = `{"error":"invalid api key or clientId"}`
	tests := []struct {
		name  string
		event string
		edit  func(h map[string]string)
	}{
		{"no credentials on create", "companies-create.json", func(h map[string]string) {
			delete(h, "x-service-client-id")
			delete(h, "x-service-api-key")
		}},
		{"no secret on list", "companies-list.json", func(h map[string]string) { delete(h, "x-service-api-key") }},
		{"no client id on get", "companies-get.json", func(h map[string]string) { delete(h, "x-service-client-id") }},
		{"wrong secret on keys", "keys-list.json", func(h map[string]string) { h["x-service-api-key"] = "sk_wrong" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := e.event(t, tt.event)
			tt.edit(ev.Headers)
			h := e.companies
			if tt.event == "keys-list.json" {
				h = e.keys
			}
			res := invoke(t, h, ev)
			want(t, res, 401)
			if got := strings.TrimSuffix(res.Body, "\n"); got != body {
				t.Errorf("body %q, want exactly %q", got, body)
			}
		})
	}
}

func TestSampleEventsAreValidJSONWithPlaceholders(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"companies-create.json", "companies-list.json", "companies-get.json", "keys-list.json"} {
		raw, err := os.ReadFile(filepath.Join(eventsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ev.Version != "2.0" || ev.RequestContext.Stage != "$default" || ev.RouteKey != ev.RequestContext.RouteKey ||
			ev.RequestContext.HTTP.Path != ev.RawPath || ev.RequestContext.RequestID == "" || ev.RequestContext.DomainName == "" {
			t.Errorf("%s does not have the shape of an HTTP API payload v2 event", name)
		}
		if ev.Headers["x-service-client-id"] != "ck_REPLACE" || ev.Headers["x-service-api-key"] != "sk_REPLACE" {
			t.Errorf("%s: credential headers must be the placeholders ck_REPLACE and sk_REPLACE", name)
		}
		for k := range ev.Headers {
			if k != strings.ToLower(k) {
				t.Errorf("%s: header %q is not lowercase as API Gateway sends it", name, k)
			}
		}
		// The route key names a route of the table, and the function that serves it.
		found := false
		for _, r := range api.Routes() {
			found = found || r.Method+" "+r.Path == ev.RouteKey
		}
		if !found {
			t.Errorf("%s: route key %q is not in the route table", name, ev.RouteKey)
		}
		if ev.Body != "" && ev.Headers["content-length"] != "" && ev.Headers["content-length"] != strconv.Itoa(len(ev.Body)) {
			t.Errorf("%s: content-length %s, body has %d bytes", name, ev.Headers["content-length"], len(ev.Body))
		}
		if !bytes.HasSuffix(raw, []byte("\n")) {
			t.Errorf("%s: no final newline", name)
		}
	}
}
