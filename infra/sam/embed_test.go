package main

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/sourcebase/sourcebase/infra/deploy"
)

// invokeEmbeddingModel is the statement of a function that embeds, as
// parse keeps it: under the EmbeddingsOn condition, bedrock:InvokeModel
// on the EmbeddingModelId foundation model in the stack's partition and
// region, else nothing.
var invokeEmbeddingModel = func() string {
	b, _ := json.Marshal([]any{EmbeddingsOn, map[string]any{
		"Sid": InvokeEmbeddingModelSid, "Effect": "Allow",
		"Action":   []any{"bedrock:InvokeModel"},
		"Resource": "Sub(arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${" + EmbeddingModelIDParam + "})",
	}, "Ref(AWS::NoValue)"})
	return "If(" + string(b) + ")"
}()

// The embedding settings are parameters with the CDK context's defaults:
// Embeddings, bedrock or off (quoted, so that YAML 1.1 readers such as
// the SAM CLI's read a string, not false), and EmbeddingModelId, Titan
// Text Embeddings V2 by default, matching the model's pattern (the
// service's check of a model id, internal/deploymodel/derive's tests).
func TestTheEmbeddingSettingsAreParametersWithTheCDKStacksDefaults(t *testing.T) {
	params := raw(t, readFile(t, TemplatePath))["Parameters"].(map[string]any)
	e := model().Embeddings
	for name, want := range map[string]map[string]any{
		EmbeddingsParam:       {"Type": "String", "Default": "bedrock", "AllowedValues": []any{"bedrock", "off"}},
		EmbeddingModelIDParam: {"Type": "String", "Default": "amazon.titan-embed-text-v2:0", "AllowedPattern": e.ModelIDPattern},
	} {
		p, _ := params[name].(map[string]any)
		if p["Description"] == nil {
			t.Errorf("parameter %s has no description", name)
		}
		for k, v := range want {
			if !reflect.DeepEqual(p[k], v) {
				t.Errorf("parameter %s: %s %v, want %v", name, k, p[k], v)
			}
		}
	}
	if got := child(yamlDoc(t), "Parameters", EmbeddingsParam, "AllowedValues").Content[1]; got.Value != "off" || got.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		t.Errorf("the Embeddings parameter's off is not quoted: YAML 1.1 reads a bare off as false")
	}
	// CloudFormation matches AllowedPattern against the whole value.
	pattern := regexp.MustCompile(params[EmbeddingModelIDParam].(map[string]any)["AllowedPattern"].(string))
	for id, want := range map[string]bool{
		"amazon.titan-embed-text-v2:0": true, "cohere.embed-multilingual-v3": true, "amazon titan": false, "amazon.*": false,
		"arn:aws:bedrock:us-east-1::foundation-model/x": false, "": false, strings.Repeat("a", 201): false,
	} {
		if got := pattern.MatchString(id); got != want {
			t.Errorf("AllowedPattern %s matches %q: %v, want %v", pattern, id, got, want)
		}
	}
}

// The functions that embed (the search function: the template has no
// indexer) are told the Embeddings and EmbeddingModelId parameters, and
// may invoke exactly that foundation model (bedrock:InvokeModel, nothing
// else of Bedrock) when Embeddings is bedrock; with off they keep their
// table access and nothing of Bedrock. No other function is told either
// or may do anything with Bedrock; under sam local (env.local.json) the
// functions that embed embed nothing.
func TestTheFunctionsThatEmbedMayInvokeTheirModelOnlyAndOnlyWithBedrock(t *testing.T) {
	doc := yamlDoc(t)
	cond := child(doc, "Conditions", EmbeddingsOn)
	if cond == nil || cond.Tag != "!Equals" || len(cond.Content) != 2 || cond.Content[0].Tag != "!Ref" || cond.Content[0].Value != EmbeddingsParam || cond.Content[1].Value != "bedrock" {
		t.Fatalf("condition %s is not Embeddings = bedrock", EmbeddingsOn)
	}
	var env map[string]map[string]string
	if err := json.Unmarshal(readFile(t, LocalEnvPath), &env); err != nil {
		t.Fatal(err)
	}
	fns := committed(t).GetAllServerlessFunctionResources()
	embedders := 0
	for _, f := range deployed() {
		vars := fns[LogicalID(f.Name)].Environment.Variables
		if f.Embeds {
			embedders++
			if vars["EMBEDDINGS"] != "Ref("+EmbeddingsParam+")" || vars["EMBEDDINGS_MODEL"] != "Ref("+EmbeddingModelIDParam+")" {
				t.Errorf("%s embeds: EMBEDDINGS %q, EMBEDDINGS_MODEL %q, want the parameters", f.Name, vars["EMBEDDINGS"], vars["EMBEDDINGS_MODEL"])
			}
			if got := env[LogicalID(f.Name)]["EMBEDDINGS"]; got != "off" {
				t.Errorf("%s: EMBEDDINGS %q under sam local, want off (no Bedrock there)", f.Name, got)
			}
		} else if _, ok := vars["EMBEDDINGS"]; ok {
			t.Errorf("%s does not embed, yet is told EMBEDDINGS", f.Name)
		}
		// The statements as deployed with Embeddings bedrock and off: the
		// If resolved by its condition.
		statements := child(doc, "Resources", LogicalID(f.Name), "Properties", "Policies").Content[0]
		statements = child(statements, "Statement")
		for _, provider := range []string{"bedrock", "off"} {
			var bedrock []string
			for _, st := range statements.Content {
				if st.Tag == "!If" {
					if len(st.Content) != 3 || st.Content[0].Value != EmbeddingsOn || st.Content[2].Tag != "!Ref" || st.Content[2].Value != "AWS::NoValue" {
						t.Fatalf("%s: a conditional statement other than under %s", f.Name, EmbeddingsOn)
					}
					if provider != "bedrock" {
						continue
					}
					st = st.Content[1]
				}
				var s struct {
					Sid      string   `yaml:"Sid"`
					Effect   string   `yaml:"Effect"`
					Action   []string `yaml:"Action"`
					Resource string   `yaml:"Resource"`
				}
				b, _ := yaml.Marshal(st)
				_ = yaml.Unmarshal(b, &s) // a Resource list leaves Resource empty
				for _, a := range s.Action {
					if strings.HasPrefix(a, "bedrock:") {
						bedrock = append(bedrock, s.Sid+" "+s.Effect+" "+strings.Join(s.Action, ",")+" on "+child(st, "Resource").Tag+" "+s.Resource)
						break
					}
				}
			}
			var want []string
			if f.Embeds && provider == "bedrock" {
				want = []string{InvokeEmbeddingModelSid + " Allow bedrock:InvokeModel on !Sub " +
					deploy.FoundationModelARN("${AWS::Partition}", "${AWS::Region}", "${"+EmbeddingModelIDParam+"}")}
			}
			if !reflect.DeepEqual(bedrock, want) {
				t.Errorf("%s with Embeddings %s: Bedrock statements %q, want %q", f.Name, provider, bedrock, want)
			}
		}
	}
	if embedders != 1 {
		t.Errorf("%d functions of the template embed, want the search function", embedders)
	}
	// Nothing else in the template names Bedrock's actions.
	if n := len(regexp.MustCompile(`bedrock:[A-Za-z*]`).FindAllString(string(readFile(t, TemplatePath)), -1)); n != embedders {
		t.Errorf("the template names a bedrock: action %d times, want once per function that embeds (%d)", n, embedders)
	}
}
