package embedded_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/store"
)

// meter counts a client's DynamoDB calls and the bytes of their answers.
type meter struct{ calls, bytes atomic.Int64 }

func (m *meter) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	m.calls.Add(1)
	if err == nil {
		res.Body = &countingBody{res.Body, &m.bytes}
	}
	return res, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

var (
	corpusOnce sync.Once
	corpus     *store.Store
	corpusM    = &meter{}
)

// workspaces10k is one organization with 10,000 workspaces, made once
// through the resource layer (so every write also fed the change feed).
func workspaces10k(b *testing.B) *store.Store {
	corpusOnce.Do(func() {
		corpus = testenv.StoreWith(packageTB{b}, corpusM) // kept for the next benchmark
		reg := resource.NewRegistry(corpus, []*resource.Def{resources.Workspaces}, map[string]resource.External{"companies": {Singular: "company"}})
		svc, _ := reg.Service("workspaces")
		sources := []string{"crm", "email", "upload", "import"}
		words := []string{"robotics", "fintech", "health", "logistics", "energy", "retail", "security", "media"}
		var wg sync.WaitGroup
		const writers = 32
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < 10000; i += writers {
					body := fmt.Sprintf(`{"name":"%s %s deal room %d","source":%q,"isPrivate":%v,"isPersonal":%v}`,
						words[i%len(words)], words[(i/8)%len(words)], i, sources[i%len(sources)], i%3 == 0, i%5 == 0)
					if _, err := svc.Create(context.Background(), "org1", []byte(body)); err != nil {
						panic(err)
					}
				}
			}()
		}
		wg.Wait()
		// Let the writes leave the change feed's window: "nothing changed".
		time.Sleep(store.FeedWindow)
	})
	return corpus
}

var benchSearch = `{"text":"robotics deal","filters":{"and":[{"field":"source","operator":"in","value":["crm","email"]},{"field":"isPrivate","operator":"eq","value":false}]},"sort":[{"field":"updatedAt","direction":"desc"},{"field":"name"}]}`

func runSearch(b *testing.B, e *embedded.Embedded) {
	s := search.SchemaOf(resources.Workspaces)
	req, err := search.Decode(s, []byte(benchSearch), 1, 100)
	if err != nil {
		b.Fatal(err)
	}
	res, err := e.Search(context.Background(), "org1", s, req)
	if err != nil {
		b.Fatal(err)
	}
	if res.Total == 0 {
		b.Fatal("the benchmark search finds nothing")
	}
}

// BenchmarkSearchWarm is a search of 10,000 workspaces (text, two filters,
// two sort keys) by a process whose index is up to date: the change feed
// read and the query.
func BenchmarkSearchWarm(b *testing.B) {
	st := workspaces10k(b)
	e := embedded.New(st, 0, nil)
	runSearch(b, e)
	calls, bytes := corpusM.calls.Load(), corpusM.bytes.Load()
	b.ResetTimer()
	for b.Loop() {
		runSearch(b, e)
	}
	b.ReportMetric(float64(corpusM.calls.Load()-calls)/float64(b.N), "dynamodb-calls/op")
	b.ReportMetric(float64(corpusM.bytes.Load()-bytes)/float64(b.N), "dynamodb-bytes/op")
}

// BenchmarkSearchCold is the same search by a process that has no index
// yet: it reads every workspace of the organization and indexes them.
func BenchmarkSearchCold(b *testing.B) {
	st := workspaces10k(b)
	calls, bytes := corpusM.calls.Load(), corpusM.bytes.Load()
	b.ResetTimer()
	for b.Loop() {
		runSearch(b, embedded.New(st, 0, nil))
	}
	b.ReportMetric(float64(corpusM.calls.Load()-calls)/float64(b.N), "dynamodb-calls/op")
	b.ReportMetric(float64(corpusM.bytes.Load()-bytes)/float64(b.N), "dynamodb-bytes/op")
}
