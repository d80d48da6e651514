package bulk_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/bulk"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// defs are every declared resource: companies, then resources.All().
func defs() []*resource.Def { return append([]*resource.Def{companies.Def}, resources.All()...) }

// The variants of a sample record.
const (
	tricky   = iota // commas, quotes, line breaks, ";" in elements, huge numbers
	unusual         // leading "=", unicode, padded verbatim text, "[" first element
	emptyish        // optional fields empty (null, [], {}, false), required ones set
	variants
)

// record is a record of d as the API answers it: every field, read-only
// ones included, with values of the variant.
func record(d *resource.Def, variant, n int) map[string]any {
	rec := map[string]any{}
	for _, f := range d.AllFields() {
		rec[f.Name] = value(f, variant, n)
		if f.ReadOnly && f.Import == resource.ImportRefused {
			rec[f.Name] = value(f, emptyish, n) // the service never set it: an import refuses a value
		}
	}
	rec[resource.FieldID] = fmt.Sprintf("%s_%026d", d.IDPrefix, n)
	return rec
}

// value is a valid value of f for the variant: its Example when declared,
// else a generic value of its kind within its bounds.
func value(f resource.Field, variant, n int) any {
	if variant == emptyish && !f.Required && !f.Always {
		switch f.Kind {
		case resource.Strings, resource.Refs, resource.Structs:
			return []any{}
		case resource.Object, resource.Struct:
			return map[string]any{}
		case resource.Bool:
			return false
		}
		return f.Default
	}
	if f.Example != nil {
		v := jsonCopy(f.Example)
		if list, ok := v.([]any); ok && f.Kind == resource.Structs {
			// As the API answers it: with the read-only subfields the
			// service sets (a score's elementName).
			for _, e := range list {
				for _, sub := range f.Fields {
					if sub.ReadOnly {
						e.(map[string]any)[sub.Name] = value(sub, variant, n)
					}
				}
			}
		}
		return v
	}
	switch f.Kind {
	case resource.String:
		s := fmt.Sprintf(`Acme %d, "Quoted" & <Co>`, n)
		if variant == unusual {
			s = fmt.Sprintf("=SUM(A1:A2) Société Générale 東京 🚀 %d", n)
			if f.Verbatim {
				s = "  " + s + " "
			}
		}
		return clip(s, f.MaxLength())
	case resource.Text:
		s := "line one, \"two\"\nline two; three\n\ttabbed & <b>"
		if variant == unusual {
			s = "-1+1 @handle\n=HYPERLINK(\"http://x\")\nÜnïcödé 日本語"
		}
		return clip(s, f.MaxLength())
	case resource.Enum:
		return f.Values[variant%len(f.Values)]
	case resource.URL:
		return "https://example.com/a?b=1,2&c=%22x%22"
	case resource.Email:
		return "ada+tag@example.com"
	case resource.Date:
		return "2026-01-31"
	case resource.DateTime:
		if variant == unusual {
			return "2026-02-28T23:59:59.999Z"
		}
		return "2026-01-31T09:30:00.000Z"
	case resource.Int:
		if f.ReadOnly {
			return json.Number("12345678901234567890") // never imported: the decoder refuses it
		}
		if f.Min != nil || f.Max != nil {
			return within(f, json.Number(fmt.Sprint(int64(lo(f))+1)))
		}
		if variant == unusual {
			return json.Number("-42")
		}
		return json.Number("9007199254740991")
	case resource.Number:
		x := json.Number("1.5e300")
		if variant == unusual {
			x = "12345678901234567890.5"
		}
		return within(f, x)
	case resource.Bool:
		return variant == tricky
	case resource.Strings:
		if variant == unusual {
			return []any{"fintech", "saas", "Ünïcode"}
		}
		return []any{"a;b", "plain", "with, comma", `"quoted"`}
	case resource.Refs:
		if variant == unusual {
			return []any{"[bracketed]", "cmp_02"}
		}
		return []any{"cmp_01", "cmp_02"}
	case resource.Ref:
		return fmt.Sprintf("ref_%026d", n)
	case resource.Object:
		return map[string]any{"note": "a, \"b\"\nc & <d>", "n": json.Number("1.5e300"), "big": json.Number("9007199254740991"),
			"nested": map[string]any{"list": []any{json.Number("1"), "x", nil, true}}}
	case resource.Struct:
		m := map[string]any{}
		for _, sub := range f.Fields {
			m[sub.Name] = value(sub, variant, n)
		}
		return m
	case resource.Structs:
		m := map[string]any{}
		for _, sub := range f.Fields {
			m[sub.Name] = value(sub, variant, n)
		}
		return []any{m}
	}
	panic(fmt.Sprintf("no sample of kind %v", f.Kind))
}

func lo(f resource.Field) float64 {
	if f.Min != nil {
		return *f.Min
	}
	return 0
}

// within is x, or a number within f's bounds when x is not.
func within(f resource.Field, x json.Number) json.Number {
	v, _ := x.Float64()
	if (f.Min == nil || v >= *f.Min) && (f.Max == nil || v <= *f.Max) {
		return x
	}
	if f.Kind == resource.Int {
		return json.Number(fmt.Sprint(int64(lo(f))))
	}
	return json.Number(fmt.Sprint(lo(f) + 0.125))
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func jsonCopy(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writable is the create body of a record: its fields less the read-only
// ones (Struct subfields too).
func writable(fields []resource.Field, rec map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		v, ok := rec[f.Name]
		if !ok || f.ReadOnly {
			continue
		}
		switch f.Kind {
		case resource.Struct:
			if m, ok := v.(map[string]any); ok {
				v = writable(f.Fields, m)
			}
		case resource.Structs:
			if list, ok := v.([]any); ok {
				var els []any
				for _, e := range list {
					els = append(els, writable(f.Fields, e.(map[string]any)))
				}
				v = els
			}
		}
		out[f.Name] = v
	}
	return out
}

// isEmpty reports a decoded value that holds nothing: absent, null, [],
// {}, or an object of nothing.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	}
	return false
}

// readAll reads every row of data.
func readAll(t testing.TB, data []byte, opt bulk.Options) []bulk.Row {
	t.Helper()
	r, err := bulk.NewReader(bytes.NewReader(data), opt, bulk.Position{})
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var rows []bulk.Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows
		}
		if err != nil {
			t.Fatalf("Next after %d rows: %v", len(rows), err)
		}
		rows = append(rows, row)
	}
}

// export writes recs with every column of d.
func export(t testing.TB, d *resource.Def, format bulk.Format, recs ...map[string]any) []byte {
	t.Helper()
	cols, err := bulk.Columns(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := bulk.NewWriter(&buf, format, cols)
	for _, rec := range recs {
		if err := w.Write(mustJSON(t, rec)); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Rows() != int64(len(recs)) {
		t.Errorf("Rows() = %d, want %d", w.Rows(), len(recs))
	}
	return buf.Bytes()
}

func TestEveryResourceExportedImportsBackAsTheSameWritableFields(t *testing.T) {
	t.Parallel()
	for _, d := range defs() {
		for _, format := range []bulk.Format{bulk.CSV, bulk.NDJSON} {
			t.Run(d.Name+"/"+string(format), func(t *testing.T) {
				t.Parallel()
				var recs []map[string]any
				for v := 0; v < variants; v++ {
					recs = append(recs, record(d, v, v+1))
				}
				data := export(t, d, format, recs...)
				rows := readAll(t, data, bulk.Options{Format: format, Def: d})
				if len(rows) != len(recs) {
					t.Fatalf("read %d rows, want %d:\n%s", len(rows), len(recs), data)
				}
				for i, row := range rows {
					if row.Err != nil || row.Number != int64(i+1) {
						t.Fatalf("row %d: number %d, error %v", i+1, row.Number, row.Err)
					}
					// What only an import takes (a company's candidates and
					// origin) is in the body as exported, for the record's service.
					var members map[string]json.RawMessage
					if err := json.Unmarshal(row.Body, &members); err != nil {
						t.Fatal(err)
					}
					for _, f := range d.Fields {
						if f.ReadOnly && (f.Import == resource.ImportCandidate || f.Import == resource.ImportKept) {
							if v, ok := members[f.Name]; ok && !isEmpty(recs[i][f.Name]) && !sameValue(t, v, recs[i][f.Name]) {
								t.Errorf("variant %d: %s = %s, want %s", i, f.Name, v, mustJSON(t, recs[i][f.Name]))
							}
							delete(members, f.Name)
						}
					}
					got, err := d.Decode(mustJSON(t, members), true)
					if err != nil {
						t.Fatalf("variant %d: Decode(%s): %v", i, row.Body, err)
					}
					want, err := d.Decode(mustJSON(t, writable(d.Fields, recs[i])), true)
					if err != nil {
						t.Fatalf("variant %d: the sample itself does not decode: %v", i, err)
					}
					for _, f := range d.Fields {
						if f.ReadOnly {
							if f.Import == resource.ImportDerived {
								if v, ok := row.Checks[f.Name]; (ok || !isEmpty(recs[i][f.Name])) && !sameValue(t, v, recs[i][f.Name]) {
									t.Errorf("variant %d: derived %s checked as %s, want %s", i, f.Name, v, mustJSON(t, recs[i][f.Name]))
								}
							}
							if _, sent := got[f.Name]; sent {
								t.Errorf("variant %d: read-only %s imported", i, f.Name)
							}
							continue
						}
						g, w := got[f.Name], want[f.Name]
						if isEmpty(g) && isEmpty(w) {
							continue
						}
						if gj, wj := mustJSON(t, g), mustJSON(t, w); !bytes.Equal(gj, wj) {
							t.Errorf("variant %d: %s = %s, want %s", i, f.Name, gj, wj)
						}
					}
				}
			})
		}
	}
}

// cells reads an exported CSV file into its rows of cells by column.
func cells(t *testing.T, data []byte) []map[string]string {
	t.Helper()
	all, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, row := range all[1:] {
		m := map[string]string{}
		for i, h := range all[0] {
			m[h] = row[i]
		}
		out = append(out, m)
	}
	return out
}

func TestACompanyExportedAsCSVHoldsItsValuesExactly(t *testing.T) {
	t.Parallel()
	rec := record(companies.Def, tricky, 1)
	rec["location"] = map[string]any{"city": "Paris, \"Île\"", "country": "France"} // state left out, as the API does
	rec["lastValuation"] = json.Number("1.5e300")
	rec["description"] = "=cmd|' /C calc'!A0\nsecond line"
	rec["assignees"] = []any{map[string]any{"id": `Acme 1, "Quoted" & <Co>`, "type": `Acme 1, "Quoted" & <Co>`}}
	odd := record(companies.Def, unusual, 2)
	odd["tags"] = []any{"fintech", "saas"}
	odd["custom"] = map[string]any{}
	got := cells(t, export(t, companies.Def, bulk.CSV, rec, odd))
	want := []map[string]string{{
		"id":               rec["id"].(string),
		"employeeCount":    "12345678901234567890",
		"lastValuation":    "1.5e300",
		"tags":             `["a;b","plain","with, comma","\"quoted\""]`,
		"alternativeNames": `["a;b","plain","with, comma","\"quoted\""]`,
		"location.city":    `Paris, "Île"`,
		"location.state":   "",
		"location.country": "France",
		"description":      "'=cmd|' /C calc'!A0\nsecond line",
		"canonicalName":    `Acme 1, "Quoted" & <Co>`,
		"custom":           `{"big":9007199254740991,"n":1.5e300,"nested":{"list":[1,"x",null,true]},"note":"a, \"b\"\nc & <d>"}`,
		"createdAt":        "2026-01-31T09:30:00.000Z",
		"assignees":        `[{"id":"Acme 1, \"Quoted\" & <Co>","type":"Acme 1, \"Quoted\" & <Co>"}]`,
		"linkedinUrl":      "https://example.com/a?b=1,2&c=%22x%22",
	}, {
		"tags":          "fintech; saas",
		"custom":        "{}",
		"sector":        "  =SUM(A1:A2) Société Générale 東京 🚀 2 ",
		"canonicalName": "'=SUM(A1:A2) Société Générale 東京 🚀 2",
		"employeeCount": "12345678901234567890",
	}}
	for i := range want {
		for col, cell := range want[i] {
			if got[i][col] != cell {
				t.Errorf("record %d, column %s = %q, want %q", i+1, col, got[i][col], cell)
			}
		}
	}
	if _, ok := got[0]["location"]; ok {
		t.Error("the Struct location has a column of its own")
	}
}

// sameValue reports whether the JSON text got is want's value.
func sameValue(t *testing.T, got json.RawMessage, want any) bool {
	t.Helper()
	var g, w any
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.UseNumber()
	if dec.Decode(&g) != nil {
		return false
	}
	dec = json.NewDecoder(bytes.NewReader(mustJSON(t, want)))
	dec.UseNumber()
	if dec.Decode(&w) != nil {
		return false
	}
	return bytes.Equal(mustJSON(t, g), mustJSON(t, w))
}
