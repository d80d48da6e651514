// Package lambdas names the service's Lambda functions. It imports nothing, so
// that every package — the route table, the domain packages that say which
// function serves their routes, the infrastructure — can name a function
// without depending on another layer. What each function is (how it is
// reached, what it may access) is routes.Functions.
package lambdas

// The functions that serve routes of the HTTP API (or, for Webhook, of its
// function URL): one per group of routes.
const (
	Companies = "companies"
	Keys      = "keys" // API keys, the health check, and requests no route matches
	Workflows = "workflows"
	Webhook   = "webhook"   // behind a Lambda function URL, not API Gateway
	Catalog   = "catalog"   // the classification: industries, sectors, ... (the declarations of resources/catalog.go)
	CRM       = "crm"       // deals, people, ... (the declarations of resources/crm.go)
	Documents = "documents" // documents, lists (resources/documents.go)
	Scoring   = "scoring"   // frameworks, screenings, scores (resources/scoring.go)
	Search    = "search"    // POST /v1/<resource>/search of the searchable resources
	Data      = "data"      // enrichment values and metric series
	MCP       = "mcp"       // the Model Context Protocol endpoint, /mcp
	Hooks     = "hooks"     // the change history (/v1/events) and outbound webhook endpoints
)

// The functions no route reaches.
const (
	Runner  = "runner"  // invoked by the run state machine
	Admin   = "admin"   // invoked directly by the operator
	Indexer = "indexer" // fed by the table's stream (search on OpenSearch)
	Events  = "events"  // fed by the table's stream: the change history, and deliveries queued
	Deliver = "deliver" // fed by the delivery queue: outbound webhook attempts
)
