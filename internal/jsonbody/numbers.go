package jsonbody

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Numbers every JSON client reads (I-JSON, RFC 7493 §2.2). JSON itself
// bounds no number, but clients read numbers as IEEE 754 doubles (Go's
// float64, JavaScript, Python's float): a number beyond a double's range
// fails the whole response in Go's encoding/json and becomes Infinity
// elsewhere, and an integer beyond 2^53 − 1 comes back as another integer.
// The service refuses both in every body, so that whatever it stores can be
// read back by any client:
//
//   - a number whose value rounds to ±Inf as a double (1e400, -1e400, a
//     400-digit integer): overflow;
//   - an integer written without fraction or exponent beyond
//     ±9007199254740991 (2^53 − 1): such a literal is how an exact integer
//     (a 64-bit id) is sent, and clients would silently read another one.
//
// A number written with a fraction or an exponent is a floating-point value
// and is accepted whenever a double can hold its magnitude, even when its
// digits are more than a double keeps (3.141592653589793238462643383279,
// 1e-400): a client reads the nearest double, losing precision only, as
// I-JSON allows. Accepted numbers are stored and answered exactly as sent.
const (
	// maxIntegerText is the largest integer literal accepted, 2^53 − 1
	// (I-JSON's bound; above it two integers can read as one double:
	// 2^53 + 1 reads as 2^53), in its 16 digits, compared as text.
	maxIntegerText = "9007199254740991"
	// maxPathKey bounds each object key an error message repeats.
	maxPathKey = 100
)

// CheckNumbers refuses the first number of raw, one valid JSON value, that
// breaks the rules above, naming it by its path below field ("custom.n",
// "points[2].value"; field itself when raw is the number). It is one pass
// over the bytes with no recursion; raw nested deeper than MaxDepth should
// be refused before (Depth), which bounds the path it keeps.
func CheckNumbers(field string, raw []byte) error { return scan(field, raw, false) }

// CheckValues is CheckNumbers that also refuses, in the same pass, the
// first object that names a member twice (after unescaping: "a" and
// "\u0061" are one name), at any depth, free-form objects included
// (I-JSON, RFC 7493 §2.3), naming the repeated member by its path below
// field ("custom.x", "operations[1].body.name"). Every body is checked
// with it (ParseObject).
func CheckValues(field string, raw []byte) error { return scan(field, raw, true) }

// duplicateMember says why a repeated member name is refused.
const duplicateMember = "appears more than once in its object; send each member name once " +
	"(I-JSON, RFC 7493 §2.3: which of the two a client reads is undefined)"

// level is an array or object scan is inside.
type level struct {
	array            bool
	index            int                 // the element of an array
	keyStart, keyEnd int                 // the quoted key of an object's member
	seen             map[string]struct{} // an object's member names so far (names)
}

// scan is CheckNumbers, and CheckValues when names is set.
func scan(field string, raw []byte, names bool) error {
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
				if names {
					name := memberName(raw[l.keyStart:l.keyEnd])
					if _, dup := l.seen[name]; dup {
						return apperr.Invalid(pathOf(field, stack, raw), "%s", duplicateMember)
					}
					if l.seen == nil {
						l.seen = map[string]struct{}{}
					}
					l.seen[name] = struct{}{}
				}
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
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			end := i + 1
			for end < len(raw) && isNumberByte(raw[end]) {
				end++
			}
			if msg := numberProblem(raw[i:end]); msg != "" {
				return apperr.Invalid(pathOf(field, stack, raw), "%s", msg)
			}
			i = end - 1
		}
	}
	return nil
}

// pathOf is the path below field of the value scan is at.
func pathOf(field string, stack []level, raw []byte) string {
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
	return path
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

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// Why a number is refused, for messages.
const (
	outOfRange = "must be a number within the range of a 64-bit float (±1.7976931348623157e308), " +
		"the numbers every JSON client reads; send a larger one as a string"
	bigInteger = "must be an integer from -9007199254740991 to 9007199254740991 (2^53 − 1), " +
		"the integers every JSON client reads exactly; send a larger one as a string"
)

// numberProblem says what is wrong with the JSON number n, "" when nothing.
func numberProblem(n []byte) string {
	digits := bytes.TrimPrefix(n, []byte("-"))
	intDigits := bytes.IndexAny(digits, ".eE")
	if intDigits < 0 { // an integer literal
		if len(digits) < len(maxIntegerText) || len(digits) == len(maxIntegerText) && string(digits) <= maxIntegerText {
			return ""
		}
		if len(digits) <= 308 || !overflows(n) {
			return bigInteger
		}
		return outOfRange
	}
	if bytes.IndexAny(digits, "eE") < 0 && intDigits <= 308 {
		return "" // under 1e308, whatever its fraction
	}
	if overflows(n) {
		return outOfRange
	}
	return ""
}

// overflows reports whether n rounds to ±Inf as a double.
func overflows(n []byte) bool {
	f, err := strconv.ParseFloat(string(n), 64)
	return err != nil && math.IsInf(f, 0)
}

// pathKey is an object key, quoted in raw, as an error path shows it:
// unescaped, at most maxPathKey characters.
func pathKey(quoted []byte) string {
	var k string
	if json.Unmarshal(quoted, &k) != nil {
		k = strings.Trim(string(quoted), `"`)
	}
	if utf8.RuneCountInString(k) > maxPathKey {
		k = string([]rune(k)[:maxPathKey]) + "…"
	}
	return k
}
