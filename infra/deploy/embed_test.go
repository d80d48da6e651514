package deploy

import (
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// The embedding settings: the provider is bedrock by default or off and
// nothing else; the model is Titan Text Embeddings V2 by default or a
// model id as the service checks it; only a function that embeds, in a
// deployment embedding with Bedrock, may invoke the model, whose ARN names
// no account.
func TestTheEmbeddingSettingsParseWhatTheServiceTakesOnly(t *testing.T) {
	m := deploymodel.Default()
	for in, want := range map[string]string{"": "bedrock", "bedrock": "bedrock", " off ": "off"} {
		if got, err := ParseEmbeddings(m, in); err != nil || got != want {
			t.Errorf("ParseEmbeddings(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"local", "Bedrock", "on", "false"} {
		if got, err := ParseEmbeddings(m, bad); err == nil {
			t.Errorf("ParseEmbeddings(%q) = %q, want an error", bad, got)
		}
	}
	for in, want := range map[string]string{"": "amazon.titan-embed-text-v2:0", "cohere.embed-english-v3": "cohere.embed-english-v3", " amazon.titan-embed-text-v1 ": "amazon.titan-embed-text-v1"} {
		if got, err := ParseEmbeddingModel(m, in); err != nil || got != want {
			t.Errorf("ParseEmbeddingModel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"amazon titan", "amazon.*", "arn:aws:bedrock:us-east-1::foundation-model/x", "é", strings.Repeat("a", 201)} {
		if got, err := ParseEmbeddingModel(m, bad); err == nil || !strings.Contains(err.Error(), "amazon.titan-embed-text-v2:0") {
			t.Errorf("ParseEmbeddingModel(%q) = %q, %v; want an error naming the default as an example", bad, got, err)
		}
	}
	if got, want := FoundationModelARN("aws", "eu-west-1", "amazon.titan-embed-text-v2:0"), "arn:aws:bedrock:eu-west-1::foundation-model/amazon.titan-embed-text-v2:0"; got != want {
		t.Errorf("FoundationModelARN = %s, want %s", got, want)
	}
	if len(EmbedActions) != 1 || EmbedActions[0] != "bedrock:InvokeModel" {
		t.Errorf("EmbedActions %v, want bedrock:InvokeModel only", EmbedActions)
	}
	var embedders int
	for _, f := range m.Functions {
		if f.Embeds {
			embedders++
		}
		if InvokesBedrock(m, f, m.Embeddings.Bedrock) != f.Embeds || InvokesBedrock(m, f, m.Embeddings.Off) {
			t.Errorf("%s (embeds %v): invokes Bedrock with bedrock %v, with off %v", f.Name, f.Embeds,
				InvokesBedrock(m, f, m.Embeddings.Bedrock), InvokesBedrock(m, f, m.Embeddings.Off))
		}
	}
	if embedders == 0 {
		t.Error("no function of the model embeds")
	}
}
