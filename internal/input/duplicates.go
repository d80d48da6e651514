package input

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// duplicateMember says why a repeated member name is refused.
const duplicateMember = "appears more than once in its object; send each member name once " +
	"(I-JSON, RFC 7493 §2.3: which of the two a client reads is undefined)"

// CheckDuplicates refuses the first object of raw, one valid JSON value,
// that names a member twice (after unescaping: "a" and "\u0061" are one
// name), at any depth, free-form objects included. The error names the
// repeated member by its path below field ("custom.x", "operations[1].body.name").
// It is one pass over the bytes with no recursion; raw nested deeper than
// MaxDepth should be refused before (Depth).
func CheckDuplicates(field string, raw []byte) error {
	type level struct {
		array            bool
		index            int                 // the element of an array
		keyStart, keyEnd int                 // the quoted key of an object's member
		seen             map[string]struct{} // the object's member names so far
	}
	var shallow [8]level
	stack, expectKey := shallow[:0], false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			end := stringEnd(raw, i)
			if n := len(stack); expectKey && n > 0 && !stack[n-1].array {
				l := &stack[n-1]
				l.keyStart, l.keyEnd = i, min(end+1, len(raw))
				expectKey = false
				name := memberName(raw[l.keyStart:l.keyEnd])
				if _, dup := l.seen[name]; dup {
					path := field
					for _, l := range stack {
						if l.array {
							path += "[" + strconv.Itoa(l.index) + "]"
							continue
						}
						if path != "" {
							path += "."
						}
						path += pathKey(raw[l.keyStart:l.keyEnd])
					}
					return apperr.Invalid(path, "%s", duplicateMember)
				}
				if l.seen == nil {
					l.seen = map[string]struct{}{}
				}
				l.seen[name] = struct{}{}
			}
			i = end
		case '{':
			stack = append(stack, level{})
			expectKey = true
		case '[':
			stack = append(stack, level{array: true})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].array {
					stack[n-1].index++
				} else {
					expectKey = true
				}
			}
		}
	}
	return nil
}

// memberName is an object key, quoted in raw, unescaped.
func memberName(quoted []byte) string {
	if len(quoted) >= 2 && bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	var k string
	if json.Unmarshal(quoted, &k) != nil {
		return string(quoted)
	}
	return k
}
