// Package routes is the single route table of the service: every method
// and path with the resource group (Lambda function) that serves it. The
// dev server mounts from it, the CDK stack creates API Gateway routes from
// it, and the SAM template is checked against it.
package routes

// Groups: one Lambda function each.
const (
	Companies = "companies"
	Keys      = "keys" // also serves the health check
	Workflows = "workflows"
	Webhook   = "webhook" // behind a Lambda function URL, not API Gateway
)

// Route is one endpoint. Path uses net/http pattern syntax ({id}).
type Route struct {
	Group  string
	Method string
	Path   string
}

// Pattern is the net/http ServeMux pattern of the route.
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// Authenticated reports whether the route needs an API key: every /v1 route.
func (r Route) Authenticated() bool { return len(r.Path) >= 4 && r.Path[:4] == "/v1/" }

// Table lists every endpoint of the service.
var Table = []Route{
	{Keys, "GET", "/healthz"},
	{Keys, "GET", "/v1/keys"},
	{Keys, "DELETE", "/v1/keys/{clientId}"},

	{Companies, "POST", "/v1/companies"},
	{Companies, "GET", "/v1/companies"},
	{Companies, "GET", "/v1/companies/{id}"},
	{Companies, "PUT", "/v1/companies/{id}"},
	{Companies, "DELETE", "/v1/companies/{id}"},

	{Workflows, "POST", "/v1/workflows"},
	{Workflows, "GET", "/v1/workflows"},
	{Workflows, "GET", "/v1/workflows/{id}"},
	{Workflows, "PUT", "/v1/workflows/{id}"},
	{Workflows, "DELETE", "/v1/workflows/{id}"},
	{Workflows, "POST", "/v1/workflows/{id}/trigger/webhook-secret/rotate"},
	{Workflows, "POST", "/v1/workflows/{id}/runs"},
	{Workflows, "GET", "/v1/workflows/{id}/runs"},
	{Workflows, "GET", "/v1/workflow-runs"},
	{Workflows, "GET", "/v1/workflow-runs/{id}"},
	{Workflows, "PATCH", "/v1/workflow-runs/{id}"},
	{Workflows, "POST", "/v1/workflow-runs/{id}/retry"},

	{Webhook, "POST", "/webhooks/workflows/{slug}"},
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
