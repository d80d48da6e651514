package api_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/openapi"
)

// Every number the document describes is a double and every integer an
// int64 (openapi.NumberFormat): without a format, generated clients read
// a number as a float32 (oapi-codegen's did: a valuation of
// 1234567890.12 came back as 1234567936). The walk is over the whole
// document as JSON, not over the places openapi.NumberFormats visits: a
// schema anywhere (a parameter, a header, an error body of its own, an
// extension's) is found.
func TestEveryNumberOfTheDocumentIsADoubleAndEveryIntegerAnInt64(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func() ([]byte, error){"published": api.OpenAPI, "strict": api.StrictOpenAPI} {
		b, err := build()
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		found := map[string]string{}
		numericSchemas(doc, "#", func(at string, types []string, s map[string]any) {
			want := openapi.IntegerFormat
			for _, t := range types {
				if t == "number" {
					want = openapi.NumberFormat
				}
			}
			found[at], _ = s["format"].(string)
			if s["format"] != want {
				t.Errorf("%s: %s has no format %s but %v", name, at, want, s["format"])
			}
		})
		// The walk reaches the records' money, the metric values, the
		// paging parameters and the rate-limit headers.
		for at, want := range map[string]string{
			"#/components/schemas/Company/properties/lastValuation":                      openapi.NumberFormat,
			"#/components/schemas/ListedCompany/properties/totalMoneyRaised":             openapi.NumberFormat,
			"#/components/schemas/Deal/properties/amount":                                openapi.NumberFormat,
			"#/components/schemas/MetricPoint/properties/value":                          openapi.NumberFormat,
			"#/components/schemas/MetricPointInput/properties/value":                     openapi.NumberFormat,
			"#/components/schemas/Score/properties/elementScores/items/properties/score": openapi.NumberFormat,
			"#/components/schemas/Document/properties/size":                              openapi.IntegerFormat,
			"#/components/headers/X-RateLimit-Remaining/schema":                          openapi.IntegerFormat,
			"#/components/parameters/Limit/schema":                                       openapi.IntegerFormat,
		} {
			if got, ok := found[at]; !ok || got != want {
				t.Errorf("%s: %s is not a number schema of format %s (found %t, format %q)", name, at, want, ok, got)
			}
		}
		if len(found) < 150 {
			t.Errorf("%s: found %d number schemas; the walk misses some", name, len(found))
		}
	}
}

// numericSchemas calls fn with every schema within v (decoded JSON) whose
// type allows a number or an integer, at its JSON pointer: every object
// whose type keyword names them, but for the values schemas give
// (examples, defaults, enums, consts) and the security schemes (their
// type is another keyword).
func numericSchemas(v any, at string, fn func(at string, types []string, s map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		var types []string
		switch t := x["type"].(type) {
		case string:
			types = []string{t}
		case []any:
			for _, e := range t {
				if s, ok := e.(string); ok {
					types = append(types, s)
				}
			}
		}
		for _, t := range types {
			if t == "number" || t == "integer" {
				fn(at, types, x)
				break
			}
		}
		for k, e := range x {
			switch k {
			case "example", "examples", "default", "enum", "const", "securitySchemes":
				continue
			}
			numericSchemas(e, at+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), fn)
		}
	case []any:
		for i, e := range x {
			numericSchemas(e, at+"/"+strconv.Itoa(i), fn)
		}
	}
}
