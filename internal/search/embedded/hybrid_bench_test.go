package embedded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

// packageTB is a benchmark's testing.TB whose cleanups wait for the end
// of the package's tests (testenv.AtExit): the corpus it makes outlives
// the benchmark that made it, for the next one.
type packageTB struct{ testing.TB }

func (packageTB) Cleanup(fn func()) { testenv.AtExit(fn) }

var (
	companiesOnce   sync.Once
	companiesStore  *store.Store
	companiesFirst  string // the id of the first company
	companiesFailed error
)

// companies10k is one organization with 10,000 companies, made once
// through the companies service (so every write fed the change feed):
// the relevance set's companies, each description followed by another's,
// so that no two texts are the same.
func companies10k(b *testing.B) (*store.Store, string) {
	companiesOnce.Do(func() {
		st := testenv.Store(packageTB{b})
		svc := companies.NewService(st)
		cs := searchtest.RelevanceCompanies
		ids := make([]string, 10000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		const writers = 32
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(ids); i += writers {
					c, other := cs[i%len(cs)], cs[(i/len(cs)+i)%len(cs)]
					c.CanonicalName = fmt.Sprintf("%s %d", c.CanonicalName, i)
					c.Description += " " + strings.ToLower(other.Description[:1]) + other.Description[1:]
					body, _ := json.Marshal(c.Record())
					f, err := companies.DecodeCreate(body)
					if err == nil {
						var made *companies.Company
						if made, err = svc.Create(context.Background(), "org1", f, companies.OriginUser); err == nil {
							ids[i] = made.ID
						}
					}
					if err != nil {
						mu.Lock()
						companiesFailed = err
						mu.Unlock()
						return
					}
				}
			}()
		}
		wg.Wait()
		// Let the writes leave the change feed's window: "nothing changed".
		time.Sleep(store.FeedWindow)
		companiesStore, companiesFirst = st, ids[0]
	})
	if companiesFailed != nil {
		b.Fatal(companiesFailed)
	}
	return companiesStore, companiesFirst
}

// warmEngine is an engine with the local model whose index of the 10,000
// companies is built and embedded.
func warmEngine(b *testing.B) (*embedded.Embedded, *search.Schema, string) {
	st, first := companies10k(b)
	e := embedded.New(st, 0, vectors.New(embedtest.Local(b), st, false))
	s := search.SchemaOf(companies.Def)
	req, _ := search.Decode(s, []byte(`{"text":"warm"}`), 1, 10)
	if _, err := e.Search(context.Background(), "org1", s, req); err != nil {
		b.Fatal(err)
	}
	return e, s, first
}

// BenchmarkHybridSearch is a hybrid search of 10,000 companies (a page
// of 10) by a process whose index and vectors are up to date: the change
// feed's read, the query's embedding, the keyword search, the exact
// cosine of the query with every vector, and their fusion; keyword is the
// same search ranked by keywords alone.
func BenchmarkHybridSearch(b *testing.B) {
	e, s, _ := warmEngine(b)
	for _, hybrid := range []bool{true, false} {
		name := "keyword"
		if hybrid {
			name = "hybrid"
		}
		b.Run(name, func(b *testing.B) {
			req, err := search.Decode(s, []byte(textSearch("electric automobile manufacturers", hybrid)), 1, 10)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := e.Search(context.Background(), "org1", s, req)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Records) != 10 {
					b.Fatalf("%d records", len(res.Records))
				}
			}
		})
	}
}

// BenchmarkSimilar is the 10 companies nearest to one of 10,000 (a page
// of 10), by the exact cosine with every other vector, warm.
func BenchmarkSimilar(b *testing.B) {
	e, s, first := warmEngine(b)
	req := &search.Request{Page: 1, Limit: 10}
	for b.Loop() {
		res, err := e.Similar(context.Background(), "org1", s, first, req)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Records) != 10 || res.Total != 9999 {
			b.Fatalf("%d records of %d", len(res.Records), res.Total)
		}
	}
}
