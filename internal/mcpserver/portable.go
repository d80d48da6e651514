package mcpserver

import (
	"math"
	"slices"
	"strings"
)

// portable is the JSON Schema s (decoded JSON) with every type union
// ("type": ["string", "null"], as the OpenAPI document writes a field that
// may be null) spelled as anyOf branches of a single type each, as clients
// that map a tool's schemas onto a single-type dialect (the OpenAPI subset
// of Gemini's function declarations) need them, and as the MCP Inspector's
// schema check asks. It is the same schema: each branch takes the
// keywords that apply to its type (a string's maxLength and format, an
// array's items, an object's properties) and the values of enum and const
// of its type (a type with none of an enum's values is no branch); the
// keywords that apply to any value (description, examples, default,
// allOf...) stay on the node, beside the anyOf (in an allOf when the node
// has an anyOf of its own). The document's extensions (x-go-type...),
// which are no JSON Schema, are left out. The schemas s holds are
// rewritten alike; nothing else changes.
func portable(s any) any {
	node, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := make(map[string]any, len(node))
	for k, v := range node {
		if !strings.HasPrefix(k, "x-") {
			out[k] = subschemas(k, v)
		}
	}
	types, ok := typeUnion(out["type"])
	if !ok {
		return out
	}
	if len(types) == 1 {
		out["type"] = types[0]
		return out
	}
	rest := map[string]any{}
	branches := make([]map[string]any, len(types))
	for i, t := range types {
		branches[i] = map[string]any{"type": t}
	}
	for k, v := range out {
		if k == "type" {
			continue
		}
		applies := keywordTypes[k]
		if k == "enum" || k == "const" || !slices.ContainsFunc(types, func(t string) bool { return slices.Contains(applies, t) }) {
			rest[k] = v
			continue
		}
		for i, t := range types {
			if slices.Contains(applies, t) {
				branches[i][k] = v
			}
		}
	}
	// enum and const: each branch keeps the values of its type; a branch
	// left without any takes nothing, and is none.
	enum, hasEnum := rest["enum"].([]any)
	c, hasConst := rest["const"]
	if hasEnum {
		delete(rest, "enum")
	}
	delete(rest, "const")
	var kept []any
	for i, t := range types {
		b := branches[i]
		if hasConst {
			if !ofType(c, t) {
				continue
			}
			if t != "null" { // null's only value
				b["const"] = c
			}
		}
		if hasEnum {
			var vs []any
			for _, v := range enum {
				if ofType(v, t) {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				continue
			}
			if t != "null" {
				b["enum"] = vs
			}
		}
		kept = append(kept, b)
	}
	switch len(kept) {
	case 0: // no value is of a type and of the enum
		allOf(rest, map[string]any{"not": map[string]any{}})
	case 1:
		for k, v := range kept[0].(map[string]any) {
			rest[k] = v
		}
	default:
		if own, ok := rest["anyOf"]; ok {
			delete(rest, "anyOf")
			allOf(rest, map[string]any{"anyOf": own})
			allOf(rest, map[string]any{"anyOf": kept})
		} else {
			rest["anyOf"] = kept
		}
	}
	return rest
}

// allOf adds s to the allOf of node.
func allOf(node map[string]any, s any) {
	all, _ := node["allOf"].([]any)
	node["allOf"] = append(slices.Clone(all), s)
}

// subschemas is the value of keyword k of a schema with the schemas it
// holds made portable; the value of any other keyword (enum, default,
// examples, required...) as it is.
func subschemas(k string, v any) any {
	switch k {
	case "properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions":
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for name, s := range m {
			out[name] = portable(s) // a dependencies entry that is a list of names stays one
		}
		return out
	case "allOf", "anyOf", "oneOf", "prefixItems", "items":
		if a, ok := v.([]any); ok {
			out := make([]any, len(a))
			for i, s := range a {
				out[i] = portable(s)
			}
			return out
		}
		return portable(v)
	case "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties", "unevaluatedProperties",
		"additionalItems", "unevaluatedItems", "contentSchema":
		return portable(v)
	}
	return v
}

// typeUnion is the types of a type keyword that lists them: ok when t is
// a list of type names.
func typeUnion(t any) (types []string, ok bool) {
	list, isList := t.([]any)
	if !isList || len(list) == 0 {
		return nil, false
	}
	for _, v := range list {
		name, isName := v.(string)
		if !isName {
			return nil, false
		}
		types = append(types, name)
	}
	return types, true
}

// keywordTypes are the types each type-specific keyword applies to (JSON
// Schema 2020-12's validation vocabulary, and format: a string's, or a
// number's in OpenAPI: int32, int64, float, double).
var keywordTypes = func() map[string][]string {
	m := map[string][]string{}
	for _, g := range []struct{ types, keywords []string }{
		{[]string{"string"}, []string{"minLength", "maxLength", "pattern", "contentEncoding", "contentMediaType", "contentSchema"}},
		{[]string{"string", "number", "integer"}, []string{"format"}},
		{[]string{"number", "integer"}, []string{"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}},
		{[]string{"array"}, []string{"items", "prefixItems", "contains", "minContains", "maxContains", "minItems", "maxItems",
			"uniqueItems", "unevaluatedItems", "additionalItems"}},
		{[]string{"object"}, []string{"properties", "patternProperties", "additionalProperties", "unevaluatedProperties",
			"propertyNames", "required", "dependentRequired", "dependentSchemas", "dependencies", "minProperties", "maxProperties"}},
	} {
		for _, k := range g.keywords {
			m[k] = g.types
		}
	}
	return m
}()

// ofType reports whether v (decoded JSON) is a value of JSON Schema type t.
func ofType(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case float64:
		return t == "number" || t == "integer" && v == math.Trunc(v)
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}
