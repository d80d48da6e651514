package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 46, item 7: every tool's input schema is one every MCP client
// reads whole: no $ref or $defs (clients that do not dereference lose the
// filter and search shapes), no oneOf (some refuse one nested in an
// object), every property described, no property name outside
// [A-Za-z0-9_-]; every tool carries its annotations (readOnlyHint,
// destructiveHint, idempotentHint, openWorldHint), and a tool whose
// operation needs a body requires it.
func TestEveryMCPToolHasASelfContainedDescribedAnnotatedSchema(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	s := mcpSession(t, e, c)
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var schema map[string]any
		json.Unmarshal(b, &schema)
		var problems []string
		var walk func(v any, path string)
		walk = func(v any, path string) {
			switch x := v.(type) {
			case []any:
				for i, e := range x {
					walk(e, fmt.Sprintf("%s[%d]", path, i))
				}
			case map[string]any:
				for _, k := range []string{"$ref", "$defs", "oneOf"} {
					if _, ok := x[k]; ok {
						problems = append(problems, path+" has "+k)
					}
				}
				if props, ok := x["properties"].(map[string]any); ok {
					for p, ps := range props {
						if !name.MatchString(p) {
							problems = append(problems, fmt.Sprintf("%s has the property name %q", path, p))
						}
						if d, _ := ps.(map[string]any)["description"].(string); strings.TrimSpace(d) == "" {
							problems = append(problems, path+"."+p+" has no description")
						}
					}
				}
				for k, e := range x {
					walk(e, path+"/"+k)
				}
			}
		}
		walk(schema, "")
		a := tool.Annotations
		switch {
		case a == nil:
			problems = append(problems, "no annotations")
		case a.DestructiveHint == nil || a.OpenWorldHint == nil:
			problems = append(problems, "destructiveHint or openWorldHint not set")
		case strings.HasPrefix(tool.Name, "get_") || strings.HasPrefix(tool.Name, "list_") || strings.HasPrefix(tool.Name, "search_") || strings.HasPrefix(tool.Name, "read_"):
			if !a.ReadOnlyHint || *a.DestructiveHint || !a.IdempotentHint {
				problems = append(problems, fmt.Sprintf("a read with annotations %+v", *a))
			}
		case strings.HasPrefix(tool.Name, "delete_") || strings.HasPrefix(tool.Name, "update_") || strings.HasPrefix(tool.Name, "batch_"):
			if a.ReadOnlyHint || !*a.DestructiveHint {
				problems = append(problems, fmt.Sprintf("a change of what exists with annotations %+v", *a))
			}
		case strings.HasPrefix(tool.Name, "create_") && tool.Name != "create_import":
			if a.ReadOnlyHint || *a.DestructiveHint || a.IdempotentHint {
				problems = append(problems, fmt.Sprintf("a create with annotations %+v", *a))
			}
		}
		if strings.HasPrefix(tool.Name, "batch_") && !strings.Contains(string(b), `"required":["body"]`) {
			problems = append(problems, "a batch whose body is not required")
		}
		for _, p := range problems {
			t.Errorf("%s: %s", tool.Name, p)
		}
	}
}
