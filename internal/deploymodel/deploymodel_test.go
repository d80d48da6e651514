package deploymodel_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// The committed model parses, and is in the form Encode writes (what
// make generate writes is byte for byte what it reads).
func TestTheCommittedModelParsesAndIsCanonical(t *testing.T) {
	b, err := os.ReadFile("model.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := deploymodel.Load()
	if err != nil {
		t.Fatal(err)
	}
	again, err := deploymodel.Encode(m)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("Encode(Load()) differs from model.json (%v): run make generate", err)
	}
	if len(m.Functions) == 0 || len(m.Routes) == 0 || len(m.Table.Indexes) == 0 || len(m.EventItemTypes) == 0 {
		t.Errorf("an empty model: %d functions, %d routes, %d indexes, %d event item types", len(m.Functions), len(m.Routes), len(m.Table.Indexes), len(m.EventItemTypes))
	}
}

// The state machines' definitions are JSON with the runner's ARN where
// the placeholder was.
func TestTheDefinitionsTakeTheRunnersARN(t *testing.T) {
	m := deploymodel.Default()
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:runner"
	for name, def := range map[string]string{"run": m.RunDefinition(arn), "job": m.JobDefinition(arn)} {
		var v map[string]any
		if err := json.Unmarshal([]byte(def), &v); err != nil {
			t.Fatalf("%s definition: %v", name, err)
		}
		if strings.Contains(def, deploymodel.RunnerARN) || !strings.Contains(def, `"`+arn+`"`) || v["States"] == nil {
			t.Errorf("%s definition %s", name, def)
		}
	}
}

func TestDeployedLeavesTheOpenSearchOnlyFunctionsToOpenSearchDeployments(t *testing.T) {
	m := deploymodel.Default()
	all, embedded := m.Deployed(true), m.Deployed(false)
	if len(all) != len(m.Functions) || len(embedded) >= len(all) {
		t.Fatalf("%d functions with OpenSearch, %d without, of %d", len(all), len(embedded), len(m.Functions))
	}
	for _, f := range embedded {
		if f.OpenSearchOnly {
			t.Errorf("%s is OpenSearch only", f.Name)
		}
	}
	for _, f := range m.Functions {
		if f.Indexer && !f.OpenSearchOnly {
			t.Errorf("the indexer %s is deployed without OpenSearch", f.Name)
		}
		if (f.OpenSearchEnv != nil) != (f.Indexer || f.HoldsIndexes || f.ManagesTenants) { // the operator deletes an organization's documents
			t.Errorf("%s: an environment of its own with OpenSearch: %v", f.Name, f.OpenSearchEnv != nil)
		}
	}
	if assets := m.Assets(); len(assets) <= len(m.Functions) || !slices.Contains(assets, "search-opensearch") {
		t.Errorf("assets %v", assets)
	}
	if f, ok := m.Function("runner"); !ok || f.Reach != deploymodel.ByStateMachine {
		t.Errorf("Function(runner) = %+v, %v", f, ok)
	}
	if v := m.Variable(deploymodel.RefTable); v != "TABLE_NAME" {
		t.Errorf("the table's variable %q", v)
	}
}

// Parse refuses a model the infrastructure could not deploy as written:
// unknown fields, reaches or references, a route of no function, a
// definition that does not invoke the runner.
func TestParseRefusesWhatTheInfrastructureCannotRelyOn(t *testing.T) {
	b, err := os.ReadFile("model.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploymodel.Parse(b); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(m map[string]any){
		"an unknown field": func(m map[string]any) { m["lambdas"] = []any{} },
		"an unknown reach": func(m map[string]any) { fn(m, 0)["reach"] = "carrier-pigeon" },
		"an unknown reference": func(m map[string]any) {
			fn(m, 0)["env"].(map[string]any)["X"] = map[string]any{"ref": "mailbox"}
		},
		"a route of no function": func(m map[string]any) {
			m["routes"] = append(m["routes"].([]any), map[string]any{"method": "GET", "path": "/x", "function": "nope"})
		},
		"a function twice":                func(m map[string]any) { m["functions"] = append(m["functions"].([]any), fn(m, 0)) },
		"a function with no memory":       func(m map[string]any) { delete(fn(m, 0), "memoryMB") },
		"a definition without the runner": func(m map[string]any) { m["jobStateMachine"] = `{"StartAt":"X","States":{}}` },
		"a definition that is not JSON":   func(m map[string]any) { m["runStateMachine"] = "${RunnerArn}" },
		"a function that embeds, told no provider": func(m map[string]any) {
			delete(embedder(t, m)["env"].(map[string]any), "EMBEDDINGS")
		},
		"a function that embeds, told no model": func(m map[string]any) {
			delete(embedder(t, m)["env"].(map[string]any), "EMBEDDINGS_MODEL")
		},
		"the provider told to a function that does not embed": func(m map[string]any) {
			fn(m, 0)["env"].(map[string]any)["EMBEDDINGS"] = map[string]any{"ref": "embeddings"}
		},
		"a function that embeds, not said to": func(m map[string]any) { delete(embedder(t, m), "embeds") },
		"no embedding settings":               func(m map[string]any) { delete(m, "embeddings") },
		"an unanchored model id pattern": func(m map[string]any) {
			m["embeddings"].(map[string]any)["modelIdPattern"] = "[a-z.:-]+"
		},
		"a default model the pattern refuses": func(m map[string]any) {
			m["embeddings"].(map[string]any)["defaultModel"] = "amazon titan"
		},
		"one name for both providers": func(m map[string]any) { m["embeddings"].(map[string]any)["off"] = "bedrock" },
	} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		changed, _ := json.Marshal(m)
		if _, err := deploymodel.Parse(changed); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func fn(m map[string]any, i int) map[string]any { return m["functions"].([]any)[i].(map[string]any) }

// embedder is the first function of m that embeds.
func embedder(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	for _, f := range m["functions"].([]any) {
		if f := f.(map[string]any); f["embeds"] == true {
			return f
		}
	}
	t.Fatal("no function embeds")
	return nil
}

// The functions that embed (the search function, and the OpenSearch
// indexer) are told the deployment's provider and model, and no other
// function is; a model id is valid as the model's pattern says.
func TestTheFunctionsThatEmbedAreToldTheProviderAndModel(t *testing.T) {
	m := deploymodel.Default()
	var embedders []string
	for _, f := range m.Functions {
		if f.Embeds {
			embedders = append(embedders, f.Name)
		}
		for _, env := range []map[string]deploymodel.EnvValue{f.Env, f.OpenSearchEnv} {
			if env == nil {
				continue
			}
			if got := env["EMBEDDINGS"].Ref == deploymodel.RefEmbeddings && env["EMBEDDINGS_MODEL"].Ref == deploymodel.RefEmbeddingsModel; got != f.Embeds {
				t.Errorf("%s: embeds %v, told the provider and model %v", f.Name, f.Embeds, got)
			}
		}
	}
	if !slices.Equal(embedders, []string{"search", "indexer"}) {
		t.Errorf("the functions that embed: %v", embedders)
	}
	e := m.Embeddings
	if e.Bedrock != "bedrock" || e.Off != "off" || e.DefaultModel != "amazon.titan-embed-text-v2:0" {
		t.Errorf("embeddings %+v", e)
	}
	for id, want := range map[string]bool{
		"amazon.titan-embed-text-v2:0": true, "cohere.embed-english-v3": true, "a_b": true, "": false, "a b": false,
		"arn:aws:bedrock:us-east-1::foundation-model/x": false, "amazon.*": false, strings.Repeat("a", 200): true, strings.Repeat("a", 201): false,
	} {
		if got := e.ValidModelID(id); got != want {
			t.Errorf("ValidModelID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	m := deploymodel.Default()
	c := m.Clone()
	c.Functions[0].Env["X"] = deploymodel.EnvValue{Value: "y"}
	c.Routes[0].Path = "/changed"
	if _, ok := m.Functions[0].Env["X"]; ok || m.Routes[0].Path == "/changed" {
		t.Error("a change to the clone changed the model")
	}
}
