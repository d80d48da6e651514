package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/constructs-go/constructs/v10"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// Stage is a deployment of the stack: its name is part of the stack's.
type Stage string

// The stages. Prod protects the data (the table cannot be deleted, by
// CloudFormation or by hand) and keeps logs longer; dev is destroyable.
const (
	Dev  Stage = "dev"
	Prod Stage = "prod"
)

// Stages are every stage, in the order the error message names them.
var Stages = []Stage{Dev, Prod}

// Context keys read by the app (`cdk synth -c key=value`).
const (
	CtxStage              = "stage"              // dev (default) or prod
	CtxAssets             = "assets"             // directory of <name>/bootstrap, default DefaultAssetDir
	CtxWebhookConcurrency = "webhookConcurrency" // reserved concurrency of the webhook function
	CtxSearch             = "search"             // the search engine: embedded (default) or opensearch
	CtxOpenSearchKind     = "openSearchKind"     // with search=opensearch: serverless (default, a collection) or domain (a managed domain)
	CtxAPIRateLimit       = "apiRateLimit"       // the HTTP API stage's steady throttle, requests a second
	CtxAPIBurstLimit      = "apiBurstLimit"      // the HTTP API stage's burst, requests at once
	CtxDeliverConcurrency = "deliverConcurrency" // deliveries in flight at once (the queue's event source)
	CtxAlarmEmails        = "alarmEmails"        // the alarm topic's email subscriptions, comma-separated (default none)
	CtxTracing            = "tracing"            // X-Ray active tracing of the functions: true (default) or false
	CtxTraceSampleRate    = "traceSampleRate"    // the share of requests traced beyond the reservoir, 0 to 1 (default 0.05)
	CtxTraceReservoir     = "traceReservoir"     // requests a second traced before the rate applies (default 1)
	CtxLogRetentionDays   = "logRetentionDays"   // every log group's retention in days (default 7 in dev, 90 in prod)
	CtxEmbeddings         = "embeddings"         // the embedding provider of the functions that embed: bedrock (default) or off
	CtxEmbeddingModel     = "embeddingModel"     // the Bedrock model id they invoke (default amazon.titan-embed-text-v2:0)
)

// The kinds of OpenSearch a deployment searching with it gets (context
// openSearchKind): a Serverless collection of type SEARCH (the default),
// or an OpenSearch Service managed domain, which hybrid search needs (a
// SEARCH collection refuses the knn_vector field, a VECTORSEARCH one
// refuses documents indexed by id).
const (
	OpenSearchServerless = "serverless"
	OpenSearchDomain     = "domain"
)

// DefaultAssetDir is where `make build` puts bin/lambda/<name>/bootstrap,
// relative to infra/ (where the CDK CLI runs the app).
const DefaultAssetDir = "../bin/lambda"

// DefaultWebhookConcurrency caps the webhook function, the one function
// anyone can call without a key. A delivery is one signature check, one
// read and one StartExecution (well under 100 ms warm), so 10 concurrent
// instances absorb on the order of a hundred deliveries a second, far more
// than the webhook sources of a team send, while a flood of (unsigned or
// replayed) requests is throttled by Lambda (429) instead of running up
// cost, table traffic and executions, or taking the account's concurrency
// from the API functions. Reserved concurrency comes out of the account's
// pool, which must keep 100 unreserved: accounts with a lower limit set it
// lower or ask for an increase.
const DefaultWebhookConcurrency = deploy.WebhookConcurrency

// The bounds of the deployment limits the context may set: a function's
// concurrency within Lambda's regional maximum quota, the stage's throttle
// within API Gateway's account quota as AWS raises it on request.
const (
	MaxConcurrency = 100_000
	MaxAPIRate     = 100_000
	MaxAPIBurst    = 100_000
)

// Options are what the app takes from its context.
type Options struct {
	Stage    Stage
	AssetDir string // holds <function name>/bootstrap for every function
	// WebhookConcurrency is the reserved concurrency of the functions
	// reached by a function URL.
	WebhookConcurrency int
	// APIRateLimit and APIBurstLimit are the HTTP API stage's throttle,
	// for every organization together (deploy.APIRateLimit).
	APIRateLimit, APIBurstLimit int
	// DeliverConcurrency is the delivery queue's event source's maximum
	// concurrency (deploy.DeliverMaxConcurrency).
	DeliverConcurrency int
	// AlarmEmails are the addresses the alarm topic sends to (an email
	// subscription each, confirmed by its owner); none by default.
	AlarmEmails []string
	// Tracing turns on X-Ray active tracing of every function and the
	// sampling rule (TraceSampleRate beyond TraceReservoir requests a
	// second); off, the functions pass traces through. NoTracing is its
	// negation, so that Options made in code trace by default.
	NoTracing       bool
	TraceSampleRate float64
	TraceReservoir  int
	// traceSet: TraceSampleRate and TraceReservoir were read from the
	// context (both 0 then means trace none, not the defaults).
	traceSet bool
	// LogRetentionDays is every log group's retention (one of
	// deploy.LogRetentionDays); 0 is the stage's default.
	LogRetentionDays int
	// Embeddings is the embedding provider of the functions that embed
	// (deploymodel.Function.Embeds): the model's Embeddings.Bedrock, which
	// lets them invoke EmbeddingModel, or Embeddings.Off; EmbeddingModel
	// is the Bedrock model id. Empty is the default (Bedrock, Titan Text
	// Embeddings V2: the model's Embeddings.DefaultModel).
	Embeddings     string
	EmbeddingModel string
	// Search is the search engine: the model's SearchEngines.Embedded, or
	// SearchEngines.OpenSearch (an OpenSearch Serverless collection fed
	// from the table's stream by the indexer function).
	Search string
	// OpenSearchKind is the kind of OpenSearch with Search OpenSearch:
	// OpenSearchServerless (or empty) or OpenSearchDomain.
	OpenSearchKind string
	// Model is the deployment model (internal/deploymodel) the stack is
	// built from: deploymodel.Default() when nil.
	Model *deploymodel.Model
}

// withDefaults is o with each deployment limit left at 0 set to its
// default (a stack built from Options made in code, not from a context).
func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.WebhookConcurrency, DefaultWebhookConcurrency)
	def(&o.APIRateLimit, deploy.APIRateLimit)
	def(&o.APIBurstLimit, deploy.APIBurstLimit)
	def(&o.DeliverConcurrency, deploy.DeliverMaxConcurrency)
	if o.LogRetentionDays == 0 {
		o.LogRetentionDays = DefaultLogRetentionDays(o.Stage)
	}
	if o.Embeddings == "" {
		o.Embeddings = o.model().Embeddings.Bedrock
	}
	if o.EmbeddingModel == "" {
		o.EmbeddingModel = o.model().Embeddings.DefaultModel
	}
	if o.TraceSampleRate == 0 && o.TraceReservoir == 0 && !o.traceSet {
		o.TraceSampleRate, o.TraceReservoir = deploy.DefaultTraceSampleRate, deploy.DefaultTraceReservoir
	}
	return o
}

// Tracing reports whether the functions are traced (Options.NoTracing).
func (o Options) Tracing() bool { return !o.NoTracing }

// DefaultLogRetentionDays is a stage's log retention: a week in dev, three
// months in prod.
func DefaultLogRetentionDays(s Stage) int {
	if s == Prod {
		return deploy.ProdLogRetentionDays
	}
	return deploy.DevLogRetentionDays
}

// model is o's deployment model.
func (o Options) model() *deploymodel.Model {
	if o.Model != nil {
		return o.Model
	}
	return deploymodel.Default()
}

// OpenSearch reports whether the stack searches with OpenSearch.
func (o Options) OpenSearch() bool { return o.Search == o.model().SearchEngines.OpenSearch }

// OpenSearchDomain reports whether the stack searches with an OpenSearch
// Service managed domain (domain.go's addOpenSearchDomain) rather than
// a Serverless collection.
func (o Options) OpenSearchDomain() bool {
	return o.OpenSearch() && o.OpenSearchKind == OpenSearchDomain
}

// ParseStage reads a stage name; empty is dev.
func ParseStage(s string) (Stage, error) {
	if s == "" {
		return Dev, nil
	}
	var names []string
	for _, st := range Stages {
		if string(st) == s {
			return st, nil
		}
		names = append(names, string(st))
	}
	return "", fmt.Errorf("context %s=%q: the stage must be one of %s", CtxStage, s, strings.Join(names, ", "))
}

// OptionsFromContext reads the options from the app's context, and checks
// that every function's bootstrap is in the asset directory.
func OptionsFromContext(node constructs.Node) (Options, error) {
	str := func(key string) string {
		v := node.TryGetContext(&key)
		if v == nil {
			return ""
		}
		return strings.TrimSpace(fmt.Sprint(v))
	}
	var o Options
	var err error
	if o.Model, err = deploymodel.Load(); err != nil {
		return o, err
	}
	engines := o.Model.SearchEngines
	if o.Stage, err = ParseStage(str(CtxStage)); err != nil {
		return o, err
	}
	o.AssetDir = str(CtxAssets)
	if o.AssetDir == "" {
		o.AssetDir = DefaultAssetDir
	}
	// number reads a whole number between lo and hi, or def when unset.
	number := func(key string, def, lo, hi int) (int, error) {
		s := str(key)
		if s == "" {
			return def, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("context %s=%q: want a whole number from %d to %d", key, s, lo, hi)
		}
		return n, nil
	}
	if o.WebhookConcurrency, err = number(CtxWebhookConcurrency, DefaultWebhookConcurrency, 1, MaxConcurrency); err != nil {
		return o, err
	}
	if o.APIRateLimit, err = number(CtxAPIRateLimit, deploy.APIRateLimit, 1, MaxAPIRate); err != nil {
		return o, err
	}
	if o.APIBurstLimit, err = number(CtxAPIBurstLimit, deploy.APIBurstLimit, 1, MaxAPIBurst); err != nil {
		return o, err
	}
	if o.DeliverConcurrency, err = number(CtxDeliverConcurrency, deploy.DeliverMaxConcurrency, 2, 1000); err != nil {
		return o, err
	}
	if o.AlarmEmails, err = deploy.ParseAlarmEmails(str(CtxAlarmEmails)); err != nil {
		return o, fmt.Errorf("context %s: %w", CtxAlarmEmails, err)
	}
	switch s := str(CtxTracing); s {
	case "", "true":
	case "false":
		o.NoTracing = true
	default:
		return o, fmt.Errorf("context %s=%q: want true or false", CtxTracing, s)
	}
	o.TraceSampleRate = deploy.DefaultTraceSampleRate
	if s := str(CtxTraceSampleRate); s != "" {
		if o.TraceSampleRate, err = deploy.ParseSampleRate(s); err != nil {
			return o, fmt.Errorf("context %s=%q: %w", CtxTraceSampleRate, s, err)
		}
	}
	if o.TraceReservoir, err = number(CtxTraceReservoir, deploy.DefaultTraceReservoir, 0, deploy.MaxTraceReservoir); err != nil {
		return o, err
	}
	o.traceSet = true
	o.LogRetentionDays = DefaultLogRetentionDays(o.Stage)
	if s := str(CtxLogRetentionDays); s != "" {
		if o.LogRetentionDays, err = deploy.ParseLogRetentionDays(s); err != nil {
			return o, fmt.Errorf("context %s=%q: %w", CtxLogRetentionDays, s, err)
		}
	}
	if o.Embeddings, err = deploy.ParseEmbeddings(o.Model, str(CtxEmbeddings)); err != nil {
		return o, fmt.Errorf("context %s=%q: %w", CtxEmbeddings, str(CtxEmbeddings), err)
	}
	if o.EmbeddingModel, err = deploy.ParseEmbeddingModel(o.Model, str(CtxEmbeddingModel)); err != nil {
		return o, fmt.Errorf("context %s=%q: %w", CtxEmbeddingModel, str(CtxEmbeddingModel), err)
	}
	switch o.Search = str(CtxSearch); o.Search {
	case "":
		o.Search = engines.Embedded
	case engines.Embedded, engines.OpenSearch:
	default:
		return o, fmt.Errorf("context %s=%q: the search engine must be %s or %s", CtxSearch, o.Search, engines.Embedded, engines.OpenSearch)
	}
	switch o.OpenSearchKind = str(CtxOpenSearchKind); o.OpenSearchKind {
	case "":
		if o.OpenSearch() {
			o.OpenSearchKind = OpenSearchServerless
		}
	case OpenSearchServerless, OpenSearchDomain:
		if !o.OpenSearch() {
			return o, fmt.Errorf("context %s=%q: applies only with -c %s=%s", CtxOpenSearchKind, o.OpenSearchKind, CtxSearch, engines.OpenSearch)
		}
	default:
		return o, fmt.Errorf("context %s=%q: the kind of OpenSearch must be %s (a Serverless collection) or %s (a managed domain)",
			CtxOpenSearchKind, o.OpenSearchKind, OpenSearchServerless, OpenSearchDomain)
	}
	return o, CheckAssets(o.Model, o.AssetDir)
}

// CheckAssets reports the bootstraps of m (every function's, and the
// OpenSearch builds: Model.Assets) missing from dir.
func CheckAssets(m *deploymodel.Model, dir string) error {
	var missing []string
	for _, asset := range m.Assets() {
		if st, err := os.Stat(filepath.Join(dir, asset, "bootstrap")); err != nil || !st.Mode().IsRegular() {
			missing = append(missing, filepath.Join(dir, asset, "bootstrap"))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing Lambda bootstraps (run `make build` at the repository root, or pass -c %s=<dir>): %s",
			CtxAssets, strings.Join(missing, ", "))
	}
	return nil
}
