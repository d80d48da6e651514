package resource

import (
	"context"
	"fmt"
)

// ImportRule is what an import does with a read-only field's column (or
// NDJSON key): a file may hold every field of a record, as an export
// writes it, and no value in it is dropped without a word.
type ImportRule int

// The import rules of read-only fields.
const (
	// ImportRefused, the default: a value fails its row (the field is the
	// service's to set). An empty value, as an export writes for a field
	// never set ("", [], {}, null), is no value.
	ImportRefused ImportRule = iota
	// ImportIgnored: the service sets the field whenever it writes the
	// record (its id, its times): the column is not read, and the import
	// lists it, with ImportNote, among its ignoredColumns.
	ImportIgnored
	// ImportCandidate: the service reconciles the field from candidate
	// values (a company's employeeCount): the value becomes a candidate of
	// the import (source import), and reconciliation decides the record's
	// value, as for any candidate.
	ImportCandidate
	// ImportDerived: the service derives the field from others (a score's
	// finalScore): the value must be the one the written record holds,
	// else the row fails and nothing of it is written.
	ImportDerived
	// ImportKept: an import sets the field as the file holds it when it
	// creates the record (a company's origin): a restored record keeps it.
	ImportKept
)

// ImportJob is what the writes of an import carry in their context: the
// import, and the confidence of the candidate values it adds
// (ImportCandidate fields).
type ImportJob struct {
	ID         string
	Confidence float64
}

type importKey struct{}

// WithImport returns ctx whose writes are an import's: a record's
// service takes the ImportCandidate and ImportKept fields of a body
// written under it, which a request's body may not send.
func WithImport(ctx context.Context, j ImportJob) context.Context {
	return context.WithValue(ctx, importKey{}, j)
}

// ImportOf is the import ctx's writes belong to; ok is false outside one.
func ImportOf(ctx context.Context) (ImportJob, bool) {
	j, ok := ctx.Value(importKey{}).(ImportJob)
	return j, ok
}

// ImportFields are the names of d's top-level fields of rule r.
func (d *Def) ImportFields(r ImportRule) []string {
	var out []string
	for _, f := range d.allFields() {
		if f.ReadOnly && f.Import == r {
			out = append(out, f.Name)
		}
	}
	return out
}

// importNote is what the ignoredColumns of an import say of a field.
func (f Field) importNote() string {
	if f.ImportNote != "" {
		return f.ImportNote
	}
	return fmt.Sprintf("%s is set by the service when it writes the record", f.Name)
}

// ImportNoteOf is why an import does not read field f's column.
func ImportNoteOf(f Field) string { return f.importNote() }
