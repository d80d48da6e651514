package jobsapi_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	companydef "github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// FuzzExportImportRoundTrip is the round trip of docs/bulk.md as a
// property: random records of every declared resource (companies with
// random enrichment candidates) made through the API in one organization,
// exported (CSV or NDJSON, as the seed picks), imported into another
// organization with keepIds (in the declarations' order, so that
// references find their records), and exported again, are the same
// records: every field but the times the service sets when it writes
// (createdAt, updatedAt, lastEnrichedAt, lastEnrichmentStartedAt). `make
// test` runs the seed below; `make fuzz` runs new ones.
func FuzzExportImportRoundTrip(f *testing.F) {
	f.Add(uint64(44), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, records uint8) {
		testenv.Long(t, "an export and an import of every declared resource")
		apitest.InProcessOnly(t, "jobs of every resource; the lambdas suite runs docs/bulk.md's round trip")
		r := rand.New(rand.NewPCG(seed, seed^0xb01c))
		e := apitest.New(t)
		a, b := e.Org(t), e.Org(t)
		n := int(records%6) + 1
		defs := append([]*resource.Def{companydef.Def}, resources.All()...)
		for _, d := range defs {
			for range n {
				res := a.Do("POST", "/v1/"+d.Name, randomBody(t, r, a, d.Fields, false))
				if res.Status == 400 { // a rule across fields (a fund's size needs its currency): every field set
					res = a.Do("POST", "/v1/"+d.Name, randomBody(t, r, a, d.Fields, true))
				}
				rec := res.Want(t, 201).Object(t)
				if d == companydef.Def {
					addRandomCandidates(t, r, a, apitest.IDOf(t, rec))
				}
			}
		}
		for _, d := range byReference(defs) {
			format := []string{"csv", "ndjson"}[r.IntN(2)]
			_, first := runExport(t, a, map[string]any{"resource": d.Name, "format": format})
			j := apitest.RunImport(t, b, map[string]any{"resource": d.Name, "format": format, "keepIds": true}, first)
			if apitest.Num(j["failed"]) != 0 || apitest.Num(j["created"]) != apitest.Num(j["total"]) {
				errs := ""
				if u, ok := j["errorsUrl"].(string); ok {
					errs = string(download(t, u))
				}
				t.Fatalf("seed %d: %s (%s): the import of the export %s\n%.3000s\nfile:\n%.3000s", seed, d.Name, format, apitest.JSONOf(j), errs, first)
			}
			_, second := runExport(t, b, map[string]any{"resource": d.Name, "format": format})
			x, y := recordsByID(t, format, first), recordsByID(t, format, second)
			if len(x) != len(y) {
				t.Fatalf("seed %d: %s (%s): %d records exported, %d after the round trip", seed, d.Name, format, len(x), len(y))
			}
			for id, rec := range x {
				if y[id] != rec {
					t.Errorf("seed %d: %s (%s) %s differs after the round trip:\n%s\n%s", seed, d.Name, format, id, rec, y[id])
				}
			}
		}
	})
}

// byReference orders defs so that each comes after the resources its
// fields (and their parts) reference: the order a copy imports them in.
func byReference(defs []*resource.Def) []*resource.Def {
	var out []*resource.Def
	done := map[string]bool{}
	var visit func(d *resource.Def)
	visit = func(d *resource.Def) {
		if done[d.Name] {
			return
		}
		done[d.Name] = true
		for _, target := range referenced(d.Fields) {
			for _, other := range defs {
				if other.Name == target {
					visit(other)
				}
			}
		}
		out = append(out, d)
	}
	for _, d := range defs {
		visit(d)
	}
	return out
}

// referenced are the resources fields reference.
func referenced(fields []resource.Field) []string {
	var out []string
	for _, f := range fields {
		if f.Target != "" {
			out = append(out, f.Target)
		}
		for _, target := range f.Targets {
			out = append(out, target)
		}
		out = append(out, referenced(f.Fields)...)
	}
	sort.Strings(out)
	return out
}

// roundTripTimes are the columns the service sets when it writes a record.
var roundTripTimes = map[string]bool{"createdAt": true, "updatedAt": true, "lastEnrichedAt": true, "lastEnrichmentStartedAt": true}

// recordsByID are an export's records by id, without roundTripTimes: a
// CSV row's cells, an NDJSON line's JSON.
func recordsByID(t *testing.T, format string, file []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	if format == "csv" {
		rows := readCSV(t, file)
		for _, row := range rows[1:] {
			var keep []string
			for i, cell := range row {
				if !roundTripTimes[rows[0][i]] {
					keep = append(keep, rows[0][i]+"="+cell)
				}
			}
			out[row[0]] = strings.Join(keep, "\n")
		}
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(string(file)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not NDJSON: %v: %s", err, line)
		}
		for k := range roundTripTimes {
			delete(m, k)
		}
		out[m["id"].(string)] = apitest.JSONOf(m)
	}
	return out
}

// randomBody is a create body of fields: required ones always, others at
// random (all when full), each a random valid value.
func randomBody(t *testing.T, r *rand.Rand, c *apitest.Client, fields []resource.Field, full bool) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, f := range fields {
		if f.ReadOnly || !full && !f.Required && r.IntN(3) == 0 {
			continue
		}
		out[f.Name] = randomValue(t, r, c, f, out)
	}
	return out
}

// randomValue is a random valid value of f: texts with commas, quotes,
// line breaks, accents and formulas, numbers wide and exact; the sample
// generator's value where the field constrains it further (an Example, a
// rule, a reference).
func randomValue(t *testing.T, r *rand.Rand, c *apitest.Client, f resource.Field, siblings map[string]any) any {
	t.Helper()
	if f.Example != nil || f.Validate != nil || f.Unique {
		return apitest.SampleValue(t, c, f, siblings)
	}
	n := apitest.NextSeq()
	clip := func(s string) string {
		if rs := []rune(s); len(rs) > f.MaxLength() {
			return string(rs[:f.MaxLength()])
		}
		return s
	}
	text := func() string {
		switch r.IntN(4) {
		case 0:
			return fmt.Sprintf(`Acme %d, "Quoted" & <Co>`, n)
		case 1:
			return fmt.Sprintf("=SUM(A1:A2) Société Générale 東京 🚀 %d", n)
		case 2:
			return fmt.Sprintf("a; b; c %d", n)
		}
		return fmt.Sprintf("plain %d", n)
	}
	switch f.Kind {
	case resource.String:
		s := text()
		if f.Verbatim && r.IntN(2) == 0 {
			s = "  " + s + " "
		}
		return clip(s)
	case resource.Text:
		return clip(text() + "\nline two, \"two\"\r\n\tthree")
	case resource.Enum:
		return f.Values[r.IntN(len(f.Values))]
	case resource.Int, resource.Number:
		lo, hi := -1e15, 1e15
		if f.Min != nil {
			lo = *f.Min
		}
		if f.Max != nil {
			hi = *f.Max
		}
		v := lo + r.Float64()*(hi-lo)
		if f.Kind == resource.Int {
			return float64(int64(v))
		}
		return float64(int64(v*100)) / 100 // cents: 1234567890.12
	case resource.Bool:
		return r.IntN(2) == 0
	case resource.Strings:
		var list []any
		for i := range r.IntN(4) {
			list = append(list, clip(fmt.Sprintf("%s %d.%d", []string{"ai", "a;b", " padded ", "[x"}[r.IntN(4)], n, i)))
		}
		if list == nil {
			list = []any{}
		}
		return list
	case resource.Object:
		return map[string]any{"key": text(), "n": float64(r.IntN(1000)) + 0.25, "nested": map[string]any{"ok": r.IntN(2) == 0}}
	}
	return apitest.SampleValue(t, c, f, siblings)
}

// addRandomCandidates adds random enrichment candidates to company id: values
// of a few properties from random sources, some pinned.
func addRandomCandidates(t *testing.T, r *rand.Rand, c *apitest.Client, id string) {
	t.Helper()
	props := map[string]func() any{
		"employeeCount":    func() any { return float64(r.IntN(100000)) },
		"totalMoneyRaised": func() any { return float64(r.IntN(1e9)) + 0.12 },
		"lastRoundDate":    func() any { return fmt.Sprintf("2025-%02d-%02d", r.IntN(12)+1, r.IntN(28)+1) },
		"ownershipStatus":  func() any { return []string{"private", "public", "PE-backed"}[r.IntN(3)] },
		"lastFinancials":   func() any { return map[string]any{"revenue": float64(r.IntN(1e6)) + 0.5, "currency": "EUR"} },
		"description":      func() any { return fmt.Sprintf("found, with a comma %d", r.IntN(100)) },
	}
	names := make([]string, 0, len(props))
	for p := range props {
		names = append(names, p)
	}
	sort.Strings(names)
	var values []any
	for _, p := range names {
		for range r.IntN(3) {
			src := []string{enrichment.SourceProvider, enrichment.SourceWeb, enrichment.SourceWorkflow, enrichment.SourceUser}[r.IntN(4)]
			values = append(values, map[string]any{"property": p, "value": props[p](), "source": src,
				"confidence": float64(r.IntN(101)), "capturedOn": fmt.Sprintf("2025-06-%02dT10:%02d:00Z", r.IntN(28)+1, r.IntN(60))})
		}
	}
	if len(values) == 0 {
		return
	}
	path := "/v1/enrichments/resources/companies/" + id
	added := c.Do("POST", path, map[string]any{"values": values}).Want(t, 201).List(t)
	for _, v := range added {
		if r.IntN(4) == 0 {
			c.Do("PATCH", path+"/"+v["id"].(string), map[string]any{"pinned": true}).Want(t, 200)
		}
	}
}
