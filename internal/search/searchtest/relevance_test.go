package searchtest_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis/lang/en"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
)

func TestRelevanceSetIsLargeEnoughAndNamesItsCompanies(t *testing.T) {
	cs, qs := searchtest.RelevanceCompanies, searchtest.RelevanceQueries
	if len(cs) < 45 {
		t.Errorf("%d companies, want 45 or more", len(cs))
	}
	names := map[string]bool{}
	for _, c := range cs {
		if names[c.CanonicalName] {
			t.Errorf("%s twice", c.CanonicalName)
		}
		names[c.CanonicalName] = true
		if c.Description == "" || c.Sector == "" {
			t.Errorf("%s: no description or sector", c.CanonicalName)
		}
	}
	none, shared := 0, 0
	for _, q := range qs {
		if q.NoSharedKeyword {
			none++
		} else {
			shared++
		}
		if len(q.Relevant) == 0 {
			t.Errorf("%q grades no company", q.Text)
		}
		for name, g := range q.Relevant {
			if !names[name] || g < 1 || g > 2 {
				t.Errorf("%q grades %q %d: no such company, or not 1 or 2", q.Text, name, g)
			}
		}
	}
	if len(qs) < 18 || none < 15 || shared < 3 {
		t.Errorf("%d queries, %d sharing no keyword, %d sharing some: want 18, 15 and 3 or more", len(qs), none, shared)
	}
}

// The claim the hybrid tests rest on: a query marked NoSharedKeyword
// cannot find its companies by keywords, and the others can.
func TestRelevanceQueriesMarkedNoSharedKeywordShareNoWordWithTheirCompanies(t *testing.T) {
	s := search.SchemaOf(companies.Def)
	for _, q := range searchtest.RelevanceQueries {
		shared := searchtest.SharedKeywords(q, s, searchtest.RelevanceCompanies)
		switch {
		case q.NoSharedKeyword && len(shared) > 0:
			t.Errorf("%q is marked as sharing no keyword, but shares %s", q.Text, strings.Join(shared, ", "))
		case !q.NoSharedKeyword && len(shared) == 0:
			t.Errorf("%q is marked as sharing keywords, but shares none", q.Text)
		}
	}
	// The words are those of the text-weighted fields.
	c := searchtest.RelevanceCompanies[0]
	q := searchtest.RelevanceQuery{Text: "Voltaro automotive OHIO pickups vehicles", Relevant: map[string]int{c.CanonicalName: 2}}
	if got := searchtest.SharedKeywords(q, s, searchtest.RelevanceCompanies); len(got) != 5 {
		t.Errorf("shared: %v, want the 5 words (name, sector, description, tags)", got)
	}
}

func TestRelevanceWordsAreFoldedAndSplitAndTheStopWordsAreTheEnginesOwn(t *testing.T) {
	if got := searchtest.Words("Café's e-commerce, and THE K-12 plant-based"); !slices.Equal(got, []string{"cafe", "s", "e", "commerce", "k", "12", "plant", "based"}) {
		t.Errorf("words: %q", got)
	}
	engines := map[string]bool{}
	for _, line := range strings.Split(string(en.EnglishStopWords), "\n") {
		if w, _, _ := strings.Cut(line, "|"); strings.TrimSpace(w) != "" {
			engines[strings.TrimSpace(w)] = true
		}
	}
	for _, w := range searchtest.StopWords {
		if !engines[w] {
			t.Errorf("%q is no stop word of the engines: a search matches it", w)
		}
	}
}

func TestRelevanceNDCG(t *testing.T) {
	rel := map[string]int{"a": 2, "b": 1, "c": 1}
	ideal := 3/math.Log2(2) + 1/math.Log2(3) + 1/math.Log2(4)
	for _, c := range []struct {
		ranked []string
		k      int
		want   float64
	}{
		{[]string{"a", "b", "c"}, 10, 1},
		{[]string{"a", "c", "b", "x"}, 10, 1},
		{nil, 10, 0},
		{[]string{"x", "y"}, 10, 0},
		{[]string{"x", "a"}, 10, (3 / math.Log2(3)) / ideal},
		{[]string{"b", "a"}, 10, (1 + 3/math.Log2(3)) / ideal},
		{[]string{"x", "a"}, 1, 0},
		{[]string{"a", "x"}, 1, 1}, // the ideal at 1 is a alone
	} {
		if got := searchtest.NDCG(c.ranked, rel, c.k); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("NDCG(%v, %d) = %.4f, want %.4f", c.ranked, c.k, got, c.want)
		}
	}
	if got := searchtest.NDCG([]string{"a"}, nil, 10); got != 0 {
		t.Errorf("no labels: %v", got)
	}
}

// The local model alone (exact cosine of the companies' SemanticText with
// the query's vector, no keywords): what hybrid search adds to keywords.
func TestRelevanceOfTheLocalModelAlone(t *testing.T) {
	model := embedtest.Local(t)
	s := search.SchemaOf(companies.Def)
	cs := searchtest.RelevanceCompanies
	texts := make([]string, len(cs))
	for i, c := range cs {
		texts[i] = search.SemanticText(s, c.Record())
	}
	vecs, err := model.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sum [2]float64
	var n [2]int
	for _, q := range searchtest.RelevanceQueries {
		qv, err := model.Embed(context.Background(), []string{q.Text})
		if err != nil {
			t.Fatal(err)
		}
		sims := make([]search.Similarity, len(cs))
		for i, c := range cs {
			sims[i] = search.Similarity{ID: c.CanonicalName, Score: search.Dot(qv[0], vecs[i])}
		}
		var ranked []string
		for _, s := range search.Nearest(sims, 10) {
			ranked = append(ranked, s.ID)
		}
		g := 0
		if !q.NoSharedKeyword {
			g = 1
		}
		ndcg := searchtest.NDCG(ranked, q.Relevant, 10)
		sum[g] += ndcg
		n[g]++
		t.Logf("%-28q nDCG@10 %.3f  %s", q.Text, ndcg, strings.Join(ranked[:5], ", "))
	}
	none, shared := sum[0]/float64(n[0]), sum[1]/float64(n[1])
	t.Logf("mean nDCG@10 by cosine alone: %.3f sharing no keyword (%d queries), %.3f sharing some (%d)", none, n[0], shared, n[1])
	if none < 0.5 {
		t.Errorf("the local model ranks the queries sharing no keyword at a mean nDCG@10 of %.3f, want 0.5 or more", none)
	}
}
