package steps

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseRejectsInvalidStepsNamingTheField(t *testing.T) {
	t.Parallel()
	tooMany := make([]string, MaxSteps+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf(`{"id":"s%d","type":"set"}`, i)
	}
	nest := func(levels int) string { // "with" counts as level 1
		return `[{"id":"a","type":"set","with":` + strings.Repeat(`{"x":`, levels-1) + `{}` + strings.Repeat(`}`, levels-1) + `}]`
	}

	tests := []struct {
		name      string
		raw       string
		wantField string
		wantMsg   string // substring of the message
	}{
		{"malformed JSON", `[{"id":`, "steps[0].id", "invalid JSON"},
		{"trailing data", `[] []`, "steps", "unexpected data"},
		{"not an array", `{"id":"a"}`, "steps", "must be an array, got object"},
		{"a string", `"set"`, "steps", "must be an array, got string"},
		{"more than fifty steps", "[" + strings.Join(tooMany, ",") + "]", "steps", "at most 50 steps"},
		{"element not an object", `[{"id":"a","type":"set"}, 3]`, "steps[1]", "must be an object, got number"},
		{"unknown step field", `[{"id":"a","type":"set","next":"b"}]`, "steps[0].next", "unknown field (allowed: id, type, with)"},
		{"duplicate step field", `[{"id":"a","id":"b","type":"set"}]`, "steps[0].id", "duplicate key"},
		{"missing id", `[{"type":"set"}]`, "steps[0].id", "is required"},
		{"null id", `[{"id":null,"type":"set"}]`, "steps[0].id", "is required"},
		{"numeric id", `[{"id":7,"type":"set"}]`, "steps[0].id", "must be a string, got number"},
		{"empty id", `[{"id":"","type":"set"}]`, "steps[0].id", "1 to 64 characters"},
		{"id longer than 64", `[{"id":"` + strings.Repeat("a", 65) + `","type":"set"}]`, "steps[0].id", "1 to 64 characters"},
		{"id with a dot", `[{"id":"a.b","type":"set"}]`, "steps[0].id", "may contain only"},
		{"id with non-ASCII letter", `[{"id":"café","type":"set"}]`, "steps[0].id", "may contain only"},
		{"duplicate id", `[{"id":"a","type":"set"},{"id":"b","type":"set"},{"id":"a","type":"set"}]`, "steps[2].id", `duplicate id "a" (already used by steps[0])`},
		{"missing type", `[{"id":"a"}]`, "steps[0].type", "is required (one of: set, upsertCompany, tagCompany, fail, writeMetricPoints, addEnrichment)"},
		{"type not a string", `[{"id":"a","type":true}]`, "steps[0].type", "must be a string, got boolean"},
		{"unknown type", `[{"id":"a","type":"http"}]`, "steps[0].type", `unknown type "http" (allowed: set, upsertCompany, tagCompany, fail, writeMetricPoints, addEnrichment)`},
		{"type is case-sensitive", `[{"id":"a","type":"Set"}]`, "steps[0].type", "unknown type"},
		{"with not an object", `[{"id":"a","type":"set","with":[1]}]`, "steps[0].with", "must be an object, got array"},
		{"empty key", `[{"id":"a","type":"set","with":{"":1}}]`, "steps[0].with", "keys must not be empty"},
		{"empty nested key", `[{"id":"a","type":"set","with":{"o":{"":1}}}]`, "steps[0].with.o", "keys must not be empty"},
		{"bare .$ key", `[{"id":"a","type":"set","with":{".$":"$.input"}}]`, "steps[0].with..$", `must name the key before ".$"`},
		{"duplicate with key", `[{"id":"a","type":"set","with":{"k":1,"k":2}}]`, "steps[0].with.k", "duplicate key"},
		{"path key with non-string value", `[{"id":"a","type":"set","with":{"name.$":5}}]`, "steps[0].with.name.$", "must be a JSONPath string, got number"},
		{"path not starting with $", `[{"id":"a","type":"set","with":{"name.$":"input.name"}}]`, "steps[0].with.name.$", `starting with "$"`},
		{"path starting with @", `[{"id":"a","type":"set","with":{"name.$":"@.input"}}]`, "steps[0].with.name.$", `starting with "$"`},
		{"malformed path", `[{"id":"a","type":"set","with":{"name.$":"$.input["}}]`, "steps[0].with.name.$", "invalid JSONPath"},
		{"path with a trailing $ that jp would drop", `[{"id":"a","type":"set","with":{"name.$":"$.input$"}}]`, "steps[0].with.name.$", "invalid JSONPath"},
		{"path with a trailing @", `[{"id":"a","type":"set","with":{"name.$":"$.input@"}}]`, "steps[0].with.name.$", "invalid JSONPath"},
		{"empty path", `[{"id":"a","type":"set","with":{"name.$":""}}]`, "steps[0].with.name.$", `starting with "$"`},
		{"overlong path", `[{"id":"a","type":"set","with":{"name.$":"$` + strings.Repeat(".a", MaxPathLength) + `"}}]`, "steps[0].with.name.$", "at most 1024 characters"},
		{"malformed path nested in object", `[{"id":"a","type":"set","with":{"o":{"p":{"v.$":"nope"}}}}]`, "steps[0].with.o.p.v.$", `starting with "$"`},
		{"malformed path in object inside array", `[{"id":"a","type":"set","with":{"list":[1,{"v.$":"$$"}]}}]`, "steps[0].with.list[1].v.$", "invalid JSONPath"},
		{"literal and path for the same key", `[{"id":"a","type":"set","with":{"name":"x","name.$":"$.input"}}]`, "steps[0].with.name.$", `conflicts with "name"`},
		{"with nested deeper than ten levels", nest(MaxWithDepth + 1), "steps[0].with" + strings.Repeat(".x", MaxWithDepth), "nested too deeply"},
		{"fail without message", `[{"id":"a","type":"fail"}]`, "steps[0].with.message", `is required (or "message.$")`},
		{"fail with numeric message", `[{"id":"a","type":"fail","with":{"message":1}}]`, "steps[0].with.message", "must be a string, got number"},
		{"tagCompany without companyId", `[{"id":"a","type":"tagCompany","with":{"tags":["x"]}}]`, "steps[0].with.companyId", `is required (or "companyId.$")`},
		{"tagCompany with empty companyId", `[{"id":"a","type":"tagCompany","with":{"companyId":"","tags":["x"]}}]`, "steps[0].with.companyId", "must be a non-empty string"},
		{"tagCompany with numeric companyId", `[{"id":"a","type":"tagCompany","with":{"companyId":3,"tags":["x"]}}]`, "steps[0].with.companyId", "must be a non-empty string"},
		{"tagCompany without tags", `[{"id":"a","type":"tagCompany","with":{"companyId":"c1"}}]`, "steps[0].with.tags", `is required (or "tags.$")`},
		{"tagCompany with string tags", `[{"id":"a","type":"tagCompany","with":{"companyId":"c1","tags":"x"}}]`, "steps[0].with.tags", "must be an array of strings, got string"},
		{"tagCompany with empty tag", `[{"id":"a","type":"tagCompany","with":{"companyId":"c1","tags":["x",""]}}]`, "steps[0].with.tags[1]", "must be a non-empty string"},
		{"tagCompany with numeric tag", `[{"id":"a","type":"tagCompany","with":{"companyId":"c1","tags":[1]}}]`, "steps[0].with.tags[0]", "must be a non-empty string"},
		{"upsertCompany without identifier", `[{"id":"a","type":"upsertCompany","with":{"sector":"x"}}]`, "steps[0].with", "needs at least one of canonicalName, externalId, website"},
		{"upsertCompany with only empty identifiers", `[{"id":"a","type":"upsertCompany","with":{"canonicalName":"","website":null}}]`, "steps[0].with", "needs at least one of"},
		{"upsertCompany with numeric identifier", `[{"id":"a","type":"upsertCompany","with":{"canonicalName":"A","externalId":42}}]`, "steps[0].with.externalId", "must be a string, got number"},
		{"second step reported by its index", `[{"id":"a","type":"set"},{"id":"b","type":"fail"}]`, "steps[1].with.message", "is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			steps, err := Parse([]byte(tt.raw))
			if err == nil {
				t.Fatalf("Parse succeeded with %v, want error on %s", steps, tt.wantField)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
			}
			if ve.Field != tt.wantField {
				t.Errorf("Field = %q, want %q (message %q)", ve.Field, tt.wantField, ve.Message)
			}
			if !strings.Contains(ve.Message, tt.wantMsg) {
				t.Errorf("Message = %q, want it to contain %q", ve.Message, tt.wantMsg)
			}
			if want := ve.Field + ": " + ve.Message; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestParseAcceptsValidSteps(t *testing.T) {
	t.Parallel()
	id64 := strings.Repeat("A", MaxIDLength)
	fifty := make([]string, MaxSteps)
	for i := range fifty {
		fifty[i] = fmt.Sprintf(`{"id":"s%d","type":"set"}`, i)
	}
	tests := []struct {
		name string
		raw  string
		want []Step
	}{
		{"null is no steps", `null`, []Step{}},
		{"empty body is no steps", ` `, []Step{}},
		{"empty array", `[]`, []Step{}},
		{"absent with becomes empty object", `[{"id":"a","type":"set"}]`, []Step{{ID: "a", Type: "set", With: map[string]any{}}}},
		{"null with becomes empty object", `[{"id":"a","type":"set","with":null}]`, []Step{{ID: "a", Type: "set", With: map[string]any{}}}},
		{"id of 64 allowed characters", `[{"id":"` + id64 + `","type":"set"}]`, []Step{{ID: id64, Type: "set", With: map[string]any{}}}},
		{"id with digits, dash and underscore", `[{"id":"Step_1-b","type":"set"}]`, []Step{{ID: "Step_1-b", Type: "set", With: map[string]any{}}}},
		{
			"set keeps literal and path values as written, numbers as float64",
			`[{"id":"a","type":"set","with":{"n":1,"o":{"p.$":"$.input.x"},"l":[{"q.$":"$..y"},"$.not.a.path"],"label.$":"$.steps['b'].z[0]"}}]`,
			[]Step{{ID: "a", Type: "set", With: map[string]any{
				"n": float64(1), "o": map[string]any{"p.$": "$.input.x"},
				"l": []any{map[string]any{"q.$": "$..y"}, "$.not.a.path"}, "label.$": "$.steps['b'].z[0]",
			}}},
		},
		{"with exactly ten levels", `[{"id":"a","type":"set","with":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":{"x":[]}}}}}}}}}}]`, nil},
		{"fail with literal message", `[{"id":"a","type":"fail","with":{"message":"stop"}}]`, nil},
		{"fail with message path", `[{"id":"a","type":"fail","with":{"message.$":"$.input.reason"}}]`, nil},
		{"tagCompany with literals", `[{"id":"a","type":"tagCompany","with":{"companyId":"c1","tags":["x","y"]}}]`, nil},
		{"tagCompany with empty tag list", `[{"id":"a","type":"tagCompany","with":{"companyId":"c1","tags":[]}}]`, nil},
		{"tagCompany with paths", `[{"id":"a","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags.$":"$.input.tags[*]"}}]`, nil},
		{"upsertCompany by canonicalName", `[{"id":"a","type":"upsertCompany","with":{"canonicalName":"Acme"}}]`, nil},
		{"upsertCompany by website path", `[{"id":"a","type":"upsertCompany","with":{"website.$":"$.input.url","sector":null}}]`, nil},
		{"upsertCompany by externalId beside a null website", `[{"id":"a","type":"upsertCompany","with":{"externalId":"x-1","website":null}}]`, nil},
		{"fifty steps", "[" + strings.Join(fifty, ",") + "]", nil},
		{"a path key whose name ends in .$", `[{"id":"a","type":"set","with":{"k.$.$":"$.input","k.$":"$.input"}}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse([]byte(tt.raw))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got == nil {
				t.Fatal("Parse returned a nil slice; want non-nil so it encodes as []")
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestStepMarshalsNilWithAsEmptyObject(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal([]Step{{ID: "a", Type: "set"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"id":"a","type":"set","with":{}}]`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}

func TestParsedStepsRoundTripThroughJSON(t *testing.T) {
	t.Parallel()
	raw := `[{"id":"up","type":"upsertCompany","with":{"canonicalName.$":"$.input.name","custom":{"a":[1,2.5,true,null]}}},
		{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags":["<b>&"]}}]`
	first, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	assertRoundTrip(t, first)
}

// assertRoundTrip checks that steps survive storage as JSON unchanged.
func assertRoundTrip(t *testing.T, steps []Step) {
	t.Helper()
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatalf("re-parse of %s: %v", b, err)
	}
	if !reflect.DeepEqual(steps, again) {
		t.Fatalf("round trip changed steps:\n got %#v\nwant %#v", again, steps)
	}
}
