package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// Operations is the registry: every operation of the service, each
// declared once with its handler — the hand-written ones in the file of
// their handlers, those of every kind of record (declared resources,
// companies, workflows, runs) by recordOperations from their
// declarations.
func Operations() []operation.Operation { return slices.Clone(registry()) }

var (
	registryOnce sync.Once
	registered   []operation.Operation
)

// registry is the registry, declared on first use.
func registry() []operation.Operation {
	registryOnce.Do(func() { registered = declareAll() })
	return registered
}

// declareAll declares every operation; operation.Collect checks them.
func declareAll() []operation.Operation {
	groups := [][]operation.Operation{serviceOperations(), keyOperations(),
		recordOperations(companyKind()), workflowOperations(), runOperations(), webhookOperations()}
	for _, k := range declaredKinds() {
		groups = append(groups, recordOperations(k))
	}
	groups = append(groups, listEntryOperations(), dataOperations(), enrichmentOperations(), jobOperations(), eventOperations(), mcpOperations())
	return operation.Collect(groups...)
}

// Routes is the route table: the registry's routes and policies.
func Routes() []routes.Route { return operation.Routes(registry()) }

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
			handlers[op.Pattern()] = op.Serve(a)
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
		if !op.Generic {
			doc := describe(op)
			r.Answer = fmt.Sprintf("%s: `%d`. %s", doc.Summary, doc.Status, strings.ReplaceAll(doc.Description, "|", `\|`))
		}
		out = append(out, r)
	}
	return out
}
