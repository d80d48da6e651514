package apitest

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jobs"
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
