package bulk_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/bulk"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// oneRow reads the only row of a CSV file.
func oneRow(t *testing.T, d *resource.Def, data string, opt bulk.Options) bulk.Row {
	t.Helper()
	opt.Format, opt.Def = bulk.CSV, d
	rows := readAll(t, []byte(data), opt)
	if len(rows) != 1 {
		t.Fatalf("read %d rows, want 1", len(rows))
	}
	return rows[0]
}

func TestEachKindsCellIsReadIntoItsJSONOrRefusedNamingColumnAndValue(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 60)
	tests := []struct {
		def    *resource.Def
		column string
		cell   string
		body   string // the row's body, when it reads
		err    string // the row's error, when it does not
	}{
		// Int
		{resources.Documents, "size", "12", `{"size":12}`, ""},
		{resources.Documents, "size", " -0042 ", `{"size":-42}`, ""},
		{resources.Documents, "size", "-0", `{"size":0}`, ""},
		{resources.Documents, "size", "12345678901234567890", `{"size":12345678901234567890}`, ""},
		{resources.Documents, "size", "12a", "", `row 1, column size: is not an integer: "12a"`},
		{resources.Documents, "size", "1e3", "", `row 1, column size: is not an integer: "1e3"`},
		{resources.Documents, "size", "12.0", "", `row 1, column size: is not an integer: "12.0"`},
		{resources.Documents, "size", "+5", "", `row 1, column size: is not an integer: "+5"`},
		{resources.Documents, "size", "1,000", "", `row 1, column size: is not an integer: "1,000"`},
		{resources.Documents, "size", long + "y", "", `row 1, column size: is not an integer: "` + strings.Repeat("x", 50) + `…"`},
		// Number
		{resources.Deals, "amount", "1.5e300", `{"amount":1.5e300}`, ""},
		{resources.Deals, "amount", "12345678901234567890.5", `{"amount":12345678901234567890.5}`, ""},
		{resources.Deals, "amount", "-0.50", `{"amount":-0.50}`, ""},
		{resources.Deals, "amount", "2E-3", `{"amount":2E-3}`, ""},
		{resources.Deals, "amount", "abc", "", `row 1, column amount: is not a number: "abc"`},
		{resources.Deals, "amount", ".5", "", `row 1, column amount: is not a number: ".5"`},
		{resources.Deals, "amount", "5.", "", `row 1, column amount: is not a number: "5."`},
		{resources.Deals, "amount", "NaN", "", `row 1, column amount: is not a number: "NaN"`},
		{resources.Deals, "amount", "1e400", "", `row 1, column amount: is not a finite number: "1e400"`},
		// Bool
		{resources.Workspaces, "isPrivate", "true", `{"isPrivate":true}`, ""},
		{resources.Workspaces, "isPrivate", "YES", `{"isPrivate":true}`, ""},
		{resources.Workspaces, "isPrivate", "1", `{"isPrivate":true}`, ""},
		{resources.Workspaces, "isPrivate", "False", `{"isPrivate":false}`, ""},
		{resources.Workspaces, "isPrivate", "no", `{"isPrivate":false}`, ""},
		{resources.Workspaces, "isPrivate", "0", `{"isPrivate":false}`, ""},
		{resources.Workspaces, "isPrivate", "maybe", "", `row 1, column isPrivate: is not a boolean (true, false, yes, no, 1 or 0): "maybe"`},
		// Strings and Refs
		{resources.Deals, "tags", "a; b ;; c ", `{"tags":["a","b","c"]}`, ""},
		{resources.Deals, "tags", `["a;b"," c ",""]`, `{"tags":["a;b"," c ",""]}`, ""},
		{resources.Deals, "tags", "; ;", `{"tags":[]}`, ""},
		{resources.Deals, "tags", "[1,2]", "", `row 1, column tags: is not a JSON array of strings: "[1,2]"`},
		{resources.Deals, "tags", "[unclosed", "", `row 1, column tags: is not a JSON array of strings: "[unclosed"`},
		{resources.People, "companyIds", "cmp_1;cmp_2", `{"companyIds":["cmp_1","cmp_2"]}`, ""},
		// Object, Struct, Structs
		{resources.Deals, "custom", `{"n": 1.5e300, "s": "a<b"}`, `{"custom":{"n":1.5e300,"s":"a<b"}}`, ""},
		{resources.Deals, "custom", "not json", "", `row 1, column custom: is not a JSON object: "not json"`},
		{resources.Deals, "custom", "[1]", "", `row 1, column custom: is not a JSON object: "[1]"`},
		{resources.Deals, "externalReference", `{"source":"crm","id":"7"}`, `{"externalReference":{"id":"7","source":"crm"}}`, ""},
		{resources.Deals, "externalReference", `"crm"`, "", `row 1, column externalReference: is not a JSON object: "\"crm\""`},
		{resources.Deals, "assignees", `[{"type":"person","id":"per_1"}]`, `{"assignees":[{"id":"per_1","type":"person"}]}`, ""},
		{resources.Deals, "assignees", `{"type":"person"}`, "", `row 1, column assignees: is not a JSON array of objects: "{\"type\":\"person\"}"`},
		{resources.Deals, "assignees", `[1]`, "", `row 1, column assignees: is not a JSON array of objects: "[1]"`},
		{resources.Scores, "elementScores", `[{"elementId":"e1","elementName":"Team","score":80}]`, `{"elementScores":[{"elementId":"e1","score":80}]}`, ""},
		// Texts are as they are; empty cells leave the field out
		{resources.Deals, "name", " =1+1, \"x\" ", `{"name":" =1+1, \"x\" "}`, ""},
		{resources.Deals, "stage", "tab\tquote\"back\\ctl\x01東", `{"stage":"tab\tquote\"back\\ctl\u0001東"}`, ""},
		// Invalid UTF-8 and a byte-order mark fail the row, naming the column
		{resources.Deals, "stage", "bad\xff東", "", "row 1, column stage: is not valid UTF-8; save the file as UTF-8"},
		{resources.Deals, "stage", "a\uFEFFb", "", "row 1, column stage: holds a byte-order mark (U+FEFF), which only the start of a file may hold (were files joined?); remove it"},
		// A cell escaped against formulas loses its first '
		{resources.Deals, "name", "'=1+1", `{"name":"=1+1"}`, ""},
		{resources.Deals, "name", "''=1+1", `{"name":"'=1+1"}`, ""},
		{resources.Deals, "name", "'\tx", `{"name":"\tx"}`, ""},
		{resources.Deals, "name", "'tis", `{"name":"'tis"}`, ""},
		{resources.Deals, "name", "'", `{"name":"'"}`, ""},
		{resources.Deals, "tags", "'-a; b", `{"tags":["-a","b"]}`, ""},
		{resources.Deals, "amount", "'-5", `{"amount":-5}`, ""},
		{resources.Deals, "closeDate", "2026-01-31", `{"closeDate":"2026-01-31"}`, ""},
		{resources.Deals, "closeDate", "not a date", `{"closeDate":"not a date"}`, ""}, // the decoder's to refuse
		{resources.Activities, "startedAt", "2026-01-31T09:30:00Z", `{"startedAt":"2026-01-31T09:30:00Z"}`, ""},
		{resources.Deals, "amount", "", `{}`, ""},
		{resources.Deals, "amount", "   ", `{}`, ""},
		{resources.Deals, "stage", "   ", `{}`, ""},
		{resources.Deals, "tags", "", `{}`, ""},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		_ = w.Write([]string{"id", tc.column})
		_ = w.Write([]string{"x_1", tc.cell})
		w.Flush()
		row := oneRow(t, tc.def, b.String(), bulk.Options{})
		name := fmt.Sprintf("%s.%s %q", tc.def.Name, tc.column, tc.cell)
		if tc.err != "" {
			var re *bulk.RowError
			if !errors.As(row.Err, &re) || re.Error() != tc.err || re.Row != 1 || re.Column != tc.column {
				t.Errorf("%s: error %v, want %s", name, row.Err, tc.err)
			}
			if row.Body != nil || !reflect.DeepEqual(row.Raw, []string{"x_1", tc.cell}) {
				t.Errorf("%s: body %s, raw %q", name, row.Body, row.Raw)
			}
			continue
		}
		if row.Err != nil || string(row.Body) != tc.body {
			t.Errorf("%s: body %s (error %v), want %s", name, row.Body, row.Err, tc.body)
		}
	}
}

func TestAVerbatimTextKeepsACellOfSpacesAndAnIntegerBeyondTwoToThe53IsTheDecodersToRefuse(t *testing.T) {
	t.Parallel()
	d := defs()[0] // companies
	row := oneRow(t, d, "canonicalName,sector\nAcme,\"  \"\n", bulk.Options{})
	if string(row.Body) != `{"canonicalName":"Acme","sector":"  "}` {
		t.Errorf("body %s", row.Body)
	}
	row = oneRow(t, resources.Documents, "name,size\nDeck,12345678901234567890\n", bulk.Options{})
	if _, err := resources.Documents.Decode(row.Body, true); err == nil || !strings.Contains(err.Error(), "size must be an integer from -9007199254740991") {
		t.Errorf("Decode(%s) = %v, want the decoder's bound", row.Body, err)
	}
}

func TestAStructIsBuiltFromItsSubfieldColumnsOrReadWhole(t *testing.T) {
	t.Parallel()
	d := defs()[0] // companies
	rows := readAll(t, []byte("canonicalName,location.city,location.country\n"+
		"A,Paris,France\n"+
		"B,,\n"+
		"C,,Italy\n"), bulk.Options{Format: bulk.CSV, Def: d})
	want := []string{
		`{"canonicalName":"A","location":{"city":"Paris","country":"France"}}`,
		`{"canonicalName":"B"}`,
		`{"canonicalName":"C","location":{"country":"Italy"}}`,
	}
	for i, row := range rows {
		if row.Err != nil || string(row.Body) != want[i] {
			t.Errorf("row %d: %s (%v), want %s", i+1, row.Body, row.Err, want[i])
		}
	}
	row := oneRow(t, d, "canonicalName,location\nA,\"{\"\"city\"\":\"\"Paris\"\"}\"\n", bulk.Options{})
	if string(row.Body) != `{"canonicalName":"A","location":{"city":"Paris"}}` {
		t.Errorf("whole location: %s", row.Body)
	}
	if got, err := d.Decode(row.Body, true); err != nil || got["location"].(map[string]any)["city"] != "Paris" {
		t.Errorf("Decode: %v, %v", got, err)
	}
}

func TestReadOnlyColumnsAreReadAsTheirImportRuleSays(t *testing.T) {
	t.Parallel()
	data := "id,name,createdAt,updatedAt,externalReference.source\ndeal_1,Big deal,2026-01-01T00:00:00.000Z,2026-01-01T00:00:00.000Z,crm\n"
	rd, err := bulk.NewReader(strings.NewReader(data), bulk.Options{Format: bulk.CSV, Def: resources.Deals}, bulk.Position{})
	if err != nil {
		t.Fatal(err)
	}
	if ig := rd.Ignored(); len(ig) != 3 || ig[0].Column != "id" || ig[1].Column != "createdAt" || ig[2].Column != "updatedAt" || ig[0].Reason == "" {
		t.Errorf("ignored columns %+v", ig)
	}
	row := oneRow(t, resources.Deals, data, bulk.Options{})
	if string(row.Body) != `{"name":"Big deal","externalReference":{"source":"crm"}}` {
		t.Errorf("body %s", row.Body)
	}
	row = oneRow(t, resources.Deals, data, bulk.Options{Keep: []string{"id"}})
	if string(row.Body) != `{"id":"deal_1","name":"Big deal","externalReference":{"source":"crm"}}` {
		t.Errorf("kept id: %s", row.Body)
	}
	// A company's externalReference is read-only, subfields and all: a
	// value fails the row, an empty cell is no value.
	row = oneRow(t, defs()[0], "canonicalName,externalReference.source,origin,employeeCount\nA,crm,user,12\n", bulk.Options{})
	var re *bulk.RowError
	if !errors.As(row.Err, &re) || re.Column != "externalReference.source" || !strings.Contains(re.Message, "read-only") {
		t.Errorf("a read-only value: %v", row.Err)
	}
	// A reconciled attribute and the origin are the body's, for the
	// company's service to take as an import's; the integer is checked.
	row = oneRow(t, defs()[0], "canonicalName,externalReference.source,origin,employeeCount\nA,,workflow,12\n", bulk.Options{})
	if row.Err != nil || string(row.Body) != `{"canonicalName":"A","origin":"workflow","employeeCount":12}` {
		t.Errorf("company: %s %v", row.Body, row.Err)
	}
	row = oneRow(t, defs()[0], "canonicalName,employeeCount\nA,ten\n", bulk.Options{})
	if !errors.As(row.Err, &re) || re.Column != "employeeCount" || !strings.Contains(re.Message, "not an integer") {
		t.Errorf("employeeCount ten: %v", row.Err)
	}
	// A derived value is for the written record to hold.
	row = oneRow(t, resources.Scores, "frameworkId,company,finalScore\nfw_1,cmp_1,4.25\n", bulk.Options{})
	if row.Err != nil || string(row.Body) != `{"frameworkId":"fw_1","company":"cmp_1"}` || string(row.Checks["finalScore"]) != "4.25" {
		t.Errorf("score: %s %s %v", row.Body, row.Checks, row.Err)
	}
	// Immutable fields are kept: the decoder decides.
	row = oneRow(t, resources.Lists, "name,resourceType\nWatch,deal\n", bulk.Options{})
	if string(row.Body) != `{"name":"Watch","resourceType":"deal"}` {
		t.Errorf("immutable: %s", row.Body)
	}
}

func TestAMappingRenamesAndSkipsColumns(t *testing.T) {
	t.Parallel()
	data := "Deal Name,Notes,Amount (USD),Source\nBig,ignore me,1200.50,crm\n"
	row := oneRow(t, resources.Deals, data, bulk.Options{Mapping: map[string]string{
		"Deal Name": "name", "Notes": "", "Amount (USD)": "amount", "Source": "externalReference.source", "Not in the file": "stage",
	}})
	if row.Err != nil || string(row.Body) != `{"name":"Big","amount":1200.50,"externalReference":{"source":"crm"}}` {
		t.Errorf("body %s (%v)", row.Body, row.Err)
	}
	if got := row.Raw; !reflect.DeepEqual(got, []string{"Big", "ignore me", "1200.50", "crm"}) {
		t.Errorf("raw %q", got)
	}
	// Coercion errors name the column as the file does.
	row = oneRow(t, resources.Deals, "Deal Name,Amount (USD)\nBig,lots\n", bulk.Options{Mapping: map[string]string{"Deal Name": "name", "Amount (USD)": "amount"}})
	if row.Err == nil || row.Err.Error() != `row 1, column Amount (USD): is not a number: "lots"` {
		t.Errorf("error %v", row.Err)
	}
}

func TestHeaderProblemsFailTheReadNamingTheColumn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		data    string
		mapping map[string]string
		want    string
	}{
		{"an unknown column", "name,Colour\nx,red\n", nil,
			`column "Colour" of the header names no field of deals; map it to a field, or to "" to skip it (fields: id, name, companyId, stage, status, amount, currency, round, closeDate, assignees, externalId, externalReference, externalReference.source, externalReference.id, custom, tags, createdAt, updatedAt)`},
		{"a mapping to no field", "Deal,x\n", map[string]string{"Deal": "nmae"},
			`mapping of column "Deal" is "nmae", which is not a field of deals (fields: id, name, companyId, stage, status, amount, currency, round, closeDate, assignees, externalId, externalReference, externalReference.source, externalReference.id, custom, tags, createdAt, updatedAt)`},
		{"a mapping to no subfield", "Deal\nx\n", map[string]string{"Deal": "externalReference.url"}, `mapping of column "Deal" is "externalReference.url"`},
		{"a column twice", "name,amount,name\n", nil, `columns "name" and "name" both set name; map one of them to "" to skip it`},
		{"two columns mapped to one field", "Title,name\n", map[string]string{"Title": "name"}, `columns "Title" and "name" both set name`},
		{"a Struct and its subfield", "externalReference,externalReference.id\n", nil, `columns "externalReference" and "externalReference.id" both set externalReference`},
		{"an unnamed column", "name,,amount\n", nil, `column 2 of the header has no name; name the field it holds, or map "" to "" to skip it`},
		{"an empty file", "", nil, "the file is empty; a CSV file starts with a header row naming the fields"},
		{"blank lines only", "\n\n\r\n", nil, "the file is empty"},
		{"a header that is not CSV", "name,\"amount\n", nil, "the header row is not valid CSV"},
	}
	for _, tc := range tests {
		_, err := bulk.NewReader(strings.NewReader(tc.data), bulk.Options{Format: bulk.CSV, Def: resources.Deals, Mapping: tc.mapping}, bulk.Position{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %s", tc.name, err, tc.want)
		}
	}
	// An unnamed column may be skipped, and header names are trimmed.
	row := oneRow(t, resources.Deals, " name ,\nx,y\n", bulk.Options{Mapping: map[string]string{"": ""}})
	if string(row.Body) != `{"name":"x"}` {
		t.Errorf("body %s", row.Body)
	}
}

func TestCSVRowsSkipBlankLinesAndABOMAndReportBadRowsAndGoOn(t *testing.T) {
	t.Parallel()
	data := "\ufeffname,stage,tags\r\n" +
		"\r\n" +
		"one,\"multi\nline\",a;b\r\n" +
		",,\n" +
		"two,x\n" + // too few cells
		"three,x,y,z\n" + // too many
		"four,a\"b,c\n" + // a bare quote
		"\n\n" +
		"five,\"x\"y,c\n" + // a stray quote
		"six,\"a, \"\"quoted\"\"\",\n"
	rows := readAll(t, []byte(data), bulk.Options{Format: bulk.CSV, Def: resources.Deals})
	want := []struct {
		body, err string
		raw       []string
	}{
		{`{"name":"one","stage":"multi\nline","tags":["a","b"]}`, "", []string{"one", "multi\nline", "a;b"}},
		{"", "row 2: has 2 cells; the header has 3", []string{"two", "x"}},
		{"", "row 3: has 4 cells; the header has 3", []string{"three", "x", "y", "z"}},
		{"", "row 4, column stage: has a quote inside a cell that is not quoted; quote the cell and double the quotes inside it", []string{`four,a"b,c`}},
		{"", "row 5, column stage: has a stray quote in a quoted cell; double the quotes inside quoted cells", []string{`five,"x"y,c`}},
		{`{"name":"six","stage":"a, \"quoted\""}`, "", []string{"six", `a, "quoted"`, ""}},
	}
	if len(rows) != len(want) {
		t.Fatalf("read %d rows, want %d", len(rows), len(want))
	}
	for i, row := range rows {
		w := want[i]
		errText := ""
		if row.Err != nil {
			errText = row.Err.Error()
		}
		if row.Number != int64(i+1) || string(row.Body) != w.body || errText != w.err || !reflect.DeepEqual(row.Raw, w.raw) {
			t.Errorf("row %d: number %d, body %s, error %q, raw %q; want body %s, error %q, raw %q",
				i+1, row.Number, row.Body, errText, row.Raw, w.body, w.err, w.raw)
		}
	}
}

func TestAQuoteNeverClosedOrARowOverAMebibyteFailsTheRead(t *testing.T) {
	t.Parallel()
	r, err := bulk.NewReader(strings.NewReader("name,stage\none,x\ntwo,\"never closed\nthree,x\nfour,x\n"),
		bulk.Options{Format: bulk.CSV, Def: resources.Deals}, bulk.Position{})
	if err != nil {
		t.Fatal(err)
	}
	if row, err := r.Next(); err != nil || row.Err != nil {
		t.Fatalf("row 1: %v %v", err, row.Err)
	}
	_, err = r.Next()
	if err == nil || err.Error() != "row 2 opens a quote that is never closed, so the rest of the file cannot be read" {
		t.Errorf("error %v", err)
	}
	if _, again := r.Next(); again != err {
		t.Errorf("the failure does not stay: %v", again)
	}
	// On the last line, an unclosed quote is that row's error.
	rows := readAll(t, []byte("name,stage\none,\"x"), bulk.Options{Format: bulk.CSV, Def: resources.Deals})
	if len(rows) != 1 || rows[0].Err == nil {
		t.Errorf("rows %+v", rows)
	}

	// A row over 1 MiB fails, and the read goes on; one that never ends
	// (an unclosed quote) fails the read.
	huge := "name,stage\n\nbig,\"" + strings.Repeat("x", bulk.MaxRowBytes+10) + "\"\nnext,x\n"
	rows = readAll(t, []byte(huge), bulk.Options{Format: bulk.CSV, Def: resources.Deals})
	if len(rows) != 2 || rows[0].Err == nil || rows[0].Err.Error() != "row 1: is longer than 1 MiB (1048576 bytes)" || rows[1].Err != nil {
		t.Errorf("a long row: %d rows, %v", len(rows), rows[0].Err)
	}
	unclosed := "name,stage\nbig,\"x\n" + strings.Repeat("next,x\n", bulk.MaxRowBytes/5)
	r, err = bulk.NewReader(strings.NewReader(unclosed), bulk.Options{Format: bulk.CSV, Def: resources.Deals}, bulk.Position{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil || err.Error() != "row 1 is longer than 1 MiB; is a quote missing? The rest of the file cannot be read" {
		t.Errorf("error %v", err)
	}
}

func TestNDJSONLinesAreRenamedAndFilteredButKeptAsSent(t *testing.T) {
	t.Parallel()
	long := `{"name":"` + strings.Repeat("y", bulk.MaxRowBytes) + `"}`
	data := "\ufeff" + `{"id":"deal_1","title":"One","amount":1.5e300,"createdAt":"x","junk":1,"notes":"skip","externalReference.source":"crm"}` + "\r\n" +
		"\n   \n" +
		`[1,2]` + "\n" +
		`{"name":"Two","amount":"12"}` + "\n" +
		long + "\n" +
		`{"name": "Three", "assignees": [{"type":"person","id":"per_1"}], "externalReference": {"id":"9"}, "Source": "erp"}` + "\n" +
		`not json` + "\n" +
		`{"name":"Four"} {"name":"Five"}` + "\n" +
		`{"name":"Six"}`
	opt := bulk.Options{Format: bulk.NDJSON, Def: resources.Deals, Mapping: map[string]string{"title": "name", "notes": "", "Source": "externalReference.source"}}
	rows := readAll(t, []byte(data), opt)
	want := []struct{ body, err string }{
		{`{"amount":1.5e300,"externalReference":{"source":"crm"},"junk":1,"name":"One"}`, ""},
		{"", `row 2: is not a JSON object: "[1,2]"`},
		{`{"amount":"12","name":"Two"}`, ""},
		{"", "row 4: is longer than 1 MiB (1048576 bytes)"},
		{`{"assignees":[{"id":"per_1","type":"person"}],"externalReference":{"id":"9","source":"erp"},"name":"Three"}`, ""},
		{"", `row 6: is not a JSON object: "not json"`},
		{"", `row 7: is not a JSON object: "{\"name\":\"Four\"} {\"name\":\"Five\"}"`},
		{`{"name":"Six"}`, ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("read %d rows, want %d", len(rows), len(want))
	}
	for i, row := range rows {
		errText := ""
		if row.Err != nil {
			errText = row.Err.Error()
		}
		if row.Number != int64(i+1) || string(row.Body) != want[i].body || errText != want[i].err || len(row.Raw) != 1 {
			t.Errorf("row %d: number %d, body %s, error %q; want %s, %q", i+1, row.Number, row.Body, errText, want[i].body, want[i].err)
		}
	}
	if rows[0].Raw[0] != `{"id":"deal_1","title":"One","amount":1.5e300,"createdAt":"x","junk":1,"notes":"skip","externalReference.source":"crm"}` {
		t.Errorf("raw line %q", rows[0].Raw[0])
	}
	// The decoder has the last word on what is kept as sent.
	if _, err := resources.Deals.Decode(rows[0].Body, true); err == nil || !strings.Contains(err.Error(), "junk") {
		t.Errorf("Decode of an unknown key: %v", err)
	}
	if _, err := resources.Deals.Decode(rows[2].Body, true); err == nil || !strings.Contains(err.Error(), "amount must be a number") {
		t.Errorf("Decode of a string amount: %v", err)
	}
	// Keep keeps a read-only key; two keys mapped to one field are refused.
	rows = readAll(t, []byte(`{"id":"deal_1","name":"x"}`), bulk.Options{Format: bulk.NDJSON, Def: resources.Deals, Keep: []string{"id"}})
	if string(rows[0].Body) != `{"id":"deal_1","name":"x"}` {
		t.Errorf("kept id: %s", rows[0].Body)
	}
	_, err := bulk.NewReader(strings.NewReader(""), bulk.Options{Format: bulk.NDJSON, Def: resources.Deals,
		Mapping: map[string]string{"a": "name", "b": "name"}}, bulk.Position{})
	if err == nil || err.Error() != `mapping maps both "a" and "b" to name; map each field once` {
		t.Errorf("error %v", err)
	}
}

// readFrom reads every row of data from pos on, with the positions after
// each row.
func readFrom(t *testing.T, data []byte, opt bulk.Options, pos bulk.Position) ([]bulk.Row, []bulk.Position) {
	t.Helper()
	// The position is stored between runs as JSON.
	var stored bulk.Position
	if err := json.Unmarshal(mustJSON(t, pos), &stored); err != nil {
		t.Fatal(err)
	}
	r, err := bulk.NewReader(bytes.NewReader(data[stored.Offset:]), opt, stored)
	if err != nil {
		t.Fatalf("NewReader at %+v: %v", stored, err)
	}
	positions := []bulk.Position{r.Position()}
	var rows []bulk.Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, positions
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		rows = append(rows, row)
		positions = append(positions, r.Position())
	}
}

func TestAReadResumedAtAnyRowBoundaryReadsTheSameRowsAsAnUninterruptedOne(t *testing.T) {
	t.Parallel()
	files := []struct {
		format bulk.Format
		data   string
	}{
		{bulk.CSV, "\ufeffname,stage,tags,amount\r\n" +
			"\r\n" +
			"one,\"multi\r\nline, \"\"quoted\"\"\",a;b,1.5e300\r\n" +
			",,,\n" +
			"two,\"\n\n\",\"[\"\"x;y\"\"]\",12345678901234567890\n" +
			"three,x\n" +
			"four,a\"b,c,1\n" +
			"\n\n" +
			"five,Société 東京,,abc\n" +
			"six,\"a\nb\",,\n" +
			"\n"},
		{bulk.CSV, "name\nlast without line feed"},
		{bulk.NDJSON, "\ufeff" + `{"name":"one","amount":1.5e300}` + "\r\n" +
			"\n  \n" +
			`{"name":"two\nescaped"}` + "\n" +
			"not json\n" +
			`{"name":"` + strings.Repeat("z", bulk.MaxRowBytes) + `"}` + "\n" +
			`{"name":"Société 東京"}` + "\n" +
			`{"name":"last"}`},
	}
	for _, file := range files {
		opt := bulk.Options{Format: file.format, Def: resources.Deals}
		data := []byte(file.data)
		rows, positions := readFrom(t, data, opt, bulk.Position{})
		if len(rows) < 1 {
			t.Fatalf("%s: only %d rows", file.format, len(rows))
		}
		last := positions[len(positions)-1]
		if last.Row != int64(len(rows)) {
			t.Errorf("%s: last position %+v after %d rows", file.format, last, len(rows))
		}
		for k, pos := range positions {
			if pos.Row != int64(k) || file.format == bulk.CSV && len(pos.Header) == 0 || file.format == bulk.NDJSON && pos.Header != nil {
				t.Errorf("%s: position %d is %+v", file.format, k, pos)
			}
			more, morePositions := readFrom(t, data, opt, pos)
			if !reflect.DeepEqual(more, rows[k:]) && !(len(more) == 0 && k == len(rows)) {
				t.Errorf("%s: resumed after row %d (%+v): rows\n%+v\nwant\n%+v", file.format, k, pos, more, rows[k:])
			}
			if !reflect.DeepEqual(morePositions, positions[k:]) {
				t.Errorf("%s: resumed after row %d: positions %+v, want %+v", file.format, k, morePositions, positions[k:])
			}
		}
	}
	// Resuming a CSV file needs its header.
	if _, err := bulk.NewReader(strings.NewReader("x\n"), bulk.Options{Format: bulk.CSV, Def: resources.Deals}, bulk.Position{Offset: 10, Row: 1}); err == nil {
		t.Error("resumed without the header")
	}
}

// dealRows writes a CSV file of n deals to w.
func dealRows(w io.Writer, n int) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"id", "name", "stage", "amount", "currency", "closeDate", "tags", "custom", "externalReference.source", "createdAt"}); err != nil {
		return err
	}
	note := strings.Repeat("a long note, with \"quotes\" and a line\nbreak; ", 8)
	for i := 1; i <= n; i++ {
		err := cw.Write([]string{fmt.Sprintf("deal_%026d", i), fmt.Sprintf("Deal %d, \"the big one\"", i), "diligence",
			fmt.Sprintf("%d.25", i), "USD", "2026-01-31", "fintech; saas", fmt.Sprintf(`{"n":%d,"note":%q}`, i, note), "crm", "2026-01-01T00:00:00.000Z"})
		if err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func TestAHundredThousandRowFileIsStreamedNotHeldInMemory(t *testing.T) {
	const n = 100_000
	pr, pw := io.Pipe()
	var written countingWriter
	go func() { pw.CloseWithError(dealRows(io.MultiWriter(pw, &written), n)) }()
	r, err := bulk.NewReader(pr, bulk.Options{Format: bulk.CSV, Def: resources.Deals}, bulk.Position{})
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	var ms runtime.MemStats
	var count int64
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		count++
		if row.Err != nil || row.Number != count {
			t.Fatalf("row %d: %v", row.Number, row.Err)
		}
		if count%10_000 == 0 {
			if _, err := resources.Deals.Decode(row.Body, true); err != nil {
				t.Fatalf("row %d: Decode(%s): %v", count, row.Body, err)
			}
			// What the reader holds: the live heap, after a collection
			// (HeapAlloc alone counts garbage the collector has not yet
			// reached, up to twice the live heap and more on a busy machine).
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if count != n || r.Position().Row != n || r.Position().Offset != written.n {
		t.Errorf("read %d rows, position %d/%d; want %d rows, offset %d", count, r.Position().Row, r.Position().Offset, n, written.n)
	}
	// The file is about 60 MB; what the reader holds is a row or so.
	t.Logf("peak heap %d bytes, file %d bytes", peak, written.n)
	if limit := uint64(written.n / 4); peak > limit {
		t.Errorf("heap reached %d bytes reading a %d-byte file; want under %d", peak, written.n, limit)
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func BenchmarkReadCSV(b *testing.B) {
	var buf bytes.Buffer
	if err := dealRows(&buf, 10_000); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := bulk.NewReader(bytes.NewReader(data), bulk.Options{Format: bulk.CSV, Def: resources.Deals}, bulk.Position{})
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil || row.Err != nil {
				b.Fatal(err, row.Err)
			}
			rows++
		}
		if rows != 10_000 {
			b.Fatalf("%d rows", rows)
		}
	}
}
