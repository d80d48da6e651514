package api_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/search"
)

var updateSearchDocs = flag.Bool("update", false, "rewrite the generated part of docs/search.md")

func TestSearchDocsListTheSearchableFieldsOfEveryDeclaration(t *testing.T) {
	const path, open, end = "../../docs/search.md", "<!-- fields -->\n", "<!-- /fields -->"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, open), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", path, open, end)
	}
	var schemas []*search.Schema
	for _, d := range api.Searchable() {
		schemas = append(schemas, search.SchemaOf(d))
	}
	want := doc[:i+len(open)] + strings.TrimPrefix(search.Markdown(schemas), "\n") + doc[j:]
	if *updateSearchDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("%s is out of date: go test ./internal/api -run TestSearchDocs -update", path)
	}
}
