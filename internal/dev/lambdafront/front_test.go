package lambdafront_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/lambdafront"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
)

var echo string // the echo bootstrap (testdata/echo), built once

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "echo")
	if err != nil {
		panic(err)
	}
	echo = filepath.Join(dir, "bootstrap")
	if err := lambdaenv.Build(".", "./testdata/echo", echo); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startFront serves rs through the front, every function being the echo
// bootstrap under its own name.
func startFront(t *testing.T, rs []routes.Route, timeout time.Duration) string {
	t.Helper()
	fns := map[string]lambdafront.Invoker{}
	for _, f := range routes.Functions {
		fn := lambdaenv.NewFunction(lambdaenv.Options{Name: f.Name, Bootstrap: echo, Timeout: testenv.Scaled(10 * time.Second)})
		t.Cleanup(fn.Close)
		fns[f.Name] = fn
	}
	front, err := lambdafront.New(lambdafront.Options{Routes: rs, Functions: fns, IntegrationTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	return srv.URL
}

type echoed struct {
	Function string          `json:"function"`
	Event    json.RawMessage `json:"event"`
}

func send(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// call sends the request and returns the function that answered and the
// event it received.
func call(t *testing.T, req *http.Request) (string, map[string]any) {
	t.Helper()
	res, b := send(t, req)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL, res.StatusCode, b)
	}
	var e echoed
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var ev map[string]any
	if err := json.Unmarshal(e.Event, &ev); err != nil {
		t.Fatal(err)
	}
	return e.Function, ev
}

func request(t *testing.T, method, url string, body []byte) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func field(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %s in %v", strings.Join(path, "."), v)
		}
		v = m[p]
	}
	return v
}

func want(t *testing.T, ev map[string]any, value any, path ...string) {
	t.Helper()
	got := field(t, ev, path...)
	if jsonOf(got) != jsonOf(value) {
		t.Errorf("%s = %s, want %s", strings.Join(path, "."), jsonOf(got), jsonOf(value))
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestARouteOfTheTableReachesItsGroupsFunctionWithTheEventAPIGatewaySends(t *testing.T) {
	base := startFront(t, api.Routes(), 0)
	req := request(t, "PUT", base+"/v1/companies/cmp%2F%C3%A91?a=1&a=2&b=x%20y", []byte(`{"name":"Zoë"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("X-Many", "one")
	req.Header.Add("X-Many", "two")
	req.Header.Set("User-Agent", "front-test/1")
	req.Header.Set("Cookie", "a=1; b=2")
	served, ev := call(t, req)
	if served != lambdas.Companies {
		t.Fatalf("served by %s, want %s", served, lambdas.Companies)
	}
	want(t, ev, "2.0", "version")
	want(t, ev, "PUT /v1/companies/{id}", "routeKey")
	want(t, ev, "/v1/companies/cmp%2F%C3%A91", "rawPath")
	want(t, ev, "a=1&a=2&b=x%20y", "rawQueryString")
	want(t, ev, map[string]string{"id": "cmp/é1"}, "pathParameters")
	want(t, ev, map[string]string{"a": "1,2", "b": "x y"}, "queryStringParameters")
	want(t, ev, []string{"a=1", "b=2"}, "cookies")
	want(t, ev, "one,two", "headers", "x-many")
	want(t, ev, "application/json", "headers", "content-type")
	want(t, ev, "front-test/1", "headers", "user-agent")
	want(t, ev, "15", "headers", "content-length")
	want(t, ev, nil, "headers", "cookie")
	want(t, ev, `{"name":"Zoë"}`, "body")
	want(t, ev, false, "isBase64Encoded")
	want(t, ev, "PUT /v1/companies/{id}", "requestContext", "routeKey")
	want(t, ev, "$default", "requestContext", "stage")
	want(t, ev, "PUT", "requestContext", "http", "method")
	want(t, ev, "/v1/companies/cmp/é1", "requestContext", "http", "path")
	want(t, ev, "HTTP/1.1", "requestContext", "http", "protocol")
	want(t, ev, "127.0.0.1", "requestContext", "http", "sourceIp")
	want(t, ev, "front-test/1", "requestContext", "http", "userAgent")
	for _, k := range []string{"accountId", "apiId", "domainName", "domainPrefix", "requestId", "time"} {
		if s, _ := field(t, ev, "requestContext", k).(string); s == "" {
			t.Errorf("requestContext.%s is empty", k)
		}
	}
	if _, err := time.Parse("02/Jan/2006:15:04:05 -0700", field(t, ev, "requestContext", "time").(string)); err != nil {
		t.Errorf("requestContext.time: %v", err)
	}
	if n, _ := field(t, ev, "requestContext", "timeEpoch").(float64); n < 1e12 {
		t.Errorf("requestContext.timeEpoch %v is not milliseconds since the epoch", n)
	}
	if d := field(t, ev, "requestContext", "domainName").(string); !strings.HasSuffix(d, ".execute-api.us-east-1.amazonaws.com") ||
		!strings.HasPrefix(d, field(t, ev, "requestContext", "domainPrefix").(string)+".") {
		t.Errorf("domainName %q", d)
	}
}

func TestEveryRouteOfTheTableReachesItsOwnGroupsFunction(t *testing.T) {
	base := startFront(t, api.Routes(), 0)
	for _, r := range api.Routes() {
		if r.Function == lambdas.Webhook {
			continue
		}
		path := r.Path
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + "x1" + path[j+1:]
		}
		fn, ev := call(t, request(t, r.Method, base+path, nil))
		if fn != r.Function || field(t, ev, "routeKey") != r.Method+" "+r.Path {
			t.Errorf("%s %s: served by %s as %v, want %s as %q", r.Method, path, fn, field(t, ev, "routeKey"), r.Function, r.Pattern())
		}
	}
}

func TestALiteralSegmentWinsOverAPathParameter(t *testing.T) {
	rs := []routes.Route{
		{Function: lambdas.Companies, Method: "GET", Path: "/v1/things/{id}"},
		{Function: lambdas.Catalog, Method: "GET", Path: "/v1/things/search"},
		{Function: lambdas.CRM, Method: "GET", Path: "/v1/{kind}/search"},
	}
	base := startFront(t, rs, 0)
	for path, wantFn := range map[string]string{"/v1/things/search": lambdas.Catalog, "/v1/things/t1": lambdas.Companies, "/v1/deals/search": lambdas.CRM} {
		if fn, _ := call(t, request(t, "GET", base+path, nil)); fn != wantFn {
			t.Errorf("GET %s served by %s, want %s", path, fn, wantFn)
		}
	}
}

func TestRequestsNoRouteMatchesGoToTheFallbackFunctionAsTheDefaultRoute(t *testing.T) {
	base := startFront(t, api.Routes(), 0)
	var fallback string
	for _, f := range routes.Functions {
		if f.Fallback {
			fallback = f.Name
		}
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/nowhere"},
		{"PATCH", "/v1/companies"},             // a path of the table, not with this method
		{"GET", "/v1/companies/"},              // an empty parameter
		{"GET", "/v1/companies/c1/extra/deep"}, // more segments than any route
	} {
		fn, ev := call(t, request(t, c.method, base+c.path, nil))
		if fn != fallback {
			t.Errorf("%s %s served by %s, want %s", c.method, c.path, fn, fallback)
		}
		want(t, ev, "$default", "routeKey")
		want(t, ev, "$default", "requestContext", "routeKey")
		want(t, ev, nil, "pathParameters")
	}
}

func TestWebhookRequestsReachTheWebhookFunctionAsFunctionURLEventsWithBinaryBodiesInBase64(t *testing.T) {
	base := startFront(t, api.Routes(), 0)
	body := []byte{0, 1, 2, 0xff}
	req := request(t, "POST", base+"/webhooks/workflows/wh_1?x=1", body)
	req.Header.Set("Content-Type", "application/octet-stream")
	served, ev := call(t, req)
	if served != lambdas.Webhook {
		t.Fatalf("served by %s", served)
	}
	want(t, ev, "$default", "routeKey")
	want(t, ev, "/webhooks/workflows/wh_1", "rawPath")
	want(t, ev, nil, "pathParameters")
	want(t, ev, "anonymous", "requestContext", "accountId")
	want(t, ev, true, "isBase64Encoded")
	want(t, ev, base64.StdEncoding.EncodeToString(body), "body")
	if d := field(t, ev, "requestContext", "domainName").(string); !strings.HasSuffix(d, ".lambda-url.us-east-1.on.aws") {
		t.Errorf("domainName %q is not a function URL's", d)
	}
}

func TestAFunctionErrorIsAnInternalServerErrorAndAFunctionURLsIsABadGateway(t *testing.T) {
	base := startFront(t, []routes.Route{{Function: lambdas.Companies, Method: "GET", Path: "/v1/fail"}}, 0)
	res, b := send(t, request(t, "GET", base+"/v1/fail", nil))
	if res.StatusCode != 500 || string(b) != `{"message":"Internal Server Error"}` || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("HTTP API: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	res, b = send(t, request(t, "POST", base+"/webhooks/fail", []byte(`{}`)))
	if res.StatusCode != 502 || string(b) != "Internal Server Error" {
		t.Errorf("function URL: %d %s", res.StatusCode, b)
	}
}

func TestAFunctionSlowerThanTheIntegrationTimeoutIsServiceUnavailable(t *testing.T) {
	timeout := testenv.Scaled(time.Second)
	base := startFront(t, []routes.Route{{Function: lambdas.Companies, Method: "GET", Path: "/v1/sleep"}}, timeout)
	res, b := send(t, request(t, "GET", base+"/v1/sleep?for="+(8*timeout).String(), nil))
	if res.StatusCode != 503 || string(b) != `{"message":"Service Unavailable"}` {
		t.Errorf("%d %s", res.StatusCode, b)
	}
	res, b = send(t, request(t, "GET", base+"/v1/sleep?for=1ms", nil))
	if res.StatusCode != 200 || string(b) != "slept" {
		t.Errorf("a quick answer after a timeout: %d %s", res.StatusCode, b)
	}
}

func TestAnEventOverLambdasSixMegabytesIsRequestEntityTooLarge(t *testing.T) {
	base := startFront(t, api.Routes(), 0)
	for _, body := range [][]byte{
		bytes.Repeat([]byte("a"), lambdafront.MaxInvokePayload),      // text: the event is over 6 MB
		bytes.Repeat([]byte{0xff}, lambdafront.MaxInvokePayload*3/4), // binary: over 6 MB once in base64
		bytes.Repeat([]byte("a"), lambdafront.MaxBody+1),             // over API Gateway's 10 MB
	} {
		req := request(t, "POST", base+"/v1/companies", body)
		req.Header.Set("Content-Type", "text/plain")
		res, b := send(t, req)
		if res.StatusCode != 413 || string(b) != `{"message":"Request Entity Too Large"}` {
			t.Errorf("%d bytes: %d %s", len(body), res.StatusCode, b)
		}
	}
	// Just under the limit goes through.
	req := request(t, "POST", base+"/v1/companies", bytes.Repeat([]byte("a"), lambdafront.MaxInvokePayload-64<<10))
	req.Header.Set("Content-Type", "text/plain")
	if res, _ := send(t, req); res.StatusCode != 200 {
		t.Errorf("an event under 6 MB: %d", res.StatusCode)
	}
}

func TestTheFunctionsResponseIsMappedBackWithItsHeadersCookiesAndBinaryBody(t *testing.T) {
	base := startFront(t, []routes.Route{{Function: lambdas.Companies, Method: "GET", Path: "/v1/shaped"}, {Function: lambdas.Companies, Method: "GET", Path: "/v1/bare"}}, 0)
	res, b := send(t, request(t, "GET", base+"/v1/shaped", nil))
	if res.StatusCode != 201 || !bytes.Equal(b, []byte{0, 1, 2, 0xff}) {
		t.Errorf("%d %v", res.StatusCode, b)
	}
	if res.Header.Get("Content-Type") != "application/octet-stream" || res.Header.Get("X-One") != "1" ||
		strings.Join(res.Header.Values("X-Many"), "|") != "a|b" || strings.Join(res.Header.Values("Set-Cookie"), "|") != "a=1; Path=/|b=2" {
		t.Errorf("headers %v", res.Header)
	}
	if res.Header.Get("Apigw-Requestid") == "" {
		t.Errorf("no apigw-requestid header")
	}
	res, b = send(t, request(t, "GET", base+"/v1/bare", nil))
	if res.StatusCode != 200 || string(b) != `{"hello":"world"}` || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("a response without statusCode: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
}

func TestTheFrontRefusesARouteTableWithoutTheFunctionsItNeeds(t *testing.T) {
	_, err := lambdafront.New(lambdafront.Options{Routes: api.Routes(), Functions: map[string]lambdafront.Invoker{}})
	if err == nil {
		t.Fatal("no error")
	}
}
