package routes

import (
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/store"
)

// SweepSchedule is how often the runner sweeps in AWS (its Schedule): it
// fails the runs left queued too long and completes the purges of deleted
// companies' candidates (app.Sweep). The dev server sweeps every minute.
const SweepSchedule = "rate(5 minutes)"

// HealthPath is the health check's path; it describes the table.
const HealthPath = "/healthz"

// Reach says how a function is invoked.
type Reach string

// How functions are reached.
const (
	// ByAPI: routes of the HTTP API (API Gateway), from the route table.
	ByAPI Reach = "api"
	// ByURL: a Lambda function URL with no IAM auth; the code checks the
	// request's signature (webhook deliveries).
	ByURL Reach = "url"
	// ByStateMachine: Task states of the run state machine.
	ByStateMachine Reach = "state-machine"
	// ByOperator: invoked directly (lambda:InvokeFunction), never public.
	ByOperator Reach = "operator"
	// ByStream: batches of the table's DynamoDB stream.
	ByStream Reach = "stream"
	// ByQueue: batches of the outbound webhooks' delivery queue (SQS FIFO).
	ByQueue Reach = "queue"
)

// Function is one Lambda function: its code is functions/<Name>, and for
// the groups, the routes of the route table whose Group is Name.
type Function struct {
	Name string
	// Doc says what the function serves; a %s in it stands for the
	// resources its routes serve (Describe), so that a declared resource
	// added to a group is not listed by hand.
	Doc   string
	Reach Reach
	// StartsRuns: the function starts executions of the run state
	// machine (states:StartExecution and STATE_MACHINE_ARN).
	StartsRuns bool
	// Table is the table access the function needs beyond what its routes
	// imply (see Access); for functions without routes.
	Table []store.Access
	// HoldsIndexes: the function keeps search indexes in memory
	// (search/embedded), which its memory must fit.
	HoldsIndexes bool
	// SearchesByAPI: the function's tools search (the mcp function) without
	// a search engine of its own: it sends the search routes to the HTTP
	// API, as any client does (SEARCH_BASE_URL: the API's base URL, else
	// the address its own request came to).
	SearchesByAPI bool
	// WebhookURLs: the function shows webhook trigger urls, so it is told
	// the webhook function's public URL (WEBHOOK_BASE_URL).
	WebhookURLs bool
	// EngineBuilds: the function is built once per search engine: by
	// default with the embedded engine only, and with OpenSearchTag with
	// the OpenSearch engine only, so that neither build carries the other
	// engine's libraries; a deployment on OpenSearch deploys the second
	// (Asset).
	EngineBuilds bool
	// OpenSearchOnly: the function exists only in deployments whose
	// search engine is OpenSearch (the indexer).
	OpenSearchOnly bool
	// Pages: the documentation pages (docs/*.md) ship beside the
	// function's bootstrap, in PagesDir, rather than inside it: the MCP
	// function offers them as resources, and embedded they would take its
	// binary past the size its cold start is kept to.
	Pages bool
	// Schedule: the function is also invoked on this EventBridge schedule
	// expression ("rate(5 minutes)", "cron(...)") with the standard
	// Scheduled Event ({"source":"aws.events","detail-type":"Scheduled
	// Event",...}); the CDK stack's rule and the SAM template's Schedule
	// event are made from it. The runner sweeps on it (app.Sweep).
	Schedule string
	// SendsDeliveries: the function queues outbound webhook deliveries
	// (sqs:SendMessage on the delivery queue, DELIVER_QUEUE_URL).
	SendsDeliveries bool
	// RunsJobs: the function creates and reads bulk jobs (package jobs):
	// their files' bucket (BULK_BUCKET; it presigns uploads and downloads)
	// and the job state machine, which it starts for exports
	// (JOBS_STATE_MACHINE_ARN, states:StartExecution). The state
	// machine's function runs the jobs' steps.
	RunsJobs bool
	// Fallback: the function also serves the HTTP API's $default route,
	// the requests no route matches (401 without credentials, then 404
	// "no such endpoint" or 405), as the dev server answers them.
	Fallback bool
	// BootstrapMB is the size (MiB) its linux/arm64 stripped bootstrap is
	// kept to, for its cold start: DefaultBootstrapMB unless set (the
	// functions' tests and the performance report fail past it). The
	// search function's embedded-engine build is not held to it.
	BootstrapMB int
	// Embeds: the function calls the embedding provider (EMBEDDINGS):
	// the infrastructure grants it bedrock:InvokeModel on the model and
	// sets EMBEDDINGS and EMBEDDINGS_MODEL.
	Embeds bool
}

// DefaultBootstrapMB is the size a function's bootstrap is kept to.
const DefaultBootstrapMB = 12

// MaxBootstrapBytes is the size f's bootstrap is kept to.
func (f Function) MaxBootstrapBytes() int64 {
	if f.BootstrapMB > 0 {
		return int64(f.BootstrapMB) << 20
	}
	return DefaultBootstrapMB << 20
}

// Functions are every Lambda function of the service. The CDK stack, the
// SAM template and the local Lambda front are built from this list and
// the route table.
var Functions = []Function{
	{Name: lambdas.Companies, Doc: "companies", Reach: ByAPI},
	{Name: lambdas.Keys, Doc: "API keys, the health check, and requests no route matches", Reach: ByAPI, Fallback: true},
	{Name: lambdas.Workflows, Doc: "workflows, their triggers and runs", Reach: ByAPI, StartsRuns: true, WebhookURLs: true},
	{Name: lambdas.Catalog, Doc: "%s", Reach: ByAPI},
	{Name: lambdas.CRM, Doc: "%s", Reach: ByAPI},
	{Name: lambdas.Documents, Doc: "%s", Reach: ByAPI},
	{Name: lambdas.Scoring, Doc: "scoring %s", Reach: ByAPI},
	// The data function links the bulk jobs' S3 client and runner beside
	// enrichment and the series: the largest of the resource groups. What
	// every function gained for day two (the request line and its
	// metrics, X-Ray segments, usage, suspended organizations: 31 KB of
	// code) took it 64 KB past 12 MB (a stripped arm64 binary grows by
	// segments of 64 KB): 13 MB, as the mcp function's.
	{Name: lambdas.Data, Doc: "enrichment values, metric series, and bulk imports and exports", Reach: ByAPI, RunsJobs: true, BootstrapMB: 13},
	// The search function embeds the records its engine holds and every
	// hybrid search's text, and puts the records' vectors (Vectors). Its
	// OpenSearch build links Bedrock's runtime client and the local model's
	// reader besides opensearch-go: 12.6 MB, kept to 13 (the embedded
	// engine's build is larger, and not held to it).
	{Name: lambdas.Search, Doc: "search of %s (the only function with the search engine)", Reach: ByAPI, HoldsIndexes: true, EngineBuilds: true,
		Embeds: true, Table: []store.Access{store.Vectors}, BootstrapMB: 13},
	// The mcp function's tools are every group's operations, so it links
	// what the others link between them: 13 MB (12.1 since every kind of
	// record has a tool for each of its routes).
	{Name: lambdas.MCP, Doc: "the Model Context Protocol endpoint: AI agents' tools over the other groups' routes", Reach: ByAPI,
		StartsRuns: true, WebhookURLs: true, SearchesByAPI: true, Pages: true, Table: []store.Access{store.Read, store.Write}, BootstrapMB: 13},
	{Name: lambdas.Webhook, Doc: "signed webhook deliveries that start runs", Reach: ByURL, StartsRuns: true},
	// The runner also sweeps on SweepSchedule: runs left queued too long
	// (Query of the runs' index, updates) and the purges of deleted
	// companies' candidates (Query of the PURGE partition and of each
	// partition, deletes): Read and Write.
	{Name: lambdas.Runner, Doc: "executes a run's steps for the run state machine and a bulk job's for the job state machine, and sweeps on a schedule", Reach: ByStateMachine,
		Table: []store.Access{store.Read, store.Write}, Schedule: SweepSchedule},
	{Name: lambdas.Admin, Doc: "operator actions: organizations and API keys", Reach: ByOperator, Table: []store.Access{store.Read, store.Write, store.Describe}},
	{Name: lambdas.Hooks, Doc: "the change history and the outbound webhook endpoints with their deliveries", Reach: ByAPI, SendsDeliveries: true},
	// The indexer embeds the records it indexes, reading their vectors
	// (BatchGetItem) and putting new ones.
	{Name: lambdas.Indexer, Doc: "keeps the OpenSearch indexes up to date from the table's stream", Reach: ByStream, OpenSearchOnly: true,
		Embeds: true, Table: []store.Access{store.Read, store.Vectors}},
	// The events function reads deletion markers and endpoints, writes
	// events and deliveries: Read and Write.
	{Name: lambdas.Events, Doc: "turns the table's stream into the change history and queues the outbound webhooks' deliveries", Reach: ByStream,
		Table: []store.Access{store.Read, store.Write}, SendsDeliveries: true},
	{Name: lambdas.Deliver, Doc: "attempts the outbound webhooks' deliveries from their queue, retried on a schedule of about a day", Reach: ByQueue,
		Table: []store.Access{store.Read, store.Write}},
}

// OpenSearchTag is the go build tag of the OpenSearch builds of the
// functions with EngineBuilds.
const OpenSearchTag = "sourcebase_opensearch"

// Asset is the directory of f's bootstrap among a deployment's assets
// (openSearch: the deployment searches with OpenSearch): f's name, or
// <name>-opensearch for the OpenSearch build of a function with
// EngineBuilds.
func (f Function) Asset(openSearch bool) string {
	if openSearch && f.EngineBuilds {
		return f.Name + "-opensearch"
	}
	return f.Name
}

// PagesDir is the directory beside a bootstrap that holds the
// documentation pages of a function with Pages.
const PagesDir = "docs"

// Build is one bootstrap to build: the function's package, built with
// Tags (besides lambdaenv.Tags) into <assets>/<Asset>/bootstrap, with the
// documentation pages in <assets>/<Asset>/docs when Pages.
type Build struct {
	Asset   string
	Package string // ./functions/<name>
	Tags    []string
	Pages   bool
}

// Builds are every bootstrap a deployment may need: each function's
// default build, and the OpenSearch build of those with EngineBuilds.
func Builds() []Build {
	var out []Build
	for _, f := range Functions {
		out = append(out, Build{Asset: f.Asset(false), Package: "./functions/" + f.Name, Pages: f.Pages})
		if f.EngineBuilds {
			out = append(out, Build{Asset: f.Asset(true), Package: "./functions/" + f.Name, Tags: []string{OpenSearchTag}, Pages: f.Pages})
		}
	}
	return out
}

// Deployed are the functions of a deployment: all of them with OpenSearch
// as its search engine, all but the OpenSearchOnly ones otherwise.
func Deployed(openSearch bool) []Function {
	var out []Function
	for _, f := range Functions {
		if openSearch || !f.OpenSearchOnly {
			out = append(out, f)
		}
	}
	return out
}

// FunctionNamed returns the function named name.
func FunctionNamed(name string) (Function, bool) {
	i := slices.IndexFunc(Functions, func(f Function) bool { return f.Name == name })
	if i < 0 {
		return Function{}, false
	}
	return Functions[i], true
}

// Access is the table access f needs, derived from its routes in rs: every
// route reads (API keys, records); a route other than GET writes
// (records, idempotency records); a route with a rate scope counts
// requests (rate limits, a write even for a function that only reads);
// the health check describes the table.
// Functions without routes declare theirs in Table.
func (f Function) Access(rs []Route) []store.Access {
	need := map[store.Access]bool{}
	for _, a := range f.Table {
		need[a] = true
	}
	for _, r := range Of(rs, f.Name) {
		need[store.Read] = true
		if r.Method != "GET" && !r.ReadOnly {
			need[store.Write] = true
		}
		if r.Path == HealthPath {
			need[store.Describe] = true
		}
		if r.Rate != RateNone {
			need[store.Count] = true // rate limits
		}
	}
	if need[store.Write] { // writing includes counting and putting vectors
		delete(need, store.Count)
		delete(need, store.Vectors)
	}
	var out []store.Access
	for _, a := range []store.Access{store.Read, store.Write, store.Count, store.Vectors, store.Describe, store.Manage} {
		if need[a] {
			out = append(out, a)
		}
	}
	return out
}

// Describe is f's Doc with the resources f's routes in table serve (their
// Resource, in table order) in place of its %s: "deals, people and funds".
func (f Function) Describe(table []Route) string {
	var names []string
	for _, r := range table {
		if r.Function == f.Name && r.Resource != "" && !slices.Contains(names, r.Resource) {
			names = append(names, r.Resource)
		}
	}
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return strings.Replace(f.Doc, "%s", list, 1)
}
