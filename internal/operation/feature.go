package operation

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// A Feature is one feature package's part of the service: its operations,
// the component schemas they refer to, and the API their handlers are
// served over, made from the services a process built (S: service.Deps).
// The registry (package api) collects every feature; a test of one
// feature serves that feature alone (package apitest), so that its test
// binary links no other feature's handlers.
type Feature[S any] struct {
	// Name names the feature in panics and listings ("records").
	Name string
	// Operations are its operations, in the order the reference and the
	// MCP tools list them.
	Operations func() []Operation
	// Schemas adds its component schemas to the document's; nil: none.
	Schemas func(out map[string]openapi.Schema)
	// API is the value its operations' Serve takes, over a process's
	// services.
	API func(S) any
}

// NewFeature declares a feature whose API api makes from a process's
// services.
func NewFeature[S, A any](name string, operations func() []Operation, schemas func(map[string]openapi.Schema), api func(S) A) Feature[S] {
	return Feature[S]{Name: name, Operations: operations, Schemas: schemas, API: func(s S) any { return api(s) }}
}

// Bound is an operation with the API its handler is served over.
type Bound struct {
	Operation
	API any
}

// Bind collects the operations of features (Collect, whose checks it
// runs) and binds each to its feature's API over s; a feature whose API is
// set in apis (by name) is served over that one instead (the MCP bridge,
// whose API serves the others).
func Bind[S any](s S, apis map[string]any, features ...Feature[S]) []Bound {
	var groups [][]Operation
	for _, f := range features {
		groups = append(groups, f.Operations())
	}
	ops := Collect(groups...)
	out := make([]Bound, 0, len(ops))
	for i, f := range features {
		a, ok := apis[f.Name]
		if !ok {
			a = f.API(s)
		}
		for range groups[i] {
			out = append(out, Bound{Operation: ops[len(out)], API: a})
		}
	}
	return out
}

// Handler serves the bound operations of the given functions (every
// function when none), each over its API, behind authenticate (the
// credentials and rate limits of /v1) and idempotency (Idempotency-Key):
// an operation of another function answers as an unknown one, and a
// known path with a wrong method 405, whichever function serves it.
func Handler(bound []Bound, functions []string, authenticate, idempotency func(http.Handler) http.Handler) http.Handler {
	table := make([]routes.Route, len(bound))
	handlers := make(map[string]http.Handler, len(bound))
	for i, b := range bound {
		table[i] = b.Route
		if len(functions) > 0 && !slices.Contains(functions, b.Function) {
			continue
		}
		if b.API == nil {
			panic(fmt.Sprintf("operation: %s is served, and its feature has no API", b.Pattern()))
		}
		handlers[b.Pattern()] = b.Serve(b.API)
	}
	return httpapi.NewRouter(table, handlers, authenticate, idempotency)
}
