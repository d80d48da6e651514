// Package operation is how the service's operations are declared: each
// once, next to its handler, in the feature package that serves it
// (internal/api/...), with its route and policies (routes.Route), its
// OpenAPI text and what serves it. The router, the OpenAPI document, the
// MCP tools, docs/resources.md and the deployment model are derived from
// the operations a process collects (Collect).
package operation

import (
	"fmt"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// Operation is one operation of the service: its route and policies
// (function, role, rate scope, answer budget, idempotency, MCP tool), its
// OpenAPI text and shapes, and its handler over its feature's
// dependencies.
type Operation struct {
	routes.Route
	// Describe writes the operation's summary, description, parameters,
	// body and answers onto op, which holds what the route implies.
	Describe func(op *openapi.Operation)
	// Serve is the handler over the dependencies of the feature that
	// declares the operation (the value given to Bind).
	Serve func(deps any) http.Handler
	// Generic: one of a kind's create, list, get, update and delete, or
	// its upsert and batch, which its declaration documents.
	Generic bool
	// Destroys: a POST that may change or delete existing records (a
	// batch, an import that updates), for its tool's destructiveHint.
	Destroys bool
	// Hidden: the route, open to every key, refuses a member key a
	// request naming what only admin keys read (HidesAdminOnly).
	Hidden bool
}

// Declare returns the operation method path served by function, whose
// handler is serve over a feature's dependencies A, with the policies its
// path and method imply: a /v1 route counts against its key (others
// declare their scope), an authenticated POST keeps Idempotency-Keys (a
// read-only one declares ReadOnly), a delete answers no body.
func Declare[A any](function, method, path string, serve func(A, http.ResponseWriter, *http.Request)) Operation {
	op := Operation{Route: routes.Route{Function: function, Method: method, Path: path, Rate: routes.RateNone}}
	if op.Authenticated() {
		op.Rate = routes.RateKey
		op.Idempotent = method == http.MethodPost
	}
	if method == http.MethodDelete {
		op.Answer = routes.AnswerEmpty
	}
	op.Serve = func(deps any) http.Handler {
		a, ok := deps.(A)
		if !ok {
			panic(fmt.Sprintf("operation: %s is served over %T, given %T", op.Pattern(), *new(A), deps))
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(a, w, r) })
	}
	return op
}

// Answers says what bounds the operation's answer.
func (o Operation) Answers(k routes.Answer) Operation { o.Answer = k; return o }

// Safe marks a POST that changes nothing (a search, a read of a series):
// read-only (routes.Route.ReadOnly), no Idempotency-Key record.
func (o Operation) Safe() Operation { o.ReadOnly, o.Idempotent = true, false; return o }

// AdminOnly restricts the operation to admin keys; action names it in the
// 403.
func (o Operation) AdminOnly(action string) Operation { o.Admin = action; return o }

// HidesAdminOnly marks an operation open to every key that hides from
// member keys what only admin keys read, and refuses (403) a member key's
// request that names it: the change history, whose events of API keys and
// webhook endpoints only admin keys read. Its OpenAPI answers then
// include 403.
func (o Operation) HidesAdminOnly() Operation { o.Hidden = true; return o }

// RateOf declares what the operation's requests count against.
func (o Operation) RateOf(r routes.Rate) Operation { o.Rate = r; return o }

// Of names the kind of record the operation serves.
func (o Operation) Of(resource string) Operation { o.Resource = resource; return o }

// InTopic lists the operation in the reference under the topic name
// (routes.Topics) rather than its resource's.
func (o Operation) InTopic(name string) Operation { o.Topic = name; return o }

// Doc gives the operation its OpenAPI text and shapes.
func (o Operation) Doc(describe func(op *openapi.Operation)) Operation {
	o.Describe = describe
	return o
}

// AsTool exposes the operation as the MCP tool name.
func (o Operation) AsTool(name, description string) Operation {
	o.Tool = &routes.Tool{Name: name, Description: description}
	return o
}

// Destructive marks a POST that may change or delete existing records
// (routes.Tool.Destructive).
func (o Operation) Destructive() Operation { o.Destroys = true; return o }

// BodyArguments makes the members of the operation's body its tool's
// arguments (routes.Tool.BodyArguments).
func (o Operation) BodyArguments() Operation {
	t := *o.Tool
	t.BodyArguments = true
	o.Tool = &t
	return o
}

// ToolDefaults are the body fields a call of the operation's tool gets
// when it does not set them.
func (o Operation) ToolDefaults(d map[string]any) Operation {
	t := *o.Tool
	t.Defaults = d
	o.Tool = &t
	return o
}

// Collect joins the operations of every feature, in order, and checks
// them: each route valid (routes.Route.Check), declared once, described
// and served; each tool gets its operation id and its hints (read-only,
// idempotent, destructive) from its method and declaration. A failed
// check is a programming error: Collect panics, naming the route.
func Collect(groups ...[]Operation) []Operation {
	var ops []Operation
	for _, g := range groups {
		ops = append(ops, g...)
	}
	seen := map[string]Operation{}
	for i, op := range ops {
		if err := op.Check(); err != nil {
			panic("operation: " + err.Error())
		}
		if first, dup := seen[op.Pattern()]; dup {
			panic(fmt.Sprintf("operation: %s declared twice: %s, and %s", op.Pattern(), first.declaredBy(), op.declaredBy()))
		}
		seen[op.Pattern()] = op
		if op.Describe == nil || op.Serve == nil {
			panic(fmt.Sprintf("operation: %s has no OpenAPI description or no handler", op.Pattern()))
		}
		if op.Tool != nil {
			t := *op.Tool
			t.OperationID = openapi.OperationID(op.Method, op.Path)
			t.ReadOnly = op.Method == http.MethodGet || op.ReadOnly
			t.Idempotent = t.ReadOnly || op.Method == http.MethodPut || op.Method == http.MethodPatch || op.Method == http.MethodDelete
			t.Destructive = !t.ReadOnly && (op.Method != http.MethodPost || op.Destroys)
			ops[i].Tool = &t
		}
	}
	return ops
}

// declaredBy says what declares o, for a message that asks to change it.
func (o Operation) declaredBy() string {
	if o.Generic {
		return fmt.Sprintf("by the declaration of the kind of record %q (in internal/resources: give it another Name)", o.Resource)
	}
	return fmt.Sprintf("by a feature of internal/api (operation.Declare of %s, function %s)", o.Pattern(), o.Function)
}

// Routes are the routes and policies of ops.
func Routes(ops []Operation) []routes.Route {
	out := make([]routes.Route, len(ops))
	for i, op := range ops {
		out[i] = op.Route
	}
	return out
}
