package embedded_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// TestOnlyTheFunctionsThatHoldIndexesLinkTheSearchEngine keeps bleve
// (about 11 MB of an arm64 binary) out of every Lambda function that does
// not search, and out of the search function's OpenSearch build.
func TestOnlyTheFunctionsThatHoldIndexesLinkTheSearchEngine(t *testing.T) {
	t.Parallel()
	deps := testenv.FunctionDeps(t)
	for _, f := range routes.Functions {
		if links := deps[f.Name]["github.com/blevesearch/bleve/v2"]; links != f.HoldsIndexes {
			t.Errorf("function %s links bleve: %v", f.Name, links)
		}
	}
	tagged := testenv.FunctionDeps(t, routes.OpenSearchTag)
	for _, f := range routes.Functions {
		if f.EngineBuilds && tagged[f.Name]["github.com/blevesearch/bleve/v2"] {
			t.Errorf("the OpenSearch build of %s links bleve", f.Name)
		}
	}
}
