// Package jsonbody decodes JSON request bodies field by field, so that every
// error names the field and the rule it broke, and so that an absent field
// (unchanged), null (clear) and a value can be told apart.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Object is a decoded JSON object: its fields, still raw.
type Object struct {
	prefix string // field path prefix for error messages, e.g. "location."
	fields map[string]json.RawMessage
}

// Limits of free-form JSON values (company custom, run input, webhook
// payloads): whatever is accepted must be storable in one DynamoDB item and
// decodable again when it is read back.
const (
	// MaxDepth is how many levels of objects and arrays a free-form value
	// may span; the value itself is level 1. Every field of a body obeys it.
	MaxDepth = 64
	// MaxFreeBytes bounds one free-form object, measured as the compact JSON
	// the service stores (so escapes count as stored). It keeps a company
	// with every other field at its maximum in plain text (about 65 KB), and
	// a run holding its input and output (steps.MaxOutputBytes), well under
	// DynamoDB's 400 KB item limit; a record that still exceeds the limit
	// (long texts of escaped or multi-byte characters) is refused by the
	// store with 413 and never stored.
	MaxFreeBytes = 128 << 10
)

// ParseObject decodes body, which must be exactly one JSON object. Fields
// outside allowed are rejected, naming the field and the allowed set. A
// field nested deeper than MaxDepth is rejected before anything decodes it,
// and a number no client could read back anywhere in the body (see
// CheckNumbers) is rejected naming its path, whatever field holds it, as is
// an object anywhere in the body that names a member twice (CheckDuplicates).
func ParseObject(body []byte, allowed ...string) (*Object, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apperr.Invalid("", "the body is empty; send a JSON object")
	}
	if field, deep := deepField(body, MaxDepth); deep {
		return nil, apperr.Invalid(field, "is nested deeper than %d levels", MaxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, syntaxError(err)
	}
	if fields == nil {
		return nil, apperr.Invalid("", "the body must be a JSON object, not null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, apperr.Invalid("", "the body must hold a single JSON object, but more data follows it")
	}
	if err := CheckValues("", body); err != nil {
		return nil, err
	}
	o := &Object{fields: fields}
	return o, o.only(allowed)
}

func syntaxError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case asErr(err, &se):
		return apperr.Invalid("", "the body is not valid JSON: %s at byte %d", se.Error(), se.Offset)
	case asErr(err, &te):
		return apperr.Invalid("", "the body must be a JSON object, not %s", article(te.Value))
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return apperr.Invalid("", "the body is not valid JSON: it ends unexpectedly")
	default:
		return apperr.Invalid("", "the body is not valid JSON: %v", err)
	}
}

// article names a JSON type as json.UnmarshalTypeError reports it ("array",
// "bool") the way every other message does ("an array", "a boolean").
func article(jsonType string) string {
	switch jsonType {
	case "array", "object":
		return "an " + jsonType
	case "bool":
		return "a boolean"
	default:
		return "a " + jsonType
	}
}

// Depth returns how many levels of objects and arrays raw spans (0 for a
// scalar, 1 for {"a":1}), counting no further than limit+1. It is one pass
// over the bytes with no recursion, so a hostile body nested thousands of
// levels deep costs no more than its length; run it before decoding. raw
// should be JSON; for anything else the count is meaningless but bounded.
func Depth(raw []byte, limit int) int {
	depth, deepest := 0, 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			i = stringEnd(raw, i)
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// stringEnd returns the index of the quote closing the JSON string that
// opens at start (len(b) when it never closes).
func stringEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}

// deepField reports whether a field of the body object nests deeper than
// limit (the field's value is level 1), and names it. A body that is not an
// object is left to the decoder to describe.
func deepField(body []byte, limit int) (string, bool) {
	depth, expectKey, field := 0, false, ""
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '"':
			end := stringEnd(body, i)
			if depth == 1 && expectKey && end < len(body) {
				_ = json.Unmarshal(body[i:end+1], &field)
				expectKey = false
			}
			i = end
		case '{', '[':
			if depth == 0 && c != '{' {
				return "", false
			}
			depth++
			expectKey = depth == 1
			if depth > limit+1 {
				return field, field != ""
			}
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		}
	}
	return "", false
}

func asErr[T error](err error, target *T) bool {
	t, ok := err.(T)
	if ok {
		*target = t
	}
	return ok
}

func (o *Object) only(allowed []string) error {
	if allowed == nil {
		return nil
	}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	var unknown []string
	for k := range o.fields {
		if !ok[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	sorted := append([]string(nil), allowed...)
	sort.Strings(sorted)
	return apperr.Invalid(o.prefix+unknown[0], "is not an accepted field; accepted fields are %s", strings.Join(sorted, ", "))
}

// Raw returns the field's raw JSON.
func (o *Object) Raw(name string) (json.RawMessage, bool) {
	r, ok := o.fields[name]
	return r, ok
}

// Path returns the name as shown in errors.
func (o *Object) Path(name string) string { return o.prefix + name }

// Field is an optional value: Set when sent, Null when sent as null.
type Field[T any] struct {
	Set   bool
	Null  bool
	Value T
}

func isNull(r json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(r), []byte("null")) }

// typeName names the JSON type of a raw value for messages.
func typeName(r json.RawMessage) string {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return "nothing"
	}
	switch r[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// Text constraints of a string field. Control characters are refused (C0,
// DEL and C1): a name, id or title is one line of text. MultiLine fields
// (descriptions) also accept line feed, carriage return and tab; NUL and
// ESC are never accepted.
type Text struct {
	Min, Max  int  // length in characters; Max 0 = no limit
	Trim      bool // trim surrounding whitespace before checking
	MultiLine bool // accept \n, \r and \t
}

func (t Text) check(path, s string) (string, error) {
	if t.Trim {
		s = strings.TrimSpace(s)
	}
	for _, r := range s {
		if !isControl(r) {
			continue
		}
		if !t.MultiLine {
			return "", apperr.Invalid(path, "must not contain control characters")
		}
		if r != '\n' && r != '\r' && r != '\t' {
			return "", apperr.Invalid(path, "must not contain control characters other than line breaks and tabs")
		}
	}
	n := utf8.RuneCountInString(s)
	if n < t.Min {
		if t.Min == 1 {
			return "", apperr.Invalid(path, "must not be empty")
		}
		return "", apperr.Invalid(path, "must be at least %d characters", t.Min)
	}
	if t.Max > 0 && n > t.Max {
		return "", apperr.Invalid(path, "must be at most %d characters", t.Max)
	}
	return s, nil
}

// isControl reports the C0 controls, DEL and the C1 controls.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// String reads a string field.
func (o *Object) String(name string, t Text) (Field[string], error) {
	r, ok := o.fields[name]
	if !ok {
		return Field[string]{}, nil
	}
	if isNull(r) {
		return Field[string]{Set: true, Null: true}, nil
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		return Field[string]{}, apperr.Invalid(o.Path(name), "must be a string, not %s", typeName(r))
	}
	s, err := t.check(o.Path(name), s)
	return Field[string]{Set: true, Value: s}, err
}

// Bool reads a boolean field.
func (o *Object) Bool(name string) (Field[bool], error) {
	r, ok := o.fields[name]
	if !ok {
		return Field[bool]{}, nil
	}
	if isNull(r) {
		return Field[bool]{Set: true, Null: true}, nil
	}
	var b bool
	if err := json.Unmarshal(r, &b); err != nil {
		return Field[bool]{}, apperr.Invalid(o.Path(name), "must be a boolean, not %s", typeName(r))
	}
	return Field[bool]{Set: true, Value: b}, nil
}

// Strings reads an array of strings; every element obeys t; at most max
// elements; duplicates are dropped keeping the first.
func (o *Object) Strings(name string, t Text, max int) (Field[[]string], error) {
	r, ok := o.fields[name]
	if !ok {
		return Field[[]string]{}, nil
	}
	if isNull(r) {
		return Field[[]string]{Set: true, Null: true, Value: []string{}}, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(r, &raw); err != nil {
		return Field[[]string]{}, apperr.Invalid(o.Path(name), "must be an array of strings, not %s", typeName(r))
	}
	if len(raw) > max {
		return Field[[]string]{}, apperr.Invalid(o.Path(name), "must have at most %d items", max)
	}
	out := make([]string, 0, len(raw))
	seen := map[string]bool{}
	for i, e := range raw {
		path := fmt.Sprintf("%s[%d]", o.Path(name), i)
		var s string
		if isNull(e) || json.Unmarshal(e, &s) != nil {
			return Field[[]string]{}, apperr.Invalid(path, "must be a string, not %s", typeName(e))
		}
		s, err := t.check(path, s)
		if err != nil {
			return Field[[]string]{}, err
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return Field[[]string]{Set: true, Value: out}, nil
}

// Object reads a nested object field, restricted to allowed fields (nil:
// any). A null nested object is reported through the Field.
func (o *Object) Object(name string, allowed ...string) (Field[*Object], error) {
	r, ok := o.fields[name]
	if !ok {
		return Field[*Object]{}, nil
	}
	if isNull(r) {
		return Field[*Object]{Set: true, Null: true}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r, &fields); err != nil {
		return Field[*Object]{}, apperr.Invalid(o.Path(name), "must be an object, not %s", typeName(r))
	}
	n := &Object{prefix: o.Path(name) + ".", fields: fields}
	return Field[*Object]{Set: true, Value: n}, n.only(allowed)
}

// FreeObject reads a free-form JSON object field as a map: at most
// MaxDepth levels deep and MaxFreeBytes as stored JSON.
func (o *Object) FreeObject(name string) (Field[map[string]any], error) {
	r, ok := o.fields[name]
	if !ok {
		return Field[map[string]any]{}, nil
	}
	if isNull(r) {
		return Field[map[string]any]{Set: true, Null: true, Value: map[string]any{}}, nil
	}
	if typeName(r) != "an object" {
		return Field[map[string]any]{}, apperr.Invalid(o.Path(name), "must be an object, not %s", typeName(r))
	}
	v, err := free(o.Path(name), r) // ParseObject checked its numbers
	if err != nil {
		return Field[map[string]any]{}, err
	}
	m, _ := v.(map[string]any)
	if err := CheckSize(o.Path(name), m, MaxFreeBytes); err != nil {
		return Field[map[string]any]{}, err
	}
	return Field[map[string]any]{Set: true, Value: m}, nil
}

// Free decodes raw, a free-form JSON value, after checking with Depth that
// it spans at most MaxDepth levels, and refuses a number no client could
// read back (CheckNumbers); field names it in errors. Numbers are
// json.Number, which keeps every accepted number exactly as sent.
func Free(field string, raw []byte) (any, error) {
	v, err := free(field, raw)
	if err != nil {
		return nil, err
	}
	if err := CheckNumbers(field, raw); err != nil {
		return nil, err
	}
	return v, nil
}

// free is Free for a value whose numbers were checked already.
func free(field string, raw []byte) (any, error) {
	if Depth(raw, MaxDepth) > MaxDepth {
		return nil, apperr.Invalid(field, "is nested deeper than %d levels", MaxDepth)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, apperr.Invalid(field, "is not valid JSON: %v", err)
	}
	return v, nil
}

// Marshal is v's JSON as the service stores and answers it: compact, as
// json.Marshal writes it but without its HTML escaping: <, > and & stay
// as they are (the service's JSON is for API clients, never embedded in
// HTML), so a name "A & <B>" reads back as written and an error naming
// "<resourceType>:<id>" is not full of \u003c.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// EncodedSize is the size of v as the service stores and returns it
// (Marshal).
func EncodedSize(v any) (int, error) {
	b, err := Marshal(v)
	return len(b), err
}

// CheckSize refuses v when its EncodedSize exceeds max bytes, naming field.
func CheckSize(field string, v any, max int) error {
	n, err := EncodedSize(v)
	if err != nil {
		return apperr.Invalid(field, "cannot be encoded as JSON: %v", err)
	}
	if n > max {
		return apperr.Invalid(field, "must be at most %s as JSON; it is %d bytes", KiB(max), n)
	}
	return nil
}

// KiB writes a byte limit for messages: "128 KiB (131072 bytes)".
func KiB(n int) string { return fmt.Sprintf("%d KiB (%d bytes)", n>>10, n) }

// Enum reads a string field that must be one of values.
func (o *Object) Enum(name string, values ...string) (Field[string], error) {
	f, err := o.String(name, Text{})
	if err != nil || !f.Set || f.Null {
		return f, err
	}
	for _, v := range values {
		if f.Value == v {
			return f, nil
		}
	}
	return Field[string]{}, apperr.Invalid(o.Path(name), "must be one of %s", strings.Join(values, ", "))
}

// Names returns the names of the object's fields, sorted.
func (o *Object) Names() []string {
	out := make([]string, 0, len(o.fields))
	for k := range o.fields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Only rejects fields outside allowed, naming the first and listing the
// accepted ones.
func (o *Object) Only(allowed []string) error { return o.only(allowed) }

// Number reads a JSON number field, kept exactly as sent.
func (o *Object) Number(name string) (Field[json.Number], error) {
	r, ok := o.fields[name]
	if !ok {
		return Field[json.Number]{}, nil
	}
	if isNull(r) {
		return Field[json.Number]{Set: true, Null: true}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.UseNumber()
	var n json.Number
	if err := dec.Decode(&n); err != nil || typeName(r) != "a number" {
		return Field[json.Number]{}, apperr.Invalid(o.Path(name), "must be a number, not %s", typeName(r))
	}
	return Field[json.Number]{Set: true, Value: n}, nil
}

// Objects reads an array of objects, at most max of them, each restricted
// to allowed fields; errors name the element ("participants[2].id").
func (o *Object) Objects(name string, max int, allowed ...string) (Field[[]*Object], error) {
	r, ok := o.fields[name]
	if !ok {
		return Field[[]*Object]{}, nil
	}
	if isNull(r) {
		return Field[[]*Object]{Set: true, Null: true, Value: []*Object{}}, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(r, &raw); err != nil {
		return Field[[]*Object]{}, apperr.Invalid(o.Path(name), "must be an array of objects, not %s", typeName(r))
	}
	if len(raw) > max {
		return Field[[]*Object]{}, apperr.Invalid(o.Path(name), "must have at most %d items", max)
	}
	out := make([]*Object, 0, len(raw))
	for i, e := range raw {
		path := fmt.Sprintf("%s[%d]", o.Path(name), i)
		var fields map[string]json.RawMessage
		if isNull(e) || json.Unmarshal(e, &fields) != nil {
			return Field[[]*Object]{}, apperr.Invalid(path, "must be an object, not %s", typeName(e))
		}
		n := &Object{prefix: path + ".", fields: fields}
		if err := n.only(allowed); err != nil {
			return Field[[]*Object]{}, err
		}
		out = append(out, n)
	}
	return Field[[]*Object]{Set: true, Value: out}, nil
}
