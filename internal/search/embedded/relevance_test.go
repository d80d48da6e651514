package embedded_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Asserted figures of the relevance set (searchtest.RelevanceQueries):
// measured with the local model, hybrid's mean nDCG@10 on the 20 queries
// sharing no word with their companies is 0.81, keyword's 0.00 (by
// construction); on the 5 queries sharing words, hybrid's is 0.99 and
// keyword's 0.97.
const (
	// hybridMargin: hybrid's mean nDCG@10 exceeds keyword's by at least
	// this much on the queries sharing no keyword.
	hybridMargin = 0.5
	// hybridTolerance: hybrid's mean nDCG@10 is at most this much below
	// keyword's on the queries sharing keywords.
	hybridTolerance = 0.05
)

// semEnv is an embedded engine with the local model over companies
// written as the API writes them (so the change feed has them).
type semEnv struct {
	t      testing.TB
	st     *store.Store
	svc    *companies.Service
	engine *embedded.Embedded
	schema *search.Schema
	// ids: by organization, the ids of the companies by canonicalName.
	ids map[string]map[string]string
}

func newSemEnv(t testing.TB, st *store.Store) *semEnv {
	t.Helper()
	if st == nil {
		st = testenv.Store(t)
	}
	return &semEnv{t: t, st: st, svc: companies.NewService(st), schema: search.SchemaOf(companies.Def),
		engine: embedded.New(st, 0, vectors.New(embedtest.Local(t), st, false)), ids: map[string]map[string]string{}}
}

func companyBody(c searchtest.RelevanceCompany) []byte {
	b, err := json.Marshal(c.Record())
	if err != nil {
		panic(err)
	}
	return b
}

// write creates cs in org, 8 at a time.
func (e *semEnv) write(org string, cs []searchtest.RelevanceCompany) {
	e.t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed error
	sem := make(chan struct{}, 8)
	if e.ids[org] == nil {
		e.ids[org] = map[string]string{}
	}
	for _, c := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			id, err := e.create(org, companyBody(c))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = err
				return
			}
			e.ids[org][c.CanonicalName] = id
		}()
	}
	wg.Wait()
	if failed != nil {
		e.t.Fatal(failed)
	}
}

func (e *semEnv) create(org string, body []byte) (string, error) {
	f, err := companies.DecodeCreate(body)
	if err != nil {
		return "", fmt.Errorf("decode %s: %w", body, err)
	}
	c, err := e.svc.Create(context.Background(), org, f, companies.OriginUser)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", body, err)
	}
	return c.ID, nil
}

func (e *semEnv) update(org, name, body string) {
	e.t.Helper()
	f, err := companies.DecodeUpdate([]byte(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.svc.Update(context.Background(), org, e.ids[org][name], f); err != nil {
		e.t.Fatal(err)
	}
}

func (e *semEnv) delete(org, name string) {
	e.t.Helper()
	if err := e.svc.Delete(context.Background(), org, e.ids[org][name]); err != nil {
		e.t.Fatal(err)
	}
	delete(e.ids[org], name)
}

// page is a result's records as canonicalNames, checked to be org's.
func (e *semEnv) page(org string, res *search.Result) []string {
	e.t.Helper()
	var out []string
	for _, raw := range res.Records {
		var rec struct{ ID, CanonicalName string }
		if err := json.Unmarshal(raw, &rec); err != nil {
			e.t.Fatal(err)
		}
		if e.ids[org][rec.CanonicalName] != rec.ID {
			e.t.Fatalf("%s (%s) is no company of %s: %s", rec.CanonicalName, rec.ID, org, raw)
		}
		out = append(out, rec.CanonicalName)
	}
	return out
}

// search runs body (page 1 of limit) in org.
func (e *semEnv) search(org, body string, limit int) ([]string, *search.Result) {
	e.t.Helper()
	req, err := search.Decode(e.schema, []byte(body), 1, limit)
	if err != nil {
		e.t.Fatalf("decode %s: %v", body, err)
	}
	res, err := e.engine.Search(context.Background(), org, e.schema, req)
	if err != nil {
		e.t.Fatalf("search %s: %v", body, err)
	}
	return e.page(org, res), res
}

// similar asks the companies nearest to company name of org, by page.
func (e *semEnv) similar(org, name string, page, limit int) ([]string, *search.Result) {
	e.t.Helper()
	req, err := search.Decode(e.schema, nil, page, limit)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.engine.Similar(context.Background(), org, e.schema, e.ids[org][name], req)
	if err != nil {
		e.t.Fatalf("similar to %s: %v", name, err)
	}
	return e.page(org, res), res
}

func textSearch(text string, hybrid bool) string {
	b, _ := json.Marshal(map[string]any{"text": text, "hybrid": hybrid})
	return string(b)
}

// relevanceEnv holds the relevance set's companies in org1, and copies of
// every third one in org2.
func relevanceEnv(t *testing.T) *semEnv {
	e := newSemEnv(t, nil)
	e.write("org1", searchtest.RelevanceCompanies)
	var copies []searchtest.RelevanceCompany
	for i, c := range searchtest.RelevanceCompanies {
		if i%3 == 0 {
			copies = append(copies, c)
		}
	}
	e.write("org2", copies)
	return e
}

func TestHybridRelevanceBeatsKeywordsOnQueriesSharingNoWordAndMatchesThemOnTheOthers(t *testing.T) {
	t.Parallel()
	e := relevanceEnv(t)
	var sum [2][2]float64 // [shares keywords][hybrid]
	var n [2]int
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-26s %-6s %8s %8s  %s\n", "query", "shares", "keyword", "hybrid", "hybrid's top 3")
	var failing []string
	for _, q := range searchtest.RelevanceQueries {
		group := 0
		if !q.NoSharedKeyword {
			group = 1
		}
		n[group]++
		var ndcg [2]float64
		var top []string
		for h, hybrid := range []bool{false, true} {
			names, res := e.search("org1", textSearch(q.Text, hybrid), 10)
			want := search.RankingKeyword
			if hybrid {
				want = search.RankingHybrid
			}
			if res.Ranking != want {
				t.Errorf("%q hybrid %v: ranking %q, want %q", q.Text, hybrid, res.Ranking, want)
			}
			ndcg[h] = searchtest.NDCG(names, q.Relevant, 10)
			sum[group][h] += ndcg[h]
			top = names[:min(3, len(names))]
		}
		if ndcg[1] < 0.5 {
			failing = append(failing, fmt.Sprintf("%q (%.2f)", q.Text, ndcg[1]))
		}
		fmt.Fprintf(&table, "%-26s %-6v %8.3f %8.3f  %s\n", q.Text, !q.NoSharedKeyword, ndcg[0], ndcg[1], strings.Join(top, ", "))
	}
	mean := func(group, h int) float64 { return sum[group][h] / float64(n[group]) }
	all := func(h int) float64 { return (sum[0][h] + sum[1][h]) / float64(n[0]+n[1]) }
	fmt.Fprintf(&table, "mean nDCG@10, sharing no keyword (%d queries): keyword %.3f, hybrid %.3f\n", n[0], mean(0, 0), mean(0, 1))
	fmt.Fprintf(&table, "mean nDCG@10, sharing keywords (%d queries):   keyword %.3f, hybrid %.3f\n", n[1], mean(1, 0), mean(1, 1))
	fmt.Fprintf(&table, "mean nDCG@10, all (%d queries):                keyword %.3f, hybrid %.3f\n", n[0]+n[1], all(0), all(1))
	fmt.Fprintf(&table, "hybrid below 0.5: %s", strings.Join(failing, ", "))
	t.Log(table.String())
	if d := mean(0, 1) - mean(0, 0); d < hybridMargin {
		t.Errorf("on the queries sharing no keyword hybrid's mean nDCG@10 exceeds keyword's by %.3f, want %.2f or more", d, hybridMargin)
	}
	if d := mean(1, 0) - mean(1, 1); d > hybridTolerance {
		t.Errorf("on the queries sharing keywords hybrid's mean nDCG@10 is %.3f below keyword's, want at most %.2f", d, hybridTolerance)
	}
}

func TestHybridRankingIsSaidInTheResultAndKeywordWithoutTextOrModel(t *testing.T) {
	t.Parallel()
	e := newSemEnv(t, nil)
	e.write("org1", searchtest.RelevanceCompanies[:6])
	for body, want := range map[string]string{
		`{"text":"electric cars","hybrid":true}`:                                    search.RankingHybrid,
		`{"text":"electric cars","hybrid":true,"fullText":true}`:                    search.RankingHybrid,
		`{"text":"electric cars","hybrid":true,"sort":[{"field":"canonicalName"}]}`: search.RankingHybrid,
		`{"text":"electric cars"}`:                                                  search.RankingKeyword,
		`{"text":"electric cars","hybrid":false}`:                                   search.RankingKeyword,
		`{"hybrid":true}`: search.RankingKeyword,
	} {
		if _, res := e.search("org1", body, 10); res.Ranking != want {
			t.Errorf("%s: ranking %q, want %q", body, res.Ranking, want)
		}
	}
	// Without a model a hybrid search ranks by keywords, and says so.
	e.engine = embedded.New(e.st, 0, nil)
	if names, res := e.search("org1", `{"text":"electric cars","hybrid":true}`, 10); res.Ranking != search.RankingKeyword || len(names) == 0 || names[0] != "Voltaro" {
		t.Errorf("no model: %v ranked %q, want Voltaro first by keyword", names, res.Ranking)
	}
	if _, err := e.engine.Similar(context.Background(), "org1", e.schema, e.ids["org1"]["Voltaro"], &search.Request{Page: 1, Limit: 10}); !errors.Is(err, search.ErrSemanticOff) {
		t.Errorf("similar with no model: %v, want search.ErrSemanticOff", err)
	}
}

func TestHybridFiltersApplyBeforeRankingEvenToTheNearestRecord(t *testing.T) {
	t.Parallel()
	e := relevanceEnv(t)
	names, _ := e.search("org1", `{"text":"beer","hybrid":true}`, 10)
	if len(names) == 0 || names[0] != "Hopline" {
		t.Fatalf("beer: %v, want the brewery first", names)
	}
	sectors := map[string]string{}
	for _, c := range searchtest.RelevanceCompanies {
		sectors[c.CanonicalName] = c.Sector
	}
	for body, admits := range map[string]func(name string) bool{
		`{"text":"beer","hybrid":true,"filters":{"and":[{"field":"sector","operator":"ne","value":"Beverages"}]}}`:                               func(n string) bool { return sectors[n] != "Beverages" },
		`{"text":"beer","hybrid":true,"filters":{"and":[{"field":"sector","operator":"eq","value":"Food"}]}}`:                                    func(n string) bool { return sectors[n] == "Food" },
		`{"text":"beer","hybrid":true,"filters":{"and":[{"field":"sector","operator":"eq","value":"Food"}]},"sort":[{"field":"canonicalName"}]}`: func(n string) bool { return sectors[n] == "Food" },
		`{"text":"beer","hybrid":true,"filters":{"and":[{"field":"canonicalName","operator":"startsWith","value":"h"}]}}`:                        func(n string) bool { return strings.HasPrefix(n, "H") },
	} {
		names, res := e.search("org1", body, 100)
		if len(names) == 0 {
			t.Errorf("%s: nothing", body)
		}
		admitted := 0
		for n := range sectors {
			if admits(n) {
				admitted++
			}
		}
		for _, n := range names {
			if !admits(n) {
				t.Errorf("%s: %s, which the filter excludes", body, n)
			}
		}
		if res.Total > admitted || res.Total != len(names) {
			t.Errorf("%s: total %d for %d records, of %d the filter admits", body, res.Total, len(names), admitted)
		}
	}
	// The filter excludes the brewery, not the next nearest: the food
	// companies, nearest to beer after it, come first.
	names, _ = e.search("org1", `{"text":"beer","hybrid":true,"filters":{"and":[{"field":"sector","operator":"ne","value":"Beverages"}]}}`, 3)
	for _, n := range names {
		if sectors[n] != "Food" && sectors[n] != "Agritech" {
			t.Errorf("beer, not a beverage: %v, want food and farming companies first", names)
			break
		}
	}
}

func TestSimilarRanksTheNearestCompaniesOfTheOrganizationByPage(t *testing.T) {
	t.Parallel()
	e := relevanceEnv(t)
	for name, near := range map[string][]string{
		"Voltaro":   {"Haulstar", "Cellvance", "Lastmile Collective"},
		"Kitchenly": {"Verdello", "Cultiva", "Greenstack", "Hopline"},
		"Sentinex":  {"Cloudwarden", "Authentik", "Phishguard"},
	} {
		top, res := e.similar("org1", name, 1, 3)
		if res.Ranking != search.RankingSemantic {
			t.Errorf("similar to %s: ranking %q", name, res.Ranking)
		}
		in := 0
		for _, n := range top {
			if slices.Contains(near, n) {
				in++
			}
		}
		if in < 2 {
			t.Errorf("similar to %s: %v, want two of %v", name, top, near)
		}
	}
	// Never the record itself; pages continue each other; the total is
	// every other company of the organization.
	all, res := e.similar("org1", "Voltaro", 1, 100)
	want := len(searchtest.RelevanceCompanies) - 1
	if len(all) != want || res.Total != want || slices.Contains(all, "Voltaro") {
		t.Errorf("similar to Voltaro: %d companies (total %d), Voltaro among them: %v; want the %d others", len(all), res.Total, slices.Contains(all, "Voltaro"), want)
	}
	var paged []string
	for page := 1; page <= 4; page++ {
		names, res := e.similar("org1", "Voltaro", page, 7)
		if res.Total != want {
			t.Errorf("page %d: total %d, want %d", page, res.Total, want)
		}
		paged = append(paged, names...)
	}
	if !slices.Equal(paged, all[:28]) {
		t.Errorf("pages 1 to 4 of 7: %v, want %v", paged, all[:28])
	}
	if names, _ := e.similar("org1", "Voltaro", 8, 7); len(names) != want-49 {
		t.Errorf("the last page: %v, want %d companies", names, want-49)
	}
	// The other organization's copies hold the same names: its answers
	// are its own.
	other, res := e.similar("org2", "Voltaro", 1, 100)
	if res.Total != len(e.ids["org2"])-1 || len(other) != res.Total {
		t.Errorf("org2: %d of %d, want its %d other companies", len(other), res.Total, len(e.ids["org2"])-1)
	}
	// An unknown id, and an id of another organization, are not found.
	for _, id := range []string{"cmp_unknown", e.ids["org2"]["Voltaro"], e.ids["org1"]["Haulstar"]} {
		org := "org1"
		if id == e.ids["org1"]["Haulstar"] {
			org = "org2"
		}
		_, err := e.engine.Similar(context.Background(), org, e.schema, id, &search.Request{Page: 1, Limit: 10})
		if !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("similar to %s in %s: %v, want apperr.ErrNotFound", id, org, err)
		}
	}
	// A filter applies to the similar records.
	names, _ := e.similar("org1", "Voltaro", 1, 3)
	req, _ := search.Decode(e.schema, []byte(`{"filters":{"and":[{"field":"sector","operator":"eq","value":"Logistics"}]}}`), 1, 100)
	res, err := e.engine.Similar(context.Background(), "org1", e.schema, e.ids["org1"]["Voltaro"], req)
	if err != nil {
		t.Fatal(err)
	}
	if logistics := e.page("org1", res); len(logistics) != 3 || res.Total != 3 {
		t.Errorf("similar logistics companies: %v (total %d), want the 3 (unfiltered top 3 %v)", logistics, res.Total, names)
	}
}

func TestSimilarAndHybridFollowATextChangeAndForgetADeletedCompany(t *testing.T) {
	t.Parallel()
	e := newSemEnv(t, nil)
	var cs []searchtest.RelevanceCompany
	for _, c := range searchtest.RelevanceCompanies {
		switch c.CanonicalName {
		case "Voltaro", "Haulstar", "Cellvance", "Verdello", "Kitchenly", "Sentinex", "Gazetta", "Docketly":
			cs = append(cs, c)
		}
	}
	e.write("org1", cs)
	top := func(names []string) string {
		if len(names) == 0 {
			return ""
		}
		return names[0]
	}
	if names, _ := e.similar("org1", "Kitchenly", 1, 10); top(names) != "Verdello" || slices.Contains(names, "Kitchenly") {
		t.Fatalf("similar to Kitchenly: %v, want Verdello first", names)
	}
	if names, _ := e.similar("org1", "Voltaro", 1, 10); top(names) != "Haulstar" {
		t.Fatalf("similar to Voltaro: %v, want Haulstar first", names)
	}
	if names, _ := e.search("org1", textSearch("automobile manufacturers", true), 10); top(names) != "Haulstar" {
		t.Fatalf("automobile manufacturers: %v, want Haulstar first", names)
	}
	// Haulstar turns to meal kits: its vector follows its text.
	e.update("org1", "Haulstar", `{"description":"Ships weekly boxes of recipes and fresh groceries to families who cook at home.","sector":"Food","tags":["groceries"]}`)
	if names, _ := e.similar("org1", "Kitchenly", 1, 10); top(names) != "Haulstar" {
		t.Errorf("similar to Kitchenly after the update: %v, want Haulstar first", names)
	}
	if names, _ := e.similar("org1", "Voltaro", 1, 10); slices.Index(names, "Haulstar") < slices.Index(names, "Cellvance") {
		t.Errorf("similar to Voltaro after the update: %v, want Haulstar after the battery maker", names)
	}
	if names, _ := e.search("org1", textSearch("automobile manufacturers", true), 10); slices.Index(names, "Haulstar") < 3 {
		t.Errorf("automobile manufacturers after the update: %v, want Haulstar far down", names)
	}
	// Deleted, it leaves the results and the counts.
	deleted := e.ids["org1"]["Haulstar"]
	e.delete("org1", "Haulstar")
	names, res := e.similar("org1", "Kitchenly", 1, 10)
	if slices.Contains(names, "Haulstar") || res.Total != len(cs)-2 {
		t.Errorf("similar to Kitchenly after the delete: %v (total %d), want no Haulstar among %d", names, res.Total, len(cs)-2)
	}
	names, res = e.search("org1", textSearch("groceries", true), 10)
	if slices.Contains(names, "Haulstar") || res.Total != len(cs)-1 {
		t.Errorf("groceries after the delete: %v (total %d), want no Haulstar among %d", names, res.Total, len(cs)-1)
	}
	if _, err := e.engine.Similar(context.Background(), "org1", e.schema, deleted, &search.Request{Page: 1, Limit: 10}); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("similar to the deleted company: %v, want apperr.ErrNotFound", err)
	}
}

// A text of no word the model knows (a company's name, most often) embeds
// as the zero vector, near nothing: a hybrid search for it answers its
// keyword matches alone, not them and a hundred records in no order.
func TestHybridSearchForANameTheModelDoesNotKnowAnswersItsKeywordMatchesAlone(t *testing.T) {
	t.Parallel()
	e := newSemEnv(t, nil)
	e.write("org1", searchtest.RelevanceCompanies[:8])
	e.write("org1", []searchtest.RelevanceCompany{{CanonicalName: "Qwertix Zorbl"}})
	for text, want := range map[string][]string{
		"Cardiosense": {"Cardiosense"},
		"CARDIOSENSE": {"Cardiosense"},
		"Qwertix":     {"Qwertix Zorbl"},
		"zzqv xxkw":   nil,
	} {
		// (Ranked by keywords: said "hybrid" or "keyword".)
		if names, res := e.search("org1", textSearch(text, true), 10); !slices.Equal(names, want) || res.Total != len(want) {
			t.Errorf("%q: %v (total %d), want %v alone", text, names, res.Total, want)
		}
	}
	// Known words: the keyword matches and the nearest by meaning.
	if names, res := e.search("org1", textSearch("Voltaro pickups", true), 10); res.Ranking != search.RankingHybrid || len(names) != 8 || names[0] != "Voltaro" || names[1] != "Haulstar" {
		t.Errorf("Voltaro pickups: %v ranked %q, want Voltaro, Haulstar, then the others with a meaning", names, res.Ranking)
	}
	// A company of the zero vector has no similar companies, and is
	// similar to none.
	names, res := e.similar("org1", "Qwertix Zorbl", 1, 10)
	if len(names) != 0 || res.Total != 0 || res.Semantic != "" {
		t.Errorf("similar to a name alone: %v (total %d, semantic %q), want none", names, res.Total, res.Semantic)
	}
	names, res = e.similar("org1", "Voltaro", 1, 10)
	if slices.Contains(names, "Qwertix Zorbl") || res.Total != 7 {
		t.Errorf("similar to Voltaro: %v (total %d), want the 7 others that have a meaning", names, res.Total)
	}
}
