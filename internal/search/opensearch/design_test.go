package opensearch_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/routes"
)

// TestOnlyTheSearchingFunctionsAndTheIndexerLinkOpenSearch keeps
// opensearch-go out of every Lambda function but those that search (search,
// mcp) and the indexer, and bleve out of the indexer.
func TestOnlyTheSearchingFunctionsAndTheIndexerLinkOpenSearch(t *testing.T) {
	t.Parallel()
	names := []string{"indexer"}
	for _, f := range routes.Functions {
		if !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	for _, name := range names {
		deps, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", "../../../functions/"+name).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", name, err)
		}
		links := strings.Contains(string(deps), "github.com/opensearch-project/opensearch-go/v4\n")
		f, _ := routes.FunctionNamed(name)
		if links != (f.HoldsIndexes || name == "indexer") {
			t.Errorf("function %s links opensearch-go: %v", name, links)
		}
		if name == "indexer" && strings.Contains(string(deps), "github.com/blevesearch/bleve/v2\n") {
			t.Error("the indexer links bleve")
		}
	}
}
