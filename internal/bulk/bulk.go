// Package bulk moves records of any declared resource in and out of files,
// for import and export jobs: CSV (one column per field, Struct fields
// flattened) or NDJSON (one JSON object per line). The Writer turns records
// as the API answers them into a file; the Reader turns an uploaded file's
// rows into JSON bodies for the resource's decoder (resource.Def.Decode),
// and can resume where it stopped (Position); the ErrorWriter writes the
// errors file of an import. What a file may hold follows from the
// resource's declaration (package resource) alone.
//
// # Columns
//
// A record's columns are its fields in declaration order: id first, then
// the declared fields, then createdAt and updatedAt. A Struct field (a
// company's location) has no column of its own: each of its subfields has
// one, named by its path, location.city, location.state, location.country
// (recursively for a Struct inside a Struct). An export may select fields
// by their top-level names; id is always the first column.
//
// # Export (CSV)
//
// The first row is the header: the columns' paths. Then one row per
// record, each cell one field:
//
//   - null or absent: an empty cell;
//   - strings, texts, enums, URLs, e-mails, dates, date-times and
//     references: the text itself;
//   - numbers: their JSON text exactly as the API answers it, never
//     reformatted (12345678901234567890 stays 12345678901234567890, 1.5e300
//     stays 1.5e300);
//   - booleans: true or false;
//   - arrays of strings (Strings, Refs): the elements joined by "; "
//     ("fintech; saas"); an empty array is an empty cell. When an element
//     contains ";", has leading or trailing spaces, is empty, or (the
//     first) starts with "[", the joined text would not read back as the
//     same elements, so the whole cell is the JSON array instead
//     (["a;b","c"]);
//   - Object and Structs fields (free-form objects, arrays of objects):
//     their compact JSON text, numbers as answered ({} when empty);
//   - cells are quoted as RFC 4180 says (commas, quotes, line breaks).
//
// A cell of any kind but numbers and booleans that starts with =, +, -, @,
// a tab or a carriage return, which a spreadsheet would run as a formula,
// is written with a leading ' (OWASP's advice against CSV injection), as is
// one starting with one or more ' followed by one of them (EscapeFormula);
// the import takes the ' off again (UnescapeFormula), so that an exported
// file imports back unchanged. Writer.EscapeFormulas(false) writes them raw.
//
// # Export (NDJSON)
//
// One compact JSON object per line, per record: the selected fields (a
// Struct whole, as one member) in column order, values exactly as the API
// answers them.
//
// # Import (CSV)
//
// The first row is the header (a byte-order mark before it is skipped).
// Each column names a field by its path, as the export writes it; Mapping
// renames columns (a column mapped to "" is skipped). A column that names
// no field and is not mapped, a mapping to no field, two columns setting
// the same field (or a Struct and one of its subfields), and an empty
// column name fail the whole import with an error naming the column.
//
// Each row becomes a JSON body, one member per column:
//
//   - an empty cell leaves the field out of the body (it does not send
//     null); so does a cell of only spaces, except for a text field kept
//     verbatim;
//   - spaces around a number, a boolean, a list or JSON are ignored;
//   - Int: an integer, an optional - and digits (leading zeros dropped);
//     1e3, 12.0 and +5 are refused;
//   - Number: a finite number in JSON's notation (digits, an optional
//     fraction, an optional exponent: 12, -0.5, 1.5e300), sent exactly as
//     written;
//   - Bool: true, false, yes, no, 1 or 0, in any case;
//   - Strings and Refs: a cell starting with "[" is a JSON array of strings;
//     any other is split on ";", each element trimmed, empty ones dropped;
//   - Object: a JSON object; Structs: a JSON array of objects, the
//     read-only subfields an export holds (a score's elementName) dropped;
//   - a Struct's subfield columns (location.city) build the nested object,
//     left out when all its cells are empty; a column named by the Struct
//     itself may hold the whole JSON object instead;
//   - any other kind (texts, enums, URLs, e-mails, dates, date-times,
//     references): the text as is;
//   - a cell (of any kind) of one or more ' followed by =, +, -, @, a tab
//     or a carriage return, as an export escapes it, is read without its
//     first ' (UnescapeFormula); a header cell too.
//
// A cell that cannot be read as its field's kind makes the row fail with a
// RowError naming the row, the column, what was expected and the value
// (its first 50 characters): row 12, column employeeCount: is not an
// integer: "12a". So does a row with another number of cells than the
// header (has 5 cells; the header has 7), a cell that is not valid UTF-8
// or holds a byte-order mark (U+FEFF, which only the file's start may
// hold), a row longer than 1 MiB, and a
// row that is not valid CSV (a stray quote); the import goes on with the
// next row. A quote never closed, which swallows the rest of the file (or
// more than 1 MiB of it), fails the import. Whether a value meets its
// field's rules (lengths, bounds, enum values, e-mail addresses, integers
// beyond 2^53) is the decoder's to say, as for any body.
//
// Read-only fields (Struct subfields included) are read as their
// declaration's resource.ImportRule says, so that an exported file imports
// back and no value is dropped without a word: ImportIgnored columns (id,
// createdAt, updatedAt) are not read and Reader.Ignored lists them, unless
// Options.Keep lists them (id, when an import matches records by id or
// keeps them); ImportCandidate and ImportKept values are in the body, for
// the record's service to take as an import's (resource.ImportOf);
// ImportDerived values are in Row.Checks, for the written record to hold;
// an ImportRefused value fails its row, an empty one ("", [], {}, null) is
// no value. Immutable fields are kept: the decoder decides.
//
// Rows are numbered from 1, the header not counted. Blank lines, and rows
// whose cells are all empty (the trailing ",,," rows spreadsheets write),
// are skipped and not counted. A cell may hold line breaks when quoted; a
// carriage return before a line feed inside a cell reads back as the line
// feed alone.
//
// # Import (NDJSON)
//
// Each non-blank line is one JSON object (else the row fails: is not a JSON
// object). Its keys are renamed by Mapping (a key mapped to "" is dropped;
// a key or mapping naming a Struct's subfield, location.city, sets it in
// the nested object), read-only fields are read as for CSV, and the
// values are sent as they are: the decoder checks their types. A line
// that is not valid UTF-8 fails its row, and so does one
// longer than 1 MiB, and the import goes on with the next
// line.
//
// # Resuming
//
// Reader.Position is where the next row starts: the byte offset after the
// last row read, that row's number, and the CSV header. A Reader made on
// the file opened at that offset with that Position reads exactly the rows
// an uninterrupted read would have read after it, numbered alike.
//
// # Errors file
//
// An import's errors file is CSV: the columns row and error, then the
// file's header columns (CSV) or line (NDJSON); one row per failed row: its
// number, what was wrong, then its cells (or its line) as read, so that it
// can be corrected and imported again. Its cells are escaped against
// formulas as an export's are (EscapeFormula, for every cell), NUL bytes
// and invalid UTF-8 becoming U+FFFD.
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
