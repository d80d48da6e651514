package search

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/fold"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// What a list or a plan that reads records itself needs to answer exactly
// as a search engine would: conditions from a query string
// (ParseCondition), and a predicate tree (Match) and sort keys (Compare)
// evaluated on records as stored. Match and Compare have the embedded
// engine's semantics to the byte (its property test holds them to it):
//
//   - a field's values are those at its dotted path, through nested
//     objects and arrays, nulls left out (ValuesAt);
//   - strings are matched as exact values, or folded (fold.Text: case
//     and diacritics ignored) for contains and startsWith, and sorted
//     folded; a string longer than MaxTermLength is not an exact value:
//     eq, in, contains and startsWith do not match it, and it sorts as
//     missing;
//   - numbers, and dates and date-times as milliseconds since the epoch,
//     are compared as float64 (NumberOf);
//   - a field that is not of its type in a record (a string where a
//     number should be) holds no value of that type, yet it exists.

// MaxTermLength is the longest string, in bytes, that the engines keep
// as an exact value: eq, in, contains and startsWith never match a longer
// one, and it sorts as a record without a value.
const MaxTermLength = 32 << 10

// ParseCondition reads a condition of a list's query string: field op raw,
// given as the parameter param (such as filter[size][gte]=10, named in
// errors as the client wrote it). The value is typed as in the search
// body: a string field takes the string as it is; an integer, a base-10
// integer; a number, a finite decimal number; a boolean, true or false; a
// date, YYYY-MM-DD; a date-time, RFC 3339. in and nin take 1 to
// MaxInValues comma-separated values (so their strings cannot hold a
// comma), exists takes true or false. Strings are at most MaxValueLength
// bytes. Operators apply to the types they do in a search body.
func ParseCondition(s *Schema, param, field string, op Op, raw string) (*Predicate, error) {
	at := place{path: param, query: true}
	f, ok := s.Field(field)
	if !ok {
		return nil, at.invalid("%q is not a filterable field of %s; use one of %s", field, s.Resource, fieldNames(s))
	}
	if !slices.Contains(Ops, op) {
		return nil, at.invalid("%q is not an operator; use one of %s", op, strings.Join(opNames(), ", "))
	}
	if err := checkOp(f, op, at); err != nil {
		return nil, err
	}
	p := &Predicate{Field: f.Name, Op: op}
	switch op {
	case Exists:
		if raw != "true" && raw != "false" {
			return nil, at.invalid("must be true or false for exists, not %s", shown(raw))
		}
		p.Value = raw == "true"
	case In, Nin:
		parts := strings.Split(raw, ",")
		if len(parts) > MaxInValues {
			return nil, at.invalid("must hold 1 to %d comma-separated values for %s, not %d", MaxInValues, op, len(parts))
		}
		vals := make([]any, len(parts))
		for i, part := range parts {
			item := at
			if len(parts) > 1 {
				item.note = fmt.Sprintf(" (value %d of %d)", i+1, len(parts))
			}
			v, err := textScalar(f, part, item)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		p.Value = vals
	default:
		v, err := textScalar(f, raw, at)
		if err != nil {
			return nil, err
		}
		p.Value = v
	}
	return p, nil
}

// decimal is the syntax of a number in a query string.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// textScalar reads one value of f's type written as text.
func textScalar(f Field, s string, at place) (any, error) {
	switch f.Type {
	case Keyword, Text, Keywords:
		return stringValue(s, at)
	case Number:
		n, err := strconv.ParseFloat(s, 64)
		if !decimal.MatchString(s) || err != nil {
			return nil, at.invalid("must be a number for %s, not %s", f.Name, shown(s))
		}
		return n, nil
	case Integer:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, at.invalid("must be an integer for %s, not %s", f.Name, shown(s))
		}
		return n, nil
	case Bool:
		if s != "true" && s != "false" {
			return nil, at.invalid("must be true or false for %s, not %s", f.Name, shown(s))
		}
		return s == "true", nil
	case Date, DateTime:
		return timeValue(f, s, at)
	}
	return nil, at.invalid("cannot be given for %s", f.Name)
}

// shown quotes a value for a message, cut short when long.
func shown(s string) string {
	const most = 64
	if utf8.RuneCountInString(s) <= most {
		return strconv.Quote(s)
	}
	return strconv.Quote(string([]rune(s)[:most])) + "…"
}

// ValuesAt collects the non-null values at a field's dotted path in v (a
// record decoded from JSON), through nested objects and arrays: the
// elements of an array at the path, the values of every element of an
// array along it. An empty array holds no value.
func ValuesAt(v any, field string) []any {
	return valuesAt(v, field, nil)
}

func valuesAt(v any, path string, out []any) []any {
	if path == "" {
		switch x := v.(type) {
		case nil:
		case []any:
			for _, e := range x {
				if e != nil {
					out = append(out, e)
				}
			}
		default:
			out = append(out, v)
		}
		return out
	}
	switch x := v.(type) {
	case map[string]any:
		name, rest, _ := strings.Cut(path, ".")
		return valuesAt(x[name], rest, out)
	case []any:
		for _, e := range x {
			out = valuesAt(e, path, out)
		}
	}
	return out
}

// NumberOf is the number a value of a field of type t is compared and
// sorted as: a number (json.Number, float64 or int64 for Number and
// Integer) as itself, -0 as 0; a date or date-time (a string in a record,
// a time.Time in a predicate) as milliseconds since the epoch. It is
// false for a value of another type, or a number beyond float64.
func NumberOf(t Type, v any) (float64, bool) {
	var n float64
	switch t {
	case Number, Integer:
		switch x := v.(type) {
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return 0, false
			}
			n = f
		case float64:
			n = x
		case int64:
			n = float64(x)
		case int:
			n = float64(x)
		default:
			return 0, false
		}
	case Date, DateTime:
		switch x := v.(type) {
		case string:
			tm, err := parseTime(t, x)
			if err != nil {
				return 0, false
			}
			n = float64(tm.UnixMilli())
		case time.Time:
			n = float64(x.UnixMilli())
		default:
			return 0, false
		}
	default:
		return 0, false
	}
	if n == 0 {
		n = 0 // -0 as 0
	}
	return n, true
}

// Match reports whether p holds for rec, a record decoded from JSON (with
// json.Decoder.UseNumber, or plain float64 numbers), exactly as the
// engines decide it. A nil p holds. A condition on a field the schema
// does not have holds for no record.
func Match(s *Schema, p *Predicate, rec map[string]any) bool {
	if p == nil {
		return true
	}
	if p.Field != "" {
		f, ok := s.Field(p.Field)
		if !ok || !holds(f, p.Op, p.Value, ValuesAt(rec, f.Name)) {
			return false
		}
	}
	for _, c := range p.And {
		if !Match(s, c, rec) {
			return false
		}
	}
	if len(p.Or) == 0 {
		return true
	}
	for _, c := range p.Or {
		if Match(s, c, rec) {
			return true
		}
	}
	return false
}

// holds decides one condition on a field's values.
func holds(f Field, op Op, v any, vals []any) bool {
	switch op {
	case Eq:
		return equal(f, v, vals)
	case Ne:
		return !equal(f, v, vals)
	case In, Nin:
		list, _ := v.([]any)
		found := slices.ContainsFunc(list, func(e any) bool { return equal(f, e, vals) })
		return found == (op == In)
	case Gt, Gte, Lt, Lte:
		want, ok := NumberOf(f.Type, v)
		n, has := lastNumber(f, vals)
		if !ok || !has {
			return false
		}
		switch op {
		case Gt:
			return n > want
		case Gte:
			return n >= want
		case Lt:
			return n < want
		}
		return n <= want
	case Contains, StartsWith:
		if op == Contains && f.Type == Keywords {
			return equal(f, v, vals)
		}
		want, ok := v.(string)
		if !ok {
			return false
		}
		want = fold.Text(want) // "" (a value of diacritics alone too) is in every exact value
		for _, str := range exactStrings(f, vals) {
			folded := fold.Text(str)
			if (op == Contains && strings.Contains(folded, want)) || (op == StartsWith && strings.HasPrefix(folded, want)) {
				return true
			}
		}
		return false
	case Exists:
		return (len(vals) > 0) == (v == true)
	}
	return false
}

// equal reports whether vals hold v as the engines' eq does: a number,
// date or boolean as the field's one value (the last of the type when a
// record holds several), a string as any of the exact values.
func equal(f Field, v any, vals []any) bool {
	switch f.Type {
	case Number, Integer, Date, DateTime:
		want, ok := NumberOf(f.Type, v)
		n, has := lastNumber(f, vals)
		return ok && has && n == want
	case Bool:
		want, ok := v.(bool)
		b, has := lastBool(vals)
		return ok && has && b == want
	}
	want, ok := v.(string)
	return ok && slices.Contains(exactStrings(f, vals), want)
}

// exactStrings are the exact values of a string field: its strings of at
// most MaxTermLength bytes.
func exactStrings(f Field, vals []any) []string {
	if f.Type != Keyword && f.Type != Text && f.Type != Keywords {
		return nil
	}
	var out []string
	for _, v := range vals {
		if s, ok := v.(string); ok && len(s) <= MaxTermLength {
			out = append(out, s)
		}
	}
	return out
}

// lastNumber is the number a numeric field is indexed as: its last value
// of the field's type.
func lastNumber(f Field, vals []any) (n float64, ok bool) {
	for _, v := range vals {
		if x, is := NumberOf(f.Type, v); is {
			n, ok = x, true
		}
	}
	return n, ok
}

// lastBool is a boolean field's last boolean value.
func lastBool(vals []any) (b, ok bool) {
	for _, v := range vals {
		if x, is := v.(bool); is {
			b, ok = x, true
		}
	}
	return b, ok
}

// The sort values the embedded engine gives a string field without a
// value (bleve's search.LowTerm and search.HighTerm), by where it goes.
const (
	lowTerm  = "\x00"
	highTerm = "\U0010FFFF\U0010FFFF\U0010FFFF"
)

// Compare orders records a and b by keys, the first key first, as the
// engines do (see SortKey): negative when a comes first, positive when b
// does, 0 when every key ties. Records decode as for Match. A key naming
// a field the schema does not have ties.
func Compare(s *Schema, keys []SortKey, a, b map[string]any) int {
	for _, k := range keys {
		if c := compareKey(s, k, a, b); c != 0 {
			return c
		}
	}
	return 0
}

func compareKey(s *Schema, k SortKey, a, b map[string]any) int {
	f, ok := s.Field(k.Field)
	if !ok {
		return 0
	}
	va, vb := ValuesAt(a, f.Name), ValuesAt(b, f.Name)
	// missingLow: a record without a value takes the lowest sort value
	// (before the direction applies), else the highest.
	missingLow := k.Desc || k.MissingSmallest
	var c int
	switch {
	case f.Name == resource.FieldID:
		c = strings.Compare(firstString(va), firstString(vb))
	case f.Type == Number || f.Type == Integer || f.Type == Date || f.Type == DateTime:
		na, hasA := lastNumber(f, va)
		nb, hasB := lastNumber(f, vb)
		c = compareMissing(hasA, hasB, missingLow)
		if hasA && hasB {
			c = compareOrdered(na, nb)
		}
	case f.Type == Bool:
		ba, hasA := lastBool(va)
		bb, hasB := lastBool(vb)
		c = compareMissing(hasA, hasB, missingLow)
		if hasA && hasB && ba != bb {
			c = 1
			if !ba {
				c = -1
			}
		}
	default:
		missing := highTerm
		if missingLow {
			missing = lowTerm
		}
		c = strings.Compare(sortString(f, va, missing), sortString(f, vb, missing))
	}
	if k.Desc {
		c = -c
	}
	return c
}

// compareMissing orders a missing value against a present one (0 when
// both or neither are present).
func compareMissing(hasA, hasB, missingLow bool) int {
	switch {
	case hasA == hasB:
		return 0
	case hasA == missingLow:
		return 1 // b is missing and low, or a is missing and high
	}
	return -1
}

func compareOrdered(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sortString is the value a string field sorts by: the smallest of its
// exact values folded (fold.Text) that are not empty folded, or missing.
func sortString(f Field, vals []any, missing string) string {
	out, found := "", false
	for _, str := range exactStrings(f, vals) {
		if folded := fold.Text(str); folded != "" && (!found || folded < out) {
			out, found = folded, true
		}
	}
	if !found {
		return missing
	}
	return out
}

func firstString(vals []any) string {
	for _, v := range vals {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return ""
}
