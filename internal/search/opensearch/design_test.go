package opensearch_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// TestOnlyTheIndexerAndTheOpenSearchBuildOfSearchLinkOpenSearch keeps
// opensearch-go out of every Lambda function's default build but the
// indexer's: the search function links it only in its OpenSearch build
// (routes.Function.EngineBuilds), which links no bleve; nor does the
// indexer.
func TestOnlyTheIndexerAndTheOpenSearchBuildOfSearchLinkOpenSearch(t *testing.T) {
	t.Parallel()
	const openSearch, bleve = "github.com/opensearch-project/opensearch-go/v4", "github.com/blevesearch/bleve/v2"
	deps := testenv.FunctionDeps(t)
	for _, f := range routes.Functions {
		if links := deps[f.Name][openSearch]; links != (f.Name == lambdas.Indexer || (f.HoldsIndexes && !f.EngineBuilds)) {
			t.Errorf("function %s links opensearch-go: %v", f.Name, links)
		}
	}
	if deps[lambdas.Indexer][bleve] {
		t.Error("the indexer links bleve")
	}
	tagged := testenv.FunctionDeps(t, routes.OpenSearchTag)
	for _, f := range routes.Functions {
		if f.EngineBuilds && (!tagged[f.Name][openSearch] || tagged[f.Name][bleve]) {
			t.Errorf("the OpenSearch build of %s links opensearch-go: %v, bleve: %v; want only opensearch-go", f.Name, tagged[f.Name][openSearch], tagged[f.Name][bleve])
		}
	}
}
