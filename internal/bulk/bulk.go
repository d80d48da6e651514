// Package bulk moves records of any declared resource in and out of
// files, for import and export jobs: CSV (one column per field, a Struct
// field flattened into a column per subfield, location.city) or NDJSON
// (one JSON object per line).
//
// The Writer turns records, as the API answers them, into a file. The
// Reader turns an uploaded file's rows into JSON bodies for the resource's
// decoder (resource.Def.Decode), reads read-only columns as their
// resource.ImportRule says, and can resume where it stopped (Position).
// The ErrorWriter writes an import's errors file. What a file may hold
// follows from the resource's declaration (package resource) alone.
//
// The rules of each format (the columns, how each kind of field is
// written and read, formula escaping, row errors, resuming and the errors
// file) are in docs/bulk.md, "File formats in detail".
package bulk

import (
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// Format is the format of a file: CSV or NDJSON.
type Format string

// Formats.
const (
	CSV    Format = "csv"
	NDJSON Format = "ndjson"
)

// ParseFormat reads a format name: csv or ndjson, in any case.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case CSV, NDJSON:
		return f, nil
	}
	return "", apperr.Invalid("format", "must be csv or ndjson; %q is not", s)
}

// ContentType is the media type of a file of the format.
func (f Format) ContentType() string {
	if f == NDJSON {
		return "application/x-ndjson"
	}
	return "text/csv; charset=utf-8"
}

// Ext is the file name extension of the format, with its dot: ".csv" or
// ".ndjson".
func (f Format) Ext() string {
	if f == NDJSON {
		return ".ndjson"
	}
	return ".csv"
}

// Column is one column of a flattened record: its path (a field name, or
// "parent.child" for a Struct's subfield, recursively) and the field.
type Column struct {
	Path  string
	Field resource.Field
}

// Columns lists the columns of d's records in declaration order (id first,
// then the fields, createdAt/updatedAt), Struct fields expanded into one
// column per subfield; with fields non-empty only those fields (top-level
// names; "id" always included, first), still in declaration order. An
// unknown field name is an error naming it and listing the valid ones.
func Columns(d *resource.Def, fields []string) ([]Column, error) {
	all := d.AllFields()
	var want map[string]bool
	if len(fields) > 0 {
		want = map[string]bool{resource.FieldID: true}
		for _, name := range fields {
			if _, ok := d.Field(name); !ok {
				return nil, apperr.Invalid("fields", "names %q, which is not a field of %s; the fields are %s",
					name, d.Name, strings.Join(fieldNames(all), ", "))
			}
			want[name] = true
		}
	}
	var cols []Column
	for _, f := range all {
		if want == nil || want[f.Name] {
			cols = appendColumns(cols, f.Name, f)
		}
	}
	return cols, nil
}

// appendColumns appends the columns of f at path: one, or one per
// subfield of a Struct.
func appendColumns(cols []Column, path string, f resource.Field) []Column {
	if f.Kind != resource.Struct || len(f.Fields) == 0 {
		return append(cols, Column{Path: path, Field: f})
	}
	for _, sub := range f.Fields {
		cols = appendColumns(cols, path+"."+sub.Name, sub)
	}
	return cols
}

func fieldNames(fields []resource.Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// target is a field path resolved in a declaration.
type target struct {
	path     []string // the names from the top-level field down
	field    resource.Field
	readOnly bool // the field or one of its parents is read-only
	// rule is what an import does with it when read-only: the rule of the
	// outermost read-only field of the path.
	rule resource.ImportRule
}

func (t target) String() string { return strings.Join(t.path, ".") }

// resolve finds the field at path ("name", "location.city") in d.
func resolve(d *resource.Def, path string) (target, bool) {
	parts := strings.Split(path, ".")
	f, ok := d.Field(parts[0])
	if !ok {
		return target{}, false
	}
	t := target{path: parts, field: f, readOnly: f.ReadOnly, rule: f.Import}
	for _, name := range parts[1:] {
		if t.field.Kind != resource.Struct {
			return target{}, false
		}
		i := slices.IndexFunc(t.field.Fields, func(sub resource.Field) bool { return sub.Name == name })
		if i < 0 {
			return target{}, false
		}
		t.field = t.field.Fields[i]
		if !t.readOnly {
			t.rule = t.field.Import
		}
		t.readOnly = t.readOnly || t.field.ReadOnly
	}
	return t, true
}

// paths lists every path a column may name in d: the columns' paths and
// the Structs themselves, for messages.
func paths(d *resource.Def) []string {
	var out []string
	var walk func(prefix string, f resource.Field)
	walk = func(prefix string, f resource.Field) {
		out = append(out, prefix)
		if f.Kind == resource.Struct {
			for _, sub := range f.Fields {
				walk(prefix+"."+sub.Name, sub)
			}
		}
	}
	for _, f := range d.AllFields() {
		walk(f.Name, f)
	}
	return out
}

// truncate cuts s to n characters, marking the cut.
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}
