package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/fold"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
)

// props is a resource of every field type for the property test, with
// verbatim strings (so "" and surrounding spaces are values), a long
// multi-line text, a nullable object and an array of objects.
var props = &resource.Def{
	Name: "props", Singular: "prop", Type: "PROP", IDPrefix: "prp", Function: "test", Searchable: true,
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, Verbatim: true, Search: 2},
		{Name: "body", Kind: resource.Text, Verbatim: true, MaxLen: 40_000, Search: 1},
		{Name: "code", Kind: resource.Text, Verbatim: true},
		{Name: "stage", Kind: resource.Enum, Values: []string{"new", "won", "lost"}},
		{Name: "size", Kind: resource.Int},
		{Name: "score", Kind: resource.Number},
		{Name: "closedOn", Kind: resource.Date},
		{Name: "dueAt", Kind: resource.DateTime},
		{Name: "isPrivate", Kind: resource.Bool},
		{Name: "tags", Kind: resource.Strings},
		{Name: "location", Kind: resource.Struct, Nullable: true, Fields: []resource.Field{{Name: "city", Kind: resource.String, Verbatim: true}}},
		{Name: "contacts", Kind: resource.Structs, Fields: []resource.Field{{Name: "email", Kind: resource.Email}, {Name: "role", Kind: resource.String}}},
	},
}

// Pools of values the records are made of: few, so that filters and
// sort keys often meet equal values.
var (
	shortStrings = []string{"Alpha", "alpha", "ALPHA beta", "", " padded ", "Ünïcode Straße", "beta", "Beta", "a.b*c?(d)", "Zed", "zed", "İstanbul", "ǅungla",
		"Zürich", "zurich", "Zu\u0308rich AG", "Société Générale", "SOCIETE", "Émile", "emile", "Łódź", "\u0308"}
	bodies = []string{"First line\nSecond LINE", "second line", "", "Line\r\nbreak", "tab\there", "alpha\n\nALPHA", "\n", "Σίσυφος ΣΊΣΥΦΟΣ"}
	// Long bodies are few: every search reads the records just written
	// from the change feed, long ones too.
	longBodies = []string{
		strings.Repeat("é", search.MaxTermLength/2+1),    // too long by two bytes to be an exact value
		strings.Repeat("x", search.MaxTermLength),        // just short enough
		strings.Repeat("y", search.MaxTermLength) + "\n", // just too long
	}
	scores   = []float64{-2.5, math.Copysign(0, -1), 0, 0.1, 3, 1000, 1e-9}
	days     = []string{"2023-12-31", "2024-01-01", "2024-02-29", "1969-07-20"}
	moments  = []string{"2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00", "2024-01-01T00:00:00.001Z", "2023-12-31T23:59:59.999Z", "1969-12-31T23:59:59.5Z"}
	tagNames = []string{"Fin", "fin", "b2b", "B2B", "health", "x y"}
	emails   = []string{"a@b.co", "A@b.co", "x@y.org"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// randomRecord is a create body: each field set, null or left out.
func randomRecord(r *rand.Rand) map[string]any {
	rec := map[string]any{}
	maybe := func(name string, v func() any) {
		switch r.IntN(5) {
		case 0: // left out
		case 1:
			rec[name] = nil
		default:
			rec[name] = v()
		}
	}
	maybe("name", func() any { return pick(r, shortStrings) })
	maybe("body", func() any {
		if r.IntN(25) == 0 {
			return pick(r, longBodies)
		}
		return pick(r, bodies)
	})
	maybe("code", func() any { return pick(r, append(shortStrings, bodies...)) })
	maybe("stage", func() any { return pick(r, props.Fields[3].Values) })
	maybe("size", func() any { return r.IntN(11) - 5 })
	maybe("score", func() any { return pick(r, scores) })
	maybe("closedOn", func() any { return pick(r, days) })
	maybe("dueAt", func() any { return pick(r, moments) })
	maybe("isPrivate", func() any { return r.IntN(2) == 0 })
	maybe("tags", func() any {
		tags := []any{}
		for range r.IntN(4) {
			tags = append(tags, pick(r, tagNames))
		}
		return tags
	})
	maybe("location", func() any {
		switch r.IntN(3) {
		case 0:
			return map[string]any{}
		case 1:
			return map[string]any{"city": nil}
		}
		return map[string]any{"city": pick(r, shortStrings)}
	})
	maybe("contacts", func() any {
		cs := []any{}
		for range r.IntN(3) {
			c := map[string]any{"email": pick(r, emails)}
			if r.IntN(2) == 0 {
				c["role"] = pick(r, []string{"Owner", "owner", "viewer"})
			}
			cs = append(cs, c)
		}
		return cs
	})
	return rec
}

// gen makes random predicates and sort keys from the values the stored
// records hold, so that they often match.
type gen struct {
	r      *rand.Rand
	schema *search.Schema
	held   map[string][]any // field -> values held by some record
	ids    []string
}

func (g *gen) predicate(depth int) *search.Predicate {
	if depth >= 3 || g.r.IntN(3) > 0 {
		return g.leaf()
	}
	p := &search.Predicate{}
	if g.r.IntN(2) == 0 {
		l := g.leaf()
		p.Field, p.Op, p.Value = l.Field, l.Op, l.Value
	}
	for range g.r.IntN(3) {
		p.And = append(p.And, g.predicate(depth+1))
	}
	for range g.r.IntN(3) {
		p.Or = append(p.Or, g.predicate(depth+1))
	}
	return p
}

func (g *gen) leaf() *search.Predicate {
	op := pick(g.r, search.Ops)
	for {
		f := pick(g.r, g.schema.Fields)
		if !applies(f, op) {
			continue
		}
		p := &search.Predicate{Field: f.Name, Op: op}
		switch op {
		case search.Exists:
			p.Value = g.r.IntN(2) == 0
		case search.In, search.Nin:
			var vs []any
			for range 1 + g.r.IntN(3) {
				vs = append(vs, g.value(f, search.Eq))
			}
			p.Value = vs
		default:
			p.Value = g.value(f, op)
		}
		return p
	}
}

// applies is the operators' typing of the search body.
func applies(f search.Field, op search.Op) bool {
	_, err := search.ParseCondition(&search.Schema{Fields: []search.Field{f}}, "p", f.Name, op, "")
	return err == nil || !strings.Contains(err.Error(), "cannot be")
}

// value is a value for op on f, typed as search.Decode types it.
func (g *gen) value(f search.Field, op search.Op) any {
	held := g.held[f.Name]
	var v any
	if len(held) > 0 && g.r.IntN(4) > 0 {
		v = pick(g.r, held)
	}
	switch f.Type {
	case search.Keyword, search.Text, search.Keywords:
		s, ok := v.(string)
		if !ok {
			s = pick(g.r, append(shortStrings, "nothing like it"))
		}
		rs := []rune(s)
		if op == search.Contains || op == search.StartsWith {
			start, n := 0, len(rs)
			if op == search.Contains && n > 0 {
				start = g.r.IntN(n)
			}
			if n > start {
				n = start + g.r.IntN(min(n-start, 40)+1)
			}
			rs = rs[start:n]
			switch g.r.IntN(4) {
			case 0:
				rs = []rune(strings.ToUpper(string(rs)))
			case 1:
				rs = []rune(strings.ToLower(string(rs)))
			case 2:
				rs = []rune(fold.Text(string(rs)))
			}
		}
		for len(string(rs)) > search.MaxValueLength {
			rs = rs[:len(rs)/2]
		}
		return string(rs)
	case search.Integer:
		n, _ := search.NumberOf(f.Type, v)
		if v == nil {
			n = float64(g.r.IntN(13) - 6)
		}
		return int64(n) + int64(g.r.IntN(3)-1)
	case search.Number:
		n, ok := search.NumberOf(f.Type, v)
		if !ok {
			n = pick(g.r, scores)
		}
		if g.r.IntN(4) == 0 {
			n += pick(g.r, []float64{-0.1, 0.1, 1e-9})
		}
		return n
	case search.Date, search.DateTime:
		n, ok := search.NumberOf(f.Type, v)
		if !ok {
			n, _ = search.NumberOf(search.DateTime, pick(g.r, moments))
		}
		t := time.UnixMilli(int64(n)).UTC()
		if f.Type == search.Date {
			return t.AddDate(0, 0, g.r.IntN(3)-1)
		}
		return t.Add(time.Duration(g.r.IntN(3)-1) * time.Millisecond).Add(time.Duration(g.r.IntN(2)) * 400 * time.Microsecond)
	case search.Bool:
		return g.r.IntN(2) == 0
	}
	return nil
}

// sort is 1 to 3 random keys, then the id.
func (g *gen) sort() []search.SortKey {
	var sortable []string
	for _, f := range g.schema.Fields {
		if f.Sortable && f.Name != "id" {
			sortable = append(sortable, f.Name)
		}
	}
	g.r.Shuffle(len(sortable), func(i, j int) { sortable[i], sortable[j] = sortable[j], sortable[i] })
	var keys []search.SortKey
	for _, name := range sortable[:1+g.r.IntN(3)] {
		keys = append(keys, search.SortKey{Field: name, Desc: g.r.IntN(2) == 0, MissingSmallest: g.r.IntN(2) == 0})
	}
	return append(keys, search.SortKey{Field: "id", Desc: g.r.IntN(2) == 0})
}

var seedFlag = flag.Uint64("seed", 0, "the seed of the property test's records, predicates and sorts (0: a new one)")

// TestTheEngineFiltersAndOrdersAsMatchAndCompareDo stores random records
// of every field type, then runs random predicate trees, sort keys and
// Before through the engine and checks that it answers exactly the
// records search.Match accepts, in search.Compare's order.
func TestTheEngineFiltersAndOrdersAsMatchAndCompareDo(t *testing.T) {
	t.Parallel()
	const records, searches = 80, 300
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	r := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d (-seed repeats it)", seed)
	st := testenv.Store(t)
	svc, _ := resource.NewRegistry(st, []*resource.Def{props}, nil).Service("props")
	ctx := context.Background()
	bodies := make(chan []byte, records)
	for i := range records {
		rec := randomRecord(r)
		if i < len(longBodies) {
			rec["body"] = longBodies[i] // every long body, once at least
		}
		b, _ := json.Marshal(rec)
		bodies <- b
	}
	close(bodies)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for b := range bodies {
				if _, err := svc.Create(ctx, "org1", b); err != nil {
					t.Errorf("create %s: %v", b, err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	engine, schema := embedded.New(st, 0, nil), search.SchemaOf(props)
	run := func(req *search.Request) ([]string, []json.RawMessage, int) {
		t.Helper()
		req.Page, req.Limit = 1, search.MaxLimit
		res, err := engine.Search(ctx, "org1", schema, req)
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		var ids []string
		for _, raw := range res.Records {
			var rec struct{ ID string }
			json.Unmarshal(raw, &rec)
			ids = append(ids, rec.ID)
		}
		return ids, res.Records, res.Total
	}
	// The records as stored, decoded as a list decodes them.
	_, raws, total := run(&search.Request{})
	if total != records {
		t.Fatalf("%d records indexed, want %d", total, records)
	}
	stored := map[string]map[string]any{}
	g := &gen{r: r, schema: schema, held: map[string][]any{}}
	for _, raw := range raws {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		id := rec["id"].(string)
		stored[id] = rec
		g.ids = append(g.ids, id)
		for _, f := range schema.Fields {
			g.held[f.Name] = append(g.held[f.Name], search.ValuesAt(rec, f.Name)...)
		}
	}
	failures := 0
	nonEmpty, sizes := 0, 0
	for i := range searches {
		req := &search.Request{Filter: g.predicate(0), Sort: g.sort()}
		switch g.r.IntN(4) {
		case 0:
			req.Before = pick(g.r, g.ids)
		case 1:
			req.Before = pick(g.r, g.ids)[:5+g.r.IntN(20)]
		}
		if i%10 == 0 {
			req.Filter = nil
		}
		var want []string
		for id, rec := range stored {
			if req.AdmitsID(id) && search.Match(schema, req.Filter, rec) {
				want = append(want, id)
			}
		}
		slices.SortFunc(want, func(a, b string) int { return search.Compare(schema, req.Sort, stored[a], stored[b]) })
		got, _, total := run(req)
		if len(want) > 0 {
			nonEmpty++
		}
		sizes += len(want)
		if slices.Equal(got, want) && total == len(want) {
			continue
		}
		failures++
		filter, _ := json.Marshal(req.Filter)
		t.Errorf("search %d: filter %s, sort %+v, before %q:\ngot  %d (total %d) %v\nwant %d %v", i, filter, req.Sort, req.Before, len(got), total, got, len(want), want)
		for _, id := range symmetricDifference(got, want) {
			b, _ := json.Marshal(stored[id])
			t.Logf("only on one side: %s", short(string(b)))
		}
		if failures == 5 {
			t.Fatalf("stopping after %d failures (seed %d)", failures, seed)
		}
	}
	// The searches must find something to compare.
	t.Logf("%d searches, %d with results, %d results each on average", searches, nonEmpty, sizes/searches)
	if nonEmpty < searches/2 {
		t.Errorf("only %d of %d searches found records", nonEmpty, searches)
	}
}

func symmetricDifference(a, b []string) []string {
	var out []string
	for _, id := range a {
		if !slices.Contains(b, id) {
			out = append(out, id)
		}
	}
	for _, id := range b {
		if !slices.Contains(a, id) {
			out = append(out, id)
		}
	}
	return out
}

func short(s string) string {
	if utf8.RuneCountInString(s) < 600 {
		return s
	}
	return string([]rune(s)[:600]) + fmt.Sprintf("… (%d bytes)", len(s))
}

func TestContainsFindsTheValueAcrossLinesAndSortsEmptyStringsAsMissing(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	svc, _ := resource.NewRegistry(st, []*resource.Def{props}, nil).Service("props")
	for _, body := range []string{
		`{"name":"multi","body":"First line\nSecond LINE here"}`,
		`{"name":"","body":"second"}`,
		`{"name":"Zed"}`,
		`{"body":"` + strings.Repeat("x", search.MaxTermLength+1) + `"}`,
	} {
		if _, err := svc.Create(context.Background(), "org1", []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	engine, schema := embedded.New(st, 0, nil), search.SchemaOf(props)
	names := func(p *search.Predicate, keys ...search.SortKey) []string {
		t.Helper()
		res, err := engine.Search(context.Background(), "org1", schema, &search.Request{Filter: p, Sort: keys, Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, raw := range res.Records {
			var rec struct{ Name *string }
			json.Unmarshal(raw, &rec)
			name := "<null>"
			if rec.Name != nil {
				name = *rec.Name
			}
			out = append(out, name)
		}
		return out
	}
	for needle, want := range map[string][]string{
		"LINE\nsecond": {"multi"}, "second line": {"multi"}, "line here": {"multi"}, "e\ns": {"multi"},
		"second": {"", "multi"}, strings.Repeat("x", 10): nil, "": {"", "multi"},
	} {
		got := names(&search.Predicate{Field: "body", Op: search.Contains, Value: needle}, search.SortKey{Field: "name", MissingSmallest: true}, search.SortKey{Field: "id"})
		if !slices.Equal(got, want) {
			t.Errorf("body contains %q: %q, want %q", needle, got, want)
		}
	}
	// "" and null sort as missing: last, or first with MissingSmallest.
	got := names(nil, search.SortKey{Field: "name"})
	if len(got) != 4 || got[0] != "multi" || got[1] != "Zed" {
		t.Errorf("by name: %q, want multi, Zed, then the two without a name", got)
	}
	got = names(nil, search.SortKey{Field: "name", MissingSmallest: true}, search.SortKey{Field: "id", Desc: true})
	if len(got) != 4 || got[2] != "multi" || got[3] != "Zed" {
		t.Errorf("by name, missing smallest: %q, want the two without a name, then multi, Zed", got)
	}
	if got := names(&search.Predicate{Field: "name", Op: search.Eq, Value: ""}); !slices.Equal(got, []string{""}) {
		t.Errorf(`name eq "": %q`, got)
	}
	// A needle as long as a value may be is a query the engine runs.
	long := strings.Repeat("ab", search.MaxValueLength/2)
	if got := names(&search.Predicate{Field: "body", Op: search.Contains, Value: long}); len(got) != 0 {
		t.Errorf("a long needle: %q", got)
	}
}
