package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// A type union becomes anyOf branches of one type each, with the keywords
// of that type, and accepts exactly the values it did: each case's values
// are checked against both schemas with the JSON Schema validator of the
// MCP Go SDK.
func TestATypeUnionBecomesAnyOfBranchesOfOneTypeEachAcceptingTheSameValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in, want string
		values         []string // checked against both
	}{
		{"a nullable string: its keywords on the string's branch, its annotations on the node",
			`{"type": ["string", "null"], "maxLength": 3, "format": "date", "description": "d", "examples": ["ab"], "default": null}`,
			`{"anyOf": [{"type": "string", "maxLength": 3, "format": "date"}, {"type": "null"}], "description": "d", "examples": ["ab"], "default": null}`,
			[]string{`"ab"`, `"abcd"`, `null`, `1`, `true`, `[]`, `{}`}},
		{"an enum: each branch its values",
			`{"type": ["string", "null"], "enum": ["a", "b", null]}`,
			`{"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]}`,
			[]string{`"a"`, `"c"`, `null`, `0`}},
		{"an enum without null: the string alone",
			`{"type": ["string", "null"], "enum": ["a"], "description": "d"}`,
			`{"type": "string", "enum": ["a"], "description": "d"}`,
			[]string{`"a"`, `"b"`, `null`}},
		{"a const",
			`{"type": ["integer", "string"], "const": 2}`,
			`{"type": "integer", "const": 2}`,
			[]string{`2`, `2.5`, `"2"`}},
		{"numbers, integers and their bounds",
			`{"type": ["integer", "number", "null"], "minimum": 0, "maximum": 10, "format": "int32", "enum": [1, 2.5, null]}`,
			`{"anyOf": [{"type": "integer", "minimum": 0, "maximum": 10, "format": "int32", "enum": [1]},
				{"type": "number", "minimum": 0, "maximum": 10, "format": "int32", "enum": [1, 2.5]}, {"type": "null"}]}`,
			[]string{`1`, `2.5`, `3`, `null`, `"1"`}},
		{"an object and an array, and the schemas they hold",
			`{"type": "object", "additionalProperties": false, "required": ["o"], "properties": {
				"o": {"type": ["object", "null"], "required": ["a"], "additionalProperties": false, "minProperties": 1,
					"properties": {"a": {"type": ["array", "null"], "items": {"type": ["number", "string"], "minimum": 1}, "maxItems": 2}}}}}`,
			`{"type": "object", "additionalProperties": false, "required": ["o"], "properties": {
				"o": {"anyOf": [{"type": "object", "required": ["a"], "additionalProperties": false, "minProperties": 1,
					"properties": {"a": {"anyOf": [{"type": "array", "items": {"anyOf": [{"type": "number", "minimum": 1}, {"type": "string"}]}, "maxItems": 2},
						{"type": "null"}]}}}, {"type": "null"}]}}}`,
			[]string{`{"o": null}`, `{"o": {"a": null}}`, `{"o": {"a": [1, "x"]}}`, `{"o": {"a": [0]}}`, `{"o": {"a": [1, 2, 3]}}`,
				`{"o": {}}`, `{"o": {"a": [], "b": 1}}`, `{"o": "x"}`, `{}`}},
		{"a node with an anyOf of its own: both, in an allOf",
			`{"type": ["string", "null"], "maxLength": 2, "anyOf": [{"const": "ab"}, {"const": null}], "allOf": [{"not": {"const": "b"}}]}`,
			`{"allOf": [{"not": {"const": "b"}}, {"anyOf": [{"const": "ab"}, {"const": null}]}, {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]}]}`,
			[]string{`"ab"`, `null`, `"b"`, `"abc"`, `1`}},
		{"a keyword of no type of the union stays on the node",
			`{"type": ["array", "null"], "maxLength": 1, "items": {"type": "string"}}`,
			`{"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "maxLength": 1}`,
			[]string{`["ab"]`, `[1]`, `null`, `"ab"`}},
		{"an enum no type of the union has: nothing",
			`{"type": ["string", "null"], "enum": [1]}`,
			`{"allOf": [{"not": {}}]}`,
			[]string{`1`, `"1"`, `null`}},
		{"one type in a list, $defs, and what is data rather than a schema",
			`{"type": ["object"], "$defs": {"D": {"type": ["boolean", "null"]}}, "properties": {"d": {"$ref": "#/$defs/D"}},
				"default": {"d": {"type": ["a", "b"]}}, "examples": [{"type": ["x"]}], "x-go-type": "T"}`,
			`{"type": "object", "$defs": {"D": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}}, "properties": {"d": {"$ref": "#/$defs/D"}},
				"default": {"d": {"type": ["a", "b"]}}, "examples": [{"type": ["x"]}]}`,
			[]string{`{"d": true}`, `{"d": null}`, `{"d": 1}`, `[]`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, want := decode(t, c.in), decode(t, c.want)
			got := portable(in)
			if g, w := encode(t, got), encode(t, want); g != w {
				t.Errorf("portable(%s)\n = %s\nwant %s", c.in, g, w)
			}
			if encode(t, in) != encode(t, decode(t, c.in)) {
				t.Errorf("portable changed its argument: %s", encode(t, in))
			}
			before, after := resolve(t, in), resolve(t, got)
			for _, v := range c.values {
				errBefore, errAfter := before.Validate(decode(t, v)), after.Validate(decode(t, v))
				if (errBefore == nil) != (errAfter == nil) {
					t.Errorf("%s: before %v, after %v", v, errBefore, errAfter)
				}
			}
		})
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func resolve(t *testing.T, schema any) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(encode(t, schema)), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
