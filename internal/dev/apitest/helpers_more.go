package apitest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/serve/eventfns"
	"github.com/sourcebase/sourcebase/internal/store"
)

// ListBudget is the documented byte budget of one list response body.
const ListBudget = 5_000_000

// nextLink is a Link header naming the next page.
var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// Walk pages a list from path by following its Link header until a page
// has none. It checks on every page that the body is within the budget
// (ListBudget) and that X-Next-Cursor is the Link's cursor, and returns
// the values of idField in order and the number of pages.
func Walk(t testing.TB, c *Client, path string, idField string) (ids []string, pages int) {
	t.Helper()
	for path != "" {
		pages++
		if pages > 1000 {
			t.Fatalf("paging %s did not end", path)
		}
		r := c.Do("GET", path, nil).Want(t, 200)
		if len(r.Body) >= ListBudget {
			t.Errorf("GET %s: body is %d bytes, over the %d-byte budget", path, len(r.Body), ListBudget)
		}
		for _, rec := range r.List(t) {
			id, _ := rec[idField].(string)
			ids = append(ids, id)
		}
		path = ""
		link, cursor := r.Header.Get("Link"), r.Header.Get("X-Next-Cursor")
		if link == "" && cursor == "" {
			break
		}
		m := nextLink.FindStringSubmatch(link)
		if m == nil {
			t.Fatalf("Link = %q, want <url>; rel=\"next\"", link)
		}
		u, err := url.Parse(m[1])
		if err != nil {
			t.Fatalf("Link url %q: %v", m[1], err)
		}
		if got := u.Query().Get("cursor"); got != cursor || cursor == "" {
			t.Fatalf("Link cursor %q and X-Next-Cursor %q differ", got, cursor)
		}
		if u.Query().Has("page") {
			t.Errorf("Link url %q keeps page", m[1])
		}
		path = m[1]
	}
	return ids, pages
}

// CreateWorkflow posts body to /v1/workflows and returns the created
// workflow.
func CreateWorkflow(t testing.TB, c *Client, body any) map[string]any {
	t.Helper()
	return c.Do(http.MethodPost, "/v1/workflows", body).Want(t, http.StatusCreated).Object(t)
}

// StartRun starts a run of the workflow with body and returns the
// accepted run.
func StartRun(t testing.TB, c *Client, workflowID string, body any) map[string]any {
	t.Helper()
	return c.Do(http.MethodPost, "/v1/workflows/"+workflowID+"/runs", body).Want(t, http.StatusAccepted).Object(t)
}

// PollRun reads the run until it has finished or within is over; it
// returns the last record read and whether the run had finished. This is
// waiting for asynchronous work, not a timing assertion.
func PollRun(t testing.TB, c *Client, id string, within time.Duration) (map[string]any, bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		run := c.Do(http.MethodGet, "/v1/workflow-runs/"+id, nil).Want(t, http.StatusOK).Object(t)
		if s := run["status"]; s == "completed" || s == "failed" {
			return run, true
		}
		if time.Now().After(deadline) {
			return run, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// AwaitRun waits (generously) for the run to finish and returns it.
func AwaitRun(t testing.TB, c *Client, id string) map[string]any {
	t.Helper()
	within := testenv.Scaled(30 * time.Second)
	run, done := PollRun(t, c, id, within)
	if !done {
		t.Fatalf("run %s has not finished after %s: %s", id, within, JSONOf(run))
	}
	return run
}

// NotFound fails unless r is the exact 404 body.
func NotFound(t testing.TB, r *Response) {
	t.Helper()
	r.Want(t, http.StatusNotFound)
	WantExactBody(t, r, `{"error":"not found"}`)
}

// WantStatus fails unless the run has the status.
func WantStatus(t testing.TB, run map[string]any, status string) {
	t.Helper()
	if run["status"] != status {
		t.Fatalf("run status %v, want %s: %s", run["status"], status, JSONOf(run))
	}
}

// ETagOf returns the response's ETag, failing when it has none.
func ETagOf(t testing.TB, r *Response) string {
	t.Helper()
	tag := r.Header.Get("ETag")
	if tag == "" || tag[0] != '"' {
		t.Fatalf("no strong ETag on %d response: %q", r.Status, tag)
	}
	return tag
}

// DynamoError answers like DynamoDB with status and an error type.
func DynamoError(status int, typ string) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		body := `{"__type":"com.amazonaws.dynamodb.v20120810#` + typ + `","message":"injected fault"}`
		return &http.Response{
			StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
			Body:    io.NopCloser(strings.NewReader(body)),
			Request: r,
		}, nil
	}
}

// BigText is a text of n characters that takes about 5n bytes in a
// Lambda response: every other character a quote, escaped in the stored
// JSON and again in the response payload.
func BigText(n int) string { return strings.Repeat(`x"`, n/2) }

// WithinBudget fails unless r's body fits the response budget as Lambda
// carries it.
func WithinBudget(t testing.TB, what string, r *Response) {
	t.Helper()
	if n := store.WireSize(r.Body); n > httpapi.ListBudget {
		t.Errorf("%s answers %d bytes, more than the budget of %d", what, n, httpapi.ListBudget)
	}
}

// AddCandidates posts n description candidates of about 19 KB each to a
// company, 50 a request, with confidence i % 101.
func AddCandidates(t testing.TB, c *Client, company string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for from := 0; from < n; from += 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var values []any
			for i := from; i < min(from+50, n); i++ {
				values = append(values, map[string]any{"property": "description", "value": BigText(12_600), "source": "provider",
					"provider": "bulk", "confidence": i % 101})
			}
			c.Do(http.MethodPost, "/v1/enrichments/resources/companies/"+company, map[string]any{"values": values}).Want(t, http.StatusCreated)
		}()
	}
	wg.Wait()
}

// Num reads a decoded JSON number (or anything printed as one) as a
// float64; 0 when it is none.
func Num(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	}
	var f float64
	fmt.Sscan(fmt.Sprint(v), &f)
	return f
}

// Companies lists the organization's companies (the first page).
func Companies(t testing.TB, c *Client) []map[string]any {
	t.Helper()
	return c.Do(http.MethodGet, "/v1/companies", nil).Want(t, http.StatusOK).List(t)
}

// Upload PUTs body to an import's uploadUrl, as a client would.
func Upload(t testing.TB, url string, body io.Reader) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("upload answered %d %s", res.StatusCode, b)
	}
}

// WaitJob reads the bulk job at path until it ended.
func WaitJob(t testing.TB, c *Client, path string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(testenv.Scaled(3 * time.Minute))
	for {
		j := c.Do(http.MethodGet, path, nil).Want(t, http.StatusOK).Object(t)
		if j["status"] == jobs.StatusCompleted || j["status"] == jobs.StatusFailed {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not end: %s", path, JSONOf(j))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RunImport creates an import with body, uploads file and waits for its
// end.
func RunImport(t testing.TB, c *Client, body map[string]any, file []byte) map[string]any {
	t.Helper()
	created := c.Do(http.MethodPost, "/v1/imports", body).Want(t, http.StatusCreated).Object(t)
	if created["status"] != jobs.StatusAwaitingUpload || created["uploadUrl"] == nil {
		t.Fatalf("created import %s", JSONOf(created))
	}
	Upload(t, created["uploadUrl"].(string), bytes.NewReader(file))
	return WaitJob(t, c, "/v1/imports/"+IDOf(t, created))
}

// CompanyCSV is a CSV of n companies, with the header a CRM export
// might have; bad lists rows (from 1) whose website is not one.
func CompanyCSV(n int, bad ...int) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"Name", "website", "tags", "location.city", "externalId"})
	for i := 1; i <= n; i++ {
		site := fmt.Sprintf("https://c%d.example.com", i)
		for _, x := range bad {
			if x == i {
				site = "not a website"
			}
		}
		w.Write([]string{fmt.Sprintf("Company %d, Inc.", i), site, "ai; robotics", "Paris", fmt.Sprint("ext-", i)})
	}
	w.Flush()
	return b.Bytes()
}

// ImportMapping maps CompanyCSV's Name column to canonicalName.
func ImportMapping() map[string]any { return map[string]any{"Name": "canonicalName"} }

// Step builds a workflow step.
func Step(id, typ string, with map[string]any) map[string]any {
	return map[string]any{"id": id, "type": typ, "with": with}
}

// UpsertStep is a step that upserts a company, mapping each field from the
// same field of the run input.
func UpsertStep(fields ...string) map[string]any {
	with := map[string]any{}
	for _, f := range fields {
		with[f+".$"] = "$.input." + f
	}
	return Step("up", "upsertCompany", with)
}

// WorkflowWith creates a workflow with steps and returns its id.
func WorkflowWith(t testing.TB, c *Client, name string, steps ...map[string]any) string {
	t.Helper()
	list := make([]any, len(steps))
	for i, s := range steps {
		list[i] = s
	}
	return IDOf(t, CreateWorkflow(t, c, map[string]any{"name": name, "steps": list}))
}

// RunToEnd starts a run of the workflow and waits until it has finished.
func RunToEnd(t testing.TB, c *Client, workflowID string, body any) map[string]any {
	t.Helper()
	return AwaitRun(t, c, IDOf(t, StartRun(t, c, workflowID, body)))
}

// RunsOf lists the runs of a workflow.
func RunsOf(t testing.TB, c *Client, workflowID string) []map[string]any {
	t.Helper()
	return c.Do("GET", "/v1/workflows/"+workflowID+"/runs", nil).Want(t, 200).List(t)
}

// ObjectAt walks a decoded JSON value along keys to the object there.
func ObjectAt(t testing.TB, v any, keys ...string) map[string]any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no object at %q in %s", k, JSONOf(v))
		}
		v = m[k]
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is not an object: %s", strings.Join(keys, "."), JSONOf(v))
	}
	return m
}

// RunFields are the fields of a run record a request started.
var RunFields = []string{"id", "workflowId", "status", "title", "input", "output", "error", "dryRun", "retryOf",
	"retriedBy", "startedBy", "requestId", "createdAt", "startedAt", "completedAt"}

// WantKeys fails unless rec has exactly the keys want.
func WantKeys(t testing.TB, what string, rec map[string]any, want []string) {
	t.Helper()
	got := make([]string, 0, len(rec))
	for k := range rec {
		got = append(got, k)
	}
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Errorf("%s has fields %v, want exactly %v: %s", what, got, w, JSONOf(rec))
	}
}

// WebhookOf returns the webhook trigger object of a workflow record.
func WebhookOf(t testing.TB, wf map[string]any) map[string]any {
	t.Helper()
	trig, ok := wf["trigger"].(map[string]any)
	if !ok {
		t.Fatalf("workflow has no trigger object: %s", JSONOf(wf))
	}
	return trig
}

// SlugAndSecret returns the slug and the secret of a create (or rotate)
// response's trigger.
func SlugAndSecret(t testing.TB, trig map[string]any) (string, string) {
	t.Helper()
	slug, _ := trig["slug"].(string)
	secret, _ := trig["secret"].(string)
	if slug == "" || secret == "" {
		t.Fatalf("trigger lacks slug or secret: %s", JSONOf(trig))
	}
	return slug, secret
}

// Hook is a workflow with a webhook trigger, as its sender knows it.
type Hook struct {
	WorkflowID, Slug, Secret string
}

// NewHook creates a workflow with steps and, when trigger is not nil,
// then configures its trigger with a PUT (as a user would).
func NewHook(t testing.TB, c *Client, trigger map[string]any, steps ...map[string]any) Hook {
	t.Helper()
	list := make([]any, len(steps))
	for i, s := range steps {
		list[i] = s
	}
	wf := CreateWorkflow(t, c, map[string]any{"name": "Hook " + t.Name(), "steps": list})
	slug, secret := SlugAndSecret(t, WebhookOf(t, wf))
	h := Hook{WorkflowID: IDOf(t, wf), Slug: slug, Secret: secret}
	if trigger != nil {
		c.Do("PUT", "/v1/workflows/"+h.WorkflowID, map[string]any{"trigger": trigger}).Want(t, 200)
	}
	return h
}

// Deliver posts body to the webhook URL of the trigger slug (with query,
// "" or "?…") with no API key.
func Deliver(t testing.TB, e *Env, slug, query string, body any, headers ...string) *Response {
	t.Helper()
	return e.Anonymous(t).Do("POST", "/webhooks/workflows/"+slug+query, body, headers...)
}

// HMACHex is HMAC-SHA256(secret, body) in hex, computed here rather than
// with package inbound so that tests do not check the code against itself.
func HMACHex(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// WantInvalidSignature fails unless r is the exact 401 of a refused webhook.
func WantInvalidSignature(t testing.TB, r *Response) {
	t.Helper()
	r.Want(t, 401)
	WantExactBody(t, r, `{"error":"invalid signature"}`)
}

// WantAccepted checks a 202 webhook answer: the new run, listed under its
// workflow, which then completes. It returns the finished run.
func WantAccepted(t testing.TB, c *Client, h Hook, r *Response) map[string]any {
	t.Helper()
	run := r.Want(t, 202).Object(t)
	WantKeys(t, "webhook run", run, RunFields)
	if run["workflowId"] != h.WorkflowID || run["startedBy"] != "webhook" || run["status"] != "queued" || run["dryRun"] != false {
		t.Errorf("webhook answered %s, want a queued webhook run of %s", JSONOf(run), h.WorkflowID)
	}
	if got := IDsOf(t, RunsOf(t, c, h.WorkflowID)); len(got) != 1 || got[0] != IDOf(t, run) {
		t.Errorf("runs of the workflow %v, want just %s", got, IDOf(t, run))
	}
	done := AwaitRun(t, c, IDOf(t, run))
	WantStatus(t, done, "completed")
	return done
}

// Contains reports whether got holds everything of want: objects by key
// (extra keys allowed), arrays element by element (same length), "<any>"
// matching any value and "abc<any>" any string starting with "abc".
func Contains(got, want any) bool {
	switch w := want.(type) {
	case string:
		if w == "<any>" {
			return got != nil
		}
		if prefix, ok := strings.CutSuffix(w, "<any>"); ok {
			g, isString := got.(string)
			return isString && strings.HasPrefix(g, prefix)
		}
		return got == w
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !Contains(g[k], wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !Contains(g[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return JSONOf(got) == JSONOf(want)
	}
}

// Bounded sends a request as c with a client that gives up after 25 s, so
// a hanging server fails the test instead of stalling it.
func Bounded(t testing.TB, c *Client, method, path string, body any) *Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.ClientID != "" {
		req.Header.Set("X-Service-Client-Id", c.ClientID)
		req.Header.Set("X-Service-Api-Key", c.Secret)
	}
	res, err := (&http.Client{Timeout: testenv.Scaled(25 * time.Second)}).Do(req)
	if err != nil {
		t.Fatalf("%s %s got no answer: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// WantUnavailable fails unless r is a 503 JSON error with Retry-After.
func WantUnavailable(t testing.TB, r *Response) {
	t.Helper()
	WantError(t, r, 503, "temporarily unavailable", "try again")
	if ra := r.Header.Get("Retry-After"); ra == "" || strings.Trim(ra, "0123456789") != "" {
		t.Errorf("Retry-After %q, want a number of seconds", ra)
	}
}

// EventsEnv is an in-process service whose change history runs: the
// table's stream read by the events code, deliveries queued in process.
func EventsEnv(t testing.TB) (*Env, *eventfns.LocalEvents) {
	t.Helper()
	e := NewWith(t, Options{})
	return e, e.StartEvents(t)
}

// Caught waits until every change written so far is in the history.
func Caught(t testing.TB, evs *eventfns.LocalEvents) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(30*time.Second))
	defer cancel()
	if err := evs.Caught(ctx); err != nil {
		t.Fatalf("the events code did not catch up with the stream: %v", err)
	}
}

// AllEvents reads every page of GET /v1/events with query q.
func AllEvents(t testing.TB, c *Client, q string) []map[string]any {
	t.Helper()
	var out []map[string]any
	path := "/v1/events?limit=100"
	if q != "" {
		path += "&" + q
	}
	for range 1000 {
		r := c.Do("GET", path, nil).Want(t, 200)
		out = append(out, r.List(t)...)
		next := r.Header.Get("X-Next-Cursor")
		if next == "" {
			return out
		}
		path = "/v1/events?limit=100&cursor=" + url.QueryEscape(next)
		if q != "" {
			path += "&" + q
		}
	}
	t.Fatal("GET /v1/events did not end after 1000 pages")
	return nil
}

// EventTypes are the types of the events, in order.
func EventTypes(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e["type"].(string))
	}
	return out
}

// ActorOf is an event's actor.
func ActorOf(ev map[string]any) map[string]any {
	a, _ := ev["actor"].(map[string]any)
	return a
}

// ViaOf is what an event's actor wrote through, nil for a direct write.
func ViaOf(ev map[string]any) map[string]any {
	v, _ := ActorOf(ev)["via"].(map[string]any)
	return v
}

// WantActor fails unless every event is the actor typ:id's, through via
// (nil: a direct write, which has no via at all).
func WantActor(t testing.TB, what string, evs []map[string]any, typ, id string, via map[string]any) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("%s: no events", what)
	}
	for _, ev := range evs {
		a := ActorOf(ev)
		_, hasVia := a["via"]
		switch {
		case a["type"] != typ || a["id"] != id:
			t.Errorf("%s: %s's actor is %s, want %s:%s", what, ev["type"], JSONOf(a), typ, id)
		case via == nil && hasVia:
			t.Errorf("%s: %s's actor %s has a via; a direct write has none", what, ev["type"], JSONOf(a))
		case via != nil && JSONOf(ViaOf(ev)) != JSONOf(via):
			t.Errorf("%s: %s's actor is %s, want via %s", what, ev["type"], JSONOf(a), JSONOf(via))
		}
	}
}

// Receiver is a webhook endpoint of the tests: it records every request
// and answers as its answer function says (nil: 204).
type Receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []Received
	answer func(n int, w http.ResponseWriter) // n: this request's number, from 1
}

// Received is one request a Receiver had.
type Received struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// NewReceiver starts a Receiver until the test ends; answer (nil: 204)
// answers its n-th request.
func NewReceiver(t testing.TB, answer func(n int, w http.ResponseWriter)) *Receiver {
	rv := &Receiver{answer: answer}
	rv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rv.mu.Lock()
		rv.got = append(rv.got, Received{r.Header.Clone(), b, time.Now()})
		n := len(rv.got)
		rv.mu.Unlock()
		if rv.answer != nil {
			rv.answer(n, w)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rv.Close)
	return rv
}

// All is every request the receiver has had so far.
func (rv *Receiver) All() []Received {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return slices.Clone(rv.got)
}

// Wait waits until the receiver has had at least n requests.
func (rv *Receiver) Wait(t testing.TB, n int) []Received {
	t.Helper()
	WaitFor(t, fmt.Sprintf("%d webhook requests", n), func() bool { return len(rv.All()) >= n })
	return rv.All()
}

// WaitFor polls cond until it holds, failing the test after a deadline
// scaled to the machine's load.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scaled(60 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
