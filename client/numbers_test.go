package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/client"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// The widest values a number field holds exactly, as a double holds them
// (the service keeps a number as sent; a client reads a double, and an
// integer up to 2^53 − 1 exactly: docs/errors.md, Limits): money with
// cents, the most digits a double keeps, the exact integers' bounds, the
// largest and smallest doubles. None of them is a float32: a client that
// reads one (oapi-codegen's, for a number without a format) changes it.
var (
	numberLiterals = []string{"1234567890.12", "-1234567890.12", "123456789012345.67", "9007199254740991",
		"1.7976931348623157e308", "-1.7976931348623157e308", "2.2250738585072014e-308", "5e-324", "0.1"}
	integerLiterals = []string{"9007199254740991", "-9007199254740991"}
)

// literals are the values of f tried: those above within its bounds, its
// bounds, and for a number bounded on both sides the double just under
// the top and one with all 17 digits between them (99.99999999999999,
// 33.333333333333336 for 0 to 100). Zero, exact in any type, is left out.
func literals(f resource.Field) []string {
	cands := numberLiterals
	if f.Kind == resource.Int {
		cands = integerLiterals
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if f.Min != nil {
		lo = *f.Min
	}
	if f.Max != nil {
		hi = *f.Max
	}
	format := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	if f.Min != nil {
		cands = append(slices.Clip(cands), format(lo))
	}
	if f.Max != nil {
		cands = append(slices.Clip(cands), format(hi))
		if f.Kind == resource.Number {
			cands = append(cands, format(math.Nextafter(hi, lo)))
		}
	}
	if f.Min != nil && f.Max != nil && f.Kind == resource.Number {
		cands = append(cands, format(lo+(hi-lo)/3))
	}
	var out []string
	seen := map[float64]bool{}
	for _, c := range cands {
		x, err := strconv.ParseFloat(c, 64)
		if err != nil || x == 0 || x < lo || x > hi || seen[x] || f.Kind == resource.Int && x != math.Trunc(x) {
			continue
		}
		seen[x] = true
		out = append(out, c)
	}
	return out
}

// numberField is a number or integer field of a record, at its path: a
// top-level field, or one of the objects a Struct or Structs field holds.
type numberField struct {
	path []resource.Field
}

func (f numberField) leaf() resource.Field { return f.path[len(f.path)-1] }

func (f numberField) String() string {
	names := make([]string, len(f.path))
	for i, p := range f.path {
		names[i] = p.Name
	}
	return strings.Join(names, ".")
}

// numberFields are the number and integer fields of fields, at any depth.
func numberFields(fields []resource.Field, above []resource.Field) []numberField {
	var out []numberField
	for _, f := range fields {
		path := append(slices.Clip(above), f)
		switch f.Kind {
		case resource.Int, resource.Number:
			out = append(out, numberField{path})
		case resource.Struct, resource.Structs:
			out = append(out, numberFields(f.Fields, path)...)
		}
	}
	return out
}

// Every number of every record type the API answers (each declared
// record's number and integer fields, at any depth, a company's
// enrichable ones set through enrichment; a metric point's value and
// confidence; an enrichment value's confidence) goes to the running
// service through the project's own generated client and comes back
// through it unchanged, the widest values it holds exactly included.
// The documents' number formats (double, int64) are what make the client
// read them as float64 and int64; without them it read float32, and
// 1234567890.12 came back as 1234567936.
func TestEveryNumberOfEveryRecordGoesThroughTheGeneratedClientUnchanged(t *testing.T) {
	e := apitest.New(t)
	key := e.Org(t)
	c, err := client.NewClientWithResponses(e.URL, client.WithCredentials(key.ClientID, key.Secret))
	if err != nil {
		t.Fatal(err)
	}
	enrichable := map[string]bool{}
	for _, p := range enrichment.CompanyProperties {
		enrichable[p] = true
	}
	confidence := resource.Field{Name: "confidence", Kind: resource.Number, Min: ptr(0.0), Max: ptr(100.0)}
	checked := map[string]int{}

	defs := append([]*resource.Def{companies.Def, workflows.Def, runs.Def}, resources.All()...)
	for _, d := range defs {
		fields := numberFields(d.AllFields(), nil)
		if len(fields) == 0 {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			// As many records as the field with the most values tried
			// needs, the i-th value of each field in the i-th record.
			records := 0
			for _, f := range fields {
				records = max(records, len(literals(f.leaf())))
			}
			type made struct {
				id   string
				sent map[string]string // a field's literal, by its path
			}
			var all []made
			for i := range records {
				body := apitest.Sample(t, key, d, true)
				m := made{sent: map[string]string{}}
				var enrich []map[string]any
				for _, f := range fields {
					lits := literals(f.leaf())
					lit := lits[i%len(lits)]
					switch {
					case !slices.ContainsFunc(f.path, func(p resource.Field) bool { return p.ReadOnly }):
						if !setAt(body, f.path, json.Number(lit)) {
							t.Fatalf("the sample of %s has no %s to set", d.Name, f)
						}
						m.sent[f.String()] = lit
					case d == companies.Def && len(f.path) == 1 && enrichable[f.leaf().Name]:
						conf := literals(confidence)[i%len(literals(confidence))]
						enrich = append(enrich, map[string]any{"property": f.leaf().Name, "value": json.Number(lit),
							"source": enrichment.SourceUser, "confidence": json.Number(conf)})
						m.sent[f.String()] = lit
					}
					// Any other read-only number is derived (a score's
					// finalScore): it is compared with what the service
					// answered.
				}
				data, _ := call(t, c, "POST /v1/"+d.Name, http.StatusCreated, body)
				m.id = stringAt(t, data, "id")
				if len(enrich) > 0 {
					values, _ := call(t, c, "POST /v1/enrichments/resources/{resourceType}/{resourceId}", http.StatusCreated,
						"companies", m.id, map[string]any{"values": enrich})
					for j := range values.Len() {
						v := values.Index(j)
						want := enrich[j]["confidence"].(json.Number).String()
						wantSame(t, "an enrichment value's confidence", v.FieldByName("Confidence"), want)
						checked["EnrichmentValue.confidence"]++
					}
				}
				all = append(all, m)
			}

			// Each record read alone, and in a list page, through the
			// client's types.
			listed := map[string]reflect.Value{}
			page, _ := call(t, c, "GET /v1/"+d.Name, http.StatusOK)
			for j := range page.Len() {
				listed[stringAt(t, page.Index(j), "id")] = page.Index(j)
			}
			for _, m := range all {
				got, raw := call(t, c, "GET /v1/"+d.Name+"/{id}", http.StatusOK, m.id)
				answered := rawRecord(t, raw)
				for _, f := range fields {
					lit, sent := m.sent[f.String()]
					for k, n := range numbersAt(answered, f.path) {
						want := lit
						if !sent {
							want = n // derived: what the service answered
						}
						if !sameDouble(n, want) {
							t.Errorf("%s %s: %s went through the client, the service holds %s", d.Name, f, want, n)
						}
						where := fmt.Sprintf("%s %s (#%d)", d.Name, f, k)
						vs := valuesAt(got, f.path)
						if len(vs) <= k {
							t.Errorf("%s: the client's record has no value", where)
							continue
						}
						wantSame(t, where, vs[k], want)
						if l, ok := listed[m.id]; ok {
							wantSame(t, where+" in a list", valuesAt(l, f.path)[k], want)
						} else {
							t.Errorf("%s: %s is not on the list's first page", where, m.id)
						}
						checked[d.Name+"."+f.String()]++
					}
				}
			}
		})
	}

	// Metric points: each value tried at its own date of one series,
	// with each confidence.
	t.Run("metric points", func(t *testing.T) {
		company, _ := call(t, c, "POST /v1/companies", http.StatusCreated, map[string]any{"canonicalName": "Measured exactly"})
		series := "companies:" + stringAt(t, company, "id")
		value := resource.Field{Name: "value", Kind: resource.Number}
		values, confidences := literals(value), literals(confidence)
		var points []map[string]any
		want := map[string][2]string{} // value and confidence by date
		for i := range max(len(values), len(confidences)) {
			date := time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
			v, conf := values[i%len(values)], confidences[i%len(confidences)]
			points = append(points, map[string]any{"resource": series, "key": "metric:exact", "date": date,
				"value": json.Number(v), "confidence": json.Number(conf), "source": "numbers-test"})
			want[date] = [2]string{v, conf}
		}
		stored, _ := call(t, c, "POST /v1/data/metric-points", http.StatusCreated, map[string]any{"points": points})
		read, _ := call(t, c, "POST /v1/data/metric-series", http.StatusOK, map[string]any{"resource": series, "key": "metric:exact"})
		for name, list := range map[string]reflect.Value{"a stored point": stored, "a series point": read.FieldByName("Points")} {
			if list.Len() != len(points) {
				t.Errorf("%d of %s, want %d", list.Len(), name, len(points))
			}
			for j := range list.Len() {
				p := list.Index(j)
				date, _ := json.Marshal(p.FieldByName("Date").Interface())
				w, ok := want[strings.Trim(string(date), `"`)]
				if !ok {
					t.Errorf("%s of date %s, which was not sent", name, date)
					continue
				}
				wantSame(t, name+"'s value", p.FieldByName("Value"), w[0])
				wantSame(t, name+"'s confidence", p.FieldByName("Confidence"), w[1])
				checked["metric point ("+name+")"]++
			}
		}
	})

	t.Logf("numbers checked: %v", checked)
	// The walk reached the money and counts of the records it is about.
	for _, want := range []string{"companies.lastValuation", "companies.employeeCount", "deals.amount", "funds.size",
		"documents.size", "scores.finalScore", "scores.elementScores.score", "frameworks.elements.weight",
		"EnrichmentValue.confidence", "metric point (a series point)"} {
		if checked[want] == 0 {
			t.Errorf("no %s was checked; checked %v", want, checked)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// call calls the client's method of the route ("POST /v1/deals"), its
// arguments the strings of the path's parameters, then the body, made as
// JSON and decoded into the client's type of it, and returns the data of
// the answer of status (its JSON<status>'s Data) and the answer's body.
func call(t *testing.T, c *client.ClientWithResponses, route string, status int, args ...any) (reflect.Value, []byte) {
	t.Helper()
	method, path, _ := strings.Cut(route, " ")
	id := openapi.OperationID(method, path)
	name := strings.ToUpper(id[:1]) + id[1:] + "WithResponse"
	m := reflect.ValueOf(c).MethodByName(name)
	if !m.IsValid() {
		t.Fatalf("the client has no %s for %s", name, route)
	}
	mt := m.Type()
	in := []reflect.Value{reflect.ValueOf(context.Background())}
	for i := 1; i < mt.NumIn() && !(mt.IsVariadic() && i == mt.NumIn()-1); i++ {
		pt := mt.In(i)
		switch {
		case pt.Kind() == reflect.Pointer && strings.HasSuffix(pt.Elem().Name(), "Params"):
			in = append(in, reflect.Zero(pt))
		case pt.Kind() == reflect.String:
			in = append(in, reflect.ValueOf(args[0]).Convert(pt))
			args = args[1:]
		default:
			b, err := json.Marshal(args[0])
			if err != nil {
				t.Fatal(err)
			}
			args = args[1:]
			body := reflect.New(pt)
			if err := json.Unmarshal(b, body.Interface()); err != nil {
				t.Errorf("%s: the client's %s cannot hold the body %s: %v", route, pt, b, err)
			}
			in = append(in, body.Elem())
		}
	}
	out := m.Call(in)
	if err, _ := out[1].Interface().(error); err != nil {
		t.Fatalf("%s through the client: %v", route, err)
	}
	res := out[0].Elem()
	raw := res.FieldByName("Body").Bytes()
	if got := res.FieldByName("HTTPResponse").Interface().(*http.Response).StatusCode; got != status {
		t.Fatalf("%s answered %d, want %d: %.600s", route, got, status, raw)
	}
	j := res.FieldByName("JSON" + strconv.Itoa(status))
	if !j.IsValid() || j.IsNil() {
		t.Fatalf("%s: the client decoded no %d answer of %.300s", route, status, raw)
	}
	return j.Elem().FieldByName("Data"), raw
}

// setAt sets the field at path in a body made by apitest.Sample: in every
// element of an array of objects on the way.
func setAt(body map[string]any, path []resource.Field, v any) bool {
	if len(path) == 1 {
		body[path[0].Name] = v
		return true
	}
	switch x := body[path[0].Name].(type) {
	case map[string]any:
		return setAt(x, path[1:], v)
	case []any:
		set := len(x) > 0
		for _, e := range x {
			m, ok := e.(map[string]any)
			set = set && ok && setAt(m, path[1:], v)
		}
		return set
	}
	return false
}

// rawRecord is the record of a {data} answer, its numbers as written.
func rawRecord(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var body struct{ Data map[string]any }
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("the answer %.300s: %v", raw, err)
	}
	return body.Data
}

// numbersAt are the numbers at path in a record decoded with UseNumber,
// as written: one, or one per element of an array of objects on the way;
// "null" for none.
func numbersAt(rec map[string]any, path []resource.Field) []string {
	v, ok := rec[path[0].Name]
	if len(path) == 1 {
		if n, isNumber := v.(json.Number); isNumber {
			return []string{n.String()}
		}
		if !ok {
			return []string{"(absent)"}
		}
		return []string{"null"}
	}
	switch x := v.(type) {
	case map[string]any:
		return numbersAt(x, path[1:])
	case []any:
		var out []string
		for _, e := range x {
			m, _ := e.(map[string]any)
			out = append(out, numbersAt(m, path[1:])...)
		}
		return out
	}
	return []string{"null"}
}

// valuesAt are the client's values at path in a record of its types, as
// numbersAt finds them.
func valuesAt(v reflect.Value, path []resource.Field) []reflect.Value {
	f := member(v, path[0].Name)
	if len(path) == 1 || !f.IsValid() {
		return []reflect.Value{f}
	}
	for f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return nil
		}
		f = f.Elem()
	}
	if f.Kind() == reflect.Slice {
		var out []reflect.Value
		for i := range f.Len() {
			out = append(out, valuesAt(f.Index(i), path[1:])...)
		}
		return out
	}
	return valuesAt(f, path[1:])
}

// member is the field of the struct v (or of what v points to) whose JSON
// name is name; invalid when there is none.
func member(v reflect.Value, name string) reflect.Value {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	for i := range v.NumField() {
		if n, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); n == name {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// sameDouble reports whether two JSON numbers are the same double (the
// client writes 1.7976931348623157e308 as 1.7976931348623157e+308).
func sameDouble(a, b string) bool {
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	return errX == nil && errY == nil && x == y
}

func stringAt(t *testing.T, v reflect.Value, name string) string {
	t.Helper()
	f := member(v, name)
	for f.Kind() == reflect.Pointer && !f.IsNil() {
		f = f.Elem()
	}
	if f.Kind() != reflect.String || f.String() == "" {
		t.Fatalf("no %s in %#v", name, v.Interface())
	}
	return f.String()
}

// wantSame fails t unless v, a number of the client's types (or a pointer
// to one), is the value of literal: an integer exactly, a number as the
// double nearest to it.
func wantSame(t *testing.T, where string, v reflect.Value, literal string) {
	t.Helper()
	for v.IsValid() && v.Kind() == reflect.Pointer {
		if v.IsNil() {
			t.Errorf("%s: the client read null, the service sent %s", where, literal)
			return
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		t.Errorf("%s: the client's type has no such field", where)
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		want, err := strconv.ParseFloat(literal, 64)
		if got := v.Float(); err != nil || got != want {
			t.Errorf("%s: the service sent %s, the client read %s (a %s)", where, literal, strconv.FormatFloat(got, 'g', -1, 64), v.Type())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		want, err := strconv.ParseInt(literal, 10, 64)
		if got := v.Int(); err != nil || got != want {
			t.Errorf("%s: the service sent %s, the client read %d (a %s)", where, literal, got, v.Type())
		}
	default:
		t.Errorf("%s: the client reads the number %s as a %s", where, literal, v.Type())
	}
}
