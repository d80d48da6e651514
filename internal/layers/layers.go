// Package layers declares how the module's packages are layered: each
// package of internal/ sits in one layer, and imports only packages of its
// own layer or of lower ones (its tests may import anything). The layers,
// lowest first:
//
//   - Base: names, errors, time, ids, decoding, text folding, the local
//     emulators' launchers and the deployment model (plain data that
//     infra/ reads); they know nothing of the service.
//   - Storage: the table (store) and what runs inside a record (steps).
//   - Platform: mechanisms every surface shares and no domain owns —
//     declared resources, keys and authentication, rate limits, the route
//     and function tables, metric series, the search engines, the OpenAPI
//     builder, the operator's commands.
//   - HTTP: the HTTP mechanism (router, middleware, lists, budgets); it
//     knows routes and callers, never a domain package.
//   - Domain: companies, workflows, runs, enrichment, the declared
//     resources.
//   - Wiring: the services a process builds from its configuration
//     (service.Deps), which every feature's API is made over.
//   - Surface: the REST API's features, each its handlers and operations
//     (api/…), the registry that collects them (api), the MCP server.
//   - Assembly: what runs a process (the Lambda functions' and the
//     runner's entry points, the local Lambda front, the dev server's
//     pieces, the test environments), and the generators, which read the
//     whole service (the deployment model's among them).
//
// cmd/ and functions/ sit above every layer. The test in this package
// fails on an import that points up, and on a package that has no layer
// (a new package is placed here first).
package layers

// Layers lists the packages of internal/ (paths below internal/) by layer,
// lowest first.
var Layers = []Layer{
	{"base", []string{"lambdas", "apperr", "clock", "ids", "jsonbody", "fold", "awsenv", "docspage", "dev/dynamolocal", "dev/partitionsim", "dev/lambdaenv", "dev/portowner",
		"dev/localsfn", "dev/fasttest", "inbound", "dev/webhooktest", "perfreport", "layers", "outbound", "blob", "dev/testinputs", "deploymodel", "telemetry", "dev/logcheck", "embed", "embed/embedtest", "embed/bedrock"}},
	{"storage", []string{"store", "steps", "streams", "streams/streamsapi", "blob/s3blob"}},
	{"platform", []string{"resource", "listing", "apikeys", "auth", "ratelimit", "routes", "series", "search", "search/searchtest", "search/vectors",
		"search/embedded", "search/opensearch", "openapi", "admin", "usage", "dev/testenv", "history", "history/bus", "bulk"}},
	{"http", []string{"httpapi", "operation"}},
	{"domain", []string{"kinds", "companies", "workflows", "enrichment", "runs", "resources", "search/opensearch/golden", "outbound/endpoints", "outbound/sqsqueue", "jobs"}},
	{"wiring", []string{"service"}},
	{"surface", []string{"api/keysapi", "api/serviceapi", "api/recordsapi/listspec", "api/recordsapi/batch", "api/recordsapi", "api/companiesapi", "api/resourcesapi", "api/workflowsapi", "api/jobsapi", "api/mcpapi", "api/eventsapi", "api/enrichmentapi", "api/listsapi", "api/seriesapi", "api", "mcpserver"}},
	{"assembly", []string{"serve", "dev/apitest/wholeservice", "serve/eventfns", "serve/jobfns", "service/operator", "sizing", "dev/lambdafront", "dev/localdev", "dev/localdev/localdevtest", "dev/apitest", "dev/capacity", "dev/dynamolocal/shared", "deploymodel/derive", "generate", "dev/logcheck/cmd"}},
}

// Layer is one layer: its name and packages.
type Layer struct {
	Name     string
	Packages []string
}
