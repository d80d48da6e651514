package deploy

import (
	"fmt"
	"strings"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// Embeddings: the functions that embed (deploymodel.Function.Embeds: the
// search function, and the indexer where the search engine is OpenSearch)
// are told the deployment's provider and Bedrock model (EMBEDDINGS and
// EMBEDDINGS_MODEL: the model's RefEmbeddings and RefEmbeddingsModel),
// and, where the provider is Bedrock, may invoke that model and nothing
// else of Bedrock. The provider is the CDK context embeddings or the SAM
// parameter Embeddings (bedrock by default, or off); the model id the CDK
// context embeddingModel or the SAM parameter EmbeddingModelId (the
// model's Embeddings.DefaultModel, Titan Text Embeddings V2, by default).

// EmbedActions let a function that embeds invoke the embedding model:
// InvokeModel only (one text a call), on the model's ARN only.
var EmbedActions = []string{"bedrock:InvokeModel"}

// FoundationModelARN is the ARN of Bedrock's foundation model modelID in
// partition and region (values, or expressions such as ${AWS::Region}):
// foundation models belong to no account.
func FoundationModelARN(partition, region, modelID string) string {
	return "arn:" + partition + ":bedrock:" + region + "::foundation-model/" + modelID
}

// InvokesBedrock reports whether f may invoke the embedding model in a
// deployment whose provider is embeddings.
func InvokesBedrock(m *deploymodel.Model, f deploymodel.Function, embeddings string) bool {
	return f.Embeds && embeddings == m.Embeddings.Bedrock
}

// ParseEmbeddings reads a deployment's embedding provider: the model's
// Embeddings.Bedrock (also when s is empty) or Embeddings.Off.
func ParseEmbeddings(m *deploymodel.Model, s string) (string, error) {
	switch s = strings.TrimSpace(s); s {
	case "":
		return m.Embeddings.Bedrock, nil
	case m.Embeddings.Bedrock, m.Embeddings.Off:
		return s, nil
	}
	return "", fmt.Errorf("want %s or %s", m.Embeddings.Bedrock, m.Embeddings.Off)
}

// ParseEmbeddingModel reads a Bedrock model id: the model's
// Embeddings.DefaultModel when s is empty, else one matching
// Embeddings.ModelIDPattern (the service's own check).
func ParseEmbeddingModel(m *deploymodel.Model, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return m.Embeddings.DefaultModel, nil
	}
	if !m.Embeddings.ValidModelID(s) {
		return "", fmt.Errorf("not a Bedrock model id such as %s (letters, digits, '.', '-', ':' and '_', at most 200)", m.Embeddings.DefaultModel)
	}
	return s, nil
}
