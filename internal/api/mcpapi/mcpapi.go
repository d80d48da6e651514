// Package mcpapi serves the Model Context Protocol endpoint (POST /mcp):
// the MCP server (package mcpserver) over the whole API in process, its
// messages counted against the caller's key, each answered within its
// share of the byte budget; a function without a search engine or bulk
// jobs sends those tools' REST calls to the HTTP API (searchproxy.go).
package mcpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/usage"
)

// Deps are what the MCP endpoint is served over.
type Deps struct {
	// Tools is what the tools call: the whole API, in process; made on
	// the first message.
	Tools func() http.Handler
	// OpenAPI is the document the tools are read from.
	OpenAPI func() ([]byte, error)
	// Offer are the registry's tools, in order, and the kinds they read.
	Offer routes.MCP
	// Routes is the route table (which routes the search function serves).
	Routes []routes.Route
	// Remote are the routes (patterns) whose calls go to the HTTP API:
	// those of a service this function does not have.
	Remote map[string]bool
	// NewMCP makes the MCP server over the tools' handler, the
	// authenticator, the document and the offer (package mcpserver); nil
	// in a function that does not serve /mcp, where the path is no
	// endpoint.
	NewMCP func(api http.Handler, a *auth.Authenticator, openAPI []byte, offer routes.MCP) (http.Handler, error)
	Auth   *auth.Authenticator
	// Limits counts each message against the key; nil: no limits.
	Limits *ratelimit.Limiter
	// Usage counts each message and what it spent toward the
	// organization's usage; nil counts nothing.
	Usage *usage.Recorder
	// SearchBaseURL is where the remote routes go: the HTTP API's base
	// URL; "" means the address the MCP request came to.
	SearchBaseURL string
}

// API serves POST /mcp.
type API struct {
	d Deps

	mcpOnce sync.Once
	mcp     http.Handler
	mcpErr  error
	// mcpRemote are the routes ("POST /v1/companies/search") whose REST
	// calls the MCP tools send to the HTTP API (Deps.Remote).
	mcpRemote map[string]bool
}

// New returns the endpoint over d.
func New(d Deps) *API { return &API{d: d} }

// MaxBatch is the most JSON-RPC messages one POST /mcp may hold: a
// batch of more (protocol versions 2025-03-26 and before batch) is
// refused, before any of its messages runs. Ten leaves each message about
// 500 KB of the response's 5 MB: room for a page of records through a tool.
const MaxBatch = 10

// Operations are the Model Context Protocol endpoint: its messages
// count against the key one by one (it authenticates and counts them
// itself), each answering within its share of the budget.
func Operations() []operation.Operation {
	return []operation.Operation{operation.Declare(lambdas.MCP, http.MethodPost, routes.MCPPath, (*API).serveMCP).InTopic("mcp").
		RateOf(routes.RateMessage).Answers(routes.AnswerShared).Doc(func(op *openapi.Operation) {
		op.Summary, op.Public, op.Idempotent, op.Raw = "Model Context Protocol endpoint (streamable HTTP)", false, false, true
		op.Description = "JSON-RPC messages of the Model Context Protocol (initialize, tools/list, tools/call, resources/list, " +
			"resources/read), answered as JSON (stateless: no Mcp-Session-Id). Needs the same two headers as every /v1 route; " +
			"its tools call the REST operations with them. Every message counts against the key's rate limit (a batch of " +
			strconv.Itoa(MaxBatch) + " at most counts each), and the whole answer stays within the response budget. See docs/mcp.md."
		message := openapi.Schema{"type": "object", "description": "a JSON-RPC 2.0 request or notification", "required": []any{"jsonrpc"}, "additionalProperties": true,
			"properties": openapi.Schema{"jsonrpc": openapi.Schema{"type": "string", "enum": []any{"2.0"}}}}
		op.Body = openapi.Schema{"oneOf": []any{message, openapi.Schema{"type": "array", "minItems": 1, "items": message,
			"description": "a batch (protocol versions 2025-03-26 and before); more than " + strconv.Itoa(MaxBatch) + " messages are refused (400)"}}}
		answer := openapi.Schema{"type": "object", "description": "the JSON-RPC 2.0 response", "additionalProperties": true}
		op.Data = openapi.Schema{"oneOf": []any{answer, openapi.Schema{"type": "array", "items": answer, "description": "the responses to a batch"}}}
		op.AlsoStatus = http.StatusAccepted
		// The transport's refusals: an Accept without both application/json
		// and text/event-stream (400), a body that is not JSON (415); a
		// batch of too many messages (400, a JSON-RPC error without id).
		op.Errors = []int{http.StatusBadRequest, http.StatusUnsupportedMediaType}
		op.ErrorBodies = map[int]openapi.Schema{http.StatusBadRequest: {"type": "object", "required": []any{"jsonrpc", "error"},
			"description": "a JSON-RPC 2.0 error response (a batch of more than " + strconv.Itoa(MaxBatch) + " messages: code -32600, id null)",
			"properties": openapi.Schema{"jsonrpc": openapi.Schema{"type": "string", "enum": []any{"2.0"}},
				"id": openapi.Schema{"description": "the message's id; null for a refusal of the whole request",
					"oneOf": []any{openapi.Schema{"type": "string"}, openapi.Schema{"type": "integer"}, openapi.Schema{"type": "null"}}},
				"error": openapi.Schema{"type": "object", "required": []any{"code", "message"},
					"properties": openapi.Schema{"code": openapi.Schema{"type": "integer"}, "message": openapi.Schema{"type": "string"}}}}}}
		op.Security = []map[string][]string{{"clientId": {}, "apiKey": {}}}
	})}
}

// serveMCP is POST /mcp: the MCP server (Deps.NewMCP) over the whole API
// (every group, in process, and the search routes through the HTTP API
// when this function has no search engine), built on first use. Only the
// functions that serve it (the mcp function, the dev server) have one, so
// that the others do not carry the MCP SDK; without it the path is no
// endpoint.
//
// Before the MCP server reads a message, /mcp checks the key (401), reads
// the body (at most httpapi.MaxBodyBytes, 413), refuses a batch of more
// than MaxBatch messages (400 with a JSON-RPC error) and counts every
// message against the key's rate limit (ratelimit.Limiter.Key: a batch of
// N counts N), answering 429 when the limit refuses one; the answer
// carries the X-RateLimit-* headers. A tool's REST call is not counted
// again in process (httpapi.WithCounted); one served by another function
// (a search of the mcp function, which has no engine) is counted there, as
// any REST call, so /mcp does not count its message. Each message gets an
// equal share of the response's byte budget (httpapi.Budget), so that the
// whole answer stays within httpapi.ListBudget.
func (a *API) serveMCP(w http.ResponseWriter, r *http.Request) {
	if a.d.NewMCP == nil {
		httpapi.Refuse(w, apperr.CodeNoSuchEndpoint, "", "no such endpoint: "+r.Method+" "+r.URL.EscapedPath())
		return
	}
	a.mcpOnce.Do(func() {
		doc, err := a.d.OpenAPI()
		if err != nil {
			a.mcpErr = err
			return
		}
		tools := a.d.Tools()
		if a.mcpRemote = a.d.Remote; len(a.mcpRemote) > 0 {
			if tools, a.mcpErr = a.throughAPI(tools, a.mcpRemote); a.mcpErr != nil {
				return
			}
		}
		a.mcp, a.mcpErr = a.d.NewMCP(reportRate(tools), a.d.Auth, doc, a.d.Offer)
	})
	if a.mcpErr != nil {
		httpapi.Error(w, r, a.mcpErr)
		return
	}
	p, err := a.d.Auth.Authenticate(r.Context(), r.Header.Get(httpapi.HeaderClientID), r.Header.Get(httpapi.HeaderAPIKey))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Identify(r, p)
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		// Counted once, as a REST request refused for its body is.
		if a.countMCP(w, r, p, 1) {
			httpapi.Error(w, r, err)
		}
		return
	}
	msgs, batch := mcpMessages(body)
	if batch && len(msgs) > MaxBatch {
		// Refused as one request: none of its messages runs.
		if a.countMCP(w, r, p, 1) {
			rpcError(w, apperr.CodeBatchTooLarge, jsonrpcInvalidRequest, fmt.Sprintf(
				"a batch holds at most %d messages; this one holds %d: send them in batches of %d or fewer", MaxBatch, len(msgs), MaxBatch))
		}
		return
	}
	n := 0
	for _, m := range msgs {
		if len(a.mcpRemote) == 0 || !a.mcpRemote[a.toolCall(m)] {
			n++
		}
	}
	if len(msgs) == 0 {
		n = 1 // a body the MCP server refuses counts once
	}
	if n > 0 && !a.countMCP(w, r, p, n) {
		return
	}
	sink := &rateSink{}
	ctx := auth.WithPrincipal(httpapi.WithCounted(r.Context()), p)
	ctx = httpapi.WithBudget(ctx, mcpShare(msgs))
	ctx = context.WithValue(ctx, originKey{}, origin(r))
	ctx = context.WithValue(ctx, rateSinkKey{}, sink)
	r = r.WithContext(ctx)
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	jw := &jsonErrors{ResponseWriter: w}
	if n == 0 {
		// Nothing counted here: the answer carries the headers of the
		// function that counted the tool calls' REST calls.
		jw.before = sink.copyTo
	}
	a.mcp.ServeHTTP(jw, r)
	// The messages counted here, and this request's own calls (its
	// tools' REST calls count theirs).
	httpapi.CountUsage(r.Context(), a.d.Usage, p.OrgID, int64(n))
	if n == 0 && jw.code >= 400 && a.d.Limits != nil {
		// Refused whole, its tool calls never reached the function that
		// counts them: the request counts once here.
		a.d.Limits.Key(r.Context(), p.OrgID, p.ClientID)
	}
	jw.finish()
}

// mcpMessage is what /mcp reads of a JSON-RPC message before the MCP
// server does: enough to count it and to size its answer.
type mcpMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// mcpMessages reads body as the MCP server will: a JSON array of messages
// (a batch), or one message. A body that is neither (which the MCP server
// refuses) holds none; an element that is no message is counted as one.
func mcpMessages(body []byte) (msgs []mcpMessage, batch bool) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var raw []json.RawMessage
		if json.Unmarshal(body, &raw) != nil {
			return nil, true
		}
		msgs = make([]mcpMessage, len(raw))
		for i, m := range raw {
			json.Unmarshal(m, &msgs[i])
		}
		return msgs, true
	}
	var m mcpMessage
	if json.Unmarshal(body, &m) != nil {
		return nil, false
	}
	return []mcpMessage{m}, false
}

// toolCall is the route of the REST call a tools/call request makes
// ("POST /v1/companies/search"); "" for any other message (a notification,
// without id, included), or a call that makes none.
func (a *API) toolCall(m mcpMessage) string {
	if m.Method != "tools/call" || len(m.ID) == 0 || string(m.ID) == "null" {
		return ""
	}
	calls, ok := a.mcp.(interface {
		Calls(tool string, arguments json.RawMessage) string
	})
	if !ok {
		return ""
	}
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(m.Params, &params) != nil {
		return ""
	}
	return calls.Calls(params.Name, params.Arguments)
}

// countMCP counts n messages of p's key (ratelimit.Limiter.Key, once
// each) and writes the rate headers of the last count; when the limit
// refuses one, it answers 429 (with Retry-After) and reports false.
func (a *API) countMCP(w http.ResponseWriter, r *http.Request, p auth.Principal, n int) bool {
	if a.d.Limits == nil {
		return true
	}
	var d ratelimit.Decision
	for range n {
		if d = a.d.Limits.Key(r.Context(), p.OrgID, p.ClientID); !d.Allowed {
			break
		}
	}
	return httpapi.RateLimit(w, d, "this API key")
}

// mcpEnvelope is what a message's answer takes besides its result: the
// JSON-RPC fields and the comma between the answers of a batch.
const mcpEnvelope = 64

// mcpShare is each message's share of the response's byte budget: the
// budget less each answer's envelope (its id, echoed, counted twice: the
// SDK may escape it otherwise), in equal parts.
func mcpShare(msgs []mcpMessage) int {
	rest := httpapi.ListBudget - len("[]\n")
	for _, m := range msgs {
		rest -= 2*store.WireSize([]byte(m.ID)) + mcpEnvelope
	}
	return max(rest/max(len(msgs), 1), 1)
}

// jsonrpcInvalidRequest is JSON-RPC's code of a request that is not one.
const jsonrpcInvalidRequest = -32600

// rpcError answers a JSON-RPC error with no id (a refusal of the whole
// request, before any message is read), with the status and X-Error-Code
// of errCode.
func rpcError(w http.ResponseWriter, errCode apperr.Code, code int, msg string) {
	httpapi.SetErrorCode(w.Header(), errCode, "")
	httpapi.JSON(w, errCode.Status(), map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
}

// rateSinkKey is the context key of an /mcp request's rateSink.
type rateSinkKey struct{}

// rateSink keeps the rate headers of the last REST call an /mcp request's
// tools made, for its answer when /mcp counted none of its messages.
type rateSink struct {
	mu sync.Mutex
	h  http.Header
}

var rateHeaders = []string{httpapi.HeaderRateLimit, httpapi.HeaderRateRemaining, httpapi.HeaderRateReset}

// reportRate records, in the request's rateSink, the rate headers each
// REST call of a tool answered.
func reportRate(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.ServeHTTP(w, r)
		s, _ := r.Context().Value(rateSinkKey{}).(*rateSink)
		if s == nil || w.Header().Get(httpapi.HeaderRateLimit) == "" {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.h = http.Header{}
		for _, k := range rateHeaders {
			s.h.Set(k, w.Header().Get(k))
		}
	})
}

// copyTo sets the kept rate headers on h.
func (s *rateSink) copyTo(h http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.h {
		h[k] = v
	}
}

// jsonErrors makes the MCP SDK's plain-text refusals (an Accept without
// application/json and text/event-stream, a Content-Type other than JSON,
// an unknown session) the service's {"error": ...} bodies, with their
// status; every error answer of the SDK (those plain-text refusals and its
// JSON-RPC errors with a 4xx status) carries the status's X-Error-Code.
type jsonErrors struct {
	http.ResponseWriter
	code   int // the status answered
	status int // a refusal being held, 0 otherwise
	msg    bytes.Buffer
	// before, when set, completes the headers once, before they are
	// written.
	before func(http.Header)
}

func (w *jsonErrors) WriteHeader(code int) {
	if w.before != nil {
		w.before(w.Header())
		w.before = nil
	}
	if w.code == 0 {
		w.code = code
	}
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	if code >= 400 && w.Header().Get(httpapi.HeaderErrorCode) == "" {
		httpapi.SetErrorCode(w.Header(), apperr.StatusCode(code), "")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrors) Write(b []byte) (int, error) {
	if w.before != nil {
		w.before(w.Header())
		w.before = nil
	}
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if w.status != 0 {
		return w.msg.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps streaming answers streaming.
func (w *jsonErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

func (w *jsonErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held refusal as {"error": message}.
func (w *jsonErrors) finish() {
	if w.status == 0 {
		return
	}
	w.Header().Del("X-Content-Type-Options")
	httpapi.ErrorBody(w.ResponseWriter, w.status, strings.TrimSpace(w.msg.String()))
}
