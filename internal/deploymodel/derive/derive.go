// Package derive makes the deployment model (internal/deploymodel) from
// the service's declarations: the functions (routes.Functions) with their
// sizes (sizing), table access and environment (service.Config.Env), the route
// table and the event catalog it is given, the table (store), the state
// machines (runs, jobs). `make generate` (internal/generate) writes what it
// makes to deploymodel.Path; infra/ reads that file and nothing of this.
//
// What each function's environment holds is decided here: the table, and
// the run state machine for a function that starts runs, the webhook URL
// for one that shows trigger URLs, the HTTP API's URL for one that searches
// through it, the delivery queue for one that queues deliveries and for
// the deliver function (and its dead-letter queue for the latter), the
// bulk jobs' bucket for the functions that create or run jobs and for the
// operator function (the tenant lifecycle's exports and deletes) and the
// job state machine for those that create them, the event bus for the
// events function, and OpenSearch's endpoint for the search function, the
// indexer and the operator function (delete-org removes an organization's
// documents) where the search engine is OpenSearch, and the deployment's
// embedding provider and Bedrock model for the functions that embed
// (routes.Function.Embeds). Webhook endpoints on loopback addresses are
// never allowed in a deployment.
package derive

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/sizing"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Inputs are what the model is made of beyond the packages this one
// imports: the service's route table and its event catalog (both the
// registry's).
type Inputs struct {
	Routes []routes.Route
	Events *history.Catalog
}

// Model is the deployment model of the service declared by in and the
// function table (routes.Functions).
func Model(in Inputs) (*deploymodel.Model, error) {
	return model(routes.Functions, in)
}

// File is Model encoded as the model file (deploymodel.Path).
func File(in Inputs) ([]byte, error) {
	m, err := Model(in)
	if err != nil {
		return nil, err
	}
	return deploymodel.Encode(m)
}

func model(functions []routes.Function, in Inputs) (*deploymodel.Model, error) {
	if in.Events == nil {
		return nil, fmt.Errorf("no event catalog")
	}
	table, err := Table(store.TableDefinition(""))
	if err != nil {
		return nil, err
	}
	m := &deploymodel.Model{
		Table:                 table,
		RunStateMachine:       runs.StateMachineDefinition(deploymodel.RunnerARN),
		JobStateMachine:       jobs.StateMachineDefinition(deploymodel.RunnerARN),
		WebhookPath:           workflows.WebhookPath,
		DeliverBatchSize:      sizing.DeliverBatchSize,
		PagesDir:              routes.PagesDir,
		DefaultTable:          service.DefaultTable,
		SearchEngines:         deploymodel.SearchEngines{Embedded: service.SearchEmbedded, OpenSearch: service.SearchOpenSearch},
		OpenSearchIndexPrefix: service.DefaultOpenSearchIndexPrefix,
		Embeddings: deploymodel.Embeddings{Bedrock: service.EmbeddingsBedrock, Off: service.EmbeddingsOff,
			DefaultModel: embed.TitanV2, ModelIDPattern: ModelIDPattern},
	}
	for _, k := range in.Events.Kinds() {
		m.EventItemTypes = append(m.EventItemTypes, k.StoreType)
	}
	for _, r := range in.Routes {
		m.Routes = append(m.Routes, deploymodel.Route{Method: r.Method, Path: r.Path, Function: r.Function})
	}
	for _, f := range functions {
		df, err := function(f, in.Routes)
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", f.Name, err)
		}
		m.Functions = append(m.Functions, df)
	}
	return m, nil
}

// ModelIDPattern is embed.ValidModelID as a regular expression (the
// model's Embeddings.ModelIDPattern, which the stacks check a model id
// with): from 1 to 200 letters, digits, '.', '-', ':' and '_'.
const ModelIDPattern = `^[A-Za-z0-9._:-]{1,200}$`

// reaches are the model's names of the routes.Reach values.
var reaches = map[routes.Reach]deploymodel.Reach{
	routes.ByAPI:          deploymodel.ByAPI,
	routes.ByURL:          deploymodel.ByURL,
	routes.ByStateMachine: deploymodel.ByStateMachine,
	routes.ByOperator:     deploymodel.ByOperator,
	routes.ByStream:       deploymodel.ByStream,
	routes.ByQueue:        deploymodel.ByQueue,
}

func function(f routes.Function, table []routes.Route) (deploymodel.Function, error) {
	reach, ok := reaches[f.Reach]
	if !ok {
		return deploymodel.Function{}, fmt.Errorf("reach %q has no name in the deployment model", f.Reach)
	}
	size, err := sizing.Of(f)
	if err != nil {
		return deploymodel.Function{}, err
	}
	access := f.Access(table)
	out := deploymodel.Function{
		Name:            f.Name,
		Description:     f.Describe(table),
		Reach:           reach,
		Asset:           f.Asset(false),
		OpenSearchAsset: f.Asset(true),
		MemoryMB:        size.MemoryMB,
		TimeoutSeconds:  int(size.Timeout.Seconds()),
		Sizing:          size.Why,
		TableActions:    store.IAMActions(access...),
		Schedule:        f.Schedule,
		StartsRuns:      f.StartsRuns,
		RunsJobs:        f.RunsJobs,
		SendsDeliveries: f.SendsDeliveries,
		HoldsIndexes:    f.HoldsIndexes,
		Indexer:         isIndexer(f),
		SearchesByAPI:   f.SearchesByAPI,
		WebhookURLs:     f.WebhookURLs,
		OpenSearchOnly:  f.OpenSearchOnly,
		Pages:           f.Pages,
		Fallback:        f.Fallback,
		ManagesTenants:  managesTenants(f),
		Embeds:          f.Embeds,
	}
	if size.Timeout%1e9 != 0 {
		return out, fmt.Errorf("timeout %s is not a whole number of seconds", size.Timeout)
	}
	for _, a := range access {
		out.Access = append(out.Access, string(a))
	}
	if slices.Contains(access, store.Read) {
		out.IndexActions = store.IAMActions(store.Read)
	}
	if out.ManagesTenants {
		out.TableActions = append(out.TableActions, store.IAMActions(store.Tenants)...)
	}
	if out.Env, err = Env(f, false); err != nil {
		return out, err
	}
	withOpenSearch, err := Env(f, true)
	if err != nil {
		return out, err
	}
	if !maps.Equal(withOpenSearch, out.Env) {
		out.OpenSearchEnv = withOpenSearch
	}
	return out, nil
}

// isIndexer reports whether f is the OpenSearch indexer: the events
// function reads the same stream in every deployment, so the indexer is
// known by name, not by how it is reached.
func isIndexer(f routes.Function) bool { return f.Name == lambdas.Indexer }

// managesTenants reports whether f runs the tenant lifecycle: the
// operator function (list-orgs, export-org, delete-org).
func managesTenants(f routes.Function) bool { return f.Reach == routes.ByOperator }

// placeholder stands for ref in a configuration, so that the variables'
// names come from service.Config.Env itself.
func placeholder(ref deploymodel.Ref) string { return "\x00" + string(ref) }

// Config is the configuration f runs with in a deployment (openSearch: one
// searching with OpenSearch), with a placeholder for each value only the
// deployment knows (the package's comment says which f gets).
func Config(f routes.Function, openSearch bool) service.Config {
	cfg := service.DefaultConfig()
	cfg.Table = placeholder(deploymodel.RefTable)
	deliverer, jobRunner := f.Reach == routes.ByQueue, f.Reach == routes.ByStateMachine
	eventsConsumer := f.Reach == routes.ByStream && !isIndexer(f)
	if f.RunsJobs || jobRunner || managesTenants(f) {
		cfg.BulkBucket = placeholder(deploymodel.RefBulkBucket)
	}
	if f.RunsJobs {
		cfg.JobsStateMachineARN = placeholder(deploymodel.RefJobsStateMachine)
	}
	if f.StartsRuns {
		cfg.StateMachineARN = placeholder(deploymodel.RefStateMachine)
	}
	if f.WebhookURLs {
		cfg.WebhookBaseURL = placeholder(deploymodel.RefWebhookURL)
	}
	if f.SearchesByAPI {
		cfg.SearchBaseURL = placeholder(deploymodel.RefAPIURL)
	}
	if f.SendsDeliveries || deliverer {
		cfg.DeliverQueueURL = placeholder(deploymodel.RefDeliverQueue)
	}
	if deliverer {
		cfg.DeliverDLQURL = placeholder(deploymodel.RefDeliverDLQ)
	}
	if eventsConsumer {
		cfg.EventBusName = placeholder(deploymodel.RefEventBus)
	}
	if openSearch && (f.HoldsIndexes || isIndexer(f) || managesTenants(f)) {
		cfg.SearchEngine, cfg.OpenSearchEndpoint = service.SearchOpenSearch, placeholder(deploymodel.RefOpenSearchEndpoint)
	}
	if f.Embeds {
		cfg.Embeddings, cfg.EmbeddingsModel = placeholder(deploymodel.RefEmbeddings), placeholder(deploymodel.RefEmbeddingsModel)
	}
	return cfg
}

// Env is f's environment in a deployment (openSearch: one searching with
// OpenSearch): Config's service.Config.Env, each placeholder a reference.
func Env(f routes.Function, openSearch bool) (map[string]deploymodel.EnvValue, error) {
	out := map[string]deploymodel.EnvValue{}
	for k, v := range Config(f, openSearch).Env() {
		ref, isRef := strings.CutPrefix(v, "\x00")
		switch {
		case isRef && slices.Contains(deploymodel.Refs, deploymodel.Ref(ref)):
			out[k] = deploymodel.EnvValue{Ref: deploymodel.Ref(ref)}
		case strings.Contains(v, "\x00"):
			return nil, fmt.Errorf("variable %s: a reference within a value (%q)", k, v)
		default:
			out[k] = deploymodel.EnvValue{Value: v}
		}
	}
	return out, nil
}

// Table is def (store.TableDefinition) in the model's terms, with the
// table's time to live and item type attributes. What the model cannot
// express is an error, never dropped.
func Table(def *dynamodb.CreateTableInput) (deploymodel.Table, error) {
	t := deploymodel.Table{
		BillingMode:         string(def.BillingMode),
		TimeToLiveAttribute: store.AttrExpires,
		ItemTypeAttribute:   store.AttrType,
	}
	for _, a := range def.AttributeDefinitions {
		t.Attributes = append(t.Attributes, deploymodel.Attribute{Name: aws.ToString(a.AttributeName), Type: string(a.AttributeType)})
	}
	for _, k := range def.KeySchema {
		t.KeySchema = append(t.KeySchema, deploymodel.Key{Attribute: aws.ToString(k.AttributeName), Type: string(k.KeyType)})
	}
	for _, g := range def.GlobalSecondaryIndexes {
		ix := deploymodel.Index{Name: aws.ToString(g.IndexName)}
		for _, k := range g.KeySchema {
			ix.KeySchema = append(ix.KeySchema, deploymodel.Key{Attribute: aws.ToString(k.AttributeName), Type: string(k.KeyType)})
		}
		if g.Projection == nil {
			return t, fmt.Errorf("index %s: no projection", ix.Name)
		}
		ix.Projection, ix.NonKeyAttributes = string(g.Projection.ProjectionType), g.Projection.NonKeyAttributes
		t.Indexes = append(t.Indexes, ix)
	}
	var names []string
	for _, ix := range store.Indexes {
		names = append(names, ix.Name)
	}
	if !slices.Equal(names, indexNames(t)) {
		return t, fmt.Errorf("the table's indexes %v are not store.Indexes %v", indexNames(t), names)
	}
	if spec := def.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		t.StreamViewType = string(spec.StreamViewType)
	} else if spec != nil && spec.StreamViewType != "" {
		return t, fmt.Errorf("table: a stream view type %q with the stream disabled", spec.StreamViewType)
	}
	if len(def.LocalSecondaryIndexes) > 0 {
		return t, fmt.Errorf("table: local secondary indexes are not supported")
	}
	// What the stacks set themselves (deletion protection, per stage) or
	// not at all: declared in the definition, it would be dropped.
	for _, c := range []struct {
		what string
		set  bool
	}{
		{"deletion protection", def.DeletionProtectionEnabled != nil},
		{"on demand throughput", def.OnDemandThroughput != nil},
		{"provisioned throughput", def.ProvisionedThroughput != nil},
		{"a resource policy", def.ResourcePolicy != nil},
		{"server-side encryption", def.SSESpecification != nil},
		{"a table class", def.TableClass != ""},
		{"tags", len(def.Tags) > 0},
		{"vector indexes", len(def.VectorIndexes) > 0},
		{"warm throughput", def.WarmThroughput != nil},
		{"a global table source", def.GlobalTableSourceArn != nil || def.GlobalTableSettingsReplicationMode != ""},
	} {
		if c.set {
			return t, fmt.Errorf("table: %s is not supported by the deployment model", c.what)
		}
	}
	return t, nil
}

func indexNames(t deploymodel.Table) []string {
	var out []string
	for _, ix := range t.Indexes {
		out = append(out, ix.Name)
	}
	return out
}
