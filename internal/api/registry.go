package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// Operation is one operation of the service, declared once next to its
// handler: its route and policies (routes.Route: function, role, rate
// scope, answer budget, idempotency, MCP tool), its OpenAPI text and
// shapes, and how an API serves it. The router (Handler), the OpenAPI
// document, docs/resources.md, the MCP tools, the CDK and SAM routes and
// the IAM policies (through Routes) are derived from the registry.
type Operation struct {
	routes.Route
	// describe writes the operation's summary, description, parameters,
	// body and answers onto op, which holds what the route implies.
	describe func(op *openapi.Operation)
	// serve is the handler over an API's dependencies.
	serve func(a *API) http.Handler
	// generic: one of a kind's create, list, get, update and delete
	// (recordOperations) or its upsert and batch (bulkOperations), which
	// its declaration documents.
	generic bool
	// destroys: a POST that may change or delete existing records (a
	// batch, an import that updates), for its tool's destructiveHint.
	destroys bool
	// hidden: the route, open to every key, refuses a member key a request
	// naming what only admin keys read (hidesAdminOnly).
	hidden bool
}

// declare returns the operation method path served by function, with the
// policies its path and method imply: a /v1 route counts against its key
// (others declare their scope), an authenticated POST keeps
// Idempotency-Keys (a read-only one declares readOnly), a delete answers
// no body.
func declare(function, method, path string, serve func(*API, http.ResponseWriter, *http.Request)) Operation {
	op := Operation{Route: routes.Route{Function: function, Method: method, Path: path, Rate: routes.RateNone}}
	if op.Authenticated() {
		op.Rate = routes.RateKey
		op.Idempotent = method == http.MethodPost
	}
	if method == http.MethodDelete {
		op.Answer = routes.AnswerEmpty
	}
	op.serve = func(a *API) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(a, w, r) })
	}
	return op
}

// answers says what bounds the operation's answer.
func (o Operation) answers(k routes.Answer) Operation { o.Answer = k; return o }

// readOnly marks a POST that changes nothing (a search, a read of a
// series): no Idempotency-Key record, read access only.
func (o Operation) readOnly() Operation { o.ReadOnly, o.Idempotent = true, false; return o }

// admin restricts the operation to admin keys; action names it in the 403.
func (o Operation) admin(action string) Operation { o.Admin = action; return o }

// hidesAdminOnly marks an operation open to every key that hides from
// member keys what only admin keys read, and refuses (403) a member key's
// request that names it: the change history, whose events of API keys and
// webhook endpoints only admin keys read. Its OpenAPI answers then
// include 403 (roleAndWriteStatuses).
func (o Operation) hidesAdminOnly() Operation { o.hidden = true; return o }

// rate declares what the operation's requests count against.
func (o Operation) rate(r routes.Rate) Operation { o.Rate = r; return o }

// of names the kind of record the operation serves.
func (o Operation) of(resource string) Operation { o.Resource = resource; return o }

// topic lists the operation in the reference under the topic name
// (routes.Topics) rather than its resource's.
func (o Operation) topic(name string) Operation { o.Topic = name; return o }

// doc gives the operation its OpenAPI text and shapes.
func (o Operation) doc(describe func(op *openapi.Operation)) Operation {
	o.describe = describe
	return o
}

// tool exposes the operation as the MCP tool name.
func (o Operation) tool(name, description string) Operation {
	o.Tool = &routes.Tool{Name: name, Description: description}
	return o
}

// destructive marks a POST that may change or delete existing records
// (routes.Tool.Destructive).
func (o Operation) destructive() Operation { o.destroys = true; return o }

// bodyArguments makes the members of the operation's body its tool's
// arguments (routes.Tool.BodyArguments).
func (o Operation) bodyArguments() Operation {
	t := *o.Tool
	t.BodyArguments = true
	o.Tool = &t
	return o
}

// toolDefaults are the body fields a call of the operation's tool gets
// when it does not set them.
func (o Operation) toolDefaults(d map[string]any) Operation {
	t := *o.Tool
	t.Defaults = d
	o.Tool = &t
	return o
}

// Operations is the registry: every operation of the service, each
// declared once with its handler — the hand-written ones in the file of
// their handlers, those of every kind of record (declared resources,
// companies, workflows, runs) by recordOperations from their
// declarations.
func Operations() []Operation { return slices.Clone(registry()) }

var (
	registryOnce sync.Once
	registered   []Operation
)

// registry is the registry, declared on first use.
func registry() []Operation {
	registryOnce.Do(func() { registered = declareAll() })
	return registered
}

// declareAll declares every operation and checks the declarations.
func declareAll() []Operation {
	var ops []Operation
	groups := [][]Operation{serviceOperations(), keyOperations(),
		recordOperations(companyKind()), workflowOperations(), runOperations(), webhookOperations()}
	for _, k := range declaredKinds() {
		groups = append(groups, recordOperations(k))
	}
	groups = append(groups, listEntryOperations(), dataOperations(), enrichmentOperations(), jobOperations(), eventOperations(), mcpOperations())
	for _, group := range groups {
		ops = append(ops, group...)
	}
	seen := map[string]bool{}
	for i, op := range ops {
		if err := op.Check(); err != nil {
			panic("api: " + err.Error())
		}
		if seen[op.Pattern()] {
			panic("api: " + op.Pattern() + " declared twice")
		}
		seen[op.Pattern()] = true
		if op.describe == nil || op.serve == nil {
			panic(fmt.Sprintf("api: %s has no OpenAPI description or no handler", op.Pattern()))
		}
		if op.Tool != nil {
			t := *op.Tool
			t.OperationID = openapi.OperationID(op.Method, op.Path)
			t.ReadOnly = op.Method == http.MethodGet || op.ReadOnly
			t.Idempotent = t.ReadOnly || op.Method == http.MethodPut || op.Method == http.MethodPatch || op.Method == http.MethodDelete
			t.Destructive = !t.ReadOnly && (op.Method != http.MethodPost || op.destroys)
			ops[i].Tool = &t
		}
	}
	return ops
}

// Routes is the route table: the registry's routes and policies.
func Routes() []routes.Route {
	ops := registry()
	out := make([]routes.Route, len(ops))
	for i, op := range ops {
		out[i] = op.Route
	}
	return out
}

// Handler serves the operations of the given functions (every function
// when none); an operation of another function answers as an unknown one,
// and a known path with a wrong method 405, whichever function serves it.
func (a *API) Handler(functions ...string) http.Handler {
	ops := registry()
	handlers := make(map[string]http.Handler, len(ops))
	table := make([]routes.Route, len(ops))
	for i, op := range ops {
		table[i] = op.Route
		if len(functions) == 0 || slices.Contains(functions, op.Function) {
			handlers[op.Pattern()] = op.serve(a)
		}
	}
	return httpapi.NewRouter(table, handlers, httpapi.Authenticate(a.d.Auth, a.d.Limits), httpapi.Idempotency(a.d.Store))
}

// MCP is what the MCP server offers (api.Deps.NewMCP): the tools of the
// registry's operations, in registry order, and the kinds of record they
// read.
func MCP() routes.MCP {
	var out routes.MCP
	for _, op := range registry() {
		if op.Tool == nil {
			continue
		}
		out.Tools = append(out.Tools, *op.Tool)
		if op.Resource != "" && !slices.Contains(out.Records, op.Resource) {
			out.Records = append(out.Records, op.Resource)
		}
	}
	return out
}

// DocRoutes are the routes that serve d's records, for docs/resources.md
// (resources.Markdown): its generic operations, which its declaration
// describes, then the others, each with its summary, status and
// description from the OpenAPI text it is declared with.
func DocRoutes(d *resource.Def) []resource.DocRoute {
	var out []resource.DocRoute
	for _, op := range registry() {
		if op.Resource != d.Name {
			continue
		}
		r := resource.DocRoute{Method: op.Method, Path: op.Path}
		if !op.generic {
			doc := operation(op)
			r.Answer = fmt.Sprintf("%s: `%d`. %s", doc.Summary, doc.Status, strings.ReplaceAll(doc.Description, "|", `\|`))
		}
		out = append(out, r)
	}
	return out
}
