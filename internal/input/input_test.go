package input_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/input"
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
		if got := input.Depth([]byte(tc.raw), 100); got != tc.want {
			t.Errorf("%s: Depth(%s) = %d, want %d", tc.name, tc.raw, got, tc.want)
		}
	}
	// It stops counting just past the limit, however deep the value goes.
	if got := input.Depth([]byte(strings.Repeat("[", 100_000)), 64); got != 65 {
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
		_, err := input.ParseObject([]byte(tc.body))
		inv, ok := err.(*apperr.InvalidError)
		if !ok || inv.Field != tc.field || inv.Message != "is nested deeper than 64 levels" {
			t.Errorf("%s: ParseObject = %v, want %q nested deeper than 64 levels", tc.name, err, tc.field)
		}
	}
	if _, err := input.ParseObject([]byte(`{"custom":` + deep(64) + `}`)); err != nil {
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
		o, err := input.ParseObject([]byte(`{"f":` + jsonString(t, tc.s) + `}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.String("f", input.Text{MultiLine: tc.multiLine})
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
