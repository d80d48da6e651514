package api_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/search"
)

// What each member of a search body means is said once (search.Members):
// the OpenAPI document's every search body, the MCP tools that take one,
// and docs/search.md say exactly that, so an agent reading a tool and a
// developer reading the page learn the same thing the service does.
func TestEverySearchBodyDescribesItsMembersFromOneSource(t *testing.T) {
	b, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct{ Description string }
			}
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	bodies := 0
	for name, s := range doc.Components.Schemas {
		if !strings.HasSuffix(name, "Search") || s.Properties["fullText"].Description == "" && s.Properties["text"].Description == "" {
			continue
		}
		bodies++
		for _, m := range search.Members {
			if got := s.Properties[m.Name].Description; got != m.Meaning {
				t.Errorf("%s.%s is described as %q, not %q", name, m.Name, got, m.Meaning)
			}
		}
	}
	if bodies != len(kinds.Searchable()) {
		t.Errorf("%d search bodies in the document, %d searchable resources", bodies, len(kinds.Searchable()))
	}

	tools, err := mcpserver.ToolList(b, api.MCP())
	if err != nil {
		t.Fatal(err)
	}
	searchTools := 0
	for _, tool := range tools {
		raw, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(raw), `"fullText"`) {
			continue
		}
		searchTools++
		for _, m := range search.Members {
			want, _ := json.Marshal(m.Meaning)
			if !strings.Contains(string(raw), `"description":`+string(want)) {
				t.Errorf("tool %s does not describe %s as %s", tool.Name, m.Name, want)
			}
		}
	}
	if searchTools == 0 {
		t.Error("no MCP tool takes a search body")
	}

	page, err := os.ReadFile("../../docs/search.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), search.BodyMarkdown()) {
		t.Error("docs/search.md's table of the search body is not search.BodyMarkdown(): make generate")
	}
}
