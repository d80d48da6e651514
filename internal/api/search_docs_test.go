package api_test

import (
	"flag"
	"os"
	"testing"

	"github.com/sourcebase/sourcebase/internal/generate"
)

// updateSearchDocs makes each test of this package that checks a generated
// file rewrite it alone; make generate rewrites them all.
var updateSearchDocs = flag.Bool("update", false, "rewrite docs/openapi.json and the generated parts of docs/search.md and docs/mcp.md")

// docs/search.md's field tables are made by internal/generate (make
// generate); -update rewrites the page alone.
func TestSearchDocsListTheSearchableFieldsOfEveryDeclaration(t *testing.T) {
	const path = "../../docs/search.md"
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate.SearchDoc(page)
	if err != nil {
		t.Fatal(err)
	}
	if *updateSearchDocs {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(page) != string(want) {
		t.Errorf("%s is out of date: make generate", path)
	}
}
