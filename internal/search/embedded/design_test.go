package embedded_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

// TestOnlyTheFunctionsThatHoldIndexesLinkTheSearchEngine keeps bleve
// (about 14 MB of an arm64 binary) out of every Lambda function that does
// not search.
func TestOnlyTheFunctionsThatHoldIndexesLinkTheSearchEngine(t *testing.T) {
	t.Parallel()
	deps := testenv.FunctionDeps(t)
	for _, f := range routes.Functions {
		if links := deps[f.Name]["github.com/blevesearch/bleve/v2"]; links != f.HoldsIndexes {
			t.Errorf("function %s links bleve: %v", f.Name, links)
		}
	}
}
