package opensearch_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

// TestOnlyTheSearchingFunctionsAndTheIndexerLinkOpenSearch keeps
// opensearch-go out of every Lambda function but those that search (search,
// mcp) and the indexer, and bleve out of the indexer.
func TestOnlyTheSearchingFunctionsAndTheIndexerLinkOpenSearch(t *testing.T) {
	t.Parallel()
	deps := testenv.FunctionDeps(t)
	for _, f := range routes.Functions {
		links := deps[f.Name]["github.com/opensearch-project/opensearch-go/v4"]
		if links != (f.HoldsIndexes || f.Name == routes.Indexer) {
			t.Errorf("function %s links opensearch-go: %v", f.Name, links)
		}
	}
	if deps[routes.Indexer]["github.com/blevesearch/bleve/v2"] {
		t.Error("the indexer links bleve")
	}
}
