package openapi_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/openapi"
)

// numberSchemas calls fn with every schema of v (decoded JSON) whose type
// allows a number or an integer, at its JSON pointer: every object with
// a type keyword naming them, wherever it is, but for the values a schema
// gives (examples, defaults, enums, consts) and the security schemes.
func numberSchemas(v any, at string, fn func(at string, s map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		var types []any
		switch t := x["type"].(type) {
		case string:
			types = []any{t}
		case []any:
			types = t
		}
		for _, t := range types {
			if t == "number" || t == "integer" {
				fn(at, x)
				break
			}
		}
		for k, e := range x {
			switch k {
			case "example", "examples", "default", "enum", "const", "securitySchemes":
				continue
			}
			numberSchemas(e, at+"/"+k, fn)
		}
	case []any:
		for i, e := range x {
			numberSchemas(e, at+"/"+strconv.Itoa(i), fn)
		}
	}
}

// wantNumberFormats fails t for every number schema of doc without
// format double and every integer one without format int64.
func wantNumberFormats(t *testing.T, doc map[string]any) {
	t.Helper()
	numberSchemas(doc, "#", func(at string, s map[string]any) {
		want := openapi.IntegerFormat
		if strings.Contains(mustJSON(s["type"]), `"number"`) {
			want = openapi.NumberFormat
		}
		if s["format"] != want {
			t.Errorf("%s is %s of format %v, want %s", at, mustJSON(s["type"]), s["format"], want)
		}
	})
}

func TestNumberFormatsMakesEveryNumberOfTheDocumentADoubleAndEveryIntegerAnInt64(t *testing.T) {
	t.Parallel()
	withNumbers := append(ops[:len(ops):len(ops)], openapi.Operation{Method: "POST", Path: "/v1/widgets/{id}/measure", Function: "things", Tag: "widgets",
		Summary: "measure", Status: 200,
		Query:   []openapi.Param{{Name: "precision", Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": 10}}},
		Headers: []openapi.Param{{Name: "X-Scale", Schema: openapi.Schema{"type": []any{"number", "null"}}}},
		Body: openapi.Schema{"type": "object", "properties": openapi.Schema{
			"value":  openapi.Schema{"anyOf": []any{openapi.Schema{"type": "number"}, openapi.Schema{"type": "array", "items": openapi.Schema{"type": "number"}}}},
			"counts": openapi.Schema{"type": "object", "additionalProperties": openapi.Schema{"type": "integer"}},
			"in":     openapi.Schema{"type": "string", openapi.CommaSeparated: openapi.Schema{"type": "array", "items": openapi.Schema{"type": "integer"}}},
			// A value a schema gives is no schema.
			"shape": openapi.Schema{"type": "object", "examples": []any{map[string]any{"type": "number"}}},
		}},
		Data:            openapi.Schema{"type": "object", "properties": openapi.Schema{"mean": openapi.Schema{"type": []any{"number", "null"}}, "n": openapi.Schema{"type": "integer"}}},
		ResponseHeaders: map[string]openapi.Param{"X-Count": {Schema: openapi.Schema{"type": "integer"}}},
	})
	b, _ := document(t, withNumbers)
	b, err := openapi.NumberFormats(b)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	wantNumberFormats(t, doc)
	measure := operation(t, doc, "POST", "/v1/widgets/{id}/measure")
	n := 0
	numberSchemas(measure, "", func(string, map[string]any) { n++ })
	if n != 9 {
		t.Errorf("found %d numeric schemas in the operation, want 9", n)
	}
	op := mustJSON(measure)
	if !strings.Contains(op, `"examples":[{"type":"number"}]`) {
		t.Errorf("an example was changed: %s", op)
	}
	for _, want := range []string{`"format":"int64","maximum":10`, `"type":["number","null"]`, `"x-comma-separated":{"items":{"format":"int64"`} {
		if !strings.Contains(op, want) {
			t.Errorf("the operation lacks %s: %s", want, op)
		}
	}
	// The Schemas the document was made of are left as they were: the
	// route table and the MCP tools share them.
	if _, has := withNumbers[len(withNumbers)-1].Body["properties"].(openapi.Schema)["counts"].(openapi.Schema)["additionalProperties"].(openapi.Schema)["format"]; has {
		t.Error("Document changed the schemas it was given")
	}
}

func TestANumberOfAnotherFormatOrAlsoAStringIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		schema openapi.Schema
		want   string
	}{
		{openapi.Schema{"type": "number", "format": "float"}, "declares format float"},
		{openapi.Schema{"type": "integer", "format": "int32"}, "declares format int32"},
		{openapi.Schema{"type": []any{"string", "number"}}, "allows a number and a string"},
	} {
		op := openapi.Operation{Method: "GET", Path: "/v1/widgets", Function: "things", Tag: "widgets", Summary: "list", Status: 200,
			Data: openapi.Schema{"type": "object", "properties": openapi.Schema{"x": c.schema}}}
		b, err := openapi.Document([]openapi.Operation{op}, nil, nil, openapi.Info{Tags: []openapi.Tag{{Name: "widgets"}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = openapi.NumberFormats(b)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "GET /v1/widgets") {
			t.Errorf("%s: %v, want an error naming the place and saying %q", mustJSON(c.schema), err, c.want)
		}
	}
}
