package perfreport_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

var hybridRows = flag.Int("hybrid-rows", 10_000, "companies of the hybrid search measurement")

// Amazon Bedrock's price of Titan Text Embeddings V2 (on-demand, as the
// other prices: pricesAsOf) and the size of a vector item it makes.
const (
	titanPerMillionTokens = 0.02 // USD per million input tokens ($0.00002 per 1,000)
	// titanVectorItemKB is a Titan vector's item (512 float32 and its
	// keys, model and hash): 2.2 KB, three write units to put and one
	// strongly consistent read unit to read back (BatchGetItem).
	titanVectorItemKB = 2.2
)

// hybridFigures are the costs of semantic search with the local model,
// measured in process over one organization's companies.
type hybridFigures struct {
	Companies      int
	LoadModel      time.Duration // embed.OpenLocal of the model's file
	EmbedPerText   time.Duration // the local model, a company's text
	TextBytes      float64       // a company's embedded text, on average
	ColdIndex      time.Duration // the first search: every company read, indexed and embedded
	Keyword        percentiles   // a warm search with text (page of 10)
	Hybrid         percentiles   // the same with hybrid
	Similar        percentiles   // similar records of one company (page of 10)
	QueryEmbedding time.Duration // the hybrid search's text embedded by the local model
}

type percentiles struct{ P50, P99 time.Duration }

func percentilesOf(ds []time.Duration) percentiles {
	slices.Sort(ds)
	return percentiles{P50: ds[len(ds)/2], P99: ds[min(len(ds)-1, len(ds)*99/100)]}
}

// hybridSearch measures semantic search over *hybridRows companies of the
// relevance set (each description followed by another's, so that no two
// texts are the same), written through the companies service.
func hybridSearch(t *testing.T) hybridFigures {
	t.Helper()
	ctx := context.Background()
	st := testenv.Store(t)
	svc := companies.NewService(st)
	cs := searchtest.RelevanceCompanies
	ids := make([]string, *hybridRows)
	var wg sync.WaitGroup
	var failed error
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
					if made, err = svc.Create(ctx, "org1", f, companies.OriginUser); err == nil {
						ids[i] = made.ID
					}
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	time.Sleep(store.FeedWindow) // the writes leave the feed's window: warm searches find nothing changed

	f := hybridFigures{Companies: len(ids)}
	root, err := embedtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	local, err := embed.OpenLocal(root + "/" + embed.DefaultLocalModelFile)
	if err != nil {
		t.Fatal(err)
	}
	f.LoadModel = time.Since(start)
	s := search.SchemaOf(companies.Def)
	var texts []string
	for _, c := range cs {
		var rec map[string]any
		raw, _ := json.Marshal(c.Record())
		json.Unmarshal(raw, &rec)
		text := search.SemanticText(s, rec)
		texts = append(texts, text)
		f.TextBytes += float64(len(text))
	}
	f.TextBytes /= float64(len(texts))
	const rounds = 200
	start = time.Now()
	for range rounds {
		if _, err := local.Embed(ctx, texts); err != nil {
			t.Fatal(err)
		}
	}
	f.EmbedPerText = time.Since(start) / time.Duration(rounds*len(texts))
	start = time.Now()
	for range rounds {
		local.Embed(ctx, []string{"software for doctors"})
	}
	f.QueryEmbedding = time.Since(start) / rounds

	e := embedded.New(st, 0, vectors.New(local, st, false))
	run := func(body string) time.Duration {
		req, err := search.Decode(s, []byte(body), 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := e.Search(ctx, "org1", s, req); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	f.ColdIndex = run(`{"text": "warm"}`)
	queries := searchtest.RelevanceQueries
	measure := func(do func(i int) time.Duration) percentiles {
		var ds []time.Duration
		for i := range 100 {
			ds = append(ds, do(i))
		}
		return percentilesOf(ds)
	}
	f.Keyword = measure(func(i int) time.Duration { return run(fmt.Sprintf(`{"text": %q}`, queries[i%len(queries)].Text)) })
	f.Hybrid = measure(func(i int) time.Duration {
		return run(fmt.Sprintf(`{"text": %q, "hybrid": true}`, queries[i%len(queries)].Text))
	})
	f.Similar = measure(func(i int) time.Duration {
		req, _ := search.DecodeSimilar(s, nil, 1, 10)
		start := time.Now()
		if _, err := e.Similar(ctx, "org1", s, ids[i*97%len(ids)], req); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	})
	return f
}

// hybridMarkdown is performance.md's section on semantic search.
func hybridMarkdown(p func(string, ...any), f hybridFigures) {
	p("\n## Hybrid search\n\n")
	p("%d companies of one organization (the relevance set's, each description followed by another's), searched in\n", f.Companies)
	p("process by the embedded engine with the local model (`EMBEDDINGS=local`), a page of 10, 100 searches each, the\n")
	p("relevance set's queries in turn; DynamoDB Local on the same machine.\n\n")
	p("| what | p50 ms | p99 ms |\n|---|---:|---:|\n")
	p("| keyword search (text) | %s | %s |\n", ms(f.Keyword.P50), ms(f.Keyword.P99))
	p("| hybrid search (text, `hybrid: true`) | %s | %s |\n", ms(f.Hybrid.P50), ms(f.Hybrid.P99))
	p("| similar records of one company | %s | %s |\n", ms(f.Similar.P50), ms(f.Similar.P99))
	p("\nA hybrid search adds the text's embedding (%s µs with the local model), the dot product with every vector the\n", us(f.QueryEmbedding))
	p("filters admit (exact; no approximate index at this size) and the fusion of the two rankings; it reads the table\n")
	p("as a keyword search does (the change feed, one Query when nothing changed). Loading the local model takes %s ms\n", ms(f.LoadModel))
	p("once per process; the first search of a new process (reading, indexing and embedding the %d companies) took\n", f.Companies)
	p("%s ms. The local model embeds a company's text (%.0f bytes on average) in %s µs: it costs nothing but that CPU.\n", ms(f.ColdIndex), f.TextBytes, us(f.EmbedPerText))
	tokens := f.TextBytes / 4.5 // Titan's tokens: about one per 4.5 bytes of English text
	perRecord := tokens*titanPerMillionTokens/1e6 + 3*dynamoWritePerMillion/1e6
	p("\nWith Bedrock (`EMBEDDINGS=bedrock`, Titan Text Embeddings V2 at $%.2f per million input tokens, %s), embedding a\n", titanPerMillionTokens, pricesAsOf)
	p("record of that text (about %.0f tokens) costs $%.7f of Bedrock, and keeping its vector item (%.1f KB) three write\n", tokens, tokens*titanPerMillionTokens/1e6, titanVectorItemKB)
	p("units, $%.7f: $%.2f per million records embedded, paid again only when a record's text changes. A new process\n", 3*dynamoWritePerMillion/1e6, perRecord*1e6)
	p("reads the vectors back (one read unit each, $%.2f per million) instead of embedding again. A hybrid search adds one\n", dynamoReadPerMillion)
	p("InvokeModel of its text (about 5 tokens: $%.2f per million searches) and that call's latency (tens of milliseconds\n", 5*titanPerMillionTokens)
	p("in the same region; not measured here, where no AWS is reachable) to the times above. The calls of one refresh are\n")
	p("at most 8 at once, and a search spends at most 2 s embedding records; the rest wait for the next search, found by\n")
	p("keyword meanwhile.\n")
}
