// Package mcpserver serves the API to AI agents over the Model Context
// Protocol (streamable HTTP, stateless, JSON answers), with the same API
// keys. Its tools are operations of the OpenAPI document, chosen by
// operationId: a tool's input schema is the operation's parameters and
// body as the document declares them, and a call is the operation itself,
// sent through the service's own HTTP handler with the caller's two
// headers, so validation, organization scoping, idempotency, rate limits
// and logging are those of the REST API by construction. Resources are
// the OpenAPI document and the documentation pages.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Path is where the MCP endpoint is served.
const Path = routes.MCPPath

// Version of the MCP server's implementation: the API's.
const Version = "1.0.0"

// ToolSpec chooses an operation of the OpenAPI document as a tool: its
// name, the operation it calls (OperationID), what it does for the agent,
// and the body fields a call gets when it does not send them (a run's
// dryRun: true). The service's come from its registry of operations
// (routes.Route.Tool, api.MCP).
type ToolSpec = routes.Tool

// Options configure a Server.
type Options struct {
	// API serves the REST API; tools call it.
	API http.Handler
	// Auth checks the caller's key before any MCP message is read.
	Auth *auth.Authenticator
	// OpenAPI is the OpenAPI document the tools are built from and that a
	// resource offers.
	OpenAPI []byte
	// Docs holds the Markdown pages offered as resources.
	Docs fs.FS
	// Tools are the operations offered.
	Tools []ToolSpec
	// Records names the kinds of record the tools read, for the server's
	// instructions.
	Records []string
}

// New returns the MCP endpoint: 401 (the REST API's body) without valid
// credentials, the MCP server otherwise.
func New(o Options) (http.Handler, []*mcp.Tool, error) {
	var doc openAPI
	if err := json.Unmarshal(o.OpenAPI, &doc); err != nil {
		return nil, nil, fmt.Errorf("mcp: the OpenAPI document: %w", err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "sourcebase", Title: "Sourcebase", Version: Version}, &mcp.ServerOptions{
		Instructions: "Financial-research data of your organization: " + strings.Join(o.Records, ", ") + ", enrichment candidates, " +
			"metric series and workflows. Tools call the Sourcebase REST API with " +
			"your API key; starting a workflow run is a dry run unless you set dryRun to false.",
	})
	srv.AddReceivingMiddleware(withinBudget)
	var tools []*mcp.Tool
	ops := map[string]operation{}
	byID := doc.operations()
	for _, spec := range o.Tools {
		op, ok := byID[spec.OperationID]
		if !ok {
			return nil, nil, fmt.Errorf("mcp: tool %s: no operation %s in the OpenAPI document", spec.Name, spec.OperationID)
		}
		schema, renamed := selfContained(doc.inputSchema(op, spec))
		closed := false
		tool := &mcp.Tool{Name: spec.Name, Title: op.Summary, Description: spec.Description, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{Title: op.Summary, ReadOnlyHint: spec.ReadOnly, DestructiveHint: &spec.Destructive,
				IdempotentHint: spec.Idempotent, OpenWorldHint: &closed}}
		srv.AddTool(tool, caller(o.API, op, spec, renamed))
		tools = append(tools, tool)
		ops[spec.Name] = op
	}
	srv.AddResource(&mcp.Resource{URI: "sourcebase://openapi.json", Name: "openapi.json", Title: "The OpenAPI 3.1 document of the REST API",
		MIMEType: "application/json"}, staticResource("sourcebase://openapi.json", "application/json", o.OpenAPI))
	if o.Docs != nil {
		pages, err := fs.Glob(o.Docs, "*.md")
		if err != nil {
			return nil, nil, err
		}
		for _, p := range pages {
			b, err := fs.ReadFile(o.Docs, p)
			if err != nil {
				return nil, nil, err
			}
			uri := "sourcebase://docs/" + p
			srv.AddResource(&mcp.Resource{URI: uri, Name: p, Title: title(b, p), MIMEType: "text/markdown"},
				staticResource(uri, "text/markdown", b))
		}
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: httpapi.MaxBodyBytes})
	return &Endpoint{ops: ops, h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A caller the service's /mcp authenticated carries its principal
		// (a context value, which no client can send): checked once.
		if _, ok := auth.FromContext(r.Context()); !ok {
			if _, err := o.Auth.Authenticate(r.Context(), r.Header.Get(httpapi.HeaderClientID), r.Header.Get(httpapi.HeaderAPIKey)); err != nil {
				httpapi.Error(w, r, err)
				return
			}
		}
		h.ServeHTTP(w, r)
	})}, tools, nil
}

// Endpoint is the MCP endpoint New makes.
type Endpoint struct {
	h   http.Handler
	ops map[string]operation // each tool's operation, by tool name
}

// ServeHTTP answers the JSON-RPC messages of r: 401 (the REST API's body)
// without valid credentials.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.h.ServeHTTP(w, r) }

// Calls is the route ("POST /v1/companies/search", as the route table
// writes it) of the REST call a tools/call of tool with these arguments
// makes; "" when it makes none (an unknown tool, arguments that are not a
// JSON object, a path parameter missing), exactly as the tool decides.
// /mcp counts the message by it (a REST call another function serves is
// counted there).
func (e *Endpoint) Calls(tool string, arguments json.RawMessage) string {
	op, ok := e.ops[tool]
	if !ok {
		return ""
	}
	if _, _, msg := op.arguments(arguments); msg != "" {
		return ""
	}
	return op.method + " " + op.path
}

// CodeAnswerTooLarge is the JSON-RPC error of a message whose answer does
// not fit its share of the response's byte budget (httpapi.Budget): a
// resource read in a batch, say. Tool calls answer a tool error instead.
const CodeAnswerTooLarge = -32001

// maxErrorText bounds an error message an answer carries: the SDK's
// messages may quote what the request sent (an unknown tool's name).
const maxErrorText = 1000

// withinBudget keeps every answer but a tool's within the message's byte
// budget (httpapi.Budget: /mcp gives each message of a batch its share):
// a larger one becomes a CodeAnswerTooLarge error, a long error message is
// cut. A tool call's result is kept within it by the tool (caller).
func withinBudget(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			if msg := err.Error(); len(msg) > maxErrorText {
				var werr *jsonrpc.Error
				var code int64 // as the SDK codes an error that names none
				if errors.As(err, &werr) {
					code = werr.Code
				}
				return nil, &jsonrpc.Error{Code: code, Message: strings.ToValidUTF8(msg[:maxErrorText], "") + "…"}
			}
			return res, err
		}
		if _, tool := res.(*mcp.CallToolResult); tool || res == nil {
			return res, err
		}
		b, merr := json.Marshal(res)
		if merr != nil {
			return res, err
		}
		if n, budget := store.WireSize(b), httpapi.Budget(ctx); n > budget {
			return nil, &jsonrpc.Error{Code: CodeAnswerTooLarge, Message: fmt.Sprintf(
				"the answer to %s takes %d bytes, more than the %d this message may take of the response (%d bytes in all, shared by the messages of a batch); send it alone, not in a batch",
				method, n, budget, httpapi.ListBudget)}
		}
		return res, nil
	}
}

// Handler makes the MCP endpoint over api for the service (an
// service.Deps.NewMCP): the tools offer names (the registry's, api.MCP), and
// pages, the documentation's Markdown pages (docs.Pages in process; in the
// MCP function the pages shipped beside its bootstrap), as resources; an
// *Endpoint. An fs without pages is an error: the resources would be
// missing without a word.
func Handler(pages fs.FS) func(api http.Handler, a *auth.Authenticator, openAPI []byte, offer routes.MCP) (http.Handler, error) {
	return func(api http.Handler, a *auth.Authenticator, openAPI []byte, offer routes.MCP) (http.Handler, error) {
		if found, err := fs.Glob(pages, "*.md"); err != nil || len(found) == 0 {
			return nil, fmt.Errorf("mcpserver: no documentation pages (*.md) to offer as resources (%v)", err)
		}
		h, _, err := New(Options{API: api, Auth: a, OpenAPI: openAPI, Docs: pages, Tools: offer.Tools, Records: offer.Records})
		return h, err
	}
}

// ToolList is the tools offer names as clients list them, for docs/mcp.md.
func ToolList(openAPI []byte, offer routes.MCP) ([]*mcp.Tool, error) {
	_, tools, err := New(Options{API: http.NotFoundHandler(), OpenAPI: openAPI, Tools: offer.Tools, Records: offer.Records})
	return tools, err
}

func staticResource(uri, mime string, b []byte) mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(b)}}}, nil
	}
}

// title is a page's first heading.
func title(b []byte, name string) string {
	line, _, _ := strings.Cut(string(b), "\n")
	if t, ok := strings.CutPrefix(line, "# "); ok {
		return t
	}
	return name
}

// copies is how many times, at most, a tool result holds the bytes of
// its REST answer, counted as Lambda carries them (store.WireSize): the
// answer as text (a JSON string, whose quotes and backslashes are escaped
// once more: up to twice the answer's size) and as structured content
// (the answer's size).
const copies = 3

// resultReserve is room, in a tool result's budget, for what is not the
// REST answer: the result's own fields, the next page's cursor, the etag.
const resultReserve = 8 << 10

// caller is a tool's handler: the operation, sent through api with the
// caller's credential headers (and Idempotency-Key and If-Match from the
// arguments idempotencyKey and ifMatch). The result is the REST answer,
// with nextCursor (X-Next-Cursor) and etag (ETag) when the API answered
// them. Its REST call gets the byte budget that
// keeps the result within the message's (httpapi.Budget): a page ends
// early, with its nextCursor, where the REST API would answer more. The
// call is not counted against the key's rate limit again when /mcp marked
// the request counted (httpapi.WithCounted): the message was.
func caller(api http.Handler, op operation, spec ToolSpec, renamed map[string]string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, args, msg := op.arguments(req.Params.Arguments)
		if msg != "" {
			return toolError(msg, refusal{}), nil
		}
		args = restoreNames(args, renamed).(map[string]any) // names the tool's schema spells with "__"
		var body []byte
		if op.hasBody {
			b, _ := args["body"].(map[string]any)
			if spec.BodyArguments {
				// Every argument but the path's and the headers' is a member.
				b = map[string]any{}
				for k, v := range args {
					if !slices.Contains(op.pathParams, k) && k != "idempotencyKey" && k != "ifMatch" {
						b[k] = v
					}
				}
			}
			if b == nil {
				b = map[string]any{}
			}
			for k, v := range spec.Defaults {
				if _, set := b[k]; !set {
					b[k] = v
				}
			}
			body, _ = json.Marshal(b)
		}
		budget := httpapi.Budget(ctx)
		inner := httpapi.WithBudget(ctx, max((budget-resultReserve)/copies, 1024))
		r := httptest.NewRequestWithContext(inner, op.method, p, bytes.NewReader(body))
		if op.hasBody {
			r.Header.Set("Content-Type", "application/json")
		}
		if req.Extra != nil {
			for _, h := range []string{httpapi.HeaderClientID, httpapi.HeaderAPIKey} {
				r.Header.Set(h, req.Extra.Header.Get(h))
			}
		}
		if key, _ := args["idempotencyKey"].(string); key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		if tag, _ := args["ifMatch"].(string); tag != "" && op.ifMatch {
			r.Header.Set("If-Match", tag)
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		why := refusedBy(rec)
		var answer map[string]any
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.UseNumber() // numbers as the API wrote them: the result repeats them as they are
		if err := dec.Decode(&answer); err != nil && rec.Code != http.StatusNoContent {
			return toolError(fmt.Sprintf("the API answered %d: %s", rec.Code, cut(rec.Body.String())), why), nil
		}
		if rec.Code >= 400 {
			msg, _ := answer["error"].(string)
			return toolError(msg, why), nil
		}
		if answer == nil {
			answer = map[string]any{}
		}
		if c := rec.Header().Get(httpapi.HeaderNextCursor); c != "" {
			answer["nextCursor"] = c
		}
		if tag := rec.Header().Get("ETag"); tag != "" {
			answer["etag"] = tag // the record's version, for a later call's ifMatch
		}
		text, _ := httpapi.Marshal(answer)
		if n := resultSize(text); n > budget {
			return toolError(tooLarge(op, rec.Code, n, budget), refusal{}), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: answer}, nil
	}
}

// arguments reads a tool call's arguments: the path to call (the
// operation's, with the path parameters and query) and the arguments;
// msg says why there is no call (arguments that are not an object, a path
// parameter missing, an object parameter given as something else). An
// object parameter of style deepObject (a list's filter) is sent as
// name[key]=value, an array as its elements separated by commas.
func (op operation) arguments(raw json.RawMessage) (path string, args map[string]any, msg string) {
	args = map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		// Numbers stay as sent (json.Number), so that the API checks them
		// as it checks any body: a number no client can read is its 400
		// naming the field, not a decoding failure here or a float64
		// rounded on the way.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return "", nil, "the arguments are not a JSON object: " + err.Error()
		}
		if args == nil {
			args = map[string]any{}
		}
	}
	p := op.path
	for _, name := range op.pathParams {
		v, _ := args[name].(string)
		if v == "" {
			return "", nil, name + " is required"
		}
		p = strings.Replace(p, "{"+name+"}", url.PathEscape(v), 1)
	}
	q := url.Values{}
	for _, pr := range op.params {
		v, ok := args[pr.Name]
		switch {
		case pr.In != "query" || !ok || v == nil:
		case pr.Style == "deepObject":
			obj, isObject := v.(map[string]any)
			if !isObject {
				return "", nil, pr.Name + " must be an object"
			}
			deepObject(q, pr.Name, obj)
		default:
			q.Set(pr.Name, value(v))
		}
	}
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p, args, ""
}

// resultSize is the most bytes a tool result holding text as its text
// content and as its structured content takes, counted as Lambda carries
// them: the text as a JSON string, the structured content (which encodes
// to text at most, HTML characters unescaped), and the result's fields.
func resultSize(text []byte) int {
	quoted, _ := json.Marshal(string(text))
	return store.WireSize(quoted) + store.WireSize(text) + 200
}

// tooLarge says why a tool's result is not answered: it would exceed the
// message's budget (a record larger than a batch's share, say).
func tooLarge(op operation, status, n, budget int) string {
	what := "ask for fewer records (limit), or send the call alone rather than in a batch"
	if !op.reads() {
		what = fmt.Sprintf("the API did answer %d (the call was made); read its result with a get tool, alone rather than in a batch", status)
	}
	return fmt.Sprintf("The answer takes %d bytes, more than the %d this call may take of the MCP response (%d bytes in all, shared by the messages of a batch): %s.",
		n, budget, httpapi.ListBudget, what)
}

// refusal is what a tool error tells of the API's answer: its status,
// the seconds Retry-After asks to wait (a 429 or 503), and the error's
// X-Error-Code and X-Error-Param; zero when the API was not called.
type refusal struct {
	status, retryAfter int
	code, param        string
}

// refusedBy reads the refusal of an API answer.
func refusedBy(rec *httptest.ResponseRecorder) refusal {
	retry, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
	return refusal{status: rec.Code, retryAfter: retry,
		code: rec.Header().Get(httpapi.HeaderErrorCode), param: rec.Header().Get(httpapi.HeaderErrorParam)}
}

// toolError is a tool's failure: msg as text and, when the API answered,
// as structured content {error, status, code, param, retryAfter} (code
// and param: the answer's X-Error-Code and X-Error-Param, so an agent
// branches as a REST client does; retryAfter, from Retry-After, the
// seconds to wait before calling again, in the text too).
func toolError(msg string, why refusal) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true}
	if why.status != 0 {
		sc := map[string]any{"error": msg, "status": why.status}
		if why.code != "" {
			sc["code"] = why.code
		}
		if why.param != "" {
			sc["param"] = why.param
		}
		if why.retryAfter > 0 {
			sc["retryAfter"] = why.retryAfter
			if !strings.Contains(msg, strconv.Itoa(why.retryAfter)+" second") {
				msg = strings.TrimSpace(msg + fmt.Sprintf(" Try again in %d seconds.", why.retryAfter))
			}
		}
		res.StructuredContent = sc
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: msg}}
	return res
}

// cut shortens an unexpected answer quoted in a tool error.
func cut(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…"
}

// deepObject sets the query parameters of an object given for a
// parameter of style deepObject: name[key]=value, name[key][key2]=value
// for a nested object (a list's filter[employeeCount][gte]=50).
func deepObject(q url.Values, name string, obj map[string]any) {
	for k, v := range obj {
		switch v := v.(type) {
		case nil:
		case map[string]any:
			deepObject(q, name+"["+k+"]", v)
		default:
			q.Set(name+"["+k+"]", value(v))
		}
	}
}

// value is a query parameter's value: an array's elements separated by
// commas (as a parameter the document marks CommaSeparated takes them),
// any other value as scalar writes it.
func value(v any) string {
	a, ok := v.([]any)
	if !ok {
		return scalar(v)
	}
	parts := make([]string, len(a))
	for i, e := range a {
		parts[i] = scalar(e)
	}
	return strings.Join(parts, ",")
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%f", v), "0"), ".")
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// openAPI is what the tools need of the document.
type openAPI struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas       map[string]any         `json:"schemas"`
		Parameters    map[string]param       `json:"parameters"`
		RequestBodies map[string]requestBody `json:"requestBodies"`
	} `json:"components"`
}

type operation struct {
	method, path string
	Summary      string
	pathParams   []string
	params       []param
	hasBody      bool
	bodySchema   any
	bodyRequired bool // the operation needs a body: the tool's "body" is required
	// ifMatch: the operation takes If-Match (a write of one record),
	// offered as the argument ifMatch.
	ifMatch bool
	// idempotent: the operation takes Idempotency-Key (a POST that keeps
	// its answer), offered as the argument idempotencyKey; a POST without
	// it changes nothing (a search, similar records, a series' read).
	idempotent bool
}

// reads says whether op changes nothing: a GET, or a POST that takes no
// Idempotency-Key (a search, similar records, a read of a series).
func (op operation) reads() bool {
	return op.method == http.MethodGet || op.method == http.MethodPost && !op.idempotent
}

// ifMatchParam is the document's If-Match parameter, which the writes of
// one record refer to.
const ifMatchParam = "#/components/parameters/IfMatch"

// idempotencyKeyParam is the document's Idempotency-Key parameter, which
// the POSTs that keep an answer refer to.
const idempotencyKeyParam = "#/components/parameters/IdempotencyKey"

// requestBody is an operation's request body, or a reference to one of
// the components'.
type requestBody struct {
	Ref      string `json:"$ref"`
	Required bool   `json:"required"`
	Content  map[string]struct {
		Schema any `json:"schema"`
	} `json:"content"`
}

type param struct {
	Name        string         `json:"name"`
	In          string         `json:"in"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
	Ref         string         `json:"$ref"`
	Style       string         `json:"style"`
}

// asArrays is s with every schema marked openapi.CommaSeparated (a
// string listing values separated by commas) replaced by its array schema,
// with the string's description unless it has its own, and no other
// extension: a tool takes the array (or the string, as the API does) and
// sends the array's elements joined by commas.
func asArrays(s any) any {
	switch x := s.(type) {
	case map[string]any:
		if arr, ok := x[openapi.CommaSeparated].(map[string]any); ok {
			out := map[string]any{}
			for k, v := range arr {
				out[k] = asArrays(v)
			}
			if d, ok := x["description"]; ok && out["description"] == nil {
				out["description"] = d
			}
			return out
		}
		out := map[string]any{}
		for k, v := range x {
			if !strings.HasPrefix(k, "x-") {
				out[k] = asArrays(v)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = asArrays(v)
		}
		return out
	}
	return s
}

// operations reads every operation of the document once, by operation id.
// (Looking each tool's operation up by decoding the paths again made a
// server's start quadratic: a tenth of the HTTP suite's CPU.)
func (d *openAPI) operations() map[string]operation {
	ops := map[string]operation{}
	for p, methods := range d.Paths {
		for m, raw := range methods {
			var o struct {
				OperationID string       `json:"operationId"`
				Summary     string       `json:"summary"`
				Parameters  []param      `json:"parameters"`
				RequestBody *requestBody `json:"requestBody"`
			}
			if json.Unmarshal(raw, &o) != nil || o.OperationID == "" {
				continue // a path's "parameters" or "summary", not an operation
			}
			op := operation{method: strings.ToUpper(m), path: p, Summary: o.Summary}
			for _, pr := range o.Parameters {
				switch pr.Ref {
				case "":
				case ifMatchParam, idempotencyKeyParam:
					// Offered as ifMatch and idempotencyKey.
					op.ifMatch = op.ifMatch || pr.Ref == ifMatchParam
					op.idempotent = op.idempotent || pr.Ref == idempotencyKeyParam
					continue
				default:
					// A parameter many operations share (limit, id).
					pr = d.Components.Parameters[strings.TrimPrefix(pr.Ref, "#/components/parameters/")]
				}
				switch pr.In {
				case "path":
					op.pathParams = append(op.pathParams, pr.Name)
				case "query":
				default:
					continue
				}
				op.params = append(op.params, pr)
			}
			if o.RequestBody != nil && o.RequestBody.Ref != "" {
				// A body several operations share (a kind's update and upsert).
				b := d.Components.RequestBodies[strings.TrimPrefix(o.RequestBody.Ref, "#/components/requestBodies/")]
				o.RequestBody = &b
			}
			if o.RequestBody != nil {
				if c, ok := o.RequestBody.Content["application/json"]; ok {
					op.hasBody, op.bodySchema, op.bodyRequired = true, c.Schema, o.RequestBody.Required
				}
			}
			ops[o.OperationID] = op
		}
	}
	return ops
}

var componentRef = regexp.MustCompile(`#/components/schemas/([A-Za-z0-9_]+)`)

// inputSchema is a tool's input: the operation's path and query
// parameters (a comma-separated one as its array: asArrays), its body as
// "body", "idempotencyKey" for a POST that keeps one and "ifMatch" for a
// write of one record (If-Match); the components
// it refers to are carried along as $defs. Its type unions are anyOf
// branches, and it holds no extension of the document (portable).
func (d *openAPI) inputSchema(op operation, spec ToolSpec) map[string]any {
	props := map[string]any{}
	var required []any
	for _, p := range op.params {
		s := asArrays(p.Schema).(map[string]any)
		if p.Description != "" {
			s["description"] = p.Description
		}
		props[p.Name] = s
		if p.In == "path" {
			required = append(required, p.Name)
		}
	}
	if op.hasBody && spec.BodyArguments {
		// The body's members are the arguments.
		body, _ := op.bodySchema.(map[string]any)
		if ref, ok := body["$ref"].(string); ok {
			if m := componentRef.FindStringSubmatch(ref); m != nil {
				body, _ = d.Components.Schemas[m[1]].(map[string]any)
			}
		}
		members, _ := body["properties"].(map[string]any)
		for name, s := range members {
			props[name] = s
		}
		if req, ok := body["required"].([]any); ok {
			required = append(required, req...)
		}
	} else if op.hasBody {
		body := op.bodySchema
		if len(spec.Defaults) > 0 {
			var names []string
			for k := range spec.Defaults {
				names = append(names, k)
			}
			sort.Strings(names)
			body = map[string]any{"allOf": []any{body}, "description": "the request body; when not given, " +
				strings.Join(names, ", ") + " default to " + defaultsText(spec.Defaults, names)}
		}
		if m, ok := body.(map[string]any); ok && m["description"] == nil {
			body = maps.Clone(m)
			body.(map[string]any)["description"] = "the request body of " + op.method + " " + op.path + ": " + op.Summary
		}
		props["body"] = body
		if op.bodyRequired && len(spec.Defaults) == 0 {
			required = append(required, "body")
		}
	}
	if op.idempotent {
		props["idempotencyKey"] = map[string]any{"type": "string", "minLength": 1, "maxLength": 255,
			"description": "makes a retried call safe: the same key and arguments within 24 hours answer the first result again"}
	}
	if op.ifMatch {
		props["ifMatch"] = map[string]any{"type": "string", "minLength": 1,
			"description": `the record's etag as a read or write of it answered ("3", quotes included), or * for any version: the call is refused (412) if the stored version is another`}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	// Carry the referenced components, rewritten to $defs.
	defs := map[string]any{}
	var walk func(v any)
	walk = func(v any) {
		b, _ := json.Marshal(v)
		for _, m := range componentRef.FindAllStringSubmatch(string(b), -1) {
			if _, done := defs[m[1]]; done {
				continue
			}
			defs[m[1]] = asArrays(d.Components.Schemas[m[1]])
			walk(d.Components.Schemas[m[1]])
		}
	}
	walk(s)
	if len(defs) > 0 {
		s["$defs"] = defs
	}
	b, _ := json.Marshal(s)
	b = []byte(componentRef.ReplaceAllString(string(b), "#/$$defs/$1"))
	var out map[string]any
	json.Unmarshal(b, &out)
	return portable(out).(map[string]any)
}

func defaultsText(d map[string]any, names []string) string {
	var parts []string
	for _, n := range names {
		b, _ := json.Marshal(d[n])
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ", ")
}
