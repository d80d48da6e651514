package derive_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/deploymodel/derive"
	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/sizing"
	"github.com/sourcebase/sourcebase/internal/store"
)

// sample are inputs of a route table and event catalog of a few routes and
// kinds: the registry's are the generator's (internal/generate), whose test
// checks the committed model against them.
func sample() derive.Inputs {
	var rs []routes.Route
	for _, f := range routes.Functions {
		if f.Reach == routes.ByAPI || f.Reach == routes.ByURL {
			rs = append(rs, routes.Route{Method: "GET", Path: "/v1/" + f.Name, Function: f.Name, Resource: f.Name + "s"})
		}
	}
	rs = append(rs,
		routes.Route{Method: "POST", Path: "/v1/companies", Function: lambdas.Companies, Rate: routes.RateNone},
		routes.Route{Method: "GET", Path: routes.HealthPath, Function: lambdas.Keys})
	return derive.Inputs{Routes: rs, Events: history.NewCatalog(
		history.Kind{Name: "company", Resource: "companies", StoreType: "COMPANY"},
		history.Kind{Name: "deal", Resource: "deals", StoreType: "DEAL"})}
}

// The model has every function of the function table in its order, sized
// as sizing says, with the table access of its routes, the route table,
// the catalog's item types and the service's state machines.
func TestTheModelIsTheDeclarationsInPlainData(t *testing.T) {
	in := sample()
	m, err := derive.Model(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Functions) != len(routes.Functions) {
		t.Fatalf("%d functions, want %d", len(m.Functions), len(routes.Functions))
	}
	for i, f := range routes.Functions {
		got := m.Functions[i]
		size, err := sizing.Of(f)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != f.Name || string(got.Reach) != string(f.Reach) || got.MemoryMB != size.MemoryMB || got.TimeoutSeconds != int(size.Timeout.Seconds()) || got.Sizing != size.Why {
			t.Errorf("function %d: %s %s %d MB %d s, want %s %s %+v", i, got.Name, got.Reach, got.MemoryMB, got.TimeoutSeconds, f.Name, f.Reach, size)
		}
		if got.Description != f.Describe(in.Routes) || got.Asset != f.Asset(false) || got.OpenSearchAsset != f.Asset(true) || got.Schedule != f.Schedule {
			t.Errorf("%s: description %q, assets %s and %s, schedule %q", f.Name, got.Description, got.Asset, got.OpenSearchAsset, got.Schedule)
		}
		access := f.Access(in.Routes)
		want := store.IAMActions(access...)
		if f.Reach == routes.ByOperator {
			want = append(want, store.IAMActions(store.Tenants)...)
		}
		if !slices.Equal(got.TableActions, want) || slices.Contains(access, store.Read) != (len(got.IndexActions) > 0) {
			t.Errorf("%s: table actions %v, index actions %v; access %v", f.Name, got.TableActions, got.IndexActions, access)
		}
		if got.StartsRuns != f.StartsRuns || got.RunsJobs != f.RunsJobs || got.SendsDeliveries != f.SendsDeliveries || got.HoldsIndexes != f.HoldsIndexes ||
			got.SearchesByAPI != f.SearchesByAPI || got.WebhookURLs != f.WebhookURLs || got.OpenSearchOnly != f.OpenSearchOnly || got.Pages != f.Pages ||
			got.Fallback != f.Fallback || got.Indexer != (f.Name == lambdas.Indexer) || got.ManagesTenants != (f.Reach == routes.ByOperator) || got.Embeds != f.Embeds {
			t.Errorf("%s: flags %+v", f.Name, got)
		}
	}
	companies, _ := m.Function(lambdas.Companies)
	keys, _ := m.Function(lambdas.Keys)
	if !slices.Contains(companies.TableActions, "dynamodb:PutItem") || !slices.Contains(keys.TableActions, "dynamodb:DescribeTable") {
		t.Errorf("companies (a POST route) %v, keys (the health check) %v", companies.TableActions, keys.TableActions)
	}
	if len(m.Routes) != len(in.Routes) || m.Routes[0].Pattern() != in.Routes[0].Pattern() || m.Routes[0].Function != in.Routes[0].Function {
		t.Errorf("routes %v", m.Routes)
	}
	if !slices.Equal(m.EventItemTypes, []string{"COMPANY", "DEAL"}) || m.Table.ItemTypeAttribute != store.AttrType || m.Table.TimeToLiveAttribute != store.AttrExpires {
		t.Errorf("event item types %v, type attribute %q, TTL %q", m.EventItemTypes, m.Table.ItemTypeAttribute, m.Table.TimeToLiveAttribute)
	}
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:runner"
	if m.RunDefinition(arn) != runs.StateMachineDefinition(arn) || m.JobDefinition(arn) != jobs.StateMachineDefinition(arn) {
		t.Error("the state machines' definitions are not the service's")
	}
	if e := m.Embeddings; e.Bedrock != service.EmbeddingsBedrock || e.Off != service.EmbeddingsOff || e.DefaultModel != embed.TitanV2 || e.ModelIDPattern != derive.ModelIDPattern {
		t.Errorf("embeddings %+v", e)
	}
	if m.DeliverBatchSize != sizing.DeliverBatchSize || m.DefaultTable != service.DefaultTable || m.SearchEngines.OpenSearch != service.SearchOpenSearch ||
		m.SearchEngines.Embedded != service.SearchEmbedded || m.OpenSearchIndexPrefix != service.DefaultOpenSearchIndexPrefix || m.PagesDir != routes.PagesDir {
		t.Errorf("settings %+v", m)
	}
	// Encoded and parsed back, the same model.
	b, err := deploymodel.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := deploymodel.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := deploymodel.Encode(back)
	if string(again) != string(b) {
		t.Error("the model changes through its file")
	}
}

// The committed model (whose routes and event types come from the
// registry: internal/generate's test checks them) has the functions,
// environments, table and state machines the declarations make now.
func TestTheCommittedModelsFunctionsEnvironmentsTableAndStateMachinesAreTheDeclarations(t *testing.T) {
	m := deploymodel.Default()
	if len(m.Functions) != len(routes.Functions) {
		t.Fatalf("%d functions committed, %d declared: run make generate", len(m.Functions), len(routes.Functions))
	}
	for i, f := range routes.Functions {
		for _, openSearch := range []bool{false, true} {
			env, err := derive.Env(f, openSearch)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Functions[i].EnvIn(openSearch); m.Functions[i].Name != f.Name || !maps.Equal(got, env) {
				t.Errorf("%s (OpenSearch %v): committed environment %v, want %v: run make generate", f.Name, openSearch, got, env)
			}
		}
	}
	table, err := derive.Table(store.TableDefinition(""))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(table) != fmt.Sprint(m.Table) {
		t.Errorf("committed table %+v, want %+v", m.Table, table)
	}
	if m.RunDefinition("x") != runs.StateMachineDefinition("x") || m.JobDefinition("x") != jobs.StateMachineDefinition("x") {
		t.Error("the committed state machines are not the service's: run make generate")
	}
	// The items the events function writes itself, and deletion markers,
	// have no events: their changes must not invoke it.
	if !slices.Contains(m.EventItemTypes, "COMPANY") {
		t.Errorf("event item types %v, want COMPANY among them", m.EventItemTypes)
	}
	for _, typ := range []string{history.TypeEvent, endpoints.TypeDelivery, store.TypeDeleted} {
		if slices.Contains(m.EventItemTypes, typ) {
			t.Errorf("%s is an event item type", typ)
		}
	}
}

// Config gives the delivery queue to the functions that queue deliveries
// and to the deliver function, the dead-letter queue to the deliver
// function only, and never allows loopback webhook endpoints; the
// OpenSearch configuration goes to the indexer, not to the events
// function, though both read the stream.
func TestConfigGivesTheQueuesWhereTheyAreUsedAndOpenSearchToTheIndexerOnly(t *testing.T) {
	for _, f := range routes.Deployed(true) {
		for _, openSearch := range []bool{false, true} {
			cfg := derive.Config(f, openSearch)
			wantQueue, wantDLQ := false, false
			if f.SendsDeliveries || f.Name == lambdas.Deliver {
				wantQueue = true
			}
			if f.Name == lambdas.Deliver {
				wantDLQ = true
			}
			if (cfg.DeliverQueueURL != "") != wantQueue || (cfg.DeliverDLQURL != "") != wantDLQ || cfg.WebhooksAllowLoopback {
				t.Errorf("%s: queue %q, dead letters %q, loopback %v; want %v, %v, false", f.Name, cfg.DeliverQueueURL, cfg.DeliverDLQURL, cfg.WebhooksAllowLoopback, wantQueue, wantDLQ)
			}
			if got, want := cfg.SearchEngine == service.SearchOpenSearch, openSearch && (f.HoldsIndexes || f.Name == lambdas.Indexer || f.Reach == routes.ByOperator); got != want {
				t.Errorf("%s (OpenSearch %v): searches with OpenSearch %v, want %v", f.Name, openSearch, got, want)
			}
			if got, want := cfg.EventBusName != "", f.Name == lambdas.Events; got != want {
				t.Errorf("%s: an event bus %v, want %v", f.Name, got, want)
			}
			if got, want := cfg.BulkBucket != "", f.RunsJobs || f.Name == lambdas.Runner || f.Reach == routes.ByOperator; got != want {
				t.Errorf("%s: the bulk bucket %v, want %v", f.Name, got, want)
			}
			if got, want := cfg.JobsStateMachineARN != "", f.RunsJobs; got != want {
				t.Errorf("%s: the job state machine %v, want %v", f.Name, got, want)
			}
			if (cfg.StateMachineARN != "") != f.StartsRuns || (cfg.WebhookBaseURL != "") != f.WebhookURLs || (cfg.SearchBaseURL != "") != f.SearchesByAPI {
				t.Errorf("%s: state machine %q, webhook URL %q, search URL %q", f.Name, cfg.StateMachineARN, cfg.WebhookBaseURL, cfg.SearchBaseURL)
			}
			if cfg.BulkDir != "" || cfg.BulkFilesURL != "" || cfg.BulkFilesSecret != "" {
				t.Errorf("%s: the local directory of the jobs' files", f.Name)
			}
			// The functions that embed are told the deployment's provider
			// and model (both its choice); the others keep the default
			// (unset), which their environment leaves out.
			wantProvider, wantModel := "", embed.TitanV2
			if f.Embeds {
				wantProvider, wantModel = "\x00"+string(deploymodel.RefEmbeddings), "\x00"+string(deploymodel.RefEmbeddingsModel)
			}
			if cfg.Embeddings != wantProvider || cfg.EmbeddingsModel != wantModel || cfg.EmbeddingsModelFile != embed.DefaultLocalModelFile {
				t.Errorf("%s: embeddings %q, model %q, file %q; want %q, %q", f.Name, cfg.Embeddings, cfg.EmbeddingsModel, cfg.EmbeddingsModelFile, wantProvider, wantModel)
			}
		}
	}
}

// values are deployment-like values of the references, which the
// service's configuration accepts.
var values = map[deploymodel.Ref]string{
	deploymodel.RefTable:              "Sourcebase-dev-Table-1ABC",
	deploymodel.RefStateMachine:       "arn:aws:states:us-east-1:123456789012:stateMachine:runs",
	deploymodel.RefWebhookURL:         "https://abc.lambda-url.us-east-1.on.aws/",
	deploymodel.RefAPIURL:             "https://abc.execute-api.us-east-1.amazonaws.com",
	deploymodel.RefDeliverQueue:       "https://sqs.us-east-1.amazonaws.com/123456789012/deliveries.fifo",
	deploymodel.RefDeliverDLQ:         "https://sqs.us-east-1.amazonaws.com/123456789012/dead.fifo",
	deploymodel.RefBulkBucket:         "sourcebase-bulk",
	deploymodel.RefJobsStateMachine:   "arn:aws:states:us-east-1:123456789012:stateMachine:jobs",
	deploymodel.RefEventBus:           "default",
	deploymodel.RefOpenSearchEndpoint: "https://abc.us-east-1.aoss.amazonaws.com",
	deploymodel.RefEmbeddings:         service.EmbeddingsBedrock,
	deploymodel.RefEmbeddingsModel:    "amazon.titan-embed-text-v2:0",
}

// Each function's environment, its references given deployment values,
// reads back (app.ConfigFromEnv) as the configuration Config decides for
// it with those values.
func TestEveryFunctionsEnvironmentReadsBackAsItsConfiguration(t *testing.T) {
	for _, f := range routes.Deployed(true) {
		for _, openSearch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s-opensearch-%v", f.Name, openSearch), func(t *testing.T) {
				env, err := derive.Env(f, openSearch)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range env {
					if v.Ref != "" {
						v.Value = values[v.Ref]
					}
					t.Setenv(k, v.Value)
				}
				got, err := service.ConfigFromEnv()
				if err != nil {
					t.Fatal(err)
				}
				want := derive.Config(f, openSearch)
				for _, s := range []*string{&want.Table, &want.StateMachineARN, &want.WebhookBaseURL, &want.SearchBaseURL, &want.DeliverQueueURL,
					&want.DeliverDLQURL, &want.BulkBucket, &want.JobsStateMachineARN, &want.EventBusName, &want.OpenSearchEndpoint, &want.Embeddings, &want.EmbeddingsModel} {
					if ref, ok := strings.CutPrefix(*s, "\x00"); ok {
						*s = values[deploymodel.Ref(ref)]
					}
				}
				if got != want {
					t.Errorf("ConfigFromEnv = %+v, want %+v", got, want)
				}
			})
		}
	}
}

// The model's ModelIDPattern, which the stacks check a model id with (CDK
// context embeddingModel, SAM parameter EmbeddingModelId), accepts
// exactly what the service's embed.ValidModelID accepts: every ASCII
// character alone and inside a model id, lengths around the bound, and
// ids that look like Bedrock's.
func TestTheModelIDPatternIsTheServicesCheckOfAModelID(t *testing.T) {
	m, err := derive.Model(sample())
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"", embed.TitanV2, "amazon.titan-embed-text-v1", "cohere.embed-english-v3", "cohere.embed-multilingual-v3:0",
		"us.amazon.titan-embed-text-v2:0", "my_model", "a b", "arn:aws:bedrock:us-east-1::foundation-model/x", "x*", "é",
		strings.Repeat("a", 199), strings.Repeat("a", 200), strings.Repeat("a", 201), "a\n", "\na"}
	for c := rune(0); c < 128; c++ {
		ids = append(ids, string(c), "amazon.titan"+string(c)+"v2:0")
	}
	for _, id := range ids {
		if got, want := m.Embeddings.ValidModelID(id), embed.ValidModelID(id); got != want {
			t.Errorf("%q: the model's pattern says %v, embed.ValidModelID %v", id, got, want)
		}
	}
}

// Table refuses what the deployment model cannot express rather than
// dropping it.
func TestTableRefusesWhatTheModelCannotExpress(t *testing.T) {
	if _, err := derive.Table(store.TableDefinition("")); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(d *dynamodb.CreateTableInput){
		"a view type with no stream": func(d *dynamodb.CreateTableInput) { d.StreamSpecification.StreamEnabled = aws.Bool(false) },
		"server-side encryption": func(d *dynamodb.CreateTableInput) {
			d.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(true)}
		},
		"provisioned throughput": func(d *dynamodb.CreateTableInput) { d.ProvisionedThroughput = &types.ProvisionedThroughput{} },
		"a table class":          func(d *dynamodb.CreateTableInput) { d.TableClass = types.TableClassStandardInfrequentAccess },
		"tags": func(d *dynamodb.CreateTableInput) {
			d.Tags = []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}
		},
		"deletion protection (by stage)": func(d *dynamodb.CreateTableInput) { d.DeletionProtectionEnabled = aws.Bool(true) },
		"local secondary indexes":        func(d *dynamodb.CreateTableInput) { d.LocalSecondaryIndexes = []types.LocalSecondaryIndex{{}} },
		"an index with no projection":    func(d *dynamodb.CreateTableInput) { d.GlobalSecondaryIndexes[0].Projection = nil },
		"indexes other than the store's": func(d *dynamodb.CreateTableInput) { d.GlobalSecondaryIndexes = d.GlobalSecondaryIndexes[1:] },
	} {
		def := store.TableDefinition("")
		change(def)
		if _, err := derive.Table(def); err == nil {
			t.Errorf("%s: translated", name)
		}
	}
	def := store.TableDefinition("")
	def.StreamSpecification = nil
	if table, err := derive.Table(def); err != nil || table.StreamViewType != "" {
		t.Errorf("no stream: %q, %v", table.StreamViewType, err)
	}
}
