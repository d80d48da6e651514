package api_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
)

// BenchmarkBuildingTheMCPServer is what the first /mcp request of a
// process (a Lambda instance's) pays before its answer: the tools read
// from the OpenAPI document and registered. It was quadratic in the
// document's operations (each tool decoded the paths again to find its
// own).
func BenchmarkBuildingTheMCPServer(b *testing.B) {
	doc, err := api.OpenAPI()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := mcpserver.ToolList(doc, api.MCP()); err != nil {
			b.Fatal(err)
		}
	}
}
