package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/service"
)

// modelARN is the ARN of Bedrock's foundation model id as the template
// has it: in the stack's partition and region, of no account.
func modelARN(id string) any {
	return map[string]any{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":bedrock:", ref("AWS::Region"), "::foundation-model/" + id}}}
}

// bedrockStatements are the statements of role roleID that name an
// action of Bedrock, as JSON.
func (s *synthesized) bedrockStatements(t *testing.T, roleID string) []string {
	t.Helper()
	var out []string
	role := s.t.Resources[roleID]
	var docs []any
	for _, p := range list(role.Properties["Policies"]) {
		if p != nil {
			docs = append(docs, p.(map[string]any)["PolicyDocument"])
		}
	}
	for _, p := range s.t.ofType("AWS::IAM::Policy") {
		for _, r := range list(p.Properties["Roles"]) {
			if jsonEqual(r, ref(roleID)) {
				docs = append(docs, p.Properties["PolicyDocument"])
			}
		}
	}
	for _, d := range docs {
		for _, st := range list(d.(map[string]any)["Statement"]) {
			if strings.Contains(js(st.(map[string]any)["Action"]), "bedrock") {
				out = append(out, js(st))
			}
		}
	}
	return out
}

// checkEmbeddings checks s's functions: the ones that embed are told the
// provider and model, and, with Bedrock, may invoke exactly that
// foundation model (one statement: bedrock:InvokeModel on its ARN,
// nothing else of Bedrock); with embeddings off they are told so and
// nothing may use Bedrock; no other function is told or may either.
func checkEmbeddings(t *testing.T, s *synthesized, provider, model string) {
	t.Helper()
	var embedders []string
	for _, f := range s.deployed() {
		vars := s.fn(t, f.Name).Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		got := s.bedrockStatements(t, s.logicalID(s.stack.Roles[f.Name]))
		var want []string
		if f.Embeds {
			embedders = append(embedders, f.Name)
			if vars[service.EnvEmbeddings] != provider || vars[service.EnvEmbeddingsModel] != model {
				t.Errorf("%s: EMBEDDINGS %v, EMBEDDINGS_MODEL %v; want %s, %s", f.Name, vars[service.EnvEmbeddings], vars[service.EnvEmbeddingsModel], provider, model)
			}
			if provider == service.EmbeddingsBedrock {
				want = []string{js(map[string]any{"Action": "bedrock:InvokeModel", "Effect": "Allow", "Resource": modelARN(model)})}
			}
		} else if vars[service.EnvEmbeddings] != nil || vars[service.EnvEmbeddingsModel] != nil {
			t.Errorf("%s does not embed, yet is told EMBEDDINGS %v, EMBEDDINGS_MODEL %v", f.Name, vars[service.EnvEmbeddings], vars[service.EnvEmbeddingsModel])
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s (embeds %v, embeddings %s): Bedrock statements %q, want %q", f.Name, f.Embeds, provider, got, want)
		}
	}
	want := []string{lambdas.Search}
	if s.stack.Options.OpenSearch() {
		want = append(want, lambdas.Indexer)
	}
	if strings.Join(embedders, ",") != strings.Join(want, ",") {
		t.Errorf("the functions that embed: %v, want %v", embedders, want)
	}
}

// By default (both stages, with either search engine) the functions that
// embed embed with Bedrock's Titan Text Embeddings V2 and may invoke it
// only; the search function may put vectors (dynamodb:PutItem, the
// store's Vectors access) and the indexer read and put them.
func TestTheFunctionsThatEmbedMayInvokeTheirBedrockModelOnly(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		if s.stack.Options.Embeddings != "bedrock" || s.stack.Options.EmbeddingModel != "amazon.titan-embed-text-v2:0" {
			t.Errorf("the defaults: embeddings %q, model %q", s.stack.Options.Embeddings, s.stack.Options.EmbeddingModel)
		}
		checkEmbeddings(t, s, service.EmbeddingsBedrock, "amazon.titan-embed-text-v2:0")
		tableARN := getAtt(s.logicalID(s.stack.Table), "Arn")
		for name, actions := range map[string][]string{
			lambdas.Search:  {"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"},
			lambdas.Indexer: {"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"},
		} {
			if name == lambdas.Indexer && !s.stack.Options.OpenSearch() {
				continue
			}
			got := s.roleGrants(t, s.logicalID(s.stack.Roles[name]))
			for _, a := range actions {
				if k := a + " on " + js(tableARN); !got[k] {
					t.Errorf("%s may not %s on the table", name, a)
				}
			}
		}
	})
}

// The context chooses the model (embeddingModel) and turns embeddings off
// (embeddings=off: EMBEDDINGS=off, and no function may use Bedrock).
func TestTheEmbeddingContextChoosesTheModelOrTurnsEmbeddingsOff(t *testing.T) {
	opensearch := deploymodel.Default().SearchEngines.OpenSearch
	other := synth(t, map[string]string{CtxStage: string(Dev), CtxSearch: opensearch, CtxEmbeddingModel: "cohere.embed-multilingual-v3"})
	checkEmbeddings(t, other, service.EmbeddingsBedrock, "cohere.embed-multilingual-v3")
	off := synth(t, map[string]string{CtxStage: string(Prod), CtxSearch: opensearch, CtxEmbeddings: "off"})
	checkEmbeddings(t, off, service.EmbeddingsOff, "amazon.titan-embed-text-v2:0")
	if strings.Contains(off.t.raw, "bedrock:") {
		t.Error("embeddings=off: the template still names an action of Bedrock")
	}
}

// The embedding context refuses what the service would not take, naming
// the key: a provider other than bedrock or off, a model id that is not
// one (embed.ValidModelID's characters, the model's pattern).
func TestTheEmbeddingContextRefusesWhatTheServiceWouldNotTake(t *testing.T) {
	for key, bads := range map[string][]string{
		CtxEmbeddings:     {"local", "on", "Bedrock"},
		CtxEmbeddingModel: {"amazon titan", "amazon.*", "arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0", strings.Repeat("a", 201)},
	} {
		for _, bad := range bads {
			o, err := optionsOf(map[string]any{CtxStage: "dev", CtxAssets: testAssets, key: bad})
			if err == nil || !strings.Contains(err.Error(), "context "+key) {
				t.Errorf("-c %s=%s: %v (%+v), want an error naming %s", key, bad, err, o, key)
			}
		}
	}
	// As cdk synth runs the app: the synthesis fails.
	if _, err := build(awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{CtxStage: "dev", CtxAssets: testAssets, CtxEmbeddingModel: "amazon titan"}})); err == nil ||
		!strings.Contains(err.Error(), CtxEmbeddingModel) || !strings.Contains(err.Error(), "amazon.titan-embed-text-v2:0") {
		t.Errorf("-c embeddingModel='amazon titan': %v, want an error naming the key and an example", err)
	}
	o, err := optionsOf(map[string]any{CtxStage: "prod", CtxAssets: testAssets, CtxEmbeddingModel: " amazon.titan-embed-text-v1 "})
	if err != nil || o.Embeddings != "bedrock" || o.EmbeddingModel != "amazon.titan-embed-text-v1" {
		t.Errorf("embeddingModel amazon.titan-embed-text-v1: %+v, %v", o, err)
	}
	// Options made in code embed with the defaults.
	if d := (Options{Stage: Dev}).withDefaults(); d.Embeddings != "bedrock" || d.EmbeddingModel != "amazon.titan-embed-text-v2:0" {
		t.Errorf("Options{}.withDefaults(): embeddings %q, model %q", d.Embeddings, d.EmbeddingModel)
	}
}
