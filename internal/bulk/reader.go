package bulk

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// MaxRowBytes bounds a row: a longer NDJSON line or CSV row fails (the
// read goes on); a CSV row that has not ended 64 KiB further (a quote is
// surely missing) fails the read.
const MaxRowBytes = 1 << 20

// maxShown is how many characters of a refused value a message repeats.
const maxShown = 50

var bom = []byte("\xef\xbb\xbf")

// Options say how to read a file.
type Options struct {
	Format Format
	Def    *resource.Def
	// Mapping maps a CSV header (or an NDJSON key) to a field path; a
	// header mapped to "" is skipped. Unmapped headers map to the field of
	// the same path.
	Mapping map[string]string
	// Keep lists fields kept even though read-only (e.g. "id" when the
	// import matches by id): top-level names, or a Struct subfield's path.
	Keep []string
}

// Position is where to resume: the byte offset after the last row read,
// that row's number, and (CSV) the header read at the start.
type Position struct {
	Offset int64    `json:"offset"`
	Row    int64    `json:"row"`
	Header []string `json:"header,omitempty"`
}

// Row is one row of a file.
type Row struct {
	Number int64    // 1-based data row (the CSV header is not a row)
	Body   []byte   // a JSON object of the fields the row sets
	Raw    []string // CSV: the row's cells as read; NDJSON: one element, the line
	Err    error    // a *RowError when the row cannot become a body
	// Checks are the values of the row's derived fields
	// (resource.ImportDerived) by path: the written record must hold them.
	Checks map[string]json.RawMessage
}

// IgnoredColumn is a column (an NDJSON key) an import does not read, and
// why: a field the service sets whenever it writes a record
// (resource.ImportIgnored).
type IgnoredColumn struct {
	Column string `json:"column"`
	Reason string `json:"reason"`
}

// RowError is a row that cannot become a body: which row, which column
// ("" for the whole row) and what is wrong.
type RowError struct {
	Row     int64
	Column  string
	Message string
}

func (e *RowError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("row %d: %s", e.Row, e.Message)
	}
	return fmt.Sprintf("row %d, column %s: %s", e.Row, e.Column, e.Message)
}

// Reader reads an uploaded file's rows into JSON bodies for d's decoder.
type Reader struct {
	opt  Options
	keep map[string]bool
	pos  Position
	err  error // a failure that ends the read
	// ignored are the columns (keys) not read, in the order met.
	ignored []IgnoredColumn

	// CSV
	rec   *recorder
	cr    *csv.Reader
	base  int64 // the file offset where cr's input starts
	plan  []column
	arena []byte // the values of the row being read
	spans []span

	// NDJSON
	br   *bufio.Reader
	line []byte
}

// column is how a CSV column is read.
type column struct {
	header string // as named in the header, trimmed
	skip   bool
	to     target
	whole  bool // a Struct's column holding the JSON object
	// refuse: a read-only column (resource.ImportRefused), whose value
	// fails the row; check: a derived one, whose value goes to Row.Checks.
	refuse, check bool
}

// NewReader reads r, which starts at pos.Offset of the file (the caller
// opens the file at that offset); at offset 0 it reads the CSV header. A
// header problem (a column that names no field and is not mapped, a
// column mapped twice, a mapping to an unknown field, an empty header) is
// an error naming the column.
func NewReader(r io.Reader, opt Options, pos Position) (*Reader, error) {
	if opt.Def == nil {
		return nil, errors.New("bulk: Options.Def is required")
	}
	if opt.Format != CSV && opt.Format != NDJSON {
		return nil, apperr.Invalid("format", "must be csv or ndjson; %q is not", string(opt.Format))
	}
	if err := checkMapping(opt); err != nil {
		return nil, err
	}
	rd := &Reader{opt: opt, keep: map[string]bool{}, pos: Position{Offset: pos.Offset, Row: pos.Row}}
	for _, k := range opt.Keep {
		rd.keep[k] = true
	}
	br := bufio.NewReaderSize(r, 64<<10)
	base := pos.Offset
	if pos.Offset == 0 {
		rd.pos.Row = 0
		if head, _ := br.Peek(len(bom)); bytes.Equal(head, bom) {
			_, _ = br.Discard(len(bom))
			base += int64(len(bom))
		}
	}
	if opt.Format == NDJSON {
		rd.br, rd.pos.Offset = br, base
		return rd, nil
	}
	rd.base = base
	rd.rec = &recorder{r: br, start: base, n: base, max: MaxRowBytes}
	rd.cr = csv.NewReader(rd.rec)
	rd.cr.FieldsPerRecord = -1
	header := pos.Header
	if pos.Offset == 0 {
		cells, err := rd.cr.Read()
		switch {
		case err == io.EOF:
			return nil, apperr.Invalid("", "the file is empty; a CSV file starts with a header row naming the fields")
		case errors.Is(err, errRowTooLong):
			return nil, apperr.Invalid("", "the header row is longer than 1 MiB; is a quote missing?")
		case err != nil:
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, apperr.Invalid("", "the header row is not valid CSV: %s", pe.Err)
			}
			return nil, err
		}
		header = cells
		rd.pos.Offset = base + rd.cr.InputOffset()
	}
	if len(header) == 0 {
		return nil, errors.New("bulk: resuming a CSV file needs the header read at its start (Position.Header)")
	}
	rd.pos.Header = header
	plan, err := planColumns(opt, header, rd.keep)
	if err != nil {
		return nil, err
	}
	rd.plan = plan
	for _, c := range plan {
		if c.skip && c.to.field.Name != "" {
			rd.ignore(c.header, c.to)
		}
	}
	return rd, nil
}

// checkMapping refuses a mapping to no field, and (NDJSON, whose keys are
// not known before) two keys mapped to one field.
func checkMapping(opt Options) error {
	keys := make([]string, 0, len(opt.Mapping))
	for k := range opt.Mapping {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	by := map[string]string{}
	for _, k := range keys {
		to := opt.Mapping[k]
		if to == "" {
			continue
		}
		if _, ok := resolve(opt.Def, to); !ok {
			return apperr.Invalid("mapping", "of column %q is %q, which is not a field of %s (fields: %s)",
				k, to, opt.Def.Name, strings.Join(paths(opt.Def), ", "))
		}
		if other, dup := by[to]; dup && opt.Format == NDJSON {
			return apperr.Invalid("mapping", "maps both %q and %q to %s; map each field once", other, k, to)
		}
		by[to] = k
	}
	return nil
}

// planColumns decides how each column of header is read.
func planColumns(opt Options, header []string, keep map[string]bool) ([]column, error) {
	plan := make([]column, len(header))
	setBy := map[string]int{} // column index by the path it sets
	for i, h := range header {
		name := UnescapeFormula(strings.TrimSpace(h))
		c := column{header: name}
		to, mapped := opt.Mapping[name]
		if !mapped {
			to, mapped = opt.Mapping[h]
		}
		switch {
		case mapped && to == "":
			c.skip = true
		case !mapped && name == "":
			return nil, apperr.Invalid("", "column %d of the header has no name; name the field it holds, or map \"\" to \"\" to skip it", i+1)
		case !mapped:
			to = name
		}
		if !c.skip {
			t, ok := resolve(opt.Def, to)
			if !ok { // a mapping's target is checked before
				return nil, apperr.Invalid("", "column %q of the header names no field of %s; map it to a field, or to \"\" to skip it (fields: %s)",
					name, opt.Def.Name, strings.Join(paths(opt.Def), ", "))
			}
			c.to = t
			c.whole = t.field.Kind == resource.Struct
			path := t.String()
			for p, j := range setBy {
				if p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(path, p+".") {
					return nil, apperr.Invalid("", "columns %q and %q both set %s; map one of them to \"\" to skip it",
						plan[j].header, name, shorter(p, path))
				}
			}
			setBy[path] = i
			if t.readOnly && !keep[path] && !keep[t.path[0]] {
				switch t.rule {
				case resource.ImportIgnored:
					c.skip = true
				case resource.ImportRefused:
					c.refuse = true
				case resource.ImportDerived:
					c.check = true
				}
			}
		}
		plan[i] = c
	}
	return plan, nil
}

func shorter(a, b string) string {
	if len(a) < len(b) {
		return a
	}
	return b
}

// Position is where the next row starts: after the last row returned.
func (r *Reader) Position() Position { return r.pos }

// Next returns the next row; io.EOF after the last. A row whose cells
// cannot be coerced has Row.Err set (a *RowError) and is still returned
// (the reader goes on).
func (r *Reader) Next() (Row, error) {
	if r.err != nil {
		return Row{}, r.err
	}
	if r.opt.Format == NDJSON {
		return r.nextLine()
	}
	return r.nextCSV()
}

func (r *Reader) nextCSV() (Row, error) {
	for {
		start := r.base + r.cr.InputOffset()
		r.rec.mark(start)
		cells, err := r.cr.Read()
		if err == io.EOF {
			return Row{}, io.EOF
		}
		end := r.base + r.cr.InputOffset()
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe):
			raw := strings.Trim(r.rec.text(start, end), "\r\n")
			if pe.Err == csv.ErrQuote && pe.StartLine < pe.Line && r.rec.atEOF(end) && strings.Count(raw, `"`)%2 == 1 {
				r.err = apperr.Invalid("", "row %d opens a quote that is never closed, so the rest of the file cannot be read", r.pos.Row+1)
				return Row{}, r.err
			}
			r.pos.Row, r.pos.Offset = r.pos.Row+1, end
			col := ""
			if n := len(cells); n < len(r.plan) { // the cells before the one at fault
				col = r.plan[n].header
			}
			msg := "has a quote inside a cell that is not quoted; quote the cell and double the quotes inside it"
			if pe.Err == csv.ErrQuote {
				msg = "has a stray quote in a quoted cell; double the quotes inside quoted cells"
			}
			return Row{Number: r.pos.Row, Raw: []string{raw}, Err: &RowError{Row: r.pos.Row, Column: col, Message: msg}}, nil
		case errors.Is(err, errRowTooLong):
			r.err = apperr.Invalid("", "row %d is longer than 1 MiB; is a quote missing? The rest of the file cannot be read", r.pos.Row+1)
			return Row{}, r.err
		case err != nil:
			r.err = err
			return Row{}, err
		}
		if blank(cells) {
			continue
		}
		r.pos.Row, r.pos.Offset = r.pos.Row+1, end
		row := Row{Number: r.pos.Row, Raw: cells}
		if end-start > MaxRowBytes && r.rec.rowBytes(start, end) > MaxRowBytes {
			row.Raw = []string{truncate(strings.Join(cells, ","), 1000)}
			row.Err = &RowError{Row: row.Number, Message: "is longer than 1 MiB (1048576 bytes)"}
			return row, nil
		}
		if len(cells) != len(r.plan) {
			row.Err = &RowError{Row: row.Number, Message: fmt.Sprintf("has %s; the header has %d", plural(len(cells), "cell"), len(r.plan))}
			return row, nil
		}
		if err := r.checkText(row.Number, cells); err != nil {
			row.Err = err
			return row, nil
		}
		row.Body, row.Checks, row.Err = r.csvBody(row.Number, cells)
		return row, nil
	}
}

// checkText refuses a row with a read cell that is not valid UTF-8 or that
// holds a byte-order mark (U+FEFF; only the file's first bytes may be one).
func (r *Reader) checkText(n int64, cells []string) error {
	for i, c := range r.plan {
		if c.skip {
			continue
		}
		switch {
		case !utf8.ValidString(cells[i]):
			return &RowError{Row: n, Column: c.header, Message: "is not valid UTF-8; save the file as UTF-8"}
		case strings.Contains(cells[i], "\uFEFF"):
			return &RowError{Row: n, Column: c.header, Message: "holds a byte-order mark (U+FEFF), which only the start of a file may hold (were files joined?); remove it"}
		}
	}
	return nil
}

// blank reports a row of empty cells (a blank line, or ",,,").
func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// csvBody is the JSON body of a row's cells. The cells' values are
// appended to the reader's arena, then set in the body.
func (r *Reader) csvBody(n int64, cells []string) ([]byte, map[string]json.RawMessage, error) {
	r.arena, r.spans = r.arena[:0], r.spans[:0]
	for i, c := range r.plan {
		if c.skip {
			continue
		}
		start := len(r.arena)
		var msg string
		if r.arena, msg = appendCell(r.arena, c.to.field, c.whole, cells[i]); msg != "" {
			return nil, nil, &RowError{Row: n, Column: c.header, Message: msg}
		}
		if v := r.arena[start:]; c.refuse && !emptyValue(v) {
			return nil, nil, &RowError{Row: n, Column: c.header, Message: readOnlyMessage(c.to)}
		}
		if len(r.arena) > start { // else the cell leaves the field out
			r.spans = append(r.spans, span{i, start, len(r.arena)})
		}
	}
	body := &object{}
	var checks map[string]json.RawMessage
	for _, sp := range r.spans {
		c := r.plan[sp.column]
		switch {
		case c.refuse: // an empty value: no value
		case c.check:
			if checks == nil {
				checks = map[string]json.RawMessage{}
			}
			checks[c.to.String()] = bytes.Clone(r.arena[sp.start:sp.end])
		default:
			body.set(c.to.path, r.arena[sp.start:sp.end])
		}
	}
	return body.appendTo(make([]byte, 0, len(r.arena)+16*len(r.spans)+2)), checks, nil
}

// emptyValue reports the JSON of a field that holds nothing, as an export
// writes it for a field never set: "", [], {} or null.
func emptyValue(v []byte) bool {
	switch string(bytes.TrimSpace(v)) {
	case "", `""`, "[]", "{}", "null":
		return true
	}
	return false
}

// readOnlyMessage is the error of a value for a read-only field that an
// import does not take.
func readOnlyMessage(t target) string {
	return fmt.Sprintf("%s is read-only: the service sets it, and an import cannot; leave the cell empty, or map the column to \"\" to skip it", t)
}

// ignore records that the column (key) of t is not read.
func (r *Reader) ignore(column string, t target) {
	for _, c := range r.ignored {
		if c.Column == column {
			return
		}
	}
	f, _ := r.opt.Def.Field(t.path[0])
	r.ignored = append(r.ignored, IgnoredColumn{Column: column, Reason: resource.ImportNoteOf(f)})
}

// Ignored are the columns (NDJSON keys) read so far that the reader does
// not read into bodies, and why: the service sets their fields whenever it
// writes a record (an export's id, createdAt and updatedAt).
func (r *Reader) Ignored() []IgnoredColumn { return slices.Clone(r.ignored) }

// span is where a column's value is in the arena.
type span struct{ column, start, end int }

// appendCell appends the JSON of a cell read as a value of f: nothing when
// the cell leaves the field out; or it says what was expected.
func appendCell(dst []byte, f resource.Field, whole bool, cell string) ([]byte, string) {
	s := strings.TrimSpace(cell)
	if s == "" && (cell == "" || !f.Verbatim || !isText(f.Kind)) {
		return dst, ""
	}
	s, text := UnescapeFormula(s), UnescapeFormula(cell) // a cell escaped against formulas
	refused := func(what string) ([]byte, string) {
		return dst, fmt.Sprintf("is not %s: %q", what, truncate(cell, maxShown))
	}
	switch {
	case whole || f.Kind == resource.Struct:
		v, ok := structJSON(f.Fields, []byte(s), false)
		if !ok {
			return refused("a JSON object")
		}
		return append(dst, v...), ""
	case f.Kind == resource.Int:
		n, ok := jsonNumber(s, true)
		if !ok {
			return refused("an integer")
		}
		return append(dst, n...), ""
	case f.Kind == resource.Number:
		n, ok := jsonNumber(s, false)
		if !ok {
			return refused("a number")
		}
		if x, _ := strconv.ParseFloat(n, 64); math.IsInf(x, 0) {
			return refused("a finite number")
		}
		return append(dst, n...), ""
	case f.Kind == resource.Bool:
		switch strings.ToLower(s) {
		case "true", "yes", "1":
			return append(dst, "true"...), ""
		case "false", "no", "0":
			return append(dst, "false"...), ""
		}
		return refused("a boolean (true, false, yes, no, 1 or 0)")
	case f.Kind == resource.Strings || f.Kind == resource.Refs:
		if strings.HasPrefix(s, "[") {
			var list []string
			if !isJSON(s, '[') || json.Unmarshal([]byte(s), &list) != nil || list == nil {
				return refused("a JSON array of strings")
			}
			dst = append(dst, '[')
			for i, e := range list {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, e)
			}
			return append(dst, ']'), ""
		}
		dst = append(dst, '[')
		first := true
		for e := range strings.SplitSeq(s, ";") {
			if e = strings.TrimSpace(e); e != "" {
				if !first {
					dst = append(dst, ',')
				}
				dst, first = appendJSONString(dst, e), false
			}
		}
		return append(dst, ']'), ""
	case f.Kind == resource.Object:
		b := bytes.NewBuffer(dst)
		if s[0] != '{' || json.Compact(b, []byte(s)) != nil { // Compact checks the JSON
			return refused("a JSON object")
		}
		return b.Bytes(), ""
	case f.Kind == resource.Structs:
		v, ok := structJSON(f.Fields, []byte(s), true)
		if !ok {
			return refused("a JSON array of objects")
		}
		return append(dst, v...), ""
	}
	return appendJSONString(dst, text), ""
}

// isText reports the kinds whose cell is the text itself.
func isText(k resource.Kind) bool {
	switch k {
	case resource.String, resource.Text, resource.Enum, resource.URL, resource.Email, resource.Date, resource.DateTime, resource.Ref:
		return true
	}
	return false
}

// isJSON reports whether s is one valid JSON value starting with first.
func isJSON(s string, first byte) bool {
	return len(s) > 0 && s[0] == first && json.Valid([]byte(s))
}

// jsonNumber reads s as a JSON number (an integer when integer): the
// number's JSON text, leading zeros of its integer part dropped.
func jsonNumber(s string, integer bool) (string, bool) {
	i, neg := 0, false
	if strings.HasPrefix(s, "-") {
		i, neg = 1, true
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return "", false
	}
	whole := strings.TrimLeft(s[start:i], "0")
	if whole == "" {
		whole = "0"
	}
	rest := s[i:]
	if integer {
		if rest != "" {
			return "", false
		}
		if whole == "0" {
			neg = false
		}
	} else {
		j := 0
		digits := func() bool {
			k := j
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			return j > k
		}
		if j < len(rest) && rest[j] == '.' {
			j++
			if !digits() {
				return "", false
			}
		}
		if j < len(rest) && (rest[j] == 'e' || rest[j] == 'E') {
			j++
			if j < len(rest) && (rest[j] == '+' || rest[j] == '-') {
				j++
			}
			if !digits() {
				return "", false
			}
		}
		if j != len(rest) {
			return "", false
		}
	}
	if neg {
		return "-" + whole + rest, true
	}
	return whole + rest, true
}

// structJSON reads raw as a Struct's object (an array of them when many)
// and drops the read-only subfields the service sets (a score's
// elementName), which an exported record holds and a body may not.
func structJSON(fields []resource.Field, raw []byte, many bool) (json.RawMessage, bool) {
	first := byte('{')
	if many {
		first = '['
	}
	if !isJSON(string(raw), first) {
		return nil, false
	}
	if !many {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil, false
		}
		out, ok := stripReadOnly(fields, obj)
		return out, ok
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, obj := range list {
		if obj == nil {
			return nil, false
		}
		out, ok := stripReadOnly(fields, obj)
		if !ok {
			return nil, false
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(out)
	}
	b.WriteByte(']')
	return b.Bytes(), true
}

// stripReadOnly encodes obj, an object of fields, without its read-only
// members, recursively through Struct and Structs subfields; keys in
// sorted order, values as sent.
func stripReadOnly(fields []resource.Field, obj map[string]json.RawMessage) (json.RawMessage, bool) {
	out := &object{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := obj[k]
		i := slices.IndexFunc(fields, func(f resource.Field) bool { return f.Name == k })
		if i >= 0 {
			f := fields[i]
			if f.ReadOnly {
				continue
			}
			if t := bytes.TrimSpace(v); len(t) > 0 && (f.Kind == resource.Struct && t[0] == '{' || f.Kind == resource.Structs && t[0] == '[') {
				sub, ok := structJSON(f.Fields, t, f.Kind == resource.Structs)
				if !ok {
					return nil, false
				}
				v = sub
			}
		}
		var b bytes.Buffer
		if json.Compact(&b, v) != nil {
			return nil, false
		}
		out.set([]string{k}, b.Bytes())
	}
	return out.appendTo(nil), true
}

// nextLine reads the next NDJSON row.
func (r *Reader) nextLine() (Row, error) {
	for {
		line, n, long, err := r.readLine()
		if n == 0 && err == io.EOF {
			return Row{}, io.EOF
		}
		if err != nil && err != io.EOF {
			r.err = err
			return Row{}, err
		}
		if long {
			r.pos.Row, r.pos.Offset = r.pos.Row+1, r.pos.Offset+n
			return Row{Number: r.pos.Row, Raw: []string{truncate(strings.ToValidUTF8(string(line), "\uFFFD"), 1000)},
				Err: &RowError{Row: r.pos.Row, Message: "is longer than 1 MiB (1048576 bytes)"}}, nil
		}
		text := bytes.TrimSpace(line)
		if len(text) == 0 {
			r.pos.Offset += n // a blank line, not a row
			if err == io.EOF {
				return Row{}, io.EOF
			}
			continue
		}
		r.pos.Row, r.pos.Offset = r.pos.Row+1, r.pos.Offset+n
		row := Row{Number: r.pos.Row, Raw: []string{string(bytes.TrimRight(line, "\r"))}}
		if !utf8.Valid(text) {
			row.Err = &RowError{Row: row.Number, Message: "is not valid UTF-8; save the file as UTF-8"}
			return row, nil
		}
		row.Body, row.Checks, row.Err = r.lineBody(row.Number, text)
		return row, nil
	}
}

// readLine reads one line: its bytes without the line feed (only the first
// MaxRowBytes of a longer one, long then true) and how many bytes it took.
func (r *Reader) readLine() (line []byte, n int64, long bool, err error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		n += int64(len(chunk))
		if !long {
			r.line = append(r.line, chunk...)
			if len(bytes.TrimRight(r.line, "\r\n")) > MaxRowBytes {
				long = true
				r.line = r.line[:MaxRowBytes]
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(r.line, []byte("\n"))
		return line, n, long, err
	}
}

// lineBody is the JSON body of an NDJSON line.
func (r *Reader) lineBody(n int64, text []byte) ([]byte, map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if text[0] != '{' || json.Unmarshal(text, &obj) != nil {
		return nil, nil, &RowError{Row: n, Message: fmt.Sprintf("is not a JSON object: %q", truncate(string(text), maxShown))}
	}
	var checks map[string]json.RawMessage
	keys := make([]string, 0, len(obj))
	var mapped []string
	for k := range obj {
		if _, ok := r.opt.Mapping[k]; ok {
			mapped = append(mapped, k)
		} else {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	sort.Strings(mapped)
	body := &object{}
	for _, k := range append(keys, mapped...) {
		to, ok := r.opt.Mapping[k]
		if !ok {
			to = k
		} else if to == "" {
			continue
		}
		v := obj[k]
		t, known := resolve(r.opt.Def, to)
		if !known { // not a field: sent as is, for the decoder to refuse
			body.set([]string{to}, compact(v))
			continue
		}
		if t.readOnly && !r.keep[t.String()] && !r.keep[t.path[0]] {
			switch t.rule {
			case resource.ImportIgnored:
				r.ignore(k, t)
				continue
			case resource.ImportRefused:
				if !emptyValue(v) {
					return nil, nil, &RowError{Row: n, Column: k, Message: readOnlyMessage(t)}
				}
				continue
			case resource.ImportDerived:
				if checks == nil {
					checks = map[string]json.RawMessage{}
				}
				checks[t.String()] = compact(v)
				continue
			}
		}
		if f := t.field; f.Kind == resource.Struct || f.Kind == resource.Structs {
			if sub, ok := structJSON(f.Fields, bytes.TrimSpace(v), f.Kind == resource.Structs); ok {
				v = sub
			}
			if f.Kind == resource.Struct && string(v) == "{}" {
				continue // no part known: left out, as a CSV row's empty cells of its parts
			}
		}
		body.set(t.path, compact(v))
	}
	return body.appendTo(nil), checks, nil
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// object is a JSON object being built: members in the order set, a member
// holding either a value or a nested object.
type object struct {
	keys []string
	vals []json.RawMessage
	subs []*object
}

// set sets the member at path, making the objects on the way; a value set
// where an object is (or the reverse) replaces it.
func (o *object) set(path []string, v json.RawMessage) {
	i := slices.Index(o.keys, path[0])
	if i < 0 {
		o.keys, o.vals, o.subs = append(o.keys, path[0]), append(o.vals, nil), append(o.subs, nil)
		i = len(o.keys) - 1
	}
	if len(path) == 1 {
		o.vals[i], o.subs[i] = v, nil
		return
	}
	if o.subs[i] == nil {
		whole := o.vals[i]
		o.subs[i], o.vals[i] = &object{}, nil
		// A nested member set where a whole object was sent keeps the
		// object's other members.
		var prev map[string]json.RawMessage
		if whole != nil && json.Unmarshal(whole, &prev) == nil {
			keys := make([]string, 0, len(prev))
			for k := range prev {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				o.subs[i].set([]string{k}, prev[k])
			}
		}
	}
	o.subs[i].set(path[1:], v)
}

// appendTo appends the object's JSON.
func (o *object) appendTo(dst []byte) []byte {
	dst = append(dst, '{')
	for i, k := range o.keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, k), ':')
		if o.subs[i] != nil {
			dst = o.subs[i].appendTo(dst)
		} else {
			dst = append(dst, o.vals[i]...)
		}
	}
	return append(dst, '}')
}

// stuck is how far past MaxRowBytes a CSV row may go before the read
// stops: a longer row is refused when it ends, one that has not ended
// after this much more (an unclosed quote) fails the read.
const stuck = 64 << 10

// errRowTooLong stops a CSV read in a row longer than MaxRowBytes+stuck.
var errRowTooLong = errors.New("bulk: row longer than 1 MiB")

// recorder is the CSV reader's input: it keeps the bytes read since the
// start of the current row (for a row that is not valid CSV, shown as
// read) and stops a row longer than max.
type recorder struct {
	r     io.Reader
	buf   []byte
	head  int   // buf[head:] are the bytes from offset start on
	start int64 // the file offset of buf[head]
	n     int64 // the file offset of the next byte read
	eof   bool
	max   int
}

func (c *recorder) Read(p []byte) (int, error) {
	if len(c.buf)-c.head > c.max+stuck {
		return 0, errRowTooLong
	}
	n, err := c.r.Read(p)
	c.buf = append(c.buf, p[:n]...)
	c.n += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// mark forgets the bytes before the file offset off.
func (c *recorder) mark(off int64) {
	if d := off - c.start; d > 0 {
		c.head += int(d)
		c.start = off
	}
	if c.head >= 64<<10 || c.head == len(c.buf) {
		c.buf = c.buf[:copy(c.buf, c.buf[c.head:])]
		c.head = 0
	}
}

// rowBytes is the length of the row between the file offsets from and
// to, without the blank lines before it.
func (c *recorder) rowBytes(from, to int64) int64 {
	i, j := c.head+int(from-c.start), c.head+int(to-c.start)
	if i < c.head || j > len(c.buf) || i > j {
		return to - from
	}
	return int64(len(bytes.TrimLeft(c.buf[i:j], "\r\n")))
}

// text is the input between the file offsets from and to.
func (c *recorder) text(from, to int64) string {
	i, j := c.head+int(from-c.start), c.head+int(to-c.start)
	if i < c.head || j > len(c.buf) || i > j {
		return ""
	}
	return strings.ToValidUTF8(string(c.buf[i:j]), "\uFFFD")
}

// atEOF reports whether the input ended and everything was read up to off.
func (c *recorder) atEOF(off int64) bool { return c.eof && off >= c.n }
