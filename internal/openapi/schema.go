// Package openapi builds the service's OpenAPI 3.1 document from the route
// table and the declarations behind it: the schemas of the declared
// records and bodies from their resource.Def fields, the schemas of the
// other payloads from the Go types the handlers encode, and each route's
// statuses from what the shared mechanisms (authentication, bodies, path
// parameters, idempotency, preconditions) can answer. Nothing in the
// document is written by hand beside the code it describes.
package openapi

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// Schema is a JSON Schema (2020-12, the dialect of OpenAPI 3.1).
type Schema = map[string]any

// Ref is a reference to a named schema of the document's components.
func Ref(name string) Schema { return Schema{"$ref": "#/components/schemas/" + name} }

// nullable lets s also be null.
func nullable(s Schema) Schema {
	if _, ok := s["$ref"]; ok {
		return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
	}
	out := Schema{}
	for k, v := range s {
		out[k] = v
	}
	switch t := s["type"].(type) {
	case string:
		out["type"] = []any{t, "null"}
	case nil:
		return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
	}
	if e, ok := s["enum"].([]any); ok {
		out["enum"] = append(append([]any{}, e...), nil)
	}
	return out
}

// View is what a schema of a declared record describes.
type View int

// Views of a declared record.
const (
	Output View = iota // the record as the service answers it
	Create             // a create body: the writable fields, the required ones required
	Update             // an update body: the mutable fields, none required
)

// Record is the schema of d's records as view describes them. Output
// schemas are closed, as every schema the package makes: a field the
// declaration does not name is drift (the published document opens the
// answers' schemas again: see Publish). An answered record requires
// every field it always has (all but the Omitted ones), each nullable
// only where the declaration says null can be (see resource.Field).
func Record(d *resource.Def, view View) Schema {
	var fields []resource.Field
	switch view {
	case Output:
		fields = d.AllFields()
	default:
		for _, f := range d.Fields {
			if !f.ReadOnly && (view == Create || !f.Immutable) {
				fields = append(fields, f)
			}
		}
	}
	s := object(fields, view, true)
	if d.Doc != "" && view == Output {
		s["description"] = firstSentence(d.Doc)
	}
	return s
}

// object is the closed object schema of fields; whole: an answer's object
// that always has every field (a record, an element of an array of
// objects, a Struct declared Always or Nullable), not one that may be {}.
func object(fields []resource.Field, view View, whole bool) Schema {
	props := Schema{}
	var required []any
	for _, f := range fields {
		props[f.Name] = field(f, view)
		switch {
		case view == Create && f.Required:
			required = append(required, f.Name)
		case view == Output && whole && !f.Omitted:
			required = append(required, f.Name)
		}
	}
	s := Schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// Field is the schema of a field's value. A value a body may clear, and
// an answered value that may be unset, can be null.
func Field(f resource.Field, view View) Schema { return field(f, view) }

func field(f resource.Field, view View) Schema {
	s := kindSchema(f, view)
	if f.Doc != "" {
		s["description"] = f.Doc
	}
	if f.ReadOnly && view == Output {
		s["readOnly"] = true
	}
	if f.Example != nil {
		s["examples"] = []any{f.Example}
	}
	if f.Default != nil && view != Output {
		s["default"] = f.Default
	}
	if canBeNull(f, view) {
		s = nullable(s)
	}
	return s
}

// canBeNull: a Required or Always field is never null. Otherwise a body
// may send null to clear a field (to its empty value), and an answer
// shows null for a field without a value: not an array ([]), a boolean
// (false), an object ({}, unless Nullable), a field with a Default or an
// Omitted one (left out instead).
func canBeNull(f resource.Field, view View) bool {
	if f.Required || f.Always {
		return false
	}
	if view != Output {
		return true
	}
	if f.Default != nil || f.Omitted {
		return false
	}
	switch f.Kind {
	case resource.Strings, resource.Refs, resource.Structs, resource.Bool:
		return false
	case resource.Object, resource.Struct:
		return f.Nullable
	}
	return true
}

func kindSchema(f resource.Field, view View) Schema {
	maxLen, maxItems := f.MaxLength, f.MaxElements()
	bounded := func(s Schema) Schema {
		if f.Min != nil {
			s["minimum"] = *f.Min
		}
		if f.Max != nil {
			s["maximum"] = *f.Max
		}
		return s
	}
	// A body's text is 1 to maxLen characters (trimmed, which a schema
	// cannot say), but for a Verbatim one, which may be "".
	text := func(verbatim bool) Schema {
		s := Schema{"type": "string"}
		if view != Output {
			if !verbatim {
				s["minLength"] = 1
			}
			s["maxLength"] = maxLen()
		}
		return s
	}
	// An id a body names: 1 to 256 characters.
	id := func() Schema {
		s := Schema{"type": "string"}
		if view != Output {
			s["minLength"], s["maxLength"] = 1, 256
		}
		return s
	}
	switch f.Kind {
	case resource.String, resource.Text:
		return text(f.Verbatim)
	case resource.Enum:
		vs := make([]any, len(f.Values))
		for i, v := range f.Values {
			vs[i] = v
		}
		if f.Open && view == Output {
			return Schema{"type": "string", "examples": vs}
		}
		return Schema{"type": "string", "enum": vs}
	case resource.URL:
		s := text(false)
		s["format"] = "uri"
		return s
	case resource.Email:
		maxLen = func() int { return resource.MaxEmail }
		s := text(false)
		s["format"] = "email"
		return s
	case resource.Date:
		return Schema{"type": "string", "format": "date"}
	case resource.DateTime:
		return Schema{"type": "string", "format": "date-time"}
	case resource.Int:
		return bounded(Schema{"type": "integer"})
	case resource.Number:
		return bounded(Schema{"type": "number"})
	case resource.Bool:
		return Schema{"type": "boolean"}
	case resource.Strings:
		s := Schema{"type": "array", "items": text(false)}
		if view != Output {
			s["maxItems"] = maxItems
		}
		return s
	case resource.Object:
		if f.Members != nil {
			// Members named by the data, each of the declared shape.
			return Schema{"type": "object", "additionalProperties": field(*f.Members, view)}
		}
		// Free-form: a generator makes a map of any values of it (with no
		// additionalProperties, openapi-typescript makes one of none).
		return Schema{"type": "object", "additionalProperties": true}
	case resource.Ref:
		s := id()
		s["description"] = "an id"
		return s
	case resource.Refs:
		s := Schema{"type": "array", "items": id()}
		if view != Output {
			s["maxItems"] = maxItems
		}
		return s
	case resource.Struct:
		return object(f.Fields, view, f.Always || f.Nullable)
	case resource.Structs:
		s := Schema{"type": "array", "items": object(f.Fields, view, true)}
		if view != Output {
			s["maxItems"] = maxItems
		}
		return s
	}
	panic("openapi: no schema for field kind " + f.Kind.String())
}

// TypeOf is the schema of the JSON encoding/json makes of a value of type
// t: an object of its exported fields by their json names (closed), with
// pointers, maps and slices nullable as encoding/json writes them. A
// struct field's `doc` tag describes it.
func TypeOf(t reflect.Type) Schema {
	return typeSchema(t, map[reflect.Type]bool{})
}

var (
	timeType   = reflect.TypeFor[clock.Time]()
	rawType    = reflect.TypeFor[json.RawMessage]()
	anyType    = reflect.TypeFor[any]()
	numberType = reflect.TypeFor[json.Number]()
)

func typeSchema(t reflect.Type, seen map[reflect.Type]bool) Schema {
	switch {
	case t == timeType:
		return Schema{"type": "string", "format": "date-time"}
	case t == numberType:
		return Schema{"type": "number"}
	case t == rawType || t == anyType:
		return Schema{"description": "any JSON value"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(typeSchema(t.Elem(), seen))
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.Slice, reflect.Array:
		return nullable(Schema{"type": "array", "items": typeSchema(t.Elem(), seen)})
	case reflect.Map:
		return nullable(Schema{"type": "object", "additionalProperties": typeSchema(t.Elem(), seen)})
	case reflect.Interface:
		return Schema{}
	case reflect.Struct:
		if seen[t] {
			panic("openapi: recursive type " + t.String())
		}
		seen[t] = true
		defer delete(seen, t)
		props := Schema{}
		var required []any
		structFields(t, func(name string, sf reflect.StructField, omitEmpty bool) {
			s := typeSchema(sf.Type, seen)
			if d := sf.Tag.Get("doc"); d != "" {
				s = withDescription(s, d)
			}
			props[name] = s
			if !omitEmpty {
				required = append(required, name)
			}
		})
		s := Schema{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	panic("openapi: no schema for Go type " + t.String())
}

// structFields calls fn for each field encoding/json writes of struct t,
// embedded structs' fields inlined.
func structFields(t reflect.Type, fn func(name string, sf reflect.StructField, omitEmpty bool)) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				structFields(et, fn)
			}
			continue
		}
		if !sf.IsExported() || sf.Tag.Get("openapi") == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fn(name, sf, strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero"))
	}
}

func withDescription(s Schema, d string) Schema {
	out := Schema{"description": d}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// firstSentence is a description's first sentence, for a summary.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// SchemaName is the component name of d's records: "Company", "Deal".
func SchemaName(d *resource.Def) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(d.Singular, func(r rune) bool { return r == ' ' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
