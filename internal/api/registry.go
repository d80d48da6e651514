package api

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/api/enrichmentapi"
	"github.com/sourcebase/sourcebase/internal/api/eventsapi"
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/api/keysapi"
	"github.com/sourcebase/sourcebase/internal/api/listsapi"
	"github.com/sourcebase/sourcebase/internal/api/mcpapi"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/api/seriesapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
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
	// servedBy is, for each registered operation, the API of the feature
	// that declares it (a feature's api).
	servedBy []func(f *Features) any
)

// registry is the registry, declared on first use.
func registry() []operation.Operation {
	registryOnce.Do(func() {
		var groups [][]operation.Operation
		for _, f := range features() {
			ops := f.operations()
			groups = append(groups, ops)
			for range ops {
				servedBy = append(servedBy, f.api)
			}
		}
		registered = operation.Collect(groups...)
	})
	return registered
}

// Features are the APIs of the features a process serves, each over the
// services it uses (service.Handler makes them); an operation's handler is
// its feature's. Every feature an operation of the served functions
// belongs to must be set.
type Features struct {
	Service    *Service
	Keys       *keysapi.API
	Records    *recordsapi.API
	Workflows  *workflowsapi.API
	Lists      *listsapi.API
	Series     *seriesapi.API
	Enrichment *enrichmentapi.API
	Jobs       *jobsapi.API
	Events     *eventsapi.API
	MCP        *mcpapi.API
}

// feature is a group of operations and what its handlers are served over
// (the value its operations' Serve takes).
type feature struct {
	operations func() []operation.Operation
	api        func(f *Features) any
}

// features are the service's features, in the order the registry lists
// their operations (the reference's and the MCP tools' order).
func features() []feature {
	records := func(f *Features) any { return f.Records }
	workflows := func(f *Features) any { return f.Workflows }
	fs := []feature{{serviceOperations, func(f *Features) any { return f.Service }},
		{keysapi.Operations, func(f *Features) any { return f.Keys }},
		{recordsapi.CompanyOperations, records}, {recordsapi.WorkflowOperations, records},
		{workflowsapi.SecretOperations, workflows}, {recordsapi.RunOperations, records},
		{workflowsapi.RunOperations, workflows}, {workflowsapi.WebhookOperations, workflows}}
	for _, ops := range recordsapi.DeclaredOperations() {
		fs = append(fs, feature{func() []operation.Operation { return ops }, records})
	}
	return append(fs,
		feature{listsapi.Operations, func(f *Features) any { return f.Lists }},
		feature{seriesapi.Operations, func(f *Features) any { return f.Series }},
		feature{enrichmentapi.Operations, func(f *Features) any { return f.Enrichment }},
		feature{jobsapi.Operations, func(f *Features) any { return f.Jobs }},
		feature{eventsapi.Operations, func(f *Features) any { return f.Events }},
		feature{mcpapi.Operations, func(f *Features) any { return f.MCP }})
}

// Routes is the route table: the registry's routes and policies.
func Routes() []routes.Route { return operation.Routes(registry()) }

// Handler serves the operations of the given functions (every function
// when none) over f, behind authenticate (the credentials and rate limits
// of /v1) and idempotency (Idempotency-Key); an operation of another
// function answers as an unknown one, and a known path with a wrong
// method 405, whichever function serves it.
func Handler(f *Features, authenticate, idempotency func(http.Handler) http.Handler, functions ...string) http.Handler {
	ops := registry()
	handlers := make(map[string]http.Handler, len(ops))
	for i, op := range ops {
		if len(functions) > 0 && !slices.Contains(functions, op.Function) {
			continue
		}
		a := servedBy[i](f)
		if reflect.ValueOf(a).IsNil() {
			panic("api: " + op.Pattern() + " is served, and its feature is not set in api.Features")
		}
		handlers[op.Pattern()] = op.Serve(a)
	}
	return httpapi.NewRouter(operation.Routes(ops), handlers, authenticate, idempotency)
}

// MCP is what the MCP server offers (service.Deps.NewMCP): the tools of the
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
