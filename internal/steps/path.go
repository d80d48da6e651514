package steps

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ohler55/ojg/jp"
)

// path is a compiled JSONPath of a ".$" parameter.
type path struct {
	expr jp.Expr
	// definite paths (only root, child names and indexes) name at most one
	// value; as in ASL they yield that value and fail when nothing matches.
	// Other paths yield an array of all matches.
	definite bool
	// unordered paths (wildcard, descent, filter) can visit object members,
	// which jp does in Go's random map order; their matches are put in
	// document order so a run (and its retry) always sees the same array.
	unordered bool
}

// compilePath parses a JSONPath that must start at the root ("$").
func compilePath(s string) (path, error) {
	if !strings.HasPrefix(s, "$") {
		return path{}, errors.New(`must be a JSONPath starting with "$"`)
	}
	if len(s) > MaxPathLength {
		return path{}, fmt.Errorf("must be a JSONPath of at most %d characters", MaxPathLength)
	}
	// jp silently drops a trailing '$' or '@' ("$.a$" parses as "$.a"); a
	// path that does not mean what it says is an error, not a guess.
	if last := s[len(s)-1]; len(s) > 1 && (last == '$' || last == '@') {
		return path{}, fmt.Errorf("invalid JSONPath: unexpected %q at the end", last)
	}
	x, err := jp.ParseString(s)
	if err != nil {
		return path{}, fmt.Errorf("invalid JSONPath: %v", err)
	}
	if len(x) == 0 {
		return path{}, errors.New(`must be a JSONPath starting with "$"`)
	}
	if _, ok := x[0].(jp.Root); !ok {
		return path{}, errors.New(`must be a JSONPath starting with "$"`)
	}
	p := path{expr: x, definite: true}
	for _, f := range x[1:] {
		switch f.(type) {
		case jp.Child, jp.Nth, jp.Bracket:
		case jp.Wildcard, jp.Descent, *jp.Filter:
			p.definite, p.unordered = false, true
		case jp.Union, jp.Slice:
			p.definite = false
		default:
			// Script procedures and the like: not part of the JSONPath the
			// workflow language documents, and not something to run blindly.
			return path{}, fmt.Errorf("invalid JSONPath: unsupported expression %q", f.Append(nil, true, false))
		}
	}
	return p, nil
}

// resolveParameters returns a copy of v in which every ".$" key of every object
// (also objects nested in arrays) is replaced by the key without the suffix and
// the value of its JSONPath evaluated against data. field names v in errors.
func resolveParameters(field string, v, data any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range sortedKeys(t) {
			kf := field + "." + k
			name, isPath := strings.CutSuffix(k, ".$")
			if !isPath {
				r, err := resolveParameters(kf, t[k], data)
				if err != nil {
					return nil, err
				}
				out[k] = r
				continue
			}
			s, ok := t[k].(string)
			if !ok {
				return nil, fmt.Errorf("%s must be a JSONPath string, got %s", kf, jsonType(t[k]))
			}
			p, err := compilePath(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", kf, err)
			}
			r, err := p.eval(data)
			if err != nil {
				return nil, fmt.Errorf("path %q in %s %v", s, kf, err)
			}
			out[name] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := resolveParameters(fmt.Sprintf("%s[%d]", field, i), e, data)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

var errNoMatch = errors.New("matched nothing")

// eval applies the path to data. Results are deep copies so that one step's
// output never aliases the input or another step's output.
func (p path) eval(data any) (any, error) {
	matches := p.matches(data)
	if p.definite {
		if len(matches) == 0 {
			return nil, errNoMatch
		}
		return copyJSON(matches[0]), nil
	}
	out := make([]any, len(matches))
	for i, m := range matches {
		out[i] = copyJSON(m)
	}
	return out, nil
}

// matches returns the values the path selects. Paths that iterate objects
// are evaluated as locations sorted in document order: array elements by
// index, object members by key, a value before its descendants. Other paths
// keep jp's order, so a union such as [1,0] yields its selectors' order.
func (p path) matches(data any) []any {
	if !p.unordered {
		return p.expr.Get(data)
	}
	locs := p.expr.Locate(data, 0)
	slices.SortStableFunc(locs, compareLocations)
	out := make([]any, 0, len(locs))
	for _, loc := range locs {
		// A location is a normalized, definite path to one existing value.
		if v := loc.Get(data); len(v) > 0 {
			out = append(out, v[0])
		}
	}
	return out
}

// compareLocations orders normalized paths ($, names, indexes) in document order.
func compareLocations(a, b jp.Expr) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareFragments(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b)) // a value comes before its descendants
}

func compareFragments(a, b jp.Frag) int {
	switch fa := a.(type) {
	case jp.Nth:
		if fb, ok := b.(jp.Nth); ok {
			return cmp.Compare(fa, fb)
		}
		return -1
	case jp.Child:
		if fb, ok := b.(jp.Child); ok {
			return strings.Compare(string(fa), string(fb))
		}
		return 1
	}
	return 0
}

// copyJSON deep-copies decoded JSON containers; scalars are immutable.
func copyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyJSON(e)
		}
		return out
	default:
		return v
	}
}
