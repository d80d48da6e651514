package bulk

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/resource"
)

// Writer writes records (their JSON as the API answers them) as CSV
// (header row of the column paths, then one row per record) or NDJSON (one
// compact JSON object per line holding only the selected fields, in column
// order of top-level fields).
type Writer struct {
	format Format
	cols   []Column
	paths  [][]string // each column's path, split
	top    []string   // the top-level fields of the columns, once each (NDJSON)
	csv    *csv.Writer
	out    *bufio.Writer
	header bool // the CSV header is written
	raw    bool // CSV: formula-like text cells are written unescaped
	rows   int64
	cells  []string
	line   bytes.Buffer
}

// NewWriter returns a Writer of records to w in format, with the columns
// cols (Columns).
func NewWriter(w io.Writer, format Format, cols []Column) *Writer {
	wr := &Writer{format: format, cols: cols, cells: make([]string, len(cols))}
	seen := map[string]bool{}
	for _, c := range cols {
		p := strings.Split(c.Path, ".")
		wr.paths = append(wr.paths, p)
		if !seen[p[0]] {
			seen[p[0]] = true
			wr.top = append(wr.top, p[0])
		}
	}
	if format == NDJSON {
		wr.out = bufio.NewWriterSize(w, 64<<10)
	} else {
		wr.csv = csv.NewWriter(w)
	}
	return wr
}

// EscapeFormulas says whether a CSV text cell that a spreadsheet would
// read as a formula (see EscapeFormula) is written with a leading '; it
// is on unless turned off.
func (w *Writer) EscapeFormulas(on bool) { w.raw = !on }

// Write writes one record, a JSON object as the API answers it.
func (w *Writer) Write(record []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(record, &fields); err != nil || fields == nil {
		return fmt.Errorf("bulk: a record must be a JSON object: %v", err)
	}
	if w.format == NDJSON {
		return w.writeLine(fields)
	}
	if err := w.writeHeader(); err != nil {
		return err
	}
	objects := map[string]map[string]json.RawMessage{} // Struct values by path, decoded once
	for i, c := range w.cols {
		raw, err := lookup(fields, objects, w.paths[i])
		if err != nil {
			return fmt.Errorf("bulk: record field %s: %w", c.Path, err)
		}
		if w.cells[i], err = cell(c.Field, raw); err != nil {
			return fmt.Errorf("bulk: record field %s: %w", c.Path, err)
		}
		if !w.raw && escapable(c.Field.Kind) {
			w.cells[i] = EscapeFormula(w.cells[i])
		}
	}
	if err := w.csv.Write(w.cells); err != nil {
		return err
	}
	w.rows++
	return nil
}

// writeLine writes a record as one NDJSON line.
func (w *Writer) writeLine(fields map[string]json.RawMessage) error {
	w.line.Reset()
	w.line.WriteByte('{')
	for _, name := range w.top {
		raw, ok := fields[name]
		if !ok {
			continue
		}
		if w.line.Len() > 1 {
			w.line.WriteByte(',')
		}
		writeJSONString(&w.line, name)
		w.line.WriteByte(':')
		start := w.line.Len()
		if err := json.Compact(&w.line, raw); err != nil {
			return fmt.Errorf("bulk: record field %s: %w", name, err)
		}
		unescapeHTML(w.line.Bytes()[start:], &w.line, start)
	}
	w.line.WriteString("}\n")
	if _, err := w.out.Write(w.line.Bytes()); err != nil {
		return err
	}
	w.rows++
	return nil
}

func (w *Writer) writeHeader() error {
	if w.header || w.csv == nil {
		return nil
	}
	w.header = true
	head := make([]string, len(w.cols))
	for i, c := range w.cols {
		head[i] = c.Path
	}
	return w.csv.Write(head)
}

// Close writes what is buffered (for CSV with no rows, still the header).
// It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.format == NDJSON {
		return w.out.Flush()
	}
	if err := w.writeHeader(); err != nil {
		return err
	}
	w.csv.Flush()
	return w.csv.Error()
}

// Rows is how many records were written.
func (w *Writer) Rows() int64 { return w.rows }

// formulaStart reports the characters that make a spreadsheet read a cell
// starting with them as a formula (OWASP's list): = + - @ tab and carriage
// return.
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// formulaLike reports a cell of zero or more ' followed by a character of
// formulaStart; quotes is how many ' it starts with.
func formulaLike(s string) (quotes int, ok bool) {
	for quotes < len(s) && s[quotes] == '\'' {
		quotes++
	}
	return quotes, quotes < len(s) && formulaStart(s[quotes])
}

// EscapeFormula is s with a ' prepended when s starts with =, +, -, @, a
// tab or a carriage return, or with one or more ' followed by one of them
// (”=x becomes ”'=x), so that UnescapeFormula gives s back; any other s
// is returned as is.
func EscapeFormula(s string) string {
	if _, ok := formulaLike(s); ok {
		return "'" + s
	}
	return s
}

// UnescapeFormula undoes EscapeFormula: a cell of one or more ' followed by
// =, +, -, @, a tab or a carriage return loses its first '; any other cell
// is returned as is.
func UnescapeFormula(s string) string {
	if q, ok := formulaLike(s); ok && q > 0 {
		return s[1:]
	}
	return s
}

// escapable reports the kinds of field whose CSV cell may start with a
// formula's character and is escaped: all but numbers and booleans (a
// number's - is its sign; JSON objects and arrays start with { or [).
func escapable(k resource.Kind) bool {
	switch k {
	case resource.Int, resource.Number, resource.Bool:
		return false
	}
	return true
}

// lookup finds the raw value at path in a record; nil when absent or when
// a parent is not an object. objects caches the Structs decoded so far.
func lookup(fields map[string]json.RawMessage, objects map[string]map[string]json.RawMessage, path []string) (json.RawMessage, error) {
	raw := fields[path[0]]
	cur := fields
	for i := 1; i < len(path); i++ {
		key := strings.Join(path[:i], ".")
		obj, ok := objects[key]
		if !ok {
			if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
				if err := json.Unmarshal(t, &obj); err != nil {
					return nil, err
				}
			}
			objects[key] = obj
		}
		if obj == nil {
			return nil, nil
		}
		cur = obj
		raw = cur[path[i]]
	}
	return raw, nil
}

// cell is the CSV text of a field's raw JSON value.
func cell(f resource.Field, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		if f.Kind == resource.Strings || f.Kind == resource.Refs {
			var list []string
			if json.Unmarshal(raw, &list) == nil {
				return joinStrings(list), nil
			}
		}
		return compactJSON(raw)
	case '{':
		return compactJSON(raw)
	default: // numbers and booleans, as written
		return string(raw), nil
	}
}

// joinStrings is the cell of an array of strings: the elements joined by
// "; ", or the JSON array when the joined text would not split back into
// the same elements.
func joinStrings(list []string) string {
	plain := true
	for i, s := range list {
		if s == "" || strings.Contains(s, ";") || strings.TrimSpace(s) != s || i == 0 && strings.HasPrefix(s, "[") {
			plain = false
			break
		}
	}
	if plain {
		return strings.Join(list, "; ")
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, s)
	}
	b.WriteByte(']')
	return b.String()
}

// compactJSON is raw compacted, with the HTML escapes of Go's encoder
// (\u003c, \u003e, \u0026) turned back into their characters.
func compactJSON(raw []byte) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	unescapeHTML(b.Bytes(), &b, 0)
	return b.String(), nil
}

// unescapeHTML rewrites, in buf from start on (src is buf's bytes from
// start), the escapes \u003c, \u003e and \u0026 inside JSON strings as the
// characters themselves, which JSON allows unescaped.
func unescapeHTML(src []byte, buf *bytes.Buffer, start int) {
	if !bytes.Contains(src, []byte(`\u00`)) {
		return
	}
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' || i+1 >= len(src) {
			out = append(out, c)
			continue
		}
		if src[i+1] == 'u' && i+5 < len(src) {
			switch strings.ToLower(string(src[i+2 : i+6])) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out = append(out, c, src[i+1]) // any other escape, kept whole
		i++
	}
	buf.Truncate(start)
	buf.Write(out)
}

// writeJSONString writes s as a JSON string (appendJSONString).
func writeJSONString(b *bytes.Buffer, s string) { b.Write(appendJSONString(b.AvailableBuffer(), s)) }

// appendJSONString appends s as a JSON string, without HTML escapes;
// invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}

// ErrorWriter writes the errors file of an import: CSV with the header
// row,error followed by the file's header columns (CSV input) or line
// (NDJSON input), one row per failed row.
type ErrorWriter struct {
	csv    *csv.Writer
	header []string
	wrote  bool
	rec    []string
}

// NewErrorWriter returns an ErrorWriter to w for a file of format whose
// header (CSV) is header.
func NewErrorWriter(w io.Writer, format Format, header []string) *ErrorWriter {
	h := []string{"row", "error"}
	if format == NDJSON {
		h = append(h, "line")
	} else {
		h = append(h, header...)
	}
	return &ErrorWriter{csv: csv.NewWriter(w), header: h}
}

// Write writes a failed row: its number, message, then its cells as read.
// An empty message is the row's error (for a RowError, its column and
// message, the row number being in the first column).
func (e *ErrorWriter) Write(row Row, message string) error {
	if err := e.writeHeader(); err != nil {
		return err
	}
	if message == "" && row.Err != nil {
		var re *RowError
		if errors.As(row.Err, &re) {
			message = re.Message
			if re.Column != "" {
				message = "column " + re.Column + ": " + message
			}
		} else {
			message = row.Err.Error()
		}
	}
	e.rec = append(e.rec[:0], strconv.FormatInt(row.Number, 10), safeCell(message))
	for _, c := range row.Raw {
		e.rec = append(e.rec, safeCell(c))
	}
	return e.csv.Write(e.rec)
}

func (e *ErrorWriter) writeHeader() error {
	if e.wrote {
		return nil
	}
	e.wrote = true
	head := make([]string, len(e.header))
	for i, h := range e.header {
		head[i] = safeCell(h)
	}
	return e.csv.Write(head)
}

// safeCell is a cell of the errors file: invalid UTF-8 and NUL bytes
// become U+FFFD, and a formula-like cell is escaped (EscapeFormula), which
// an import reads back (UnescapeFormula).
func safeCell(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return EscapeFormula(s)
}

// Close writes what is buffered (with no rows, still the header). It does
// not close the underlying writer.
func (e *ErrorWriter) Close() error {
	if err := e.writeHeader(); err != nil {
		return err
	}
	e.csv.Flush()
	return e.csv.Error()
}
