package recordsapi_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// The lists' filters, sorts and paging are checked against a brute-force
// evaluation written here, independently of the service's: random records,
// random combinations, every plan that can serve each (X-Query-Plan).

// fieldType is how the brute force reads a field.
type fieldType int

const (
	tString fieldType = iota
	tStrings
	tNumber
	tDate
	tBool
)

type testField struct {
	name string
	typ  fieldType
	gen  func(r *rand.Rand) any // a value; nil leaves the field unset
}

func pickOf[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

// bruteValue is a record's value of f: nil when absent or null.
func bruteValue(rec map[string]any, f testField) any {
	v := rec[f.name]
	if a, ok := v.([]any); ok && len(a) == 0 {
		return nil
	}
	return v
}

func bruteNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		n, err := strconv.ParseFloat(x, 64)
		return n, err == nil
	}
	return 0, false
}

// bruteEq says whether value (as sent in the query) equals v.
func bruteEq(f testField, v any, value string) bool {
	switch f.typ {
	case tStrings:
		a, _ := v.([]any)
		return slices.Contains(a, any(value))
	case tNumber:
		n, ok := bruteNumber(v)
		m, _ := strconv.ParseFloat(value, 64)
		return ok && n == m
	case tBool:
		b, ok := v.(bool)
		return ok && strconv.FormatBool(b) == value
	default:
		s, ok := v.(string)
		return ok && s == value
	}
}

type testCond struct {
	f         testField
	op, value string
}

func (c testCond) param() string {
	if c.op == "eq" && c.f.typ != tBool { // the shorthand, half the time for booleans below
		return "filter[" + c.f.name + "]"
	}
	return "filter[" + c.f.name + "][" + c.op + "]"
}

func (c testCond) holds(rec map[string]any) bool {
	v := bruteValue(rec, c.f)
	switch c.op {
	case "eq":
		return bruteEq(c.f, v, c.value)
	case "ne":
		return !bruteEq(c.f, v, c.value)
	case "in", "nin":
		in := slices.ContainsFunc(strings.Split(c.value, ","), func(s string) bool { return bruteEq(c.f, v, s) })
		return in == (c.op == "in")
	case "gt", "gte", "lt", "lte":
		var cmp int
		if c.f.typ == tNumber {
			n, ok := bruteNumber(v)
			if !ok {
				return false
			}
			m, _ := strconv.ParseFloat(c.value, 64)
			cmp = compareFloat(n, m)
		} else {
			s, ok := v.(string)
			if !ok {
				return false
			}
			cmp = strings.Compare(s, c.value)
		}
		return map[string]bool{"gt": cmp > 0, "gte": cmp >= 0, "lt": cmp < 0, "lte": cmp <= 0}[c.op]
	case "contains":
		if c.f.typ == tStrings {
			return bruteEq(c.f, v, c.value)
		}
		s, ok := v.(string)
		return ok && strings.Contains(bruteFold(s), bruteFold(c.value))
	case "startsWith":
		s, ok := v.(string)
		return ok && strings.HasPrefix(bruteFold(s), bruteFold(c.value))
	case "exists":
		return (v != nil) == (c.value == "true")
	}
	panic(c.op)
}

// bruteFold is text as contains, startsWith and sorting compare it:
// lower case, without the diacritics of the letters the records hold.
func bruteFold(s string) string {
	return strings.NewReplacer("é", "e", "ü", "u").Replace(strings.ToLower(s))
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type testKey struct {
	f    testField
	desc bool
}

// bruteCompare orders by keys, missing values (null, absent, "") as the
// smallest, strings ignoring case and diacritics; ties by id in the last
// key's direction.
func bruteCompare(keys []testKey, a, b map[string]any) int {
	for _, k := range keys {
		c := compareValues(k.f, bruteValue(a, k.f), bruteValue(b, k.f))
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	c := strings.Compare(a["id"].(string), b["id"].(string))
	if keys[len(keys)-1].desc {
		c = -c
	}
	return c
}

func compareValues(f testField, a, b any) int {
	missing := func(v any) bool { return v == nil || v == "" }
	switch {
	case missing(a) && missing(b):
		return 0
	case missing(a):
		return -1
	case missing(b):
		return 1
	}
	switch f.typ {
	case tNumber:
		x, _ := bruteNumber(a)
		y, _ := bruteNumber(b)
		return compareFloat(x, y)
	case tBool:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	default:
		return strings.Compare(bruteFold(a.(string)), bruteFold(b.(string)))
	}
}

// randomCond is a condition on one of fields, its value taken from the
// records half the time so that conditions often hold.
func randomCond(r *rand.Rand, fields []testField, recs []map[string]any) testCond {
	f := pickOf(r, fields...)
	value := func() string {
		for range 5 {
			v := bruteValue(pickOf(r, recs...), f)
			if a, ok := v.([]any); ok && len(a) > 0 {
				v = pickOf(r, a...)
			}
			switch x := v.(type) {
			case string:
				if x != "" && !strings.Contains(x, ",") {
					return x
				}
			case float64:
				return strconv.FormatFloat(x, 'f', -1, 64)
			case bool:
				return strconv.FormatBool(x)
			}
		}
		g := f.gen(r)
		for g == nil {
			g = f.gen(r)
		}
		if a, ok := g.([]string); ok {
			return a[0]
		}
		return fmt.Sprint(g)
	}
	var ops []string
	switch f.typ {
	case tString:
		ops = []string{"eq", "ne", "in", "nin", "contains", "startsWith", "exists"}
	case tStrings:
		ops = []string{"eq", "ne", "in", "nin", "contains", "exists"}
	case tNumber, tDate:
		ops = []string{"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "exists"}
	case tBool:
		ops = []string{"eq", "ne", "exists"}
	}
	c := testCond{f: f, op: pickOf(r, ops...)}
	switch c.op {
	case "exists":
		c.value = pickOf(r, "true", "false")
	case "in", "nin":
		c.value = value() + "," + value()
	case "contains", "startsWith":
		s := value()
		if f.typ == tString && len(s) > 1 && isASCII(s) {
			n := 1 + r.IntN(len(s))
			start := r.IntN(len(s) - n + 1)
			if c.op == "startsWith" {
				start = 0
			}
			s = s[start : start+n]
			if r.IntN(2) == 0 {
				s = strings.ToUpper(s)
			}
		} else if f.typ == tString && r.IntN(2) == 0 {
			s = bruteFold(s) // "zurich" for "Zürich"
		}
		c.value = s
	default:
		c.value = value()
	}
	return c
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// listQueryCase is one resource's records and how to make them.
type listQueryCase struct {
	resource string
	fields   []testField // filterable, of the records made
	sortable []testField
	plans    []string // the plan kinds that must serve some query
	create   func(t *testing.T, c *apitest.Client, r *rand.Rand)
}

func TestListsAnswerEveryFilterAndSortAsABruteForceEvaluationWhicheverPlanServesThem(t *testing.T) {
	testenv.Long(t, "a property test of 120 random lists under every plan")
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	r := rand.New(rand.NewPCG(24, 2026))

	names := []string{"Acme", "acme", "ACME Robotics", "Beta", "beta labs", "Zeta", "Émile", "Omega Corp", "Zürich Re", "Société Générale", "Zurich"}
	sectors := []any{"Robotics", "robotics", "AI", "Fintech", "", nil}
	strs := func(pool ...string) func(r *rand.Rand) any {
		return func(r *rand.Rand) any {
			var out []string
			for _, s := range pool {
				if r.IntN(3) == 0 {
					out = append(out, s)
				}
			}
			if out == nil {
				return nil
			}
			return out
		}
	}
	of := func(vs ...any) func(r *rand.Rand) any { return func(r *rand.Rand) any { return pickOf(r, vs...) } }
	companyFields := []testField{
		{"canonicalName", tString, func(r *rand.Rand) any { return pickOf(r, names...) }},
		{"sector", tString, of(sectors...)},
		{"industry", tString, of("Software", "software", "Hardware", nil)},
		{"companyType", tString, of("operating", "investor", "lender", nil)},
		{"externalId", tString, of("crm-01", "crm-77")}, // set uniquely below
		{"website", tString, of("https://acme.com", "beta.io", "https://www.Zeta.org/about", nil)},
		{"tags", tStrings, strs("ai", "robotics", "b2b", "Fintech")},
	}
	companyIDs := []string{}
	companies := listQueryCase{
		resource: "companies", fields: companyFields,
		sortable: []testField{companyFields[0], companyFields[1], companyFields[2], companyFields[3], companyFields[5],
			{"id", tString, nil}, {"createdAt", tString, nil}, {"updatedAt", tString, nil}},
		plans: []string{"key", "index", "search"},
		create: func(t *testing.T, c *apitest.Client, r *rand.Rand) {
			for i := range 40 {
				body := map[string]any{}
				for _, f := range companyFields {
					if v := f.gen(r); v != nil {
						body[f.name] = v
					}
				}
				body["canonicalName"] = pickOf(r, names...)
				delete(body, "externalId")
				if r.IntN(2) == 0 {
					body["externalId"] = fmt.Sprintf("crm-%02d", i)
				}
				companyIDs = append(companyIDs, apitest.IDOf(t, apitest.CreateCompany(t, c, body)))
			}
		},
	}
	dealFields := []testField{
		{"name", tString, func(r *rand.Rand) any { return pickOf(r, names...) }},
		{"companyId", tString, func(r *rand.Rand) any {
			if r.IntN(4) == 0 {
				return nil
			}
			return pickOf(r, companyIDs[:3]...)
		}},
		{"stage", tString, of("Sourcing", "diligence", "IC", nil)},
		{"status", tString, of("open", "won", "lost", "passed")},
		{"amount", tNumber, of(0.0, 5.0, 12.5, 100.0, 2500.0, nil)},
		{"closeDate", tDate, of("2025-01-01", "2025-06-30", "2026-02-28", nil)},
		{"tags", tStrings, strs("ai", "robotics", "b2b")},
	}
	deals := listQueryCase{
		resource: "deals", fields: dealFields,
		sortable: []testField{dealFields[0], dealFields[1], dealFields[2], dealFields[3], dealFields[4], dealFields[5],
			{"id", tString, nil}, {"createdAt", tString, nil}},
		plans: []string{"key", "index"},
		create: func(t *testing.T, c *apitest.Client, r *rand.Rand) {
			for range 40 {
				body := map[string]any{}
				for _, f := range dealFields {
					if v := f.gen(r); v != nil {
						body[f.name] = v
					}
				}
				body["name"] = pickOf(r, names...)
				if body["amount"] != nil {
					body["currency"] = "USD"
				}
				c.Do("POST", "/v1/deals", body).Want(t, 201)
			}
		},
	}
	companies.create(t, c, r)
	deals.create(t, c, r)
	// Another organization's records never show.
	other := e.Org(t)
	apitest.CreateCompany(t, other, map[string]any{"canonicalName": "Acme", "sector": "Robotics"})

	for _, lc := range []listQueryCase{companies, deals} {
		all := apitest.PageAll(t, c, "/v1/"+lc.resource+"?limit=1000")
		seen := map[string]bool{}
		for i := range 60 {
			var conds []testCond
			for range r.IntN(4) {
				conds = append(conds, randomCond(r, lc.fields, all))
			}
			if i%5 == 0 { // an index's own case: one equality on a lookup field
				f := lc.fields[4]
				if lc.resource == "deals" {
					f = lc.fields[1]
				}
				for _, rec := range all {
					if v, ok := rec[f.name].(string); ok && v != "" && r.IntN(3) == 0 {
						conds = []testCond{{f: f, op: "eq", value: v}}
						break
					}
				}
			}
			var keys []testKey
			for range r.IntN(4) {
				f := pickOf(r, lc.sortable...)
				if !slices.ContainsFunc(keys, func(k testKey) bool { return k.f.name == f.name }) {
					keys = append(keys, testKey{f, r.IntN(2) == 0})
				}
			}
			q := url.Values{}
			used := map[string]bool{}
			var kept []testCond
			for _, cond := range conds {
				if used[cond.param()] {
					continue
				}
				used[cond.param()] = true
				kept = append(kept, cond)
				q.Set(cond.param(), cond.value)
			}
			var sortParts []string
			for _, k := range keys {
				sortParts = append(sortParts, map[bool]string{true: "-", false: ""}[k.desc]+k.f.name)
			}
			if len(keys) == 1 && r.IntN(2) == 0 { // a single key's direction
				sortParts[0] = keys[0].f.name
				q.Set("direction", map[bool]string{true: "desc", false: "asc"}[keys[0].desc])
			} else if len(keys) == 1 && !keys[0].desc {
				keys[0].desc = true // a single unsigned key without direction: desc
			}
			if len(sortParts) > 0 {
				q.Set("sort", strings.Join(sortParts, ","))
			}
			if len(keys) == 0 {
				keys = []testKey{{testField{name: "id"}, true}}
			}

			var want []string
			var matched []map[string]any
			for _, rec := range all {
				if !slices.ContainsFunc(kept, func(cond testCond) bool { return !cond.holds(rec) }) {
					matched = append(matched, rec)
				}
			}
			slices.SortStableFunc(matched, func(a, b map[string]any) int { return bruteCompare(keys, a, b) })
			for _, rec := range matched {
				want = append(want, rec["id"].(string))
			}

			for _, hint := range []string{"", "key", "index", "search"} {
				limit := 1 + r.IntN(7)
				qs := q.Encode()
				first := c.Do("GET", "/v1/"+lc.resource+"?"+qs+"&limit="+strconv.Itoa(limit), nil, "X-Query-Plan", hint)
				if hint != "" && first.Status == 400 && strings.Contains(first.Error(t), "X-Query-Plan") {
					continue // that plan cannot serve this list
				}
				first.Want(t, 200)
				plan := first.Header.Get("X-Query-Plan")
				if hint != "" && !strings.HasPrefix(plan, hint) {
					t.Fatalf("%s?%s with X-Query-Plan %s: served by %q", lc.resource, qs, hint, plan)
				}
				kind, _, _ := strings.Cut(plan, ":")
				seen[kind] = true
				seen[plan] = true
				got := apitest.IDsOf(t, first.List(t))
				for next := first.Header.Get("X-Next-Cursor"); next != ""; {
					p := c.Do("GET", "/v1/"+lc.resource+"?"+qs+"&limit="+strconv.Itoa(limit)+"&cursor="+url.QueryEscape(next), nil, "X-Query-Plan", hint).Want(t, 200)
					got = append(got, apitest.IDsOf(t, p.List(t))...)
					next = p.Header.Get("X-Next-Cursor")
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s?%s by %s (paged by %d):\n got %v\nwant %v", lc.resource, qs, plan, limit, got, want)
				}
				// Offset paging gives the same second page.
				if len(want) > limit {
					p := c.Do("GET", "/v1/"+lc.resource+"?"+qs+"&limit="+strconv.Itoa(limit)+"&page=2", nil, "X-Query-Plan", hint).Want(t, 200)
					if got, want := apitest.IDsOf(t, p.List(t)), want[limit:min(2*limit, len(want))]; !slices.Equal(got, want) {
						t.Fatalf("%s?%s by %s, page 2 of %d: got %v, want %v", lc.resource, qs, plan, limit, got, want)
					}
				}
			}
		}
		for _, kind := range lc.plans {
			if kind == "search" && e.Engine == nil {
				continue // a Lambda list function holds no search engine
			}
			if !seen[kind] {
				t.Errorf("%s: no query was served by a %s plan (plans seen: %v)", lc.resource, kind, seen)
			}
		}
		t.Logf("%s: plans seen %v", lc.resource, seen)
	}
}

func TestExpandCarriesEachReferencedRecordAsGetAnswersItAndFieldsKeepsTheNamedOnes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	acme := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme <Robotics> & Co", "sector": "Robotics"})
	gone := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Gone"})
	withCompany := apitest.IDOf(t, c.Do("POST", "/v1/deals", map[string]any{"name": "A", "companyId": apitest.IDOf(t, acme), "amount": 5, "currency": "USD"}).Want(t, 201).Object(t))
	toGone := apitest.IDOf(t, c.Do("POST", "/v1/deals", map[string]any{"name": "B", "companyId": apitest.IDOf(t, gone)}).Want(t, 201).Object(t))
	alone := apitest.IDOf(t, c.Do("POST", "/v1/deals", map[string]any{"name": "C"}).Want(t, 201).Object(t))
	person := apitest.IDOf(t, c.Do("POST", "/v1/people", map[string]any{"firstName": "Ada", "companyIds": []string{apitest.IDOf(t, acme), apitest.IDOf(t, gone)}}).Want(t, 201).Object(t))
	c.Do("DELETE", "/v1/companies/"+apitest.IDOf(t, gone), nil).Want(t, 204)

	r := c.Do("GET", "/v1/deals?expand=companyId&fields=name,companyId", nil).Want(t, 200)
	asGet := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, acme), nil).Want(t, 200).Body
	// The record as GET answers it, byte for byte (no re-encoding: "<" stays "<").
	var get struct{ Data json.RawMessage }
	if err := json.Unmarshal(asGet, &get); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.Body), `"expanded":{"companyId":`+string(get.Data)+`}`) {
		t.Errorf("the expanded company is not GET's answer:\n%s\nGET: %s", r.Body, asGet)
	}
	byID := map[string]map[string]any{}
	for _, d := range r.List(t) {
		byID[apitest.IDOf(t, d)] = d
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range d {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.Equal(keys, []string{"companyId", "expanded", "id", "name"}) {
			t.Errorf("fields=name,companyId&expand=companyId answered fields %v", keys)
		}
	}
	exp := func(id string) any { return byID[id]["expanded"].(map[string]any)["companyId"] }
	if m, ok := exp(withCompany).(map[string]any); !ok || m["id"] != apitest.IDOf(t, acme) {
		t.Errorf("expanded company: %v", exp(withCompany))
	}
	if exp(toGone) != nil || exp(alone) != nil {
		t.Errorf("a deleted or absent company expands to %v and %v, want null", exp(toGone), exp(alone))
	}
	// An array of references: the records that exist.
	p := c.Do("GET", "/v1/people?expand=companyIds&fields=firstName", nil).Want(t, 200).List(t)
	if got := p[0]["expanded"].(map[string]any)["companyIds"].([]any); len(got) != 1 || apitest.IDOf(t, got[0].(map[string]any)) != apitest.IDOf(t, acme) || apitest.IDOf(t, p[0]) != person {
		t.Errorf("people expand=companyIds: %v", p[0])
	}
	// A score's framework.
	fw := apitest.IDOf(t, c.Do("POST", "/v1/frameworks", map[string]any{"name": "Core", "elements": []any{
		map[string]any{"id": "e1", "name": "Team", "weight": 2}}}).Want(t, 201).Object(t))
	c.Do("POST", "/v1/scores", map[string]any{"frameworkId": fw, "company": apitest.IDOf(t, acme),
		"elementScores": []any{map[string]any{"elementId": "e1", "score": 80}}}).Want(t, 201)
	s := c.Do("GET", "/v1/scores?expand=frameworkId,company", nil).Want(t, 200).List(t)
	if x := s[0]["expanded"].(map[string]any); apitest.IDOf(t, x["frameworkId"].(map[string]any)) != fw || apitest.IDOf(t, x["company"].(map[string]any)) != apitest.IDOf(t, acme) {
		t.Errorf("scores expand=frameworkId,company: %v", x)
	}

	// A page naming more related records than one answer reads is refused.
	var many []string
	for range 3 {
		many = append(many, apitest.IDOf(t, acme))
	}
	for range 2 {
		c.Do("POST", "/v1/screenings", map[string]any{"name": "S", "frameworkId": fw, "companyIds": many}).Want(t, 201)
	}
	if r := c.Do("GET", "/v1/screenings?expand=companyIds", nil).Want(t, 200).List(t); len(r) != 2 {
		t.Errorf("screenings expand=companyIds: %v", r)
	}

	for _, bad := range []struct{ path, param string }{
		{"/v1/deals?expand=name", "expand"},
		{"/v1/deals?expand=assignees", "expand"},
		{"/v1/teams?expand=", "expand"},
		{"/v1/deals?fields=nope", "fields"},
		{"/v1/workflows?fields=trigger.secret", "fields"},
		{"/v1/workflows?filter[trigger.secret]=x", "filter[trigger.secret]"},
	} {
		r := c.Do("GET", bad.path, nil).Want(t, 400)
		if got := r.Header.Get("X-Error-Param"); got != bad.param {
			t.Errorf("%s: X-Error-Param %q, want %s (%s)", bad.path, got, bad.param, r.Body)
		}
	}
}

func TestAnExpandedPageEndsWithinTheBudgetAndPagesOn(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	big := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Big", "description": strings.Repeat("d", 19_000)}))
	for range 3 {
		var ops []map[string]any
		for range 100 {
			ops = append(ops, map[string]any{"op": "create", "data": map[string]any{"name": "Deal", "companyId": big}})
		}
		c.Do("POST", "/v1/deals/batch", map[string]any{"operations": ops}).Want(t, 200)
	}
	r := c.Do("GET", "/v1/deals?expand=companyId&limit=1000", nil).Want(t, 200)
	n := len(r.List(t))
	if len(r.Body) > 5_000_000 || n == 0 || n >= 300 || r.Header.Get("X-Next-Cursor") == "" {
		t.Fatalf("an expanded page of %d bytes held %d deals, next %q", len(r.Body), n, r.Header.Get("X-Next-Cursor"))
	}
	all := apitest.PageAll(t, c, "/v1/deals?expand=companyId&limit=1000")
	if len(all) != 300 {
		t.Errorf("paged %d expanded deals, want 300", len(all))
	}
}

func TestACursorOnlyContinuesTheListItCameFrom(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, s := range []string{"AI", "AI", "Robotics", "AI"} {
		apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Co " + s, "sector": s})
	}
	for _, hint := range []string{"key", "search"} {
		if hint == "search" && e.Engine == nil {
			continue
		}
		r := c.Do("GET", "/v1/companies?filter[sector]=AI&limit=1", nil, "X-Query-Plan", hint).Want(t, 200)
		next := url.QueryEscape(r.Header.Get("X-Next-Cursor"))
		if next == "" {
			t.Fatalf("%s: no next cursor", hint)
		}
		for _, other := range []string{"filter[sector]=Robotics", "filter[sector]=AI&sort=canonicalName", "filter[sector][ne]=AI"} {
			r := c.Do("GET", "/v1/companies?"+other+"&limit=1&cursor="+next, nil, "X-Query-Plan", hint).Want(t, 400)
			if r.Header.Get("X-Error-Param") != "cursor" {
				t.Errorf("%s: a cursor of another list (%s): %s", hint, other, r.Body)
			}
		}
	}
	// A list of more than one page that no plan can serve as asked.
	r := c.Do("GET", "/v1/companies?sort=sector", nil, "X-Query-Plan", "index").Want(t, 400)
	if r.Header.Get("X-Error-Param") != "X-Query-Plan" {
		t.Errorf("an impossible plan: %s", r.Body)
	}
}

func TestWorkflowsAndRunsTakeFiltersSortsAndFields(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	a := apitest.WorkflowWith(t, c, "Alpha", apitest.Step("s", "set", map[string]any{"v": 1}))
	b := apitest.WorkflowWith(t, c, "beta <b>", apitest.Step("s", "set", map[string]any{"v": 2}))
	apitest.WorkflowWith(t, c, "Gamma", apitest.Step("s", "set", map[string]any{"v": 3}))
	apitest.RunToEnd(t, c, a, nil)
	run := apitest.IDOf(t, apitest.RunToEnd(t, c, b, nil))

	r := c.Do("GET", "/v1/workflows?filter[name][in]="+url.QueryEscape("Alpha,beta <b>")+"&sort=-name&fields=name", nil).Want(t, 200)
	got := r.List(t)
	if len(got) != 2 || got[0]["name"] != "beta <b>" || got[1]["name"] != "Alpha" || len(got[0]) != 2 {
		t.Errorf("workflows filtered by name, sorted -name, fields=name: %v", got)
	}
	if !strings.Contains(string(r.Body), `"beta <b>"`) {
		t.Errorf("a chosen field is re-encoded with HTML escapes: %s", r.Body)
	}
	got = c.Do("GET", "/v1/workflow-runs?filter[workflowId]="+b+"&filter[status]=completed", nil).Want(t, 200).List(t)
	if len(got) != 1 || apitest.IDOf(t, got[0]) != run {
		t.Errorf("runs of b, completed: %v", got)
	}
	// A trigger's secret is never a filter, a sort or a chosen field.
	for _, path := range []string{"/v1/workflows?filter[trigger.secret][exists]=true", "/v1/workflows?sort=trigger.secret", "/v1/workflows?fields=secret"} {
		c.Do("GET", path, nil).Want(t, 400)
	}
}
