// Package routes describes the service's Lambda functions (Functions: how
// each is reached, what it may access) and the policies of its operations
// (Route: a method and path, the function that serves it, who may call it,
// what it counts against, what bounds its answer, whether it keeps an
// Idempotency-Key and which MCP tool exposes it). Function names are in
// package fn. The registry of operations, each declared once next to its
// handler, is package api's (api.Operations, api.Routes); the router, the
// OpenAPI document, the MCP tools, the CDK stack, the SAM template and the
// IAM policies are derived from it.
package routes

import (
	"fmt"
	"net/http"
	"strings"
)

// Served lists the functions that routes reach (by the API or a function URL).
var Served = func() []string {
	var out []string
	for _, f := range Functions {
		if f.Reach == ByAPI || f.Reach == ByURL {
			out = append(out, f.Name)
		}
	}
	return out
}()

// Route is one operation's route and policies. Path uses net/http pattern
// syntax ({id}).
type Route struct {
	// Function is the Lambda function that serves the route (package fn).
	Function string
	Method   string
	Path     string
	// Resource names the kind of record the route serves ("companies",
	// "deals", "workflow-runs"); "" for the routes of no one kind.
	Resource string
	// Topic is the group of the API reference the route is listed under
	// (Topics) when it is not its Resource: "enrichment", "keys".
	Topic string
	// MaxParam is the longest path parameter the route accepts (0: an id's,
	// store.MaxIDLength); longer ones are "not found".
	MaxParam int
	// ReadOnly marks a route other than GET that changes nothing (a
	// search): it needs only read access to the table.
	ReadOnly bool
	// Idempotent routes keep an Idempotency-Key's answer for 24 hours
	// (httpapi.Idempotency): the authenticated POSTs that write.
	Idempotent bool
	// Admin, when set, restricts the route to admin keys and names what it
	// does ("managing API keys"): a member key is answered 403 "<Admin>
	// requires an admin key" before anything else of the route runs, an
	// Idempotency-Key's kept answer included.
	Admin string
	// Rate is what the route's requests count against.
	Rate Rate
	// Answer is what keeps the route's answer within the response budget
	// (httpapi.ListBudget).
	Answer Answer
	// Tool, when set, exposes the route as a tool of the MCP server.
	Tool *Tool
}

// Rate is what a route's requests count against (package ratelimit).
type Rate string

// The rate-limit scopes.
const (
	// RateKey: each request counts once against its API key's and its
	// organization's per-minute limits, before its route runs (the
	// router's authentication, httpapi.Authenticate).
	RateKey Rate = "key"
	// RateMessage: each JSON-RPC message of the request counts against the
	// key's and organization's limits (the MCP endpoint counts them).
	RateMessage Rate = "message"
	// RateDelivery: each webhook delivery counts against its trigger's
	// limit (the webhook intake counts it).
	RateDelivery Rate = "delivery"
	// RateNone: public, fixed answers that read nothing of an
	// organization (the health check, the OpenAPI document).
	RateNone Rate = "none"
)

// Answer is what keeps a route's answer within the response budget.
type Answer string

// What bounds an answer.
const (
	// AnswerPaged: a page that httpapi.List ends within the request's
	// budget; X-Next-Cursor goes on.
	AnswerPaged Answer = "paged"
	// AnswerSearch: a search page that ends within the request's budget
	// (metadata.truncated).
	AnswerSearch Answer = "search"
	// AnswerRecord: one stored record, a DynamoDB item (400 KB at most,
	// twice that on the wire).
	AnswerRecord Answer = "record"
	// AnswerWritten: what one request body (1 MiB at most) wrote, its
	// values with their ids and times.
	AnswerWritten Answer = "written"
	// AnswerMeasured: measured against the request's budget before it is
	// written; 400 when it does not fit.
	AnswerMeasured Answer = "measured"
	// AnswerFixed: the same bytes for every caller.
	AnswerFixed Answer = "fixed"
	// AnswerEmpty: no body (204).
	AnswerEmpty Answer = "empty"
	// AnswerShared: each JSON-RPC message answers within its share of the
	// budget (the MCP endpoint).
	AnswerShared Answer = "shared"
)

// Tool exposes a route as a tool of the MCP server (package mcpserver).
type Tool struct {
	Name string
	// OperationID is the route's operation in the OpenAPI document, whose
	// parameters and body are the tool's input (set by the registry).
	OperationID string
	Description string
	// Defaults are the body fields a call gets when it does not set them
	// (start_workflow_run: dryRun true).
	Defaults map[string]any
	// ReadOnly, Destructive and Idempotent are the tool's hints to the
	// agent's client (MCP tool annotations), set by the registry from the
	// route: it changes nothing; it may change or remove what exists (an
	// update, a delete, a batch); called again with the same arguments it
	// changes nothing more.
	ReadOnly, Destructive, Idempotent bool
	// BodyArguments makes the members of the operation's body the tool's
	// arguments (a list query's filter, sort, fields…), rather than one
	// argument "body": the list tools take what POST …/query takes.
	BodyArguments bool
}

// Pattern is the net/http ServeMux pattern of the route.
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// MCPPath serves the Model Context Protocol endpoint.
const MCPPath = "/mcp"

// OpenAPIPath serves the OpenAPI document: the one /v1 route that needs
// no API key, so that tools and the docs page can read the contract.
const OpenAPIPath = "/v1/openapi.json"

// Authenticated reports whether the route needs an API key: every /v1
// route but the OpenAPI document's.
func (r Route) Authenticated() bool {
	return len(r.Path) >= 4 && r.Path[:4] == "/v1/" && r.Path != OpenAPIPath
}

// Conditional reports whether If-Match makes the route's writes
// conditional: a PUT, PATCH or DELETE of one record ({id}). A write of a
// collection (an upsert, PUT /v1/<name>?match=) names no record to
// compare with, so it takes none.
func (r Route) Conditional() bool {
	return (r.Method == http.MethodPut || r.Method == http.MethodPatch || r.Method == http.MethodDelete) && strings.Contains(r.Path, "{id}")
}

// Check reports a route whose declared policies contradict each other or
// what the router does with its path: a /v1 route counts against its key
// (RateKey) and nothing else does; only an authenticated POST that writes
// keeps Idempotency-Keys; only an authenticated route is admin-only; every
// route says what bounds its answer.
func (r Route) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("route %s: "+format, append([]any{r.Pattern()}, args...)...)
	}
	switch {
	case r.Function == "" || r.Method == "" || !strings.HasPrefix(r.Path, "/"):
		return bad("needs a function, a method and a path")
	case r.Authenticated() != (r.Rate == RateKey):
		return bad("rate %q: every /v1 route but the OpenAPI document's, and only those, count against their key (RateKey)", r.Rate)
	case r.Rate != RateKey && r.Rate != RateMessage && r.Rate != RateDelivery && r.Rate != RateNone:
		return bad("unknown rate scope %q", r.Rate)
	case r.Idempotent && (r.Method != http.MethodPost || !r.Authenticated() || r.ReadOnly):
		return bad("only an authenticated POST that writes keeps Idempotency-Keys")
	case r.Method == http.MethodPost && r.Authenticated() && !r.ReadOnly && !r.Idempotent:
		return bad("an authenticated POST that writes keeps Idempotency-Keys (Idempotent)")
	case r.Admin != "" && !r.Authenticated():
		return bad("an admin-only route needs an API key")
	case r.ReadOnly && r.Method == http.MethodGet:
		return bad("a GET is read-only already")
	case r.Answer == "":
		return bad("say what keeps its answer within the response budget (Answer)")
	case r.Method == http.MethodDelete && r.Answer != AnswerEmpty:
		return bad("a delete answers 204 (AnswerEmpty)")
	case r.Tool != nil && r.Tool.Name == "":
		return bad("an MCP tool needs a name")
	}
	return nil
}

// Of returns the routes of rs served by the given functions (all when none given).
func Of(rs []Route, functions ...string) []Route {
	if len(functions) == 0 {
		return rs
	}
	var out []Route
	for _, r := range rs {
		for _, f := range functions {
			if r.Function == f {
				out = append(out, r)
			}
		}
	}
	return out
}

// MCP is what the MCP server offers: its tools and the kinds of record
// they read (for the server's instructions).
type MCP struct {
	Tools   []Tool
	Records []string
}
