package steps

import (
	"errors"
	"fmt"
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
}

// compilePath parses a JSONPath that must start at the root ("$").
func compilePath(s string) (path, error) {
	if !strings.HasPrefix(s, "$") {
		return path{}, errors.New(`must be a JSONPath starting with "$"`)
	}
	if len(s) > MaxPathLength {
		return path{}, fmt.Errorf("must be a JSONPath of at most %d characters", MaxPathLength)
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
	definite := true
	for _, f := range x[1:] {
		switch f.(type) {
		case jp.Child, jp.Nth, jp.Bracket:
		default:
			definite = false
		}
	}
	return path{expr: x, definite: definite}, nil
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
	matches := p.expr.Get(data)
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
