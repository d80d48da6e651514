package routes

// Topic is a group of the API reference: the OpenAPI tag its routes are
// listed under, what an API user looks for (a kind of record, or a topic
// such as enrichment), not the function that serves them (which each
// operation names in x-function).
type Topic struct {
	// Name is the tag, and the part of a deep link into the reference
	// (/docs#tag/<Name>/operation/<operationId>): a route's Topic, or its
	// Resource when it names none.
	Name string
	// Title is how the reference shows it (x-displayName); About says
	// what its routes do ("" for a kind of record: its declaration's Doc).
	Title, About string
	// Section is the heading it is listed under (x-tagGroups).
	Section string
}

// Topics are the reference's groups, in the order it lists them; every
// route is in exactly one (Route.TopicName), and each has a route
// (TestEveryRouteIsInOneTopicAndEveryTopicHasARoute).
var Topics = []Topic{
	{"companies", "Companies", "", "Records"},
	{"deals", "Deals", "", "Records"},
	{"people", "People", "", "Records"},
	{"funds", "Funds", "", "Records"},
	{"activities", "Activities", "", "Records"},
	{"documents", "Documents", "", "Records"},
	{"lists", "Lists", "", "Records"},
	{"workspaces", "Workspaces", "", "Records"},
	{"teams", "Teams", "", "Records"},
	{"industries", "Industries", "", "Classification"},
	{"sectors", "Sectors", "", "Classification"},
	{"subsectors", "Subsectors", "", "Classification"},
	{"tags", "Tags", "", "Classification"},
	{"frameworks", "Scoring frameworks", "", "Scoring"},
	{"screenings", "Screenings", "", "Scoring"},
	{"scores", "Scores", "", "Scoring"},
	{"enrichment", "Enrichment", "enrichment values of a record, with their source and confidence", "Data"},
	{"metrics", "Metric series", "metric points, and series of them aggregated over time", "Data"},
	{"imports", "Imports", "bulk imports of records from CSV or NDJSON files", "Data"},
	{"exports", "Exports", "bulk exports of records to CSV or NDJSON files", "Data"},
	{"workflows", "Workflows", "", "Workflows"},
	{"workflow-runs", "Workflow runs", "", "Workflows"},
	{"events", "Events", "the change history: every write to a record as an event", "Events and webhooks"},
	{"webhook-endpoints", "Webhook endpoints", "outbound webhooks: endpoints that receive events, and their deliveries", "Events and webhooks"},
	{"keys", "API keys", "the organization's API keys", "Service"},
	{"service", "Service", "the health check and this document", "Service"},
	{"mcp", "MCP", "the Model Context Protocol endpoint: AI agents' tools over the routes above", "Service"},
}

// TopicName is the name of the topic r is listed under: its Topic, or
// its Resource when it names none.
func (r Route) TopicName() string {
	if r.Topic != "" {
		return r.Topic
	}
	return r.Resource
}
