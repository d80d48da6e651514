// Package input decodes JSON request bodies field by field, so that every
// error names the field and the rule it broke, and so that an absent field
// (unchanged), null (clear) and a value can be told apart.
package input

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

// ParseObject decodes body, which must be exactly one JSON object. Fields
// outside allowed are rejected, naming the field and the allowed set.
func ParseObject(body []byte, allowed ...string) (*Object, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apperr.Invalid("", "is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, syntaxError(err)
	}
	if fields == nil {
		return nil, apperr.Invalid("", "must be a JSON object, not null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, apperr.Invalid("", "must hold a single JSON object; found data after it")
	}
	o := &Object{fields: fields}
	return o, o.only(allowed)
}

func syntaxError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case asErr(err, &se):
		return apperr.Invalid("", "is not valid JSON (at byte %d: %s)", se.Offset, se.Error())
	case asErr(err, &te):
		return apperr.Invalid("", "must be a JSON object, not %s", te.Value)
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return apperr.Invalid("", "is not valid JSON (unexpected end)")
	default:
		return apperr.Invalid("", "is not valid JSON: %v", err)
	}
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

// Text constraints of a string field.
type Text struct {
	Min, Max int  // length in characters; Max 0 = no limit
	Trim     bool // trim surrounding whitespace before checking
}

func (t Text) check(path, s string) (string, error) {
	if t.Trim {
		s = strings.TrimSpace(s)
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

// FreeObject reads a free-form JSON object field as a map.
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
	// json.Number keeps every number exactly as sent (64-bit ids, 1e400).
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return Field[map[string]any]{}, apperr.Invalid(o.Path(name), "must be a JSON object: %v", err)
	}
	return Field[map[string]any]{Set: true, Value: m}, nil
}

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
