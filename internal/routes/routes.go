// Package routes describes the service's Lambda functions (Functions: how
// each is reached, what it may access) and its routes: a method and path
// and the function that serves it (Route.Group). Function names are in
// package fn. The route table itself is api.Routes(), built where each
// route is declared with its handler; the dev server mounts from it, the
// CDK stack creates API Gateway routes from it, and the SAM template is
// generated from it.
package routes

// Groups lists every resource group: the functions reached by routes.
var Groups = func() []string {
	var out []string
	for _, f := range Functions {
		if f.Reach == ByAPI || f.Reach == ByURL {
			out = append(out, f.Name)
		}
	}
	return out
}()

// Route is one endpoint. Path uses net/http pattern syntax ({id}).
type Route struct {
	Group  string
	Method string
	Path   string
	// Resource names the declared resource (package resources) whose
	// generic handler serves the route; "" for the routes written by hand.
	Resource string
	// MaxParam is the longest path parameter the route accepts (0: an id's,
	// store.MaxIDLength); longer ones are "not found".
	MaxParam int
	// ReadOnly marks a POST that changes nothing (a search): it keeps no
	// Idempotency-Key record and needs only read access to the table.
	ReadOnly bool
	// Admin, when set, restricts the route to admin keys and names what it
	// does ("managing API keys"): a member key is answered 403 "<Admin>
	// requires an admin key" before anything else of the route runs, an
	// Idempotency-Key's kept answer included.
	Admin string
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

// Of returns the routes of rs in the given groups (all when none given).
func Of(rs []Route, groups ...string) []Route {
	if len(groups) == 0 {
		return rs
	}
	var out []Route
	for _, r := range rs {
		for _, g := range groups {
			if r.Group == g {
				out = append(out, r)
			}
		}
	}
	return out
}
