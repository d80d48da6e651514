package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	service "github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
)

// The MCP Inspector's schema portability check (clients/cli, core/json/
// schemaLint.ts of @modelcontextprotocol/inspector 2.12.0), which
// cmd/devserver's test runs on the dev server's tools/list, as a Go walk
// of a schema, so that a tool schema it would warn about fails here,
// without node: a type that is a list of types (rule type-union; here
// any list), a schema that constrains nothing (untyped-schema; but under
// not, where {} is the always-true schema), a bare true or false where a
// schema object is expected (boolean-schema; additionalProperties and its
// kin may be booleans), and a $ref outside the schema (remote-ref; here
// also a local one that points at nothing).

// constraining are the keywords that make a schema constrain a value
// (the Inspector's CONSTRAINING_KEYWORDS); if does with then or else.
var constraining = []string{
	"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
	"maxLength", "minLength", "pattern", "format", "contentMediaType", "contentEncoding", "contentSchema",
	"maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties",
	"required", "dependentRequired",
	"allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems", "unevaluatedItems",
	"properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames",
	"dependentSchemas", "dependencies",
	"$ref", "$dynamicRef", "$recursiveRef",
}

// booleanValued are the keywords whose value may be a bare true or false.
var booleanValued = []string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}

// Where a schema holds schemas: maps of them, lists of them, and one.
var (
	schemaMaps  = []string{"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
	schemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaOnes  = []string{"items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties",
		"unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"}
)

// lintSchema is what the Inspector's check finds in schema (decoded
// JSON), each finding "path: what".
func lintSchema(schema any) []string {
	var findings []string
	var walk func(node any, path, keyword string, depth int)
	walk = func(node any, path, keyword string, depth int) {
		if depth > 64 {
			return
		}
		if b, ok := node.(bool); ok {
			if !slices.Contains(booleanValued, keyword) {
				findings = append(findings, fmt.Sprintf("%s: a bare %v where a schema object is expected", path, b))
			}
			return
		}
		s, ok := node.(map[string]any)
		if !ok {
			return
		}
		if t, ok := s["type"].([]any); ok {
			findings = append(findings, fmt.Sprintf("%s: type is a list %v; write anyOf branches of one type each", path, t))
		}
		if ref, ok := s["$ref"].(string); ok {
			if !strings.HasPrefix(ref, "#") {
				findings = append(findings, fmt.Sprintf("%s: $ref %q points outside the schema", path, ref))
			} else if _, found := pointer(schema, ref); !found {
				findings = append(findings, fmt.Sprintf("%s: $ref %q points at nothing", path, ref))
			}
		}
		constrains := slices.ContainsFunc(constraining, func(k string) bool { _, ok := s[k]; return ok })
		if _, ok := s["if"]; ok && (s["then"] != nil || s["else"] != nil) {
			constrains = true
		}
		if !constrains && keyword != "not" {
			findings = append(findings, fmt.Sprintf("%s: constrains nothing (no type, enum, anyOf, $ref...): declare what the value is", path))
		}
		for _, k := range schemaMaps {
			if m, ok := s[k].(map[string]any); ok {
				for _, name := range slices.Sorted(maps.Keys(m)) {
					walk(m[name], path+"."+k+"."+name, k, depth+1)
				}
			}
		}
		for _, k := range schemaLists {
			if l, ok := s[k].([]any); ok {
				for i, sub := range l {
					walk(sub, fmt.Sprintf("%s.%s[%d]", path, k, i), k, depth+1)
				}
			}
		}
		for _, k := range schemaOnes {
			v, ok := s[k]
			if !ok {
				continue
			}
			if l, isList := v.([]any); isList && k == "items" {
				for i, sub := range l {
					walk(sub, fmt.Sprintf("%s.%s[%d]", path, k, i), k, depth+1)
				}
				continue
			}
			walk(v, path+"."+k, k, depth+1)
		}
	}
	walk(schema, "", "", 0)
	return findings
}

// pointer is what the JSON pointer of a local $ref ("#/$defs/Name")
// points at in root.
func pointer(root any, ref string) (any, bool) {
	at := root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch x := at.(type) {
		case map[string]any:
			v, ok := x[part]
			if !ok {
				return nil, false
			}
			at = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			at = x[i]
		default:
			return nil, false
		}
	}
	return at, true
}

// asJSON is v as a client reads it: encoded and decoded again.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// serviceTools are the tools the service offers.
func serviceTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	doc, err := service.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := mcpserver.ToolList(doc, service.MCP())
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// Every tool the service offers has input (and output) schemas the MCP
// Inspector finds nothing to warn about: portable to clients that take a
// single type per schema, and each declaring what its values are.
func TestEveryToolsSchemasPassTheMCPInspectorsPortabilityCheck(t *testing.T) {
	t.Parallel()
	tools := serviceTools(t)
	if len(tools) == 0 {
		t.Fatal("no tools")
	}
	for _, tool := range tools {
		for kind, s := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			if s == nil {
				continue
			}
			for _, f := range lintSchema(asJSON(t, s)) {
				t.Errorf("tool %s: %s%s", tool.Name, kind, f)
			}
		}
	}
}

// The tools' schemas take what the REST API takes where the document
// once left a value untyped or wrote a type union: a search predicate's
// value (a string, number or boolean, or 1 to 100 of them; never null),
// an export filter's (those or null, or 1 to 100 of them), a field a body
// may clear (null) — checked with the MCP Go SDK's JSON Schema validator,
// as a client may check its arguments before a call.
func TestTheToolsSchemasTakeTheValuesTheAPITakes(t *testing.T) {
	t.Parallel()
	tools := serviceTools(t)
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		resolved, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		schemas[tool.Name] = resolved
	}
	predicate := func(value string) string {
		return `{"body": {"filters": {"and": [{"field": "f", "operator": "in", "value": ` + value + `}]}}}`
	}
	export := func(value string) string {
		return `{"body": {"resource": "companies", "filter": {"f": ` + value + `}}}`
	}
	company := func(body string) string { return `{"match": "externalId", "body": ` + body + `}` }
	for _, c := range []struct {
		tool, args string
		ok         bool
	}{
		{"search_companies", predicate(`"Acme"`), true},
		{"search_companies", predicate(`50.5`), true},
		{"search_companies", predicate(`true`), true},
		{"search_companies", predicate(`["a", 1, false]`), true},
		{"search_companies", predicate(`null`), false},
		{"search_companies", predicate(`{}`), false},
		{"search_companies", predicate(`[]`), false},
		{"search_companies", predicate(`[null]`), false},
		{"search_companies", predicate(`[["a"]]`), false},
		{"create_export", export(`"x"`), true},
		{"create_export", export(`null`), true},
		{"create_export", export(`["x", null, 1, true]`), true},
		{"create_export", export(`{}`), false},
		{"create_export", export(`[[1]]`), false},
		{"create_export", export(`[]`), false},
		{"upsert_company", company(`{"externalId": "e1", "canonicalName": "A", "companyType": null, "website": null, "location": {"city": null}, "tags": null}`), true},
		{"upsert_company", company(`{"externalId": "e1", "companyType": "investor", "location": null, "tags": ["a"]}`), true},
		{"upsert_company", company(`{"externalId": "e1", "companyType": "bogus"}`), false},
		{"upsert_company", company(`{"externalId": "e1", "website": 5}`), false},
		{"start_workflow_run", `{"id": "w", "body": {"dryRun": null, "title": null, "input": {"a": 1}}}`, true},
		{"start_workflow_run", `{"id": "w", "body": {"input": []}}`, false},
	} {
		rs, ok := schemas[c.tool]
		if !ok {
			t.Errorf("no tool %s", c.tool)
			continue
		}
		var args any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(args); (err == nil) != c.ok {
			t.Errorf("%s %s: %v, want valid %v", c.tool, c.args, err, c.ok)
		}
	}
}

// The check finds what the Inspector does, so that the test above would
// fail.
func TestThePortabilityCheckFindsWhatTheInspectorWarnsAbout(t *testing.T) {
	t.Parallel()
	var schema any
	json.Unmarshal([]byte(`{"type": "object", "additionalProperties": false, "$defs": {"D": {"type": "string"}},
		"properties": {
			"union": {"type": ["string", "null"]},
			"untyped": {"description": "anything"},
			"bare": true,
			"remote": {"$ref": "https://example.com/s.json"},
			"dangling": {"$ref": "#/$defs/Missing"},
			"nested": {"type": "array", "items": {"anyOf": [{"type": "string"}, {}]}},
			"fine": {"anyOf": [{"$ref": "#/$defs/D"}, {"type": "null"}], "description": "d"},
			"everything": {"not": {}},
			"free": {"type": "object", "additionalProperties": true},
			"conditional": {"if": {"const": 1}, "then": {"minimum": 2}}
		}}`), &schema)
	want := []string{
		`.properties.bare: a bare true`,
		`.properties.dangling: $ref "#/$defs/Missing" points at nothing`,
		`.properties.nested.items.anyOf[1]: constrains nothing`,
		`.properties.remote: $ref "https://example.com/s.json" points outside`,
		`.properties.union: type is a list`,
		`.properties.untyped: constrains nothing`,
	}
	got := lintSchema(schema)
	if len(got) != len(want) {
		t.Errorf("%d findings, want %d: %q", len(got), len(want), got)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(f string) bool { return strings.HasPrefix(f, w) }) {
			t.Errorf("no finding %q in %q", w, got)
		}
	}
}
