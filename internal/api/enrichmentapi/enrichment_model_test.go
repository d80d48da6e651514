package enrichmentapi_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// A company's values of the properties no write touches survive every kind
// of enrichment write: the rule is that a property's value changes only by
// a direct write of that property or by reconciling its own candidates.
func TestEveryEnrichmentWriteKeepsTheValuesOfOtherProperties(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	held := map[string]any{"website": "https://acme.example", "description": "Warehouse robots",
		"sector": "Robotics", "shortDescription": "Robots"}
	body := map[string]any{"canonicalName": "Acme Held", "externalId": "ext-held"}
	for k, v := range held {
		body[k] = v
	}
	o := &enrichOrg{c: c, id: apitest.IDOf(t, apitest.CreateCompany(t, c, body))}
	keeps := func(after string) {
		t.Helper()
		co := o.company(t)
		for k, v := range held {
			if co[k] != v {
				t.Errorf("after %s: %s = %v, want %v", after, k, co[k], v)
			}
		}
	}
	added := o.add(t, cand("employeeCount", 40))
	keeps("an enrichment POST")
	o.c.Do("PATCH", o.path()+"/"+added[0]["id"].(string), map[string]any{"pinned": true}).Want(t, 200)
	keeps("a PATCH pin")
	o.c.Do("DELETE", o.path()+"/"+added[0]["id"].(string), nil).Want(t, 204)
	keeps("a value DELETE")
	if co := o.company(t); co["employeeCount"] != nil {
		t.Errorf("employeeCount = %v after its last candidate was deleted, want null", co["employeeCount"])
	}
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "Industry", "steps": []any{
		map[string]any{"id": "up", "type": "upsertCompany", "with": map[string]any{"externalId": "ext-held", "industry": "Automation"}},
	}}).Want(t, 201).Object(t)
	apitest.WantStatus(t, apitest.AwaitRun(t, c, apitest.IDOf(t, c.Do("POST", "/v1/workflows/"+apitest.IDOf(t, wf)+"/runs", map[string]any{}).Want(t, 202).Object(t))), "completed")
	keeps("an upsertCompany step")
	if co := o.company(t); co["industry"] != "Automation" {
		t.Errorf("industry = %v, want the workflow's", co["industry"])
	}
	checkConsistent(t, o, o.company(t))
}

// FuzzEnrichmentModel drives random sequences of company and enrichment
// writes (create, PUT, enrichment POST, PATCH, DELETE, an upsertCompany
// step, company DELETE) through the HTTP API and checks the company and
// its candidates after every step against a small reference model of the
// rules of docs/enrichment.md. `make test` runs the seeds below; `make
// fuzz` runs new ones.
func FuzzEnrichmentModel(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3} {
		f.Add(seed, uint8(30))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint8) {
		e := apitest.New(t)
		m := &enrichModel{t: t, c: e.Org(t), rnd: rand.New(rand.NewPCG(seed, seed^0x5eed))}
		for i := range int(steps%60) + 1 {
			m.step(i)
			if t.Failed() {
				t.Fatalf("seed %d: the model and the service disagree after step %d:\n%s", seed, i, strings.Join(m.log, "\n"))
			}
		}
	})
}

// The properties the model writes: scalar ones, so that "cleared" is null.
var modelProps = []string{"website", "description", "sector", "shortDescription", "industry", "employeeCount"}

func modelValue(r *rand.Rand, prop string) any {
	n := r.IntN(3)
	switch prop {
	case "website":
		return fmt.Sprintf("https://site%d.example", n)
	case "employeeCount":
		return float64(10 * (n + 1))
	default:
		return fmt.Sprintf("%s %d", prop, n)
	}
}

// mCand is a candidate as the model knows it; the times and ids the
// service assigns are taken from its answers.
type mCand struct {
	id, prop, source, provider string
	value                      any
	confidence                 float64
	pinned                     bool
	capturedOn, pinnedAt       string
}

type enrichModel struct {
	t      *testing.T
	c      *apitest.Client
	rnd    *rand.Rand
	id     string // the company, "" when there is none
	ext    int
	fields map[string]any
	cands  map[string]*mCand
	clock  int // the capturedOn of posted values: distinct, in the past
	made   int // candidates the model expected the service to make
	log    []string
}

func (m *enrichModel) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf(format, args...))
}

func (m *enrichModel) step(i int) {
	if m.id == "" {
		m.create()
	} else {
		switch k := m.rnd.IntN(20); {
		case k < 6:
			m.post()
		case k < 9:
			m.put()
		case k < 12:
			m.pin()
		case k < 15:
			m.deleteValue()
		case k < 18:
			m.upsert()
		case k < 19:
			m.deleteCompany()
			return
		default:
			m.create()
		}
	}
	m.check()
}

// subset is a random non-empty subset of the properties a company's
// writes set (employeeCount only enrichment sets).
func (m *enrichModel) subset() []string {
	var out []string
	for _, p := range modelProps {
		if p != "employeeCount" && m.rnd.IntN(3) == 0 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = append(out, modelProps[m.rnd.IntN(len(modelProps)-1)])
	}
	return out
}

func (m *enrichModel) path() string { return "/v1/enrichments/resources/companies/" + m.id }

func (m *enrichModel) create() {
	m.ext++
	body := map[string]any{"canonicalName": fmt.Sprintf("Model %d", m.ext), "externalId": fmt.Sprintf("ext-%d", m.ext)}
	m.fields, m.cands = map[string]any{}, map[string]*mCand{}
	for _, p := range modelProps {
		m.fields[p] = nil
	}
	for _, p := range m.subset() {
		body[p] = modelValue(m.rnd, p)
		m.fields[p] = body[p]
	}
	m.logf("create %v", body)
	m.id = apitest.IDOf(m.t, m.c.Do("POST", "/v1/companies", body).Want(m.t, 201).Object(m.t))
}

func (m *enrichModel) deleteCompany() {
	m.logf("delete company")
	m.c.Do("DELETE", "/v1/companies/"+m.id, nil).Want(m.t, 204)
	m.c.Do("GET", "/v1/companies/"+m.id, nil).Want(m.t, 404)
	m.c.Do("GET", m.path(), nil).Want(m.t, 404)
	m.id = ""
}

// post adds one to three candidates.
func (m *enrichModel) post() {
	sources := []string{"provider", "web", "user", "workflow"}
	var values []any
	var want []*mCand
	for range 1 + m.rnd.IntN(3) {
		p := modelProps[m.rnd.IntN(len(modelProps))]
		m.clock++
		c := &mCand{prop: p, value: modelValue(m.rnd, p), source: sources[m.rnd.IntN(len(sources))],
			confidence: float64([]int{10, 50, 90, 100}[m.rnd.IntN(4)]), provider: "model",
			capturedOn: time.Date(2025, 1, 1, 0, 0, m.clock, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")}
		want = append(want, c)
		values = append(values, map[string]any{"property": p, "value": c.value, "source": c.source,
			"confidence": c.confidence, "provider": c.provider, "capturedOn": c.capturedOn})
	}
	m.logf("post %v", values)
	before := m.propsWithCandidates()
	got := m.c.Do("POST", m.path(), map[string]any{"values": values}).Want(m.t, 201).List(m.t)
	for i, v := range got {
		want[i].id = v["id"].(string)
		m.cands[want[i].id] = want[i]
	}
	m.holdValues(before)
	m.reconcile(before)
}

// holdValues adds the pinned user candidates the service makes of the
// values the company held for properties that had no candidate before a
// write and have some now (unless one of them holds that very value).
func (m *enrichModel) holdValues(before map[string]bool) {
	m.holdValuesOf(before, m.fields)
}

func (m *enrichModel) holdValuesOf(before map[string]bool, held map[string]any) {
	now := m.propsWithCandidates()
	for _, p := range modelProps {
		if before[p] || !now[p] || held[p] == nil || m.holds(p, held[p]) {
			continue
		}
		m.expectNew(&mCand{prop: p, value: held[p], source: "user", confidence: 100, pinned: true})
	}
}

func (m *enrichModel) holds(p string, v any) bool {
	for _, c := range m.cands {
		if c.prop == p && reflect.DeepEqual(c.value, v) {
			return true
		}
	}
	return false
}

// pending are the candidates the service is expected to have made in the
// current step, whose ids and times check learns from the listing.
var pendingKey = "pending"

func (m *enrichModel) expectNew(c *mCand) {
	m.made++
	c.id = pendingKey + fmt.Sprint(m.made)
	m.cands[c.id] = c
}

// put sets or clears some properties through PUT /v1/companies/{id}.
func (m *enrichModel) put() {
	body := map[string]any{}
	for _, p := range m.subset() {
		if m.rnd.IntN(4) == 0 {
			body[p] = nil
		} else {
			body[p] = modelValue(m.rnd, p)
		}
	}
	m.logf("put %v", body)
	before := m.propsWithCandidates()
	m.c.Do("PUT", "/v1/companies/"+m.id, body).Want(m.t, 200)
	for p, v := range body {
		m.fields[p] = v
		if !before[p] {
			continue
		}
		var kept *mCand
		for id, c := range m.cands {
			if c.prop != p || c.source != "user" || (v != nil && c.provider != "company-update") {
				continue
			}
			if v != nil && c.pinned && reflect.DeepEqual(c.value, v) && kept == nil {
				kept = c
				continue
			}
			delete(m.cands, id)
		}
		if v != nil && kept == nil {
			m.expectNew(&mCand{prop: p, value: v, source: "user", provider: "company-update", confidence: 100, pinned: true})
		}
		if kept != nil {
			kept.pinnedAt = "" // the service pins it again when another outranks it: learnt from the listing
		}
	}
	m.reconcile(before)
	// A direct write decides the value: the PUT's value is read back.
	for p, v := range body {
		if v != nil && !reflect.DeepEqual(m.fields[p], v) {
			m.t.Errorf("the model reconciled %s to %v after a PUT of %v", p, m.fields[p], v)
		}
	}
}

func (m *enrichModel) some() *mCand {
	if len(m.cands) == 0 {
		return nil
	}
	ids := make([]string, 0, len(m.cands))
	for id := range m.cands {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return m.cands[ids[m.rnd.IntN(len(ids))]]
}

func (m *enrichModel) pin() {
	c := m.some()
	if c == nil {
		m.post()
		return
	}
	pinned := m.rnd.IntN(3) != 0
	m.logf("patch %s (%s %v) pinned=%v", c.id, c.prop, c.value, pinned)
	before := m.propsWithCandidates()
	got := m.c.Do("PATCH", m.path()+"/"+c.id, map[string]any{"pinned": pinned}).Want(m.t, 200).Object(m.t)
	if c.pinned != pinned {
		c.pinned = pinned
		c.pinnedAt, _ = got["pinnedAt"].(string)
	}
	m.reconcile(before)
}

func (m *enrichModel) deleteValue() {
	c := m.some()
	if c == nil {
		m.c.Do("DELETE", m.path()+"/env_01hzz0000000000000000000000", nil).Want(m.t, 404)
		return
	}
	m.logf("delete value %s (%s %v)", c.id, c.prop, c.value)
	before := m.propsWithCandidates()
	m.c.Do("DELETE", m.path()+"/"+c.id, nil).Want(m.t, 204)
	delete(m.cands, c.id)
	m.reconcile(before)
}

// upsert runs a workflow whose upsertCompany step matches the company by
// externalId and sets some properties (a null now and then).
func (m *enrichModel) upsert() {
	with := map[string]any{"externalId": fmt.Sprintf("ext-%d", m.ext)}
	for _, p := range m.subset() {
		if m.rnd.IntN(5) == 0 {
			with[p] = nil
		} else {
			with[p] = modelValue(m.rnd, p)
		}
	}
	m.logf("upsert %v", with)
	wf := m.c.Do("POST", "/v1/workflows", map[string]any{"name": "Model upsert", "steps": []any{
		map[string]any{"id": "up", "type": "upsertCompany", "with": with}}}).Want(m.t, 201).Object(m.t)
	before := m.propsWithCandidates()
	held := map[string]any{}
	for k, v := range m.fields {
		held[k] = v
	}
	run := apitest.AwaitRun(m.t, m.c, apitest.IDOf(m.t, m.c.Do("POST", "/v1/workflows/"+apitest.IDOf(m.t, wf)+"/runs", map[string]any{}).Want(m.t, 202).Object(m.t)))
	apitest.WantStatus(m.t, run, "completed")
	enrichable := false
	for p, v := range with {
		if p == "externalId" {
			continue
		}
		enrichable = true
		m.fields[p] = v
		if v != nil {
			m.expectNew(&mCand{prop: p, value: v, source: "workflow", confidence: 100})
		}
	}
	if enrichable {
		m.holdValuesOf(before, held)
	}
	m.reconcile(before)
}

func (m *enrichModel) propsWithCandidates() map[string]bool {
	out := map[string]bool{}
	for _, c := range m.cands {
		out[c.prop] = true
	}
	return out
}

// reconcile sets each property that has candidates to its best ranked
// one, and clears those that had candidates before the write and have
// none left. The others keep their values.
func (m *enrichModel) reconcile(before map[string]bool) {
	m.learn()
	now := m.propsWithCandidates()
	for _, p := range modelProps {
		switch {
		case now[p]:
			m.fields[p] = m.ranked(p)[0].value
		case before[p]:
			m.fields[p] = nil
		}
	}
}

// learn takes the ids and times of the candidates the service made in
// this step, and the pin times it assigned, from the listing.
func (m *enrichModel) learn() {
	listed := m.c.Do("GET", m.path(), nil).Want(m.t, 200).List(m.t)
	known := map[string]map[string]any{}
	for _, v := range listed {
		known[v["id"].(string)] = v
	}
	for id, c := range m.cands {
		if !strings.HasPrefix(id, pendingKey) {
			continue
		}
		for lid, v := range known {
			if _, taken := m.cands[lid]; taken || v["property"] != c.prop || v["source"] != c.source || !reflect.DeepEqual(v["value"], c.value) {
				continue
			}
			delete(m.cands, id)
			c.id = lid
			m.cands[lid] = c
			c.capturedOn = v["capturedOn"].(string)
			break
		}
	}
	for id, c := range m.cands {
		if v, ok := known[id]; ok && c.pinned {
			c.pinnedAt, _ = v["pinnedAt"].(string)
		}
	}
}

// ranked are prop's candidates by the documented rules.
func (m *enrichModel) ranked(prop string) []*mCand {
	var out []*mCand
	for _, c := range m.cands {
		if c.prop == prop {
			out = append(out, c)
		}
	}
	priority := map[string]int{"user": 0, "document": 1, "provider": 2, "workflow": 3, "web": 4}
	slices.SortFunc(out, func(a, b *mCand) int {
		switch {
		case a.pinned != b.pinned:
			return map[bool]int{true: -1, false: 1}[a.pinned]
		case a.pinned && a.pinnedAt != b.pinnedAt:
			return -strings.Compare(a.pinnedAt, b.pinnedAt)
		case a.confidence != b.confidence:
			if a.confidence > b.confidence {
				return -1
			}
			return 1
		case a.source != b.source:
			return priority[a.source] - priority[b.source]
		case a.capturedOn != b.capturedOn:
			return -strings.Compare(a.capturedOn, b.capturedOn)
		}
		return -strings.Compare(a.id, b.id)
	})
	return out
}

// check compares the service's company and candidates with the model's.
func (m *enrichModel) check() {
	t := m.t
	t.Helper()
	listed := m.c.Do("GET", m.path(), nil).Want(t, 200).List(t)
	if len(listed) != len(m.cands) {
		t.Errorf("the service has %d candidates, the model %d", len(listed), len(m.cands))
	}
	for _, v := range listed {
		c, ok := m.cands[v["id"].(string)]
		if !ok {
			t.Errorf("an unexpected candidate %v", v)
			continue
		}
		if v["property"] != c.prop || v["source"] != c.source || !reflect.DeepEqual(v["value"], c.value) ||
			v["confidence"] != c.confidence || v["pinned"] != c.pinned {
			t.Errorf("candidate %v, the model has %+v", v, *c)
		}
	}
	co := m.c.Do("GET", "/v1/companies/"+m.id, nil).Want(t, 200).Object(t)
	for _, p := range modelProps {
		if !reflect.DeepEqual(co[p], m.fields[p]) {
			t.Errorf("%s = %v, the model says %v", p, co[p], m.fields[p])
		}
	}
}
