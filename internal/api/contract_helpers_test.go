package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// declared returns the declaration of a resource by name.
func declared(t *testing.T, name string) *resource.Def {
	t.Helper()
	for _, d := range resources.All() {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no declared resource %q", name)
	return nil
}

// sample, sampleValue and createTarget are apitest's sample generator.
func sample(t *testing.T, c *apitest.Client, def *resource.Def, full bool) map[string]any {
	t.Helper()
	return apitest.Sample(t, c, def, full)
}

func sampleValue(t *testing.T, c *apitest.Client, f resource.Field, siblings map[string]any) any {
	t.Helper()
	return apitest.SampleValue(t, c, f, siblings)
}

func createTarget(t *testing.T, c *apitest.Client, name string) string {
	t.Helper()
	return apitest.CreateTarget(t, c, name)
}

// otherValue is a valid value of f different from cur, or false when the
// generator cannot make one (a fixed Example).
func otherValue(t *testing.T, c *apitest.Client, f resource.Field, cur any, siblings map[string]any) (any, bool) {
	t.Helper()
	var v any
	switch {
	case f.Kind == resource.Bool:
		b, _ := cur.(bool)
		v = !b
	case f.Kind == resource.Enum:
		for _, x := range f.Values {
			if x != cur {
				v = x
				break
			}
		}
	case f.Example != nil:
		return nil, false
	default:
		v = sampleValue(t, c, f, siblings)
	}
	if v == nil || sameJSON(v, cur) {
		return nil, false
	}
	return v, true
}

// emptyOf is the value of an optional field that was not sent (or was
// cleared with null): its Default, [] for arrays, {} for objects, false
// for booleans, null otherwise.
func emptyOf(f resource.Field) any {
	if f.Default != nil {
		return f.Default
	}
	switch f.Kind {
	case resource.Strings, resource.Refs, resource.Structs:
		return []any{}
	case resource.Object, resource.Struct:
		return map[string]any{}
	case resource.Bool:
		return false
	}
	return nil
}

// wrongType is a JSON value of the wrong type for f.
func wrongType(f resource.Field) any {
	switch f.Kind {
	case resource.Int, resource.Number:
		return "12"
	case resource.Bool:
		return "true"
	case resource.Strings, resource.Refs, resource.Structs:
		return "not an array"
	case resource.Object, resource.Struct:
		return []any{"not", "an", "object"}
	default:
		return 12345
	}
}

// refPath is one reference of a declaration: the path an error names and
// how to put an id there in a full sample body.
type refPath struct {
	field  string // the top-level field holding the reference
	path   string
	target string
	set    func(body map[string]any, id string)
}

// refPaths lists every Ref and Refs of def, nested ones included, for a
// full sample body: a Refs gets the id as its second element, a Structs a
// second element holding the id.
func refPaths(def *resource.Def) []refPath {
	var out []refPath
	for _, f := range def.Fields {
		switch f.Kind {
		case resource.Ref:
			out = append(out, refPath{f.Name, f.Name, f.Target, func(b map[string]any, id string) { b[f.Name] = id }})
		case resource.Refs:
			out = append(out, refPath{f.Name, f.Name + "[1]", f.Target, func(b map[string]any, id string) {
				b[f.Name] = append(slices.Clone(b[f.Name].([]any)), id)
			}})
		case resource.Struct, resource.Structs:
			for _, sub := range f.Fields {
				if sub.Kind != resource.Ref {
					continue
				}
				target := sub.Target
				if sub.TargetBy != "" {
					target = sub.Targets[firstValue(f.Fields, sub.TargetBy)]
				}
				if f.Kind == resource.Struct {
					out = append(out, refPath{f.Name, f.Name + "." + sub.Name, target, func(b map[string]any, id string) {
						b[f.Name].(map[string]any)[sub.Name] = id
					}})
					continue
				}
				out = append(out, refPath{f.Name, fmt.Sprintf("%s[1].%s", f.Name, sub.Name), target, func(b map[string]any, id string) {
					list := b[f.Name].([]any)
					el := map[string]any{}
					for k, v := range list[0].(map[string]any) {
						el[k] = v
					}
					el[sub.Name] = id
					b[f.Name] = append(slices.Clone(list), el)
				}})
			}
		}
	}
	return out
}

func firstValue(fields []resource.Field, name string) string {
	for _, f := range fields {
		if f.Name == name && len(f.Values) > 0 {
			return f.Values[0]
		}
	}
	return ""
}

// sameJSON compares two values as JSON (numbers by value).
func sameJSON(a, b any) bool {
	var x, y any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if json.Unmarshal(ja, &x) != nil || json.Unmarshal(jb, &y) != nil {
		return false
	}
	ja, _ = json.Marshal(x)
	jb, _ = json.Marshal(y)
	return string(ja) == string(jb)
}

func jsonCopy(t *testing.T, v any) any { return apitest.JSONCopy(t, v) }

// copyBody returns a shallow copy of a body with its JSON values copied.
func copyBody(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	return jsonCopy(t, m).(map[string]any)
}

// sortValue orders values of a sortable field as its index does: nothing
// first, numbers by value, booleans false first, text case-insensitively.
func sortValue(f resource.Field, v any) (num float64, text string, isNum, none bool) {
	switch x := v.(type) {
	case nil:
		return 0, "", false, true
	case float64:
		return x, "", true, false
	case bool:
		if x {
			return 0, "true", false, false
		}
		return 0, "false", false, false
	case string:
		if x == "" {
			return 0, "", false, true
		}
		switch f.Kind {
		case resource.String, resource.Text, resource.Enum, resource.Email:
			return 0, strings.ToLower(x), false, false
		}
		return 0, x, false, false
	}
	return 0, fmt.Sprint(v), false, false
}

// compareSort is -1, 0 or 1 as a sorts before, with or after b.
func compareSort(f resource.Field, a, b any) int {
	an, at, anum, anone := sortValue(f, a)
	bn, bt, _, bnone := sortValue(f, b)
	switch {
	case anone && bnone:
		return 0
	case anone:
		return -1
	case bnone:
		return 1
	case anum:
		switch {
		case an < bn:
			return -1
		case an > bn:
			return 1
		}
		return 0
	}
	return strings.Compare(at, bt)
}

// sameIDs reports whether the two id lists hold the same ids, each once.
func sameIDs(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

// outOfRange lists values of the right JSON type that break one of f's
// rules: too long, too many, out of bounds, not one of the values, not a
// URL, an e-mail address or a date.
func outOfRange(f resource.Field) []any {
	var out []any
	switch f.Kind {
	case resource.String, resource.Text:
		out = append(out, strings.Repeat("x", f.MaxLength()+1), "   ")
	case resource.Enum:
		out = append(out, "not-one-of-the-values")
	case resource.URL:
		out = append(out, "not a url", "ftp://example.com/file")
	case resource.Email:
		out = append(out, "not an address")
	case resource.Date:
		out = append(out, "2026-13-45", "2026-01-01T00:00:00Z")
	case resource.DateTime:
		out = append(out, "yesterday", "2026-01-01")
	case resource.Int, resource.Number:
		if f.Kind == resource.Int {
			out = append(out, 1.5)
		}
		if f.Min != nil {
			out = append(out, *f.Min-1)
		}
		if f.Max != nil {
			out = append(out, *f.Max+1)
		}
	case resource.Strings, resource.Refs:
		many := make([]any, f.MaxElements()+1)
		for i := range many {
			many[i] = fmt.Sprintf("v%d", i)
		}
		out = append(out, many, []any{1})
	case resource.Ref:
		out = append(out, "")
	case resource.Structs:
		many := make([]any, f.MaxElements()+1)
		for i := range many {
			many[i] = map[string]any{}
		}
		out = append(out, many, []any{"not an object"})
	}
	return out
}
