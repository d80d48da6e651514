package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api/mcpapi"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
)

// notWalked are the codes no request of TestEveryErrorAnswerCarriesTheCodeOfItsSituation
// makes, and why; each is answered by the shared writer, whose mapping
// internal/httpapi's and internal/apperr's tests check.
var notWalked = map[apperr.Code]string{
	apperr.CodeIdempotencyInProgress: "a second request must find the first still running after waiting 10 s for it",
	apperr.CodeUpstreamFailed:        "only the REST call of an MCP tool's search answers it, in process, when the search function is down",
	apperr.CodeOrganizationSuspended: "only an operator's suspend-org makes it: internal/admin's tests walk it over HTTP (a key's and a trigger's)",
	apperr.CodeSemanticOff:           "only a deployment without an embedding model answers it: recordsapi's TestSimilarRecordsAnswer501WithoutAnEmbeddingModel walks it over HTTP",
}

// codeWalk collects the codes a walk saw.
type codeWalk struct {
	mu   sync.Mutex
	seen map[apperr.Code]bool
}

// check fails unless r is the error answer of a situation: status, code,
// param ("" when none is at fault), and a body that is the service's
// {"error": ...} (or, for rpc, a JSON-RPC error).
func (w *codeWalk) check(t *testing.T, r *apitest.Response, status int, code apperr.Code, param string, rpc bool) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if got := r.Header.Values("X-Error-Code"); len(got) != 1 || got[0] != string(code) {
		t.Errorf("X-Error-Code %q, want %q (body %s)", got, code, r.Body)
	}
	if got := r.Header.Values("X-Error-Param"); param == "" && len(got) != 0 || param != "" && (len(got) != 1 || got[0] != param) {
		t.Errorf("X-Error-Param %q, want %q (body %s)", got, param, r.Body)
	}
	if err := apitest.ErrorCode(r.Status, r.Header); err != nil {
		t.Error(err)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("not JSON: %s", r.Body)
	}
	if rpc {
		if e, ok := body["error"].(map[string]any); !ok || body["jsonrpc"] != "2.0" || e["message"] == "" {
			t.Errorf("not a JSON-RPC error: %s", r.Body)
		}
	} else if msg, ok := body["error"].(string); !ok || msg == "" || len(body) != 1 {
		t.Errorf("not the service's {\"error\": ...} body: %s", r.Body)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen[code] = true
}

// TestEveryErrorAnswerCarriesTheCodeOfItsSituation walks the situations
// of docs/errors.md over HTTP: each error answer carries the X-Error-Code
// of its situation (one of apperr.Codes, of its status) and X-Error-Param
// when one field is at fault, with the body unchanged. Every code of the
// set is walked, or named in notWalked. (Every other call of the HTTP
// suites is checked too: apitest's contract check wants a code of the
// status on every error answer.)
func TestEveryErrorAnswerCarriesTheCodeOfItsSituation(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c, anon := e.Org(t), e.Anonymous(t)
	member := e.Key(t, c.Org, "member")
	wrong := e.Org(t)
	wrong.Secret = "sk_not-the-secret"
	company := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme", "externalId": "crm-7"}))
	etag := c.Do("GET", "/v1/companies/"+company, nil).Want(t, 200).Header.Get("ETag")
	run := apitest.IDOf(t, apitest.RunToEnd(t, c, apitest.WorkflowWith(t, c, "Completes"), nil))
	industry := apitest.IDOf(t, c.Do("POST", "/v1/industries", map[string]any{"name": "Tech"}).Want(t, 201).Object(t))
	c.Do("POST", "/v1/sectors", map[string]any{"industryId": industry, "name": "Software",
		"externalReference": map[string]any{"source": "crm", "id": "1"}}).Want(t, 201)
	c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Keyed"}, "Idempotency-Key", "walk-1").Want(t, 201)
	batch := make([]any, mcpapi.MaxBatch+1)
	for i := range batch {
		batch[i] = listTools(i)
	}
	huge := overTheItemLimit()
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	mcpAccept := []string{"Accept", "application/json, text/event-stream"}

	walk := &codeWalk{seen: map[apperr.Code]bool{}}
	for _, s := range []struct {
		name         string
		who          *apitest.Client
		method, path string
		body         any
		headers      []string
		status       int
		code         apperr.Code
		param        string
		rpc          bool
	}{
		{"a field of the wrong type", c, "POST", "/v1/companies", map[string]any{"canonicalName": 12}, nil, 400, apperr.CodeInvalidBody, "canonicalName", false},
		{"an unknown field", c, "POST", "/v1/companies", map[string]any{"canonicalName": "A", "employees": 12}, nil, 400, apperr.CodeInvalidBody, "employees", false},
		{"a required field missing", c, "POST", "/v1/companies", map[string]any{"website": "acme.com"}, nil, 400, apperr.CodeInvalidBody, "canonicalName", false},
		{"a nested number beyond 2^53", c, "POST", "/v1/companies", `{"canonicalName":"A","custom":{"crm":{"id":12345678901234567890}}}`, nil, 400, apperr.CodeInvalidBody, "custom.crm.id", false},
		{"a client's own key, percent-encoded", c, "POST", "/v1/companies", `{"canonicalName":"A","custom":{"café 100%":1e400}}`, nil, 400, apperr.CodeInvalidBody, "custom.caf%C3%A9 100%25", false},
		{"a body that is not JSON", c, "POST", "/v1/companies", `{"canonicalName":`, nil, 400, apperr.CodeInvalidBody, "", false},
		{"an unknown query parameter", c, "GET", "/v1/companies?colour=blue", nil, nil, 400, apperr.CodeInvalidQuery, "colour", false},
		{"a page out of range", c, "GET", "/v1/companies?page=0", nil, nil, 400, apperr.CodeInvalidQuery, "page", false},
		{"a direction other than asc or desc", c, "GET", "/v1/companies?direction=up", nil, nil, 400, apperr.CodeInvalidQuery, "direction", false},
		{"an empty id of a multi-get", c, "GET", "/v1/documents/ids=a,,b", nil, nil, 400, apperr.CodeInvalidPath, "ids", false},
		{"an Idempotency-Key too long", c, "POST", "/v1/companies", map[string]any{"canonicalName": "A"}, []string{"Idempotency-Key", strings.Repeat("k", 256)}, 400, apperr.CodeInvalidHeader, "Idempotency-Key", false},
		{"an MCP batch of 11", c, "POST", "/mcp", batch, append(mcpAccept, oldProtocol...), 400, apperr.CodeBatchTooLarge, "", true},
		{"an MCP client that does not take an event stream", c, "POST", "/mcp", list, []string{"Accept", "application/json"}, 400, apperr.CodeInvalidRequest, "", false},
		{"no credentials", anon, "GET", "/v1/companies", nil, nil, 401, apperr.CodeUnauthenticated, "", false},
		{"a wrong secret", wrong, "GET", "/v1/companies/" + company, nil, nil, 401, apperr.CodeUnauthenticated, "", false},
		{"no credentials on an unknown /v1 path", anon, "GET", "/v1/nothing", nil, nil, 401, apperr.CodeUnauthenticated, "", false},
		{"no credentials on /mcp", anon, "POST", "/mcp", list, mcpAccept, 401, apperr.CodeUnauthenticated, "", false},
		{"a webhook slug that leads to no trigger", anon, "POST", "/webhooks/workflows/no-such-slug", `{}`, nil, 401, apperr.CodeInvalidSignature, "", false},
		{"a member key managing keys", member, "GET", "/v1/keys", nil, nil, 403, apperr.CodeForbidden, "", false},
		{"a missing record", c, "GET", "/v1/companies/cmp_missing", nil, nil, 404, apperr.CodeNotFound, "", false},
		{"another organization's record", e.Org(t), "GET", "/v1/companies/" + company, nil, nil, 404, apperr.CodeNotFound, "", false},
		{"a path parameter longer than any id", c, "DELETE", "/v1/companies/" + strings.Repeat("a", 1100), nil, nil, 404, apperr.CodeNotFound, "", false},
		{"an unknown path", c, "GET", "/v1/nothing", nil, nil, 404, apperr.CodeNoSuchEndpoint, "", false},
		{"an unknown path outside /v1", anon, "GET", "/nothing", nil, nil, 404, apperr.CodeNoSuchEndpoint, "", false},
		{"an unclean path", c, "GET", "/v1/companies/", nil, nil, 404, apperr.CodeNoSuchEndpoint, "", false},
		{"a known path with another method", c, "PATCH", "/v1/companies", nil, nil, 405, apperr.CodeMethodNotAllowed, "", false},
		{"a public path with another method", anon, "POST", "/healthz", nil, nil, 405, apperr.CodeMethodNotAllowed, "", false},
		{"retrying a run that did not fail", c, "POST", "/v1/workflow-runs/" + run + "/retry", nil, nil, 409, apperr.CodeConflict, "", false},
		{"revoking the last admin key", c, "DELETE", "/v1/keys/" + c.ClientID, nil, nil, 409, apperr.CodeConflict, "", false},
		{"a unique value taken", c, "POST", "/v1/companies", map[string]any{"canonicalName": "Other", "externalId": "crm-7"}, nil, 409, apperr.CodeUniqueViolation, "externalId", false},
		{"deleting a referenced record", c, "DELETE", "/v1/industries/" + industry, nil, nil, 409, apperr.CodeReferenced, "", false},
		{"If-Match naming another version", c, "PUT", "/v1/companies/" + company, map[string]any{"description": "x"}, []string{"If-Match", `"999"`}, 412, apperr.CodePreconditionFailed, "", false},
		{"a body over 1 MiB", c, "POST", "/v1/companies", `{"canonicalName":"A","description":"` + strings.Repeat("x", 1<<20) + `"}`, nil, 413, apperr.CodePayloadTooLarge, "", false},
		{"a record over the storage's item limit", c, "POST", "/v1/workflows", huge, nil, 413, apperr.CodeRecordTooLarge, "", false},
		{"an MCP body that is not JSON", c, "POST", "/mcp", list, append([]string{"Content-Type", "text/plain"}, mcpAccept...), 415, apperr.CodeUnsupportedMediaType, "", false},
		{"an Idempotency-Key reused with another body", c, "POST", "/v1/companies", map[string]any{"canonicalName": "Other"}, []string{"Idempotency-Key", "walk-1"}, 422, apperr.CodeIdempotencyKeyReused, "", false},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			walk.check(t, e.As(t, s.who).Do(s.method, s.path, s.body, s.headers...), s.status, s.code, s.param, s.rpc)
		})
	}
	t.Run("the 401 body stays exactly the spec's", func(t *testing.T) {
		t.Parallel()
		apitest.WantExactBody(t, anon.Do("GET", "/v1/companies", nil), `{"error":"invalid api key or clientId"}`)
	})
	t.Run("a replayed error answer keeps its code", func(t *testing.T) {
		t.Parallel()
		body := map[string]any{"canonicalName": "Again", "externalId": "crm-7"}
		first := c.Do("POST", "/v1/companies", body, "Idempotency-Key", "walk-2")
		walk.check(t, first, 409, apperr.CodeUniqueViolation, "externalId", false)
		again := c.Do("POST", "/v1/companies", body, "Idempotency-Key", "walk-2")
		if again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("not a replay: %v", again.Header)
		}
		walk.check(t, again, 409, apperr.CodeUniqueViolation, "externalId", false)
	})
	t.Run("a success carries no code", func(t *testing.T) {
		t.Parallel()
		r := c.Do("GET", "/v1/companies/"+company, nil, "If-Match", etag).Want(t, 200)
		if r.Header.Get("X-Error-Code") != "" || r.Header.Get("X-Error-Param") != "" {
			t.Errorf("a 200 carries %v", r.Header)
		}
	})
	t.Run("in process", func(t *testing.T) {
		t.Parallel()
		walkInProcess(t, walk)
	})
	t.Cleanup(func() {
		if t.Failed() || apitest.Lambdas() {
			return // the in-process situations did not run
		}
		for _, info := range apperr.Codes {
			why, excused := notWalked[info.Code]
			switch {
			case !walk.seen[info.Code] && !excused:
				t.Errorf("no situation of the walk answers %s: add one, or say in notWalked why none can", info.Code)
			case walk.seen[info.Code] && excused:
				t.Errorf("%s is walked, but notWalked says %q", info.Code, why)
			}
		}
	})
}

// walkInProcess walks the situations only an in-process service can make:
// a rate limit of 1, and a table that fails.
func walkInProcess(t *testing.T, walk *codeWalk) {
	apitest.InProcessOnly(t, "it sets the rate limits and the table's answers")
	t.Run("over the rate limit", func(t *testing.T) {
		t.Parallel()
		e, _ := apitest.Limited(t)
		c := e.Org(t)
		apitest.SetLimits(t, e, c.Org, ratelimit.Limits{KeyPerMinute: 1, WebhookPerMinute: 10})
		c.Do("GET", "/v1/companies", nil).Want(t, 200)
		walk.check(t, c.Do("GET", "/v1/companies", nil), 429, apperr.CodeRateLimited, "", false)
	})
	for _, s := range []struct {
		name   string
		target string // the table operation that fails ("" any)
		answer func(*http.Request) (*http.Response, error)
		method string
		body   any
		status int
		code   apperr.Code
	}{
		{"a throttled table", "", apitest.DynamoError(400, "ThrottlingException"), "GET", nil, 503, apperr.CodeUnavailable},
		{"a table refusing the call", "", apitest.DynamoError(400, "ValidationException"), "GET", nil, 500, apperr.CodeInternal},
		// A company's create is a plain write (its feed entry goes ahead):
		// DynamoDB refuses it while a transaction holds the item.
		{"a write that raced another", "DynamoDB_20120810.PutItem", transactionConflict, "POST", map[string]any{"canonicalName": "Raced"}, 409, apperr.CodeConcurrentWrite},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			e, f := faultEnv(t, false)
			c := e.Org(t)
			c.Do("GET", "/v1/companies", nil).Want(t, 200) // the key is now cached
			f.answer = func(r *http.Request) (*http.Response, error) {
				if s.target != "" && r.Header.Get("X-Amz-Target") != s.target {
					return http.DefaultTransport.RoundTrip(r)
				}
				return s.answer(r)
			}
			f.armed.Store(true)
			r := c.Do(s.method, "/v1/companies", s.body)
			f.armed.Store(false)
			walk.check(t, r, s.status, s.code, "", false)
		})
	}
}

// transactionConflict answers a plain write as DynamoDB does when a
// transaction holds its item.
func transactionConflict(r *http.Request) (*http.Response, error) {
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionConflictException",` +
		`"message":"Operation was rejected because there is an ongoing transaction for the item."}`
	return &http.Response{
		StatusCode: 400, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: r,
	}, nil
}
