package embedded_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/routes"
)

// TestOnlyTheSearchFunctionLinksTheSearchEngine keeps bleve (about 12 MB
// of an arm64 binary) out of every Lambda function that does not search.
func TestOnlyTheFunctionsThatHoldIndexesLinkTheSearchEngine(t *testing.T) {
	t.Parallel()
	for _, f := range routes.Functions {
		deps, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", "../../../functions/"+f.Name).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", f.Name, err)
		}
		links := strings.Contains(string(deps), "github.com/blevesearch/bleve/v2\n")
		if links != f.HoldsIndexes {
			t.Errorf("function %s links bleve: %v", f.Name, links)
		}
	}
}
