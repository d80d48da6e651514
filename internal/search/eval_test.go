package search_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/search"
)

// listSchema is workspaces with an id, a nested field and a keyword field
// under an array of objects.
var listSchema = &search.Schema{Resource: "workspaces", Fields: append(slices.Clone(workspaces.Fields),
	search.Field{Name: "id", Type: search.Keyword, Sortable: true},
	search.Field{Name: "location.city", Type: search.Keyword, Sortable: true},
	search.Field{Name: "contacts.email", Type: search.Keywords},
)}

func TestParseConditionTypesEveryOperatorsValueAsTheSearchBodyDoes(t *testing.T) {
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	at := time.Date(2024, 2, 29, 10, 0, 0, 500_000_000, time.UTC)
	// good: a value of each field's type written as text, and what it is.
	good := map[string]struct {
		raw  string
		want any
	}{
		"name":      {"Acme Rockets", "Acme Rockets"},
		"source":    {"", ""},
		"tags":      {"fin tech", "fin tech"},
		"isPrivate": {"true", true},
		"headcount": {"-42", int64(-42)},
		"score":     {"-1.5e2", -150.0},
		"foundedOn": {"2024-02-29", day},
		"createdAt": {"2024-02-29T12:00:00.5+02:00", at},
	}
	// bad: a value that does not fit the type, and the message.
	bad := map[string][2]string{
		"name":      {strings.Repeat("x", 1001), "must be at most 1000 bytes"},
		"source":    {"\xff", "must be valid UTF-8"},
		"tags":      {strings.Repeat("é", 501), "must be at most 1000 bytes"},
		"isPrivate": {"True", `must be true or false for isPrivate, not "True"`},
		"headcount": {"4.0", `must be an integer for headcount, not "4.0"`},
		"score":     {"0x10", `must be a number for score, not "0x10"`},
		"foundedOn": {"2024-02-30", `must be a date (YYYY-MM-DD) for foundedOn, not "2024-02-30"`},
		"createdAt": {"2024-02-29", `must be a date-time (RFC 3339) for createdAt, not "2024-02-29"`},
	}
	applies := func(f search.Field, op search.Op) bool {
		switch op {
		case search.Gt, search.Gte, search.Lt, search.Lte:
			return f.Type == search.Integer || f.Type == search.Number || f.Type == search.Date || f.Type == search.DateTime
		case search.Contains:
			return f.Type == search.Text || f.Type == search.Keyword || f.Type == search.Keywords
		case search.StartsWith:
			return f.Type == search.Text || f.Type == search.Keyword
		}
		return true
	}
	cases := 0
	for _, f := range workspaces.Fields {
		for _, op := range search.Ops {
			param := "filter[" + f.Name + "][" + string(op) + "]"
			cases++
			g, b := good[f.Name], bad[f.Name]
			if op == search.Exists {
				g.raw, g.want, b = "false", false, [2]string{"1", `must be true or false for exists, not "1"`}
			}
			if op == search.In || op == search.Nin {
				g.raw, g.want = g.raw+","+g.raw, []any{g.want, g.want}
				b[0], b[1] = g.raw+","+b[0], b[1]+" (value 3 of 3)"
			}
			p, err := search.ParseCondition(workspaces, param, f.Name, op, g.raw)
			if !applies(f, op) {
				kind := "matched"
				if op != search.Contains && op != search.StartsWith {
					kind = "compared"
				}
				wantQueryError(t, err, param, "cannot be "+kind+" with "+string(op)+": "+f.Name+" is a ")
				continue
			}
			if err != nil {
				t.Errorf("%s=%q: %v", param, g.raw, err)
			} else if p.Field != f.Name || p.Op != op || !reflect.DeepEqual(p.Value, g.want) {
				t.Errorf("%s=%q: %+v, want the value %#v", param, g.raw, p, g.want)
			}
			_, err = search.ParseCondition(workspaces, param, f.Name, op, b[0])
			wantQueryError(t, err, param, b[1])
		}
	}
	if cases != len(workspaces.Fields)*len(search.Ops) {
		t.Fatalf("%d cases", cases)
	}
}

func TestParseConditionRefusesWhatNoTypeTakes(t *testing.T) {
	for _, c := range []struct{ field, op, raw, want string }{
		{"nope", "eq", "x", `"nope" is not a filterable field of workspaces; use one of name, source, isPrivate, headcount, score, foundedOn, createdAt, tags`},
		{"name", "like", "x", `"like" is not an operator; use one of eq, ne, in, nin, gt, gte, lt, lte, contains, startsWith, exists`},
		{"name", "gt", "m", "cannot be compared with gt: name is a string field; gt applies to numbers and dates"},
		{"isPrivate", "contains", "t", "cannot be matched with contains: isPrivate is a boolean field; contains applies to strings"},
		{"tags", "startsWith", "t", "cannot be matched with startsWith: tags is a string field"},
		{"headcount", "eq", "", `must be an integer for headcount, not ""`},
		{"headcount", "eq", " 4", `must be an integer for headcount, not " 4"`},
		{"headcount", "eq", "99999999999999999999", `must be an integer for headcount, not "99999999999999999999"`},
		{"score", "gte", "abc", `must be a number for score, not "abc"`},
		{"score", "gte", "NaN", `must be a number for score, not "NaN"`},
		{"score", "gte", "Inf", `must be a number for score, not "Inf"`},
		{"score", "gte", "1e999", `must be a number for score, not "1e999"`},
		{"score", "gte", "1_000", `must be a number for score, not "1_000"`},
		{"headcount", "in", strings.Repeat("1,", search.MaxInValues) + "1", "must hold 1 to 100 comma-separated values for in, not 101"},
		{"headcount", "nin", "1,,2", `must be an integer for headcount, not "" (value 2 of 3)`},
		{"foundedOn", "lt", strings.Repeat("9", 100), `must be a date (YYYY-MM-DD) for foundedOn, not "` + strings.Repeat("9", 64) + `"…`},
		{"source", "exists", "", `must be true or false for exists, not ""`},
	} {
		param := "filter[" + c.field + "][" + c.op + "]"
		p, err := search.ParseCondition(workspaces, param, c.field, search.Op(c.op), c.raw)
		if p != nil {
			t.Errorf("%s=%q parsed to %+v", param, c.raw, p)
		}
		wantQueryError(t, err, param, c.want)
	}
	// Numbers as people write them.
	for raw, want := range map[string]float64{"1": 1, "+2.5": 2.5, ".5": 0.5, "5.": 5, "-0": 0, "1E3": 1000, "007": 7} {
		p, err := search.ParseCondition(workspaces, "filter[score]", "score", search.Eq, raw)
		if err != nil || p.Value != want {
			t.Errorf("score=%q: %v, %v; want %v", raw, p, err, want)
		}
	}
}

func wantQueryError(t *testing.T, err error, param, want string) {
	t.Helper()
	var inv *apperr.InvalidError
	if !errors.As(err, &inv) || inv.In != apperr.InQuery || inv.Field != param || !strings.Contains(inv.Message, want) {
		t.Errorf("%s: error %v, want a query error of %s saying %q", param, err, param, want)
		return
	}
	if strings.Contains(inv.Message, param) {
		t.Errorf("%s: the message repeats the parameter: %s", param, err)
	}
}

func TestDecodeAndParseConditionGiveTheSamePredicate(t *testing.T) {
	for _, c := range []struct{ body, field, op, raw string }{
		{`{"field":"headcount","operator":"gte","value":10}`, "headcount", "gte", "10"},
		{`{"field":"score","operator":"in","value":[1.5,-2]}`, "score", "in", "1.5,-2"},
		{`{"field":"createdAt","operator":"lt","value":"2024-01-01T00:00:00+01:00"}`, "createdAt", "lt", "2024-01-01T00:00:00+01:00"},
		{`{"field":"foundedOn","operator":"eq","value":"2024-01-01"}`, "foundedOn", "eq", "2024-01-01"},
		{`{"field":"tags","operator":"contains","value":"b2b"}`, "tags", "contains", "b2b"},
		{`{"field":"isPrivate","operator":"ne","value":true}`, "isPrivate", "ne", "true"},
		{`{"field":"name","operator":"exists","value":false}`, "name", "exists", "false"},
	} {
		r := decode(t, `{"filters":{"and":[`+c.body+`]}}`)
		p, err := search.ParseCondition(workspaces, "filter", c.field, search.Op(c.op), c.raw)
		if err != nil || !reflect.DeepEqual(p, r.Filter.And[0]) {
			t.Errorf("%s: %+v (%v), want %+v", c.body, p, err, r.Filter.And[0])
		}
	}
}

// record decodes a record as the engines and lists do.
func record(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var rec map[string]any
	if err := dec.Decode(&rec); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return rec
}

func cond(field string, op search.Op, v any) *search.Predicate {
	return &search.Predicate{Field: field, Op: op, Value: v}
}

func TestMatchDecidesEveryOperatorAsTheEngineDoes(t *testing.T) {
	long := strings.Repeat("ab", search.MaxTermLength/2) + "c" // one byte too long to be an exact value
	longJSON, _ := json.Marshal(long)
	rec := record(t, `{"id":"w1","name":"Acme Rockets\nand Launch Pads","source":"","isPrivate":true,"headcount":12,"score":-0,
		"foundedOn":"2020-02-29","createdAt":"2024-05-01T10:00:00.250+02:00","tags":["Fin","b2b"],
		"location":{"city":"Oslo"},"contacts":[{"email":"a@b.co"},{"email":null},{}],"body":`+string(longJSON)+`}`)
	schema := &search.Schema{Resource: "w", Fields: append(slices.Clone(listSchema.Fields), search.Field{Name: "body", Type: search.Text})}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	moment := func(s string) time.Time { d, _ := time.Parse(time.RFC3339Nano, s); return d.UTC() }
	for _, c := range []struct {
		p    *search.Predicate
		want bool
	}{
		{cond("name", search.Eq, "Acme Rockets\nand Launch Pads"), true},
		{cond("name", search.Eq, "acme rockets\nand launch pads"), false}, // eq is exact
		{cond("name", search.Ne, "Acme"), true},
		{cond("name", search.Contains, "ROCKETS\nAND"), true}, // across the newline
		{cond("name", search.Contains, "launch pads"), true},  // on the second line
		{cond("name", search.Contains, "rockets and"), false},
		{cond("name", search.StartsWith, "acme r"), true},
		{cond("name", search.StartsWith, "and"), false}, // a line is not the value's start
		{cond("name", search.Contains, ""), true},
		{cond("source", search.Eq, ""), true}, // an empty string is a value
		{cond("source", search.Exists, true), true},
		{cond("source", search.Contains, ""), true},
		{cond("source", search.StartsWith, ""), true},
		{cond("source", search.Contains, "a"), false},
		{cond("nowhere", search.Exists, false), false}, // not a field: holds for no record
		{cond("nowhere", search.Ne, "x"), false},
		{cond("isPrivate", search.Eq, true), true},
		{cond("isPrivate", search.Ne, false), true},
		{cond("headcount", search.In, []any{int64(1), int64(12)}), true},
		{cond("headcount", search.Nin, []any{int64(12)}), false},
		{cond("headcount", search.Gt, int64(11)), true},
		{cond("headcount", search.Gte, int64(12)), true},
		{cond("headcount", search.Lt, int64(12)), false},
		{cond("headcount", search.Lte, int64(12)), true},
		{cond("score", search.Eq, 0.0), true}, // -0 is 0
		{cond("score", search.Lt, 0.0), false},
		{cond("score", search.Gte, math.Copysign(0, -1)), true},
		{cond("foundedOn", search.Eq, day("2020-02-29")), true},
		{cond("foundedOn", search.Gt, day("2020-02-28")), true},
		{cond("createdAt", search.Eq, moment("2024-05-01T08:00:00.250Z")), true},
		{cond("createdAt", search.Eq, moment("2024-05-01T08:00:00.2509Z")), true}, // milliseconds, as indexed
		{cond("createdAt", search.Gt, moment("2024-05-01T08:00:00.250Z")), false},
		{cond("createdAt", search.Lt, moment("2024-05-01T08:00:00.251Z")), true},
		{cond("tags", search.Eq, "b2b"), true},
		{cond("tags", search.Contains, "fin"), false}, // an element, exactly
		{cond("tags", search.Contains, "Fin"), true},
		{cond("tags", search.Ne, "Fin"), false},
		{cond("tags", search.Nin, []any{"x", "y"}), true},
		{cond("location.city", search.Eq, "Oslo"), true},
		{cond("location.city", search.StartsWith, "OS"), true},
		{cond("contacts.email", search.Eq, "a@b.co"), true},
		{cond("contacts.email", search.Exists, true), true},
		{cond("body", search.Exists, true), true},
		{cond("body", search.Eq, long), false}, // too long to be an exact value
		{cond("body", search.Contains, "abab"), false},
		{cond("body", search.StartsWith, ""), false},
		{cond("body", search.Ne, long), true},
	} {
		if got := search.Match(schema, c.p, rec); got != c.want {
			t.Errorf("%s %s %#v: %v, want %v", c.p.Field, c.p.Op, c.p.Value, got, c.want)
		}
	}
	// A record without the fields: ne and nin hold, comparisons do not.
	empty := record(t, `{"id":"w2","source":null,"tags":[],"location":{},"contacts":[]}`)
	for _, c := range []struct {
		p    *search.Predicate
		want bool
	}{
		{cond("source", search.Ne, "x"), true},
		{cond("source", search.Nin, []any{"x"}), true},
		{cond("source", search.Exists, false), true},
		{cond("tags", search.Exists, false), true}, // an empty array holds no value
		{cond("location.city", search.Exists, false), true},
		{cond("contacts.email", search.Exists, false), true},
		{cond("headcount", search.Lt, int64(100)), false},
		{cond("headcount", search.Ne, int64(100)), true},
		{cond("isPrivate", search.Eq, false), false},
		{cond("source", search.StartsWith, ""), false},
	} {
		if got := search.Match(schema, c.p, empty); got != c.want {
			t.Errorf("empty record: %s %s %#v: %v, want %v", c.p.Field, c.p.Op, c.p.Value, got, c.want)
		}
	}
	// Numbers decoded as float64 are numbers all the same; a value that is
	// not of the field's type is no value of it, yet the field exists.
	odd := map[string]any{"headcount": 12.0, "score": "3", "foundedOn": "yesterday", "isPrivate": "true", "name": 5.0}
	for _, c := range []struct {
		p    *search.Predicate
		want bool
	}{
		{cond("headcount", search.Eq, int64(12)), true},
		{cond("score", search.Eq, 3.0), false},
		{cond("score", search.Exists, true), true},
		{cond("foundedOn", search.Lt, day("2100-01-01")), false},
		{cond("isPrivate", search.Eq, true), false},
		{cond("name", search.Ne, "5"), true},
		{cond("name", search.Exists, true), true},
	} {
		if got := search.Match(schema, c.p, odd); got != c.want {
			t.Errorf("odd record: %s %s %#v: %v, want %v", c.p.Field, c.p.Op, c.p.Value, got, c.want)
		}
	}
}

func TestMatchCombinesAndAndOr(t *testing.T) {
	rec := record(t, `{"name":"Acme","headcount":5}`)
	yes, no := cond("name", search.Eq, "Acme"), cond("headcount", search.Gt, int64(5))
	for _, c := range []struct {
		p    *search.Predicate
		want bool
	}{
		{nil, true},
		{&search.Predicate{}, true}, // no condition: holds
		{&search.Predicate{And: []*search.Predicate{yes, no}}, false},
		{&search.Predicate{Or: []*search.Predicate{no, yes}}, true},
		{&search.Predicate{Or: []*search.Predicate{no}}, false},
		{&search.Predicate{Field: "name", Op: search.Eq, Value: "Acme", Or: []*search.Predicate{no}}, false},
		{&search.Predicate{Field: "name", Op: search.Eq, Value: "Acme", And: []*search.Predicate{yes}, Or: []*search.Predicate{no, {And: []*search.Predicate{yes}}}}, true},
	} {
		if got := search.Match(listSchema, c.p, rec); got != c.want {
			t.Errorf("%+v: %v, want %v", c.p, got, c.want)
		}
	}
}

func TestValuesAtWalksObjectsAndArraysLeavingNullsOut(t *testing.T) {
	rec := record(t, `{"a":{"b":[{"c":1},{"c":null},{"c":[2,null,3]},{},[{"c":4}]]},"e":[],"f":null,"g":""}`)
	for path, want := range map[string][]any{
		"a.b.c": {json.Number("1"), json.Number("2"), json.Number("3"), json.Number("4")},
		"e":     nil, "f": nil, "g": {""}, "a.x": nil, "g.h": nil,
	} {
		if got := search.ValuesAt(rec, path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, want %#v", path, got, want)
		}
	}
}

func TestCompareOrdersEachTypeWithMissingValuesWhereTheKeySays(t *testing.T) {
	recs := []map[string]any{}
	for _, s := range []string{
		`{"id":"a1","name":"beta","headcount":3,"isPrivate":true,"foundedOn":"2020-01-02","location":{"city":"Oslo"}}`,
		`{"id":"a2","name":"Alpha","headcount":-1.5,"isPrivate":false,"foundedOn":"2019-12-31","location":{"city":""}}`,
		`{"id":"a3","name":"alpha","headcount":null,"foundedOn":null,"location":null}`,
		`{"id":"A4","name":"","headcount":10,"isPrivate":true,"foundedOn":"2020-01-02","location":{"city":"bergen"}}`,
	} {
		recs = append(recs, record(t, s))
	}
	order := func(keys ...search.SortKey) string {
		sorted := slices.Clone(recs)
		slices.SortStableFunc(sorted, func(a, b map[string]any) int { return search.Compare(listSchema, keys, a, b) })
		var ids []string
		for _, r := range sorted {
			ids = append(ids, r["id"].(string))
		}
		return strings.Join(ids, " ")
	}
	id := search.SortKey{Field: "id"}
	for _, c := range []struct {
		keys []search.SortKey
		want string
	}{
		{[]search.SortKey{{Field: "name"}, id}, "a2 a3 a1 A4"}, // lower case; "" sorts as missing, last
		{[]search.SortKey{{Field: "name", Desc: true}, id}, "a1 a2 a3 A4"},
		{[]search.SortKey{{Field: "name", MissingSmallest: true}, id}, "A4 a2 a3 a1"},
		{[]search.SortKey{{Field: "name", Desc: true, MissingSmallest: true}, {Field: "id", Desc: true}}, "a1 a3 a2 A4"},
		{[]search.SortKey{{Field: "headcount"}}, "a2 a1 A4 a3"},
		{[]search.SortKey{{Field: "headcount", Desc: true}}, "A4 a1 a2 a3"},
		{[]search.SortKey{{Field: "headcount", MissingSmallest: true}}, "a3 a2 a1 A4"},
		{[]search.SortKey{{Field: "headcount", Desc: true, MissingSmallest: true}}, "A4 a1 a2 a3"},
		{[]search.SortKey{{Field: "isPrivate"}, id}, "a2 A4 a1 a3"}, // false < true; ids byte-wise: "A4" < "a1"
		{[]search.SortKey{{Field: "isPrivate", MissingSmallest: true}, {Field: "id", Desc: true}}, "a3 a2 a1 A4"},
		{[]search.SortKey{{Field: "foundedOn", Desc: true}, id}, "A4 a1 a2 a3"},
		{[]search.SortKey{{Field: "location.city"}, id}, "A4 a1 a2 a3"},
		{[]search.SortKey{{Field: "location.city", MissingSmallest: true}, id}, "a2 a3 A4 a1"},
		{[]search.SortKey{{Field: "nowhere"}, id}, "A4 a1 a2 a3"},
		{nil, "a1 a2 a3 A4"}, // no key: every record ties
	} {
		if got := order(c.keys...); got != c.want {
			t.Errorf("%+v: %s, want %s", c.keys, got, c.want)
		}
	}
	// Numbers decoded as float64 compare as json.Numbers do; -0 is 0.
	a, b := map[string]any{"headcount": math.Copysign(0, -1)}, record(t, `{"headcount":0}`)
	if c := search.Compare(listSchema, []search.SortKey{{Field: "headcount"}}, a, b); c != 0 {
		t.Errorf("-0 and 0: %d", c)
	}
}

func TestAdmitsIDComparesBytes(t *testing.T) {
	r := &search.Request{Before: "b"}
	if !r.AdmitsID("a") || !r.AdmitsID("B") || r.AdmitsID("b") || r.AdmitsID("ba") || !(&search.Request{}).AdmitsID("z") {
		t.Error("AdmitsID")
	}
}
