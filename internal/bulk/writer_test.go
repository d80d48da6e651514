package bulk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/bulk"
	"github.com/sourcebase/sourcebase/internal/resources"
)

func TestFormatsAreParsedAndNameTheirMediaTypeAndExtension(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in         string
		want       bulk.Format
		media, ext string
	}{
		{"csv", bulk.CSV, "text/csv; charset=utf-8", ".csv"},
		{" CSV ", bulk.CSV, "text/csv; charset=utf-8", ".csv"},
		{"ndjson", bulk.NDJSON, "application/x-ndjson", ".ndjson"},
		{"NDJSON", bulk.NDJSON, "application/x-ndjson", ".ndjson"},
	} {
		f, err := bulk.ParseFormat(tc.in)
		if err != nil || f != tc.want || f.ContentType() != tc.media || f.Ext() != tc.ext {
			t.Errorf("ParseFormat(%q) = %q, %v (%s, %s)", tc.in, f, err, f.ContentType(), f.Ext())
		}
	}
	_, err := bulk.ParseFormat("xlsx")
	var invalid *apperr.InvalidError
	if !errors.As(err, &invalid) || err.Error() != `format must be csv or ndjson; "xlsx" is not` {
		t.Errorf("ParseFormat(xlsx) = %v", err)
	}
}

func TestColumnsFlattenStructsInDeclarationOrder(t *testing.T) {
	t.Parallel()
	paths := func(fields []string) string {
		cols, err := bulk.Columns(defs()[0], fields)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cols {
			out = append(out, c.Path)
		}
		return strings.Join(out, ",")
	}
	all := paths(nil)
	if !strings.HasPrefix(all, "id,canonicalName,alternativeNames,website,") ||
		!strings.Contains(all, ",industry,location.city,location.state,location.country,companyType,") ||
		!strings.Contains(all, ",externalReference.source,externalReference.id,tags,assignees,custom,") ||
		!strings.HasSuffix(all, ",lastEnrichmentStartedAt,createdAt,updatedAt") || strings.Contains(all, "location,") {
		t.Errorf("Columns(companies) = %s", all)
	}
	if got := paths([]string{"tags", "location", "canonicalName", "tags"}); got != "id,canonicalName,location.city,location.state,location.country,tags" {
		t.Errorf("selected columns = %s", got)
	}
	if got := paths([]string{"updatedAt", "id"}); got != "id,updatedAt" {
		t.Errorf("selected columns = %s", got)
	}
	_, err := bulk.Columns(resources.Tags, []string{"name", "colour"})
	if err == nil || err.Error() != `fields names "colour", which is not a field of tags; the fields are id, name, color, description, createdAt, updatedAt` {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := bulk.Columns(resources.Tags, []string{"location.city"}); err == nil {
		t.Error("a subfield path is not a field name")
	}
}

func TestArraysOfStringsAreJoinedUnlessTheJoinedTextWouldNotSplitBack(t *testing.T) {
	t.Parallel()
	cols, _ := bulk.Columns(resources.People, []string{"tags", "companyIds"}) // declared companyIds first
	for _, tc := range []struct{ record, want string }{
		{`{"id":"p","tags":["a","b c"],"companyIds":["cmp_1"]}`, "p,cmp_1,a; b c\n"},
		{`{"id":"p","tags":[],"companyIds":null}`, "p,,\n"},
		{`{"id":"p","tags":["a;b"]}`, "p,,\"[\"\"a;b\"\"]\"\n"},
		{`{"id":"p","tags":[" a"]}`, "p,,\"[\"\" a\"\"]\"\n"},
		{`{"id":"p","tags":["a",""]}`, "p,,\"[\"\"a\"\",\"\"\"\"]\"\n"},
		{`{"id":"p","tags":["[x]","y"]}`, "p,,\"[\"\"[x]\"\",\"\"y\"\"]\"\n"},
		{`{"id":"p","tags":["y","[x]"]}`, "p,,y; [x]\n"},
		{`{"id":"p","tags":["R\u0026D <b>"]}`, "p,,R&D <b>\n"},
	} {
		var b bytes.Buffer
		w := bulk.NewWriter(&b, bulk.CSV, cols)
		if err := w.Write([]byte(tc.record)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimPrefix(b.String(), "id,companyIds,tags\n"); got != tc.want {
			t.Errorf("%s: row %q, want %q", tc.record, got, tc.want)
		}
	}
}

func TestNDJSONLinesHoldTheSelectedFieldsInColumnOrderAsAnswered(t *testing.T) {
	t.Parallel()
	cols, _ := bulk.Columns(defs()[0], []string{"tags", "location", "custom", "employeeCount", "canonicalName"})
	var b bytes.Buffer
	w := bulk.NewWriter(&b, bulk.NDJSON, cols)
	record := `{"id":"cmp_1", "canonicalName":"Acme <R&D>", "website":null, "location":{"city":"Paris"},
		"tags":["a;b"], "custom":{"z":1.50, "a":{"big":12345678901234567890}, "s":"\u0026"}, "employeeCount":12345678901234567890}`
	for _, rec := range []string{record, `{"id":"cmp_2","canonicalName":"B"}`} {
		if err := w.Write([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil || w.Rows() != 2 {
		t.Fatal(err, w.Rows())
	}
	want := `{"id":"cmp_1","canonicalName":"Acme <R&D>","location":{"city":"Paris"},"tags":["a;b"],"custom":{"z":1.50,"a":{"big":12345678901234567890},"s":"&"},"employeeCount":12345678901234567890}` + "\n" +
		`{"id":"cmp_2","canonicalName":"B"}` + "\n"
	if b.String() != want {
		t.Errorf("lines\n%s\nwant\n%s", b.String(), want)
	}
	if err := w.Write([]byte(`[1]`)); err == nil {
		t.Error("an array written as a record")
	}
}

func TestAnEmptyExportIsTheHeaderInCSVAndNothingInNDJSON(t *testing.T) {
	t.Parallel()
	cols, _ := bulk.Columns(resources.Tags, nil)
	for format, want := range map[bulk.Format]string{bulk.CSV: "id,name,color,description,createdAt,updatedAt\n", bulk.NDJSON: ""} {
		var b bytes.Buffer
		w := bulk.NewWriter(&b, format, cols)
		if err := w.Close(); err != nil || b.String() != want || w.Rows() != 0 {
			t.Errorf("%s: %q, %v", format, b.String(), err)
		}
	}
}

func TestTheErrorsFileHoldsEachFailedRowWithItsCellsOrLine(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	e := bulk.NewErrorWriter(&b, bulk.CSV, []string{"name", "amount"})
	rows := []struct {
		row bulk.Row
		msg string
	}{
		{bulk.Row{Number: 2, Raw: []string{"Big", "lots"}, Err: &bulk.RowError{Row: 2, Column: "amount", Message: `is not a number: "lots"`}}, ""},
		{bulk.Row{Number: 3, Raw: []string{"Big"}, Err: &bulk.RowError{Row: 3, Message: "has 1 cell; the header has 2"}}, ""},
		{bulk.Row{Number: 5, Raw: []string{"=cmd", "1"}}, "name is taken"},
		{bulk.Row{Number: 6, Raw: []string{"nul\x00bad\xff", "-5"}}, "@x"},
	}
	for _, r := range rows {
		if err := e.Write(r.row, r.msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	want := "row,error,name,amount\n" +
		"2,\"column amount: is not a number: \"\"lots\"\"\",Big,lots\n" +
		"3,has 1 cell; the header has 2,Big\n" +
		"5,name is taken,'=cmd,1\n" +
		"6,'@x,nul\uFFFDbad\uFFFD,'-5\n"
	if b.String() != want {
		t.Errorf("errors file\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	e = bulk.NewErrorWriter(&b, bulk.NDJSON, nil)
	if err := e.Write(bulk.Row{Number: 1, Raw: []string{`{"name":1}`}}, "name must be a string, not a number"); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "row,error,line\n1,\"name must be a string, not a number\",\"{\"\"name\"\":1}\"\n"; b.String() != want {
		t.Errorf("errors file\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	e = bulk.NewErrorWriter(&b, bulk.CSV, []string{"name"})
	if err := e.Close(); err != nil || b.String() != "row,error,name\n" {
		t.Errorf("no errors: %q, %v", b.String(), err)
	}
}

func TestFormulaLikeTextCellsAreEscapedAndReadBackExactly(t *testing.T) {
	t.Parallel()
	cols, err := bulk.Columns(resources.Deals, []string{"name", "amount", "tags"})
	if err != nil {
		t.Fatal(err)
	}
	header := "id,name,amount,tags\n"
	for _, tc := range []struct{ record, escaped, raw string }{
		{`{"id":"d","name":"=HYPERLINK(\"http://x\",\"y\")","amount":-5,"tags":["-a","b"]}`,
			"d,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-5,'-a; b\n", "d,\"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-5,-a; b\n"},
		{`{"id":"d","name":"+1","tags":["@x"]}`, "d,'+1,,'@x\n", "d,+1,,@x\n"},
		{`{"id":"d","name":"\tx"}`, "d,'\tx,,\n", "d,\"\tx\",,\n"},
		{`{"id":"d","name":"\rx"}`, "d,\"'\rx\",,\n", "d,\"\rx\",,\n"},
		{`{"id":"d","name":"'=x"}`, "d,''=x,,\n", "d,'=x,,\n"},
		{`{"id":"d","name":"''-x"}`, "d,'''-x,,\n", "d,''-x,,\n"},
		{`{"id":"d","name":"'tis a = b"}`, "d,'tis a = b,,\n", "d,'tis a = b,,\n"},
		{`{"id":"d","name":" =x","amount":-0.5}`, "d,\" =x\",-0.5,\n", "d,\" =x\",-0.5,\n"},
	} {
		for _, escape := range []bool{true, false} {
			var b bytes.Buffer
			w := bulk.NewWriter(&b, bulk.CSV, cols)
			if !escape {
				w.EscapeFormulas(false)
			}
			if err := w.Write([]byte(tc.record)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			want := tc.escaped
			if !escape {
				want = tc.raw
			}
			if got := strings.TrimPrefix(b.String(), header); got != want {
				t.Errorf("%s (escape %v): row %q, want %q", tc.record, escape, got, want)
			}
			if !escape {
				continue
			}
			// The escaped file imports back as the record's values.
			row := oneRow(t, resources.Deals, b.String(), bulk.Options{})
			var got, sent map[string]any
			if err := json.Unmarshal(row.Body, &got); err != nil || row.Err != nil {
				t.Fatalf("%s: body %s, %v", tc.record, row.Body, row.Err)
			}
			_ = json.Unmarshal([]byte(tc.record), &sent)
			delete(sent, "id")
			if !reflect.DeepEqual(got, sent) {
				t.Errorf("%s: imported back as %s", tc.record, row.Body)
			}
		}
	}
}

func TestInvalidUTF8OrAByteOrderMarkInsideTheFileFailsTheRow(t *testing.T) {
	t.Parallel()
	rows := readAll(t, []byte("\xef\xbb\xbfid,name,stage\nx,ok,a\nx,\xefbad,a\nx,ok,\xef\xbb\xbfb\nx,fine,c\n"), bulk.Options{Format: bulk.CSV, Def: resources.Deals})
	want := []string{"", "row 2, column name: is not valid UTF-8; save the file as UTF-8",
		"row 3, column stage: holds a byte-order mark (U+FEFF), which only the start of a file may hold (were files joined?); remove it", ""}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, row := range rows {
		if got := fmt.Sprint(row.Err); want[i] == "" && row.Err != nil || want[i] != "" && got != want[i] {
			t.Errorf("row %d: error %v, want %q", i+1, row.Err, want[i])
		}
	}
	rows = readAll(t, []byte("{\"name\":\"ok\"}\n{\"name\":\"b\xffd\"}\n{\"name\":\"ok\"}\n"), bulk.Options{Format: bulk.NDJSON, Def: resources.Deals})
	if len(rows) != 3 || rows[0].Err != nil || rows[2].Err != nil || fmt.Sprint(rows[1].Err) != "row 2: is not valid UTF-8; save the file as UTF-8" {
		t.Errorf("NDJSON rows %+v", rows)
	}
}
