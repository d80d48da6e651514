package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Number formats. JSON Schema's number and integer bound no value, and a
// generator picks a type for them: oapi-codegen reads a number without a
// format as a float32 (a valuation of 1234567890.12 comes back as
// 1234567936) and an integer as an int. The service's numbers are those
// of I-JSON (package input): any double, an exact integer up to 2^53 − 1.
// So every schema of the document that allows a number says which:
// format double, and every one that allows an integer format int64, as
// OpenAPI defines them (a generated client then reads float64 and int64).
// One rule for every numeric schema, whatever its bounds: a type that
// depended on a bound (int32 for a page number) would change a generated
// client's types when the bound does.
const (
	NumberFormat  = "double"
	IntegerFormat = "int64"
)

// NumberFormats is doc, a document Document makes, with every schema
// that allows a number or an integer given its format (NumberFormat,
// IntegerFormat): those of the components, the parameters, the headers
// and the bodies. A schema that declares another format, or allows both
// a number and a string (one format cannot describe both: give each its
// own schema in an anyOf), is an error naming its place. It rewrites the
// document's JSON, not the Schemas it was made of, which the route table
// and the MCP tools share.
func NumberFormats(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var d map[string]any
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	var errs []string
	fail := func(err error) { errs = append(errs, err.Error()) }
	components, _ := d["components"].(map[string]any)
	for name, s := range mapOf(components["schemas"]) {
		formatSchema(s, "#/components/schemas/"+name, fail)
	}
	for name, h := range mapOf(components["headers"]) {
		formatSchema(mapOf(h)["schema"], "#/components/headers/"+name+"/schema", fail)
	}
	for name, p := range mapOf(components["parameters"]) {
		formatSchema(mapOf(p)["schema"], "#/components/parameters/"+name+"/schema", fail)
	}
	for name, r := range mapOf(components["responses"]) {
		formatResponse(r, "#/components/responses/"+name, fail)
	}
	for name, b := range mapOf(components["requestBodies"]) {
		for media, m := range mapOf(mapOf(b)["content"]) {
			formatSchema(mapOf(m)["schema"], "#/components/requestBodies/"+name+" "+media, fail)
		}
	}
	for path, item := range mapOf(d["paths"]) {
		for method, op := range mapOf(item) {
			at := strings.ToUpper(method) + " " + path
			if method == "parameters" {
				formatParameters(op, at, fail)
				continue
			}
			o := mapOf(op)
			formatParameters(o["parameters"], at+" parameters", fail)
			if body := mapOf(o["requestBody"]); body != nil {
				for media, m := range mapOf(body["content"]) {
					formatSchema(mapOf(m)["schema"], at+" requestBody "+media, fail)
				}
			}
			for status, r := range mapOf(o["responses"]) {
				formatResponse(r, at+" "+status, fail)
			}
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, fmt.Errorf("openapi: number formats: %s", strings.Join(errs, "; "))
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func formatParameters(v any, at string, fail func(error)) {
	ps, _ := v.([]any)
	for i, p := range ps {
		formatSchema(mapOf(p)["schema"], fmt.Sprintf("%s[%d]", at, i), fail)
	}
}

func formatResponse(v any, at string, fail func(error)) {
	r := mapOf(v)
	for media, m := range mapOf(r["content"]) {
		formatSchema(mapOf(m)["schema"], at+" "+media, fail)
	}
	for name, h := range mapOf(r["headers"]) {
		formatSchema(mapOf(h)["schema"], at+" header "+name, fail)
	}
}

// Keywords whose value is a schema, an object of schemas, or an array of
// schemas (JSON Schema 2020-12's applicators, and the comma-separated
// values' array).
var (
	schemaKeywords    = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema", CommaSeparated}
	schemaMapKeywords = []string{"properties", "patternProperties", "$defs", "dependentSchemas"}
	schemaListKeyword = []string{"prefixItems", "allOf", "anyOf", "oneOf"}
)

// formatSchema gives s, and every schema within it, its number format.
func formatSchema(v any, at string, fail func(error)) {
	s := mapOf(v)
	if s == nil {
		return
	}
	if want := numberFormat(s["type"]); want != "" {
		switch f, has := s["format"]; {
		case want == "ambiguous":
			fail(fmt.Errorf("%s allows a number and a string: one format cannot describe both; give each its own schema (anyOf)", at))
		case !has:
			s["format"] = want
		case f != want:
			fail(fmt.Errorf("%s declares format %v: every number of the document is of format %s, every integer of format %s", at, f, NumberFormat, IntegerFormat))
		}
	}
	for _, k := range schemaKeywords {
		formatSchema(s[k], at+"/"+k, fail)
	}
	for _, k := range schemaMapKeywords {
		for name, sub := range mapOf(s[k]) {
			formatSchema(sub, at+"/"+k+"/"+name, fail)
		}
	}
	for _, k := range schemaListKeyword {
		list, _ := s[k].([]any)
		for i, sub := range list {
			formatSchema(sub, fmt.Sprintf("%s/%s/%d", at, k, i), fail)
		}
	}
}

// numberFormat is the format of a schema of type t (a name or a list of
// names): NumberFormat when it allows a number, else IntegerFormat when it
// allows an integer, "" when neither, "ambiguous" when a string too.
func numberFormat(t any) string {
	var types []string
	switch t := t.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, n := range t {
			if s, ok := n.(string); ok {
				types = append(types, s)
			}
		}
	}
	number, integer := slices.Contains(types, "number"), slices.Contains(types, "integer")
	switch {
	case !number && !integer:
		return ""
	case slices.Contains(types, "string"):
		return "ambiguous"
	case number:
		return NumberFormat
	}
	return IntegerFormat
}
