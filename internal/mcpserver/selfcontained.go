package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// A tool's input schema is self-contained, so that every MCP client reads
// it whole: clients that do not dereference $ref (or $defs) would lose the
// filter and search shapes, some refuse a oneOf nested in an object, and
// some refuse property names outside [A-Za-z0-9_-]. selfContained rewrites
// a schema built with $defs (inputSchema) into one that has none of them:
//
//   - every {"$ref": "#/$defs/X"} is X itself, its own siblings (a
//     description) kept; a component met again inside itself (the search
//     filter's nested and/or) is, at that depth, an object of the same
//     shape, described as such, without its properties;
//   - a oneOf whose branches are all objects (a batch's operations, one
//     branch per op) is one object: the union of the branches' properties,
//     required what every branch requires, each property described by the
//     branch that names it;
//   - a property name holding a dot (a filter on a nested field,
//     "location.city") is spelled with "__" ("location__city"); renamed
//     maps each new name to the document's, for the call (restoreNames);
//   - every property has a description: its own, or one made of its name.
func selfContained(s map[string]any) (out map[string]any, renamed map[string]string) {
	defs, _ := s["$defs"].(map[string]any)
	renamed = map[string]string{}
	c := contained{defs: defs, renamed: renamed}
	out, _ = c.node(s, nil).(map[string]any)
	delete(out, "$defs")
	return out, renamed
}

type contained struct {
	defs    map[string]any
	renamed map[string]string
}

const defsRef = "#/$defs/"

// node rewrites one schema (or any JSON value within one); within lists
// the components being inlined around it.
func (c contained) node(v any, within []string) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.node(e, within)
		}
		return out
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, defsRef) {
			name := strings.TrimPrefix(ref, defsRef)
			var inlined map[string]any
			if slices.Contains(within, name) {
				inlined = map[string]any{"type": "object", "description": "a nested " + words(name) + ", of the same shape as the one that holds it"}
			} else {
				def, _ := c.defs[name].(map[string]any)
				inlined, _ = c.node(def, append(slices.Clone(within), name)).(map[string]any)
				inlined = maps.Clone(inlined)
			}
			for k, sib := range x {
				if k != "$ref" {
					inlined[k] = c.node(sib, within)
				}
			}
			return inlined
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "$defs" {
				continue
			}
			out[k] = c.node(e, within)
		}
		if merged, ok := mergeObjects(out["oneOf"]); ok {
			delete(out, "oneOf")
			for k, e := range merged {
				if _, has := out[k]; !has || k == "properties" || k == "required" {
					out[k] = e
				}
			}
		}
		if props, ok := out["properties"].(map[string]any); ok {
			fixed := make(map[string]any, len(props))
			for name, p := range props {
				if strings.Contains(name, ".") {
					safe := strings.ReplaceAll(name, ".", "__")
					c.renamed[safe] = name
					name = safe
				}
				if ps, ok := p.(map[string]any); ok {
					if d, _ := ps["description"].(string); d == "" {
						ps = maps.Clone(ps)
						ps["description"] = described(c.renamedOrSame(name))
					}
					p = ps
				}
				fixed[name] = p
			}
			out["properties"] = fixed
			if req, ok := out["required"].([]any); ok {
				for i, r := range req {
					if s, ok := r.(string); ok && strings.Contains(s, ".") {
						req[i] = strings.ReplaceAll(s, ".", "__")
					}
				}
			}
		}
		return out
	}
	return v
}

func (c contained) renamedOrSame(name string) string {
	if orig, ok := c.renamed[name]; ok {
		return orig
	}
	return name
}

// mergeObjects is one object schema of a oneOf whose branches are all
// objects: their properties together (unionOf the branches' schemas of
// each), required what all require, additionalProperties false when all
// say so.
func mergeObjects(v any) (map[string]any, bool) {
	branches, ok := v.([]any)
	if !ok || len(branches) == 0 {
		return nil, false
	}
	alts := map[string][]any{} // each property's schemas, by branch
	var required []string
	closed := true
	var kinds []string
	for i, b := range branches {
		o, ok := b.(map[string]any)
		if !ok || o["type"] != "object" {
			return nil, false
		}
		bp, _ := o["properties"].(map[string]any)
		for name, p := range bp {
			alts[name] = append(alts[name], p)
		}
		var req []string
		for _, r := range anyStrings(o["required"]) {
			req = append(req, r)
		}
		if i == 0 {
			required = req
		} else {
			required = slices.DeleteFunc(required, func(r string) bool { return !slices.Contains(req, r) })
		}
		if o["additionalProperties"] != false {
			closed = false
		}
		if d, _ := o["description"].(string); d != "" {
			kinds = append(kinds, d)
		}
	}
	props := map[string]any{}
	for name, schemas := range alts {
		props[name] = unionOf(schemas)
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		out["required"] = req
	}
	if closed {
		out["additionalProperties"] = false
	}
	if len(kinds) > 0 {
		out["description"] = "one of: " + strings.Join(kinds, "; ")
	}
	return out, true
}

// unionOf is one schema of a property several branches have: the one
// schema when they agree, one enum of every value when each is an enum (a
// batch's op), else anyOf the distinct schemas (a batch's data: a whole
// record to create, the fields to change to update).
func unionOf(schemas []any) any {
	var distinct []any
	seen := map[string]bool{}
	for _, s := range schemas {
		b, _ := json.Marshal(s)
		if !seen[string(b)] {
			seen[string(b)] = true
			distinct = append(distinct, s)
		}
	}
	if len(distinct) == 1 {
		return distinct[0]
	}
	var values []any
	for _, s := range distinct {
		m, _ := s.(map[string]any)
		e, ok := m["enum"].([]any)
		if !ok {
			values = nil
			break
		}
		for _, v := range e {
			if !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
	}
	if values != nil {
		out := maps.Clone(distinct[0].(map[string]any))
		out["enum"] = values
		return out
	}
	out := map[string]any{"anyOf": distinct}
	for _, s := range distinct {
		if d, _ := s.(map[string]any)["description"].(string); d != "" {
			out["description"] = d
			break
		}
	}
	return out
}

func anyStrings(v any) []string {
	var out []string
	for _, e := range asSlice(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// operatorDocs describe a filter's operators and a predicate's members
// where the document gives them no description of their own.
var operatorDocs = map[string]string{
	"eq": "equal to", "ne": "not equal to (a record without a value is not equal)", "in": "equal to one of these values",
	"nin": "equal to none of these values", "gt": "greater than", "gte": "greater than or equal to", "lt": "less than",
	"lte": "less than or equal to", "contains": "contains this text (ignoring case and diacritics), or for an array of strings holds it",
	"startsWith": "starts with this text (ignoring case and diacritics)", "exists": "true: has a value; false: has none",
	"and": "predicates that must all hold", "or": "predicates of which at least one must hold",
	"field": "the field the condition is on", "operator": "the condition's operator", "value": "the value the operator compares with",
	"direction": "asc (ascending) or desc (descending)", "op": "the operation", "id": "the record's id",
	"createdAt": "when the record was created", "updatedAt": "when the record was last changed",
}

// described is the description of a property that has none: its
// operator's or member's (operatorDocs), else its name in words.
func described(name string) string {
	if d, ok := operatorDocs[name]; ok {
		return d
	}
	return "the " + words(name)
}

// words spells a field name or path as words: "externalReference.id" is
// "external reference id".
func words(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '.' || r == '_' || r == '-':
			b.WriteByte(' ')
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// restoreNames gives the keys of args renamed by selfContained ("__" for
// ".") their names in the document again, at any depth.
func restoreNames(v any, renamed map[string]string) any {
	if len(renamed) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if orig, ok := renamed[k]; ok {
				k = orig
			}
			out[k] = restoreNames(e, renamed)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = restoreNames(e, renamed)
		}
		return out
	}
	return v
}
