// Package deploymodel is the service's deployment model: what the
// infrastructure (the CDK stack and the SAM template of infra/) deploys —
// every Lambda function with its routes, memory, timeout, table access,
// environment and event sources, the route table, the table's keys and
// indexes, the state machines' definitions — as plain data, with no link to
// the service's handlers.
//
// The data is model.json beside this file, generated from the service's
// declarations by `make generate` (internal/deploymodel/derive, the only
// package that reads them) and embedded here; `make test` fails when the
// committed file is stale. infra/ imports this package and nothing else of
// the service, so a change to a handler neither rebuilds the CDK app nor
// lets it depend on what a handler links.
package deploymodel

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Path is the model file's path from the repository root.
const Path = "internal/deploymodel/model.json"

//go:embed model.json
var embedded []byte

// Model is the deployment model.
type Model struct {
	// Functions are every Lambda function, in declaration order (the
	// OpenSearchOnly ones included: Deployed chooses).
	Functions []Function `json:"functions"`
	// Routes are the route table, in its order: each route's method, path
	// and the function serving it.
	Routes []Route `json:"routes"`
	// Table is the single DynamoDB table.
	Table Table `json:"table"`
	// RunStateMachine and JobStateMachine are the definitions (Amazon
	// States Language) of the run and job state machines, with RunnerARN
	// where the runner function's ARN goes (RunDefinition, JobDefinition):
	// JSON text exactly as the service writes it, which the CDK stack
	// deploys as it is.
	RunStateMachine string `json:"runStateMachine"`
	JobStateMachine string `json:"jobStateMachine"`
	// EventItemTypes are the table's item types (the values of
	// Table.ItemTypeAttribute) whose changes have events: the changes the
	// events function's stream source lets through.
	EventItemTypes []string `json:"eventItemTypes"`
	// WebhookPath starts the paths of workflows' webhook deliveries: the
	// routes of the function behind the public function URL.
	WebhookPath string `json:"webhookPath"`
	// DeliverBatchSize is how many messages of the delivery queue the
	// deliver function takes at once (its timeout is made for it).
	DeliverBatchSize int `json:"deliverBatchSize"`
	// PagesDir is the directory beside a bootstrap holding the
	// documentation pages of a function with Pages.
	PagesDir string `json:"pagesDir"`
	// DefaultTable is the table's name when TABLE_NAME is unset (the
	// local runs').
	DefaultTable string `json:"defaultTable"`
	// SearchEngines are the names of the search engines (SEARCH_ENGINE),
	// and OpenSearchIndexPrefix starts the name of every OpenSearch index.
	SearchEngines         SearchEngines `json:"searchEngines"`
	OpenSearchIndexPrefix string        `json:"openSearchIndexPrefix"`
	// Embeddings are the embedding provider's settings of a deployment:
	// what the functions that embed (Function.Embeds) are told, and the
	// model ids a deployment may name.
	Embeddings Embeddings `json:"embeddings"`
}

// Embeddings are the names and defaults of the embedding settings
// (EMBEDDINGS, EMBEDDINGS_MODEL) that a deployment chooses: CDK context
// embeddings and embeddingModel, SAM parameters Embeddings and
// EmbeddingModelId.
type Embeddings struct {
	// Bedrock and Off are the providers a deployment may name: Amazon
	// Bedrock (the default: the functions that embed may invoke the model)
	// or none (hybrid search ranks by keywords only).
	Bedrock string `json:"bedrock"`
	Off     string `json:"off"`
	// DefaultModel is Bedrock's model id by default (Titan Text
	// Embeddings V2).
	DefaultModel string `json:"defaultModel"`
	// ModelIDPattern is what a model id matches (an anchored regular
	// expression, also the SAM parameter's AllowedPattern): the
	// service's own check of EMBEDDINGS_MODEL (embed.ValidModelID), which
	// internal/deploymodel/derive's tests hold it to.
	ModelIDPattern string `json:"modelIdPattern"`
}

// ValidModelID reports whether id is a model id a deployment may name
// (ModelIDPattern).
func (e Embeddings) ValidModelID(id string) bool {
	re, err := regexp.Compile(e.ModelIDPattern)
	return err == nil && e.ModelIDPattern != "" && re.MatchString(id)
}

// SearchEngines names the search engines.
type SearchEngines struct {
	// Embedded: the search function's in-memory indexes.
	Embedded string `json:"embedded"`
	// OpenSearch: an OpenSearch collection fed by the indexer.
	OpenSearch string `json:"openSearch"`
}

// Reach says how a function is invoked.
type Reach string

// How functions are reached.
const (
	// ByAPI: routes of the HTTP API.
	ByAPI Reach = "api"
	// ByURL: a Lambda function URL with no IAM auth (webhook deliveries,
	// whose signature the code checks).
	ByURL Reach = "url"
	// ByStateMachine: Task states of the run and job state machines.
	ByStateMachine Reach = "state-machine"
	// ByOperator: invoked directly (lambda:InvokeFunction), never public.
	ByOperator Reach = "operator"
	// ByStream: batches of the table's DynamoDB stream.
	ByStream Reach = "stream"
	// ByQueue: batches of the outbound webhooks' delivery queue.
	ByQueue Reach = "queue"
)

// Reaches are every Reach.
var Reaches = []Reach{ByAPI, ByURL, ByStateMachine, ByOperator, ByStream, ByQueue}

// Function is one Lambda function: its code is functions/<Name>.
type Function struct {
	Name string `json:"name"`
	// Description says what it serves (its declaration's Doc with the
	// resources of its routes).
	Description string `json:"description"`
	Reach       Reach  `json:"reach"`
	// Asset is the directory of its bootstrap among a deployment's assets,
	// and OpenSearchAsset in a deployment searching with OpenSearch (the
	// same but for a function built once per search engine).
	Asset           string `json:"asset"`
	OpenSearchAsset string `json:"openSearchAsset"`
	// MemoryMB and TimeoutSeconds are its size in AWS, Sizing why.
	MemoryMB       int    `json:"memoryMB"`
	TimeoutSeconds int    `json:"timeoutSeconds"`
	Sizing         string `json:"sizing"`
	// Access are the kinds of table access it needs (read, write, count,
	// describe, manage); TableActions their IAM actions, granted on the
	// table, and IndexActions those granted on each index (reads).
	Access       []string `json:"access"`
	TableActions []string `json:"tableActions"`
	IndexActions []string `json:"indexActions,omitempty"`
	// Env is its environment in a deployment with the embedded search
	// engine; OpenSearchEnv, when set, in one searching with OpenSearch
	// (EnvIn).
	Env           map[string]EnvValue `json:"env"`
	OpenSearchEnv map[string]EnvValue `json:"openSearchEnv,omitempty"`
	// Schedule: also invoked on this EventBridge schedule expression with
	// the standard Scheduled Event.
	Schedule string `json:"schedule,omitempty"`

	// StartsRuns: starts executions of the run state machine.
	StartsRuns bool `json:"startsRuns,omitempty"`
	// RunsJobs: creates bulk jobs (presigns their files' URLs) and starts
	// the job state machine for exports.
	RunsJobs bool `json:"runsJobs,omitempty"`
	// SendsDeliveries: queues outbound webhook deliveries.
	SendsDeliveries bool `json:"sendsDeliveries,omitempty"`
	// HoldsIndexes: keeps search indexes in memory (reads OpenSearch's
	// indexes in a deployment searching with OpenSearch).
	HoldsIndexes bool `json:"holdsIndexes,omitempty"`
	// Indexer: keeps the OpenSearch indexes up to date from the table's
	// stream.
	Indexer bool `json:"indexer,omitempty"`
	// SearchesByAPI: sends its searches to the HTTP API.
	SearchesByAPI bool `json:"searchesByAPI,omitempty"`
	// WebhookURLs: shows webhook trigger URLs (is told the function URL).
	WebhookURLs bool `json:"webhookURLs,omitempty"`
	// OpenSearchOnly: deployed only where the search engine is OpenSearch.
	OpenSearchOnly bool `json:"openSearchOnly,omitempty"`
	// Pages: the documentation pages ship beside its bootstrap, in
	// Model.PagesDir.
	Pages bool `json:"pages,omitempty"`
	// Fallback: also serves the HTTP API's $default route.
	Fallback bool `json:"fallback,omitempty"`
	// ManagesTenants: the operator function's tenant lifecycle (list-orgs
	// scans the table, export-org writes an organization's items and
	// files under orgs/<org>/ in the bulk bucket, delete-org deletes its
	// items, its files under imports/<org>/, exports/<org>/ and
	// orgs/<org>/, and its OpenSearch documents): its TableActions
	// include the store's Tenants access (Scan, BatchWriteItem), its environment the bulk bucket (and
	// OpenSearch's endpoint in a deployment searching with it), and the
	// stacks grant it the bucket's three prefixes and the indexer's data
	// access to the indexes.
	ManagesTenants bool `json:"managesTenants,omitempty"`
	// Embeds: calls the embedding provider (the search function and the
	// indexer embed records and search texts): its environment refers to
	// RefEmbeddings and RefEmbeddingsModel, and where the deployment
	// embeds with Bedrock the stacks grant it bedrock:InvokeModel on that
	// model only.
	Embeds bool `json:"embeds,omitempty"`
}

// EnvValue is the value of an environment variable: Value, or when Ref is
// set, the deployment's value of that reference (a resource's name, URL or
// ARN, which only the template knows).
type EnvValue struct {
	Value string `json:"value,omitempty"`
	Ref   Ref    `json:"ref,omitempty"`
}

// Ref names a value of the deployment that a function's environment holds.
type Ref string

// The references of the functions' environments.
const (
	RefTable              Ref = "table"              // the table's name
	RefStateMachine       Ref = "stateMachine"       // the run state machine's ARN
	RefWebhookURL         Ref = "webhookURL"         // the webhook function's URL
	RefAPIURL             Ref = "apiURL"             // the HTTP API's base URL
	RefDeliverQueue       Ref = "deliverQueue"       // the delivery queue's URL
	RefDeliverDLQ         Ref = "deliverDLQ"         // its dead-letter queue's URL
	RefBulkBucket         Ref = "bulkBucket"         // the bulk jobs' bucket's name
	RefJobsStateMachine   Ref = "jobsStateMachine"   // the job state machine's ARN
	RefEventBus           Ref = "eventBus"           // the EventBridge bus events go to
	RefOpenSearchEndpoint Ref = "openSearchEndpoint" // the OpenSearch collection's endpoint
	RefEmbeddings         Ref = "embeddings"         // the deployment's embedding provider (Embeddings.Bedrock or .Off)
	RefEmbeddingsModel    Ref = "embeddingsModel"    // the deployment's Bedrock model id
)

// Refs are every Ref.
var Refs = []Ref{RefTable, RefStateMachine, RefWebhookURL, RefAPIURL, RefDeliverQueue, RefDeliverDLQ,
	RefBulkBucket, RefJobsStateMachine, RefEventBus, RefOpenSearchEndpoint, RefEmbeddings, RefEmbeddingsModel}

// EnvIn is f's environment in a deployment searching with OpenSearch
// (openSearch) or with the embedded engine.
func (f Function) EnvIn(openSearch bool) map[string]EnvValue {
	if openSearch && f.OpenSearchEnv != nil {
		return f.OpenSearchEnv
	}
	return f.Env
}

// AssetIn is the directory of f's bootstrap in a deployment searching with
// OpenSearch (openSearch) or with the embedded engine.
func (f Function) AssetIn(openSearch bool) string {
	if openSearch {
		return f.OpenSearchAsset
	}
	return f.Asset
}

// Route is one route of the route table.
type Route struct {
	Method   string `json:"method"`
	Path     string `json:"path"` // a net/http pattern's path: {name}, {name...}
	Function string `json:"function"`
}

// Pattern is the route's "METHOD /path".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// Table is the single DynamoDB table, in CreateTable's terms.
type Table struct {
	BillingMode string      `json:"billingMode"` // PAY_PER_REQUEST
	Attributes  []Attribute `json:"attributes"`
	KeySchema   []Key       `json:"keySchema"`
	Indexes     []Index     `json:"indexes"` // global secondary indexes
	// StreamViewType is the stream's (NEW_AND_OLD_IMAGES...), "" without
	// a stream.
	StreamViewType string `json:"streamViewType,omitempty"`
	// TimeToLiveAttribute holds an expiring item's time (epoch seconds).
	TimeToLiveAttribute string `json:"timeToLiveAttribute"`
	// ItemTypeAttribute holds an item's type (EventItemTypes).
	ItemTypeAttribute string `json:"itemTypeAttribute"`
}

// Attribute is a key attribute's definition: Type S, N or B.
type Attribute struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Key is an element of a key schema: Type HASH or RANGE.
type Key struct {
	Attribute string `json:"attribute"`
	Type      string `json:"type"`
}

// Index is a global secondary index: Projection ALL, KEYS_ONLY or
// INCLUDE (with NonKeyAttributes).
type Index struct {
	Name             string   `json:"name"`
	KeySchema        []Key    `json:"keySchema"`
	Projection       string   `json:"projection"`
	NonKeyAttributes []string `json:"nonKeyAttributes,omitempty"`
}

// RunnerARN stands for the runner function's ARN in the state machines'
// definitions.
const RunnerARN = "${RunnerArn}"

// RunDefinition is the run state machine's definition invoking the runner
// at runnerARN.
func (m *Model) RunDefinition(runnerARN string) string {
	return strings.ReplaceAll(m.RunStateMachine, RunnerARN, runnerARN)
}

// JobDefinition is the job state machine's definition invoking the runner
// at runnerARN.
func (m *Model) JobDefinition(runnerARN string) string {
	return strings.ReplaceAll(m.JobStateMachine, RunnerARN, runnerARN)
}

// Deployed are the functions of a deployment: all of them where the
// search engine is OpenSearch, all but the OpenSearchOnly ones otherwise.
func (m *Model) Deployed(openSearch bool) []Function {
	var out []Function
	for _, f := range m.Functions {
		if openSearch || !f.OpenSearchOnly {
			out = append(out, f)
		}
	}
	return out
}

// Function returns the function named name.
func (m *Model) Function(name string) (Function, bool) {
	i := slices.IndexFunc(m.Functions, func(f Function) bool { return f.Name == name })
	if i < 0 {
		return Function{}, false
	}
	return m.Functions[i], true
}

// RoutesOf are the routes of rs served by the function named name.
func RoutesOf(rs []Route, name string) []Route {
	var out []Route
	for _, r := range rs {
		if r.Function == name {
			out = append(out, r)
		}
	}
	return out
}

// Assets are the directories of every bootstrap a deployment may need:
// each function's, then its OpenSearch build's where it has one.
func (m *Model) Assets() []string {
	var out []string
	for _, f := range m.Functions {
		out = append(out, f.Asset)
		if f.OpenSearchAsset != f.Asset {
			out = append(out, f.OpenSearchAsset)
		}
	}
	return out
}

// Variable is the environment variable holding ref in the functions'
// environments ("" when none does).
func (m *Model) Variable(ref Ref) string {
	for _, f := range m.Functions {
		for _, env := range []map[string]EnvValue{f.Env, f.OpenSearchEnv} {
			for k, v := range env {
				if v.Ref == ref {
					return k
				}
			}
		}
	}
	return ""
}

// Parse reads a model file, checking what the infrastructure relies on:
// known reaches and references, unique function names, routes of declared
// functions, state machine definitions that are JSON objects naming the
// runner, the embedding settings, and the embedding references in the
// environments of exactly the functions that embed.
func Parse(b []byte) (*Model, error) {
	var m Model
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("deployment model: %w", err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("deployment model: %w", err)
	}
	return &m, nil
}

func (m *Model) check() error {
	if len(m.Functions) == 0 {
		return fmt.Errorf("no functions")
	}
	names := map[string]bool{}
	for _, f := range m.Functions {
		if f.Name == "" || names[f.Name] {
			return fmt.Errorf("function name %q empty or declared twice", f.Name)
		}
		names[f.Name] = true
		if !slices.Contains(Reaches, f.Reach) {
			return fmt.Errorf("function %s: unknown reach %q", f.Name, f.Reach)
		}
		if f.Asset == "" || f.OpenSearchAsset == "" || f.MemoryMB <= 0 || f.TimeoutSeconds <= 0 {
			return fmt.Errorf("function %s: no asset, memory or timeout", f.Name)
		}
		for _, env := range []map[string]EnvValue{f.Env, f.OpenSearchEnv} {
			for k, v := range env {
				if v.Ref != "" && (v.Value != "" || !slices.Contains(Refs, v.Ref)) {
					return fmt.Errorf("function %s: variable %s: unknown reference %q or a reference with a value", f.Name, k, v.Ref)
				}
			}
			if env == nil {
				continue
			}
			// What the stacks grant follows Embeds, what the function
			// does follows its environment: the two must agree.
			for _, r := range []Ref{RefEmbeddings, RefEmbeddingsModel} {
				if refers(env, r) != f.Embeds {
					return fmt.Errorf("function %s: embeds %v, but its environment refers to %s: %v", f.Name, f.Embeds, r, refers(env, r))
				}
			}
		}
	}
	e := m.Embeddings
	if _, err := regexp.Compile(e.ModelIDPattern); err != nil || !strings.HasPrefix(e.ModelIDPattern, "^") || !strings.HasSuffix(e.ModelIDPattern, "$") {
		return fmt.Errorf("embeddings: the model id pattern %q is not an anchored regular expression (%v)", e.ModelIDPattern, err)
	}
	if e.Bedrock == "" || e.Off == "" || e.Bedrock == e.Off || !e.ValidModelID(e.DefaultModel) {
		return fmt.Errorf("embeddings: providers %q and %q, default model %q", e.Bedrock, e.Off, e.DefaultModel)
	}
	for _, r := range m.Routes {
		if !names[r.Function] {
			return fmt.Errorf("route %s: no function %q", r.Pattern(), r.Function)
		}
	}
	for what, def := range map[string]string{"run": m.RunStateMachine, "job": m.JobStateMachine} {
		var obj map[string]any
		if err := json.Unmarshal([]byte(def), &obj); err != nil || !strings.Contains(def, RunnerARN) {
			return fmt.Errorf("the %s state machine's definition is not a JSON object invoking %s (%v)", what, RunnerARN, err)
		}
	}
	return nil
}

// refers reports whether a variable of env refers to r.
func refers(env map[string]EnvValue, r Ref) bool {
	for _, v := range env {
		if v.Ref == r {
			return true
		}
	}
	return false
}

// Encode is m as the model file: indented JSON ending in a newline.
func Encode(m *Model) ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var loaded = sync.OnceValues(func() (*Model, error) { return Parse(embedded) })

// Load is the committed model (model.json, embedded). The same *Model is
// returned each time: do not modify it (Clone).
func Load() (*Model, error) { return loaded() }

// Default is Load's model; it panics when the embedded file does not
// parse (a test of this package and `make generate`'s check catch that).
func Default() *Model {
	m, err := Load()
	if err != nil {
		panic(err)
	}
	return m
}

// Clone is a deep copy of m, for a test to modify.
func (m *Model) Clone() *Model {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var c Model
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return &c
}
