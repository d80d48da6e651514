package jsonbody_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

func TestDepthCountsLevelsOfObjectsAndArraysButNotBracketsInStrings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want int
	}{
		{"a scalar", `42`, 0},
		{"a string of brackets", `"[[{{"`, 0},
		{"an empty object", `{}`, 1},
		{"an object of scalars", `{"a":1,"b":"x"}`, 1},
		{"an array in an object", `{"a":[1,2]}`, 2},
		{"siblings do not add up", `{"a":{"b":1},"c":{"d":1}}`, 2},
		{"brackets in keys and values", `{"[{":"}]]","a":"\"[{"}`, 1},
		{"an escaped backslash before a quote", `{"a":"\\","b":[[1]]}`, 3},
		{"mixed nesting", `[{"a":[{"b":[]}]}]`, 5},
	}
	for _, tc := range tests {
		if got := jsonbody.Depth([]byte(tc.raw), 100); got != tc.want {
			t.Errorf("%s: Depth(%s) = %d, want %d", tc.name, tc.raw, got, tc.want)
		}
	}
	// It stops counting just past the limit, however deep the value goes.
	if got := jsonbody.Depth([]byte(strings.Repeat("[", 100_000)), 64); got != 65 {
		t.Errorf("Depth of 100000 open brackets with limit 64 = %d, want 65", got)
	}
}

func TestParseObjectNamesTheFieldNestedTooDeep(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name, body, field string
	}{
		{"the first field", `{"custom":` + deep(65) + `}`, "custom"},
		{"a later field", `{"name":"x","tags":["a"],"input":` + deep(100_000) + `}`, "input"},
		{"an escaped key", `{"a\"b":1,"c\u0064":` + deep(65) + `}`, "cd"},
	}
	for _, tc := range tests {
		_, err := jsonbody.ParseObject([]byte(tc.body))
		inv, ok := err.(*apperr.InvalidError)
		if !ok || inv.Field != tc.field || inv.Message != "is nested deeper than 64 levels" {
			t.Errorf("%s: ParseObject = %v, want %q nested deeper than 64 levels", tc.name, err, tc.field)
		}
	}
	if _, err := jsonbody.ParseObject([]byte(`{"custom":` + deep(64) + `}`)); err != nil {
		t.Errorf("a field 64 levels deep: %v, want it accepted", err)
	}
}

func TestTextRefusesControlCharactersExceptLineBreaksAndTabsInMultiLineText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s         string
		multiLine bool
		ok        bool
	}{
		{"plain text · ünïcode 🚀", false, true},
		{"a\x00b", false, false},
		{"a\x1bb", false, false},
		{"a\nb", false, false},
		{"a\tb", false, false},
		{"a\x7fb", false, false},
		{"a\u0080b", false, false},
		{"a\u009fb", false, false},
		{"a\u00a0b", false, true}, // no-break space is not a control character
		{"a\nb\r\nc\td", true, true},
		{"a\x00b", true, false},
		{"a\x1bb", true, false},
		{"a\u0085b", true, false},
	}
	for _, tc := range tests {
		o, err := jsonbody.ParseObject([]byte(`{"f":` + jsonString(t, tc.s) + `}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.String("f", jsonbody.Text{MultiLine: tc.multiLine})
		if (err == nil) != tc.ok {
			t.Errorf("String(%q, MultiLine %v) = %v, want ok %v", tc.s, tc.multiLine, err, tc.ok)
		}
	}
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCheckNumbersRefusesNumbersNoClientReadsNamingTheirPath(t *testing.T) {
	t.Parallel()
	const (
		outOfRange = "must be a number within the range of a 64-bit float (±1.7976931348623157e308), the numbers every JSON client reads; send a larger one as a string"
		bigInteger = "must be an integer from -9007199254740991 to 9007199254740991 (2^53 − 1), the integers every JSON client reads exactly; send a larger one as a string"
	)
	refused := []struct{ raw, field, message string }{
		{`1e400`, "payload", outOfRange},
		{`{"n":1e400}`, "payload.n", outOfRange},
		{`{"n":-1e400}`, "payload.n", outOfRange},
		{`{"n":1E+309}`, "payload.n", outOfRange},
		{`{"n":1.7976931348623159e308}`, "payload.n", outOfRange},
		{`{"n":` + strings.Repeat("9", 400) + `}`, "payload.n", outOfRange},
		{`{"n":-` + strings.Repeat("9", 400) + `.5}`, "payload.n", outOfRange},
		{`{"n":9007199254740992}`, "payload.n", bigInteger},
		{`{"n":-9007199254740992}`, "payload.n", bigInteger},
		{`{"n":9007199254740993}`, "payload.n", bigInteger},
		{`{"n":12345678901234567890}`, "payload.n", bigInteger},
		{`{"n":1` + strings.Repeat("0", 308) + `}`, "payload.n", bigInteger},
		// The path: arrays by index, keys unescaped, strings that look like numbers skipped.
		{`{"a":"1e400","b":[1,{"c":[0,0,1e999]}]}`, "payload.b[1].c[2]", outOfRange},
		{`{"a\"b":{},"x\u0079":[[],{"k":"v","z":-1e999}]}`, "payload.xy[1].z", outOfRange},
		{`[{"a":{}},{"b":[]},"s",9007199254740992]`, "payload[3]", bigInteger},
		{`{"` + strings.Repeat("k", 200) + `":1e400}`, "payload." + strings.Repeat("k", 100) + "…", outOfRange},
	}
	for _, tc := range refused {
		err := jsonbody.CheckNumbers("payload", []byte(tc.raw))
		inv, ok := err.(*apperr.InvalidError)
		if !ok || inv.Field != tc.field || inv.Message != tc.message {
			t.Errorf("CheckNumbers(%.80s) = %v, want %s %s", tc.raw, err, tc.field, tc.message)
		}
	}
	accepted := []string{
		`{"n":9007199254740991,"m":-9007199254740991,"z":0,"neg":-0}`,
		`{"pi":3.141592653589793238462643383279}`, // more digits than a double keeps: rounded
		`{"tiny":1e-400,"small":-2e-324}`,         // rounds to 0
		`{"max":1.7976931348623157e308,"min":-1.7976931348623157e308}`,
		`{"f":9007199254740993.0,"e":1e20,"big":1.5e300}`, // floating-point values a double holds
		`{"s":"1e400","t":"` + strings.Repeat("9", 400) + `"}`,
		`{"a":[true,false,null,{"b":[1.5,-2,3e10]}]}`,
		`{"x":` + strings.Repeat("1", 300) + `.5}`,
	}
	for _, raw := range accepted {
		if err := jsonbody.CheckNumbers("payload", []byte(raw)); err != nil {
			t.Errorf("CheckNumbers(%.80s) = %v, want it accepted", raw, err)
		}
	}
}

func TestParseObjectRefusesANumberNoClientReadsInAnyField(t *testing.T) {
	t.Parallel()
	for body, field := range map[string]string{
		`{"name":"x","custom":{"n":1e400}}`:                "custom.n",
		`{"points":[{"value":1},{"value":-1e400}]}`:        "points[1].value",
		`{"filters":{"and":[{"value":9007199254740993}]}}`: "filters.and[0].value",
		`{"employeeCount":12345678901234567890}`:           "employeeCount",
	} {
		_, err := jsonbody.ParseObject([]byte(body))
		if inv, ok := err.(*apperr.InvalidError); !ok || inv.Field != field {
			t.Errorf("ParseObject(%s) = %v, want an error naming %s", body, err, field)
		}
	}
	// Free (webhook payloads) checks them too; FreeObject's were checked with the body.
	if _, err := jsonbody.Free("payload", []byte(`{"n":[1e400]}`)); err == nil || err.Error() != "payload.n[0] "+
		"must be a number within the range of a 64-bit float (±1.7976931348623157e308), the numbers every JSON client reads; send a larger one as a string" {
		t.Errorf("Free of 1e400 = %v", err)
	}
}

func TestParseObjectRefusesARepeatedMemberNameAtAnyDepth(t *testing.T) {
	t.Parallel()
	refused := []struct{ body, field string }{
		{`{"name":"a","name":"b"}`, "name"},
		{`{"name":"a","n\u0061me":"b"}`, "name"},
		{`{"custom":{"x":1,"y":{"z":2},"x":3}}`, "custom.x"},
		{`{"ops":[{"a":1},{"b":{"c":1,"c":2}}]}`, "ops[1].b.c"},
	}
	for _, tc := range refused {
		_, err := jsonbody.ParseObject([]byte(tc.body))
		var ie *apperr.InvalidError
		if !asInvalid(err, &ie) || ie.Field != tc.field || !strings.Contains(ie.Message, "more than once") {
			t.Errorf("ParseObject(%s) = %v, want %q refused as repeated", tc.body, err, tc.field)
		}
	}
	for _, body := range []string{
		`{"a":{"x":1},"b":{"x":1}}`, `{"a":[{"x":1},{"x":1}]}`, `{"a":"\"a\":1","b":{"a":1}}`, `{"x":{},"y":[],"z":{"x":1}}`,
	} {
		if _, err := jsonbody.ParseObject([]byte(body)); err != nil {
			t.Errorf("ParseObject(%s) = %v, want accepted", body, err)
		}
	}
}

func asInvalid(err error, ie **apperr.InvalidError) bool {
	e, ok := err.(*apperr.InvalidError)
	*ie = e
	return ok
}
