// Package routes is the single route table of the service: every method
// and path with the resource group (Lambda function) that serves it. The
// dev server mounts from it, the CDK stack creates API Gateway routes from
// it, and the SAM template is checked against it.
package routes

import "github.com/sourcebase/sourcebase/internal/resources"

// Groups: one Lambda function each.
const (
	Companies = "companies"
	Keys      = "keys" // also serves the health check
	Workflows = "workflows"
	Webhook   = "webhook" // behind a Lambda function URL, not API Gateway
	Catalog   = resources.Catalog
	CRM       = resources.CRM
	Documents = resources.Documents
	Scoring   = resources.Scoring
)

// Groups lists every resource group.
var Groups = []string{Companies, Keys, Workflows, Webhook, Catalog, CRM, Documents, Scoring}

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
}

// Pattern is the net/http ServeMux pattern of the route.
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// Authenticated reports whether the route needs an API key: every /v1 route.
func (r Route) Authenticated() bool { return len(r.Path) >= 4 && r.Path[:4] == "/v1/" }

// Table lists every endpoint of the service: the routes written by hand,
// then those of every declared resource.
var Table = append(handWritten, declared()...)

func declared() []Route {
	var out []Route
	for _, r := range resources.Routes() {
		out = append(out, Route{Group: r.Group, Method: r.Method, Path: r.Path, Resource: r.Def.Name, MaxParam: r.MaxParam})
	}
	return out
}

var handWritten = []Route{
	{Group: Keys, Method: "GET", Path: "/healthz"},
	{Group: Keys, Method: "GET", Path: "/v1/keys"},
	{Group: Keys, Method: "DELETE", Path: "/v1/keys/{clientId}"},

	{Group: Companies, Method: "POST", Path: "/v1/companies"},
	{Group: Companies, Method: "GET", Path: "/v1/companies"},
	{Group: Companies, Method: "GET", Path: "/v1/companies/{id}"},
	{Group: Companies, Method: "PUT", Path: "/v1/companies/{id}"},
	{Group: Companies, Method: "DELETE", Path: "/v1/companies/{id}"},

	{Group: Workflows, Method: "POST", Path: "/v1/workflows"},
	{Group: Workflows, Method: "GET", Path: "/v1/workflows"},
	{Group: Workflows, Method: "GET", Path: "/v1/workflows/{id}"},
	{Group: Workflows, Method: "PUT", Path: "/v1/workflows/{id}"},
	{Group: Workflows, Method: "DELETE", Path: "/v1/workflows/{id}"},
	{Group: Workflows, Method: "POST", Path: "/v1/workflows/{id}/trigger/webhook-secret/rotate"},
	{Group: Workflows, Method: "POST", Path: "/v1/workflows/{id}/runs"},
	{Group: Workflows, Method: "GET", Path: "/v1/workflows/{id}/runs"},
	{Group: Workflows, Method: "GET", Path: "/v1/workflow-runs"},
	{Group: Workflows, Method: "GET", Path: "/v1/workflow-runs/{id}"},
	{Group: Workflows, Method: "PATCH", Path: "/v1/workflow-runs/{id}"},
	{Group: Workflows, Method: "POST", Path: "/v1/workflow-runs/{id}/retry"},

	{Group: Webhook, Method: "POST", Path: "/webhooks/workflows/{slug}"},

	{Group: Documents, Method: "POST", Path: "/v1/lists/{id}/entries"},
	{Group: Documents, Method: "GET", Path: "/v1/lists/{id}/entries"},
	{Group: Documents, Method: "DELETE", Path: "/v1/lists/{id}/entries/{recordId}"},
}

// Of returns the routes of the given groups (all routes when none given).
func Of(groups ...string) []Route {
	if len(groups) == 0 {
		return Table
	}
	var out []Route
	for _, r := range Table {
		for _, g := range groups {
			if r.Group == g {
				out = append(out, r)
			}
		}
	}
	return out
}
