package opensearch_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

// The relevance set (searchtest.RelevanceQueries) through the OpenSearch
// engine's code path: the indexer embeds the companies with the local
// model and sends its _bulk to a stand-in of OpenSearch on loopback, and
// Engine.Search sends its k-NN and keyword queries there and fuses them.
// No OpenSearch runs here, so the stand-in answers:
//
//   - k-NN queries by the exact inner product of the query's vector with
//     every stored document's _vec, among the documents of the _org term
//     of the query's filter (HNSW's approximate search finds about these);
//   - keyword queries by the EMBEDDED engine's keyword ranking (bleve's
//     BM25 over the same records, embedded.New without a keeper), NOT
//     OpenSearch's BM25: the two score alike in kind (weighted BM25 over
//     the same fields) but not in every detail.
//
// So the figures measure this engine's hybrid logic (embedding the text,
// the k-NN query and its filter, the keyword window, reciprocal rank
// fusion, the records read from the table) with the local model's
// vectors, not OpenSearch's own ranking.

// Asserted figures. Measured with the local model (the test logs them):
// hybrid's mean nDCG@10 on the 20 queries sharing no word with their
// companies is about 0.81 and keyword's 0.00; on the 5 sharing words,
// hybrid's about 0.99 and keyword's 0.97.
const (
	// osHybridMargin: hybrid's mean nDCG@10 exceeds keyword's by at
	// least this much on the queries sharing no word with their companies.
	osHybridMargin = 0.5
	// osHybridTolerance: hybrid's mean nDCG@10 is at most this much
	// below keyword's on the queries sharing words.
	osHybridTolerance = 0.05
)

// standIn is the stand-in of OpenSearch described above.
type standIn struct {
	t       *testing.T
	keyword *embedded.Embedded
	schema  *search.Schema

	mu      sync.Mutex
	docs    map[string]map[string]json.RawMessage // by document id
	request *search.Request                       // the search being run: its keyword side
	knn     int                                   // k-NN queries answered
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == http.MethodPut:
		fmt.Fprintf(w, `{"acknowledged":true,"shards_acknowledged":true,"index":%q}`, strings.TrimPrefix(r.URL.Path, "/"))
	case r.Method == http.MethodPost && r.URL.Path == "/_bulk":
		io.WriteString(w, s.bulk(body))
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/_search"):
		io.WriteString(w, s.search(body))
	default:
		s.t.Errorf("the stand-in was asked %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusBadRequest)
	}
}

// bulk stores each indexed document (and drops each deleted one).
func (s *standIn) bulk(body []byte) string {
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	var items []string
	for i := 0; i < len(lines); i++ {
		var meta map[string]struct {
			Index string `json:"_index"`
			ID    string `json:"_id"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &meta); err != nil {
			s.t.Fatalf("bulk line %d: %v", i+1, err)
		}
		for op, m := range meta {
			switch op {
			case "index":
				i++
				var doc map[string]json.RawMessage
				if err := json.Unmarshal([]byte(lines[i]), &doc); err != nil {
					s.t.Fatalf("bulk line %d: %v", i+1, err)
				}
				s.docs[m.ID] = doc
			case "delete":
				delete(s.docs, m.ID)
			}
			items = append(items, fmt.Sprintf(`{%q:{"_index":%q,"_id":%q,"status":200}}`, op, m.Index, m.ID))
		}
	}
	return `{"took":1,"errors":false,"items":[` + strings.Join(items, ",") + `]}`
}

// searchBody is what the stand-in reads of a _search body.
type searchBody struct {
	From  int
	Size  int
	Query struct {
		KNN map[string]struct {
			Vector []float32
			K      int
			Filter struct {
				Bool struct{ Filter []json.RawMessage }
			}
		}
		Bool *struct {
			Filter []json.RawMessage
			Should []json.RawMessage
		}
	}
}

// orgOf is the organization of a filter's _org term ("" when it has none).
func orgOf(filter []json.RawMessage) string {
	for _, f := range filter {
		var term struct {
			Term map[string]string
		}
		if json.Unmarshal(f, &term) == nil && term.Term[opensearch.OrgField] != "" {
			return term.Term[opensearch.OrgField]
		}
	}
	return ""
}

// idsOf is the values of a filter's ids query (nil when it has none).
func idsOf(filter []json.RawMessage) []string {
	for _, f := range filter {
		var q struct {
			IDs *struct{ Values []string }
		}
		if json.Unmarshal(f, &q) == nil && q.IDs != nil {
			return q.IDs.Values
		}
	}
	return nil
}

func (s *standIn) search(raw []byte) string {
	var body searchBody
	if err := json.Unmarshal(raw, &body); err != nil {
		s.t.Fatalf("search body: %v", err)
	}
	if clause, ok := body.Query.KNN[opensearch.VectorField]; ok {
		s.knn++
		return s.nearest(clause.Vector, clause.K, orgOf(clause.Filter.Bool.Filter), body.From, body.Size)
	}
	if body.Query.Bool == nil || len(body.Query.Bool.Should) > 0 {
		s.t.Fatalf("the stand-in answers k-NN queries and keyword queries, not %s", raw)
	}
	org := orgOf(body.Query.Bool.Filter)
	if org == "" {
		s.t.Fatalf("a keyword query without the _org term: %s", raw)
	}
	// The keyword side of the search being run, by the embedded engine.
	req := *s.request
	req.Hybrid, req.Page, req.Limit, req.From = false, 1, search.MaxOffset+search.MaxLimit, 0
	res, err := s.keyword.Search(context.Background(), org, s.schema, &req)
	if err != nil {
		s.t.Fatal(err)
	}
	var matches []string
	for _, rec := range res.Records {
		var v struct{ ID string }
		json.Unmarshal(rec, &v)
		matches = append(matches, opensearch.DocID(org, v.ID))
	}
	if ids := idsOf(body.Query.Bool.Filter); ids != nil {
		matches = slices.DeleteFunc(matches, func(id string) bool { return !slices.Contains(ids, id) })
	}
	page := matches[min(body.From, len(matches)):min(body.From+body.Size, len(matches))]
	return s.hits(len(matches), page)
}

// nearest answers the k documents of org nearest to v by inner product
// (ties: the larger id), from from, size of them.
func (s *standIn) nearest(v []float32, k int, org string, from, size int) string {
	if org == "" {
		s.t.Fatal("a k-NN query without the _org term")
	}
	var sims []search.Similarity
	for id, doc := range s.docs {
		var docOrg string
		var vec []float32
		json.Unmarshal(doc[opensearch.OrgField], &docOrg)
		if docOrg != org || json.Unmarshal(doc[opensearch.VectorField], &vec) != nil || len(vec) != len(v) {
			continue
		}
		sims = append(sims, search.Similarity{ID: id, Score: search.Dot(v, vec)})
	}
	sims = search.Nearest(sims, k)
	ids := make([]string, 0, len(sims))
	for _, sim := range sims[min(from, len(sims)):min(from+size, len(sims))] {
		ids = append(ids, sim.ID)
	}
	return s.hits(len(sims), ids)
}

// hits is a search answer of total and the documents ids, each with its
// _pending.
func (s *standIn) hits(total int, ids []string) string {
	var out []string
	for _, id := range ids {
		src := "{}"
		if p, ok := s.docs[id][opensearch.PendingField]; ok {
			src = `{"_pending":` + string(p) + `}`
		}
		out = append(out, fmt.Sprintf(`{"_index":"x","_id":%q,"_score":1,"_source":%s}`, id, src))
	}
	return fmt.Sprintf(`{"took":1,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":%d,"relation":"eq"},"hits":[%s]}}`, total, strings.Join(out, ","))
}

// streamOf is the INSERT stream records of org's records of typ as stored.
func streamOf(t *testing.T, st *store.Store, org, typ string, seq *int) []events.DynamoDBEventRecord {
	t.Helper()
	recs, err := st.Records(context.Background(), org, typ)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.DynamoDBEventRecord
	for _, r := range recs {
		doc := string(r.Doc) // the record's JSON (the store reads it inflated)
		k := store.RecordKey(org, typ, r.ID)
		*seq++
		out = append(out, events.DynamoDBEventRecord{EventName: string(events.DynamoDBOperationTypeInsert), Change: events.DynamoDBStreamRecord{
			SequenceNumber: fmt.Sprintf("%025d", *seq),
			Keys:           map[string]events.DynamoDBAttributeValue{store.AttrPK: events.NewStringAttribute(k.PK), store.AttrSK: events.NewStringAttribute(k.SK)},
			NewImage:       map[string]events.DynamoDBAttributeValue{store.AttrDoc: events.NewStringAttribute(doc)},
		}})
	}
	return out
}

func TestHybridRelevanceThroughTheOpenSearchEnginesCodePathBeatsKeywords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	svc := companies.NewService(st)
	schema := search.SchemaOf(companies.Def)
	ids := map[string]map[string]string{"org1": {}, "org2": {}}
	for i, c := range searchtest.RelevanceCompanies {
		orgs := []string{"org1"}
		if i%3 == 0 {
			orgs = append(orgs, "org2") // a copy in another organization, never answered to org1
		}
		body, _ := json.Marshal(c.Record())
		for _, org := range orgs {
			f, err := companies.DecodeCreate(body)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := svc.Create(ctx, org, f, companies.OriginUser)
			if err != nil {
				t.Fatal(err)
			}
			ids[org][c.CanonicalName] = rec.ID
		}
	}
	keeper := vectors.New(embedtest.Local(t), nil, false)
	sa := &standIn{t: t, keyword: embedded.New(st, 0, nil), schema: schema, docs: map[string]map[string]json.RawMessage{}}
	srv := httptest.NewServer(sa)
	t.Cleanup(srv.Close)
	cfg := testConfig(srv.URL, opensearch.ServiceManaged)
	cfg.Keeper = keeper
	c, err := opensearch.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The stream of the writes, through the indexer, in batches of 100.
	var ev events.DynamoDBEvent
	seq := 0
	for _, org := range []string{"org1", "org2"} {
		ev.Records = append(ev.Records, streamOf(t, st, org, schema.Type, &seq)...)
	}
	ix := opensearch.NewIndexer(c, []*search.Schema{schema}, keeper)
	for start := 0; start < len(ev.Records); start += 100 {
		batch := events.DynamoDBEvent{Records: ev.Records[start:min(start+100, len(ev.Records))]}
		res, err := ix.Handle(ctx, batch)
		if err != nil || len(res.BatchItemFailures) != 0 {
			t.Fatalf("indexing: %+v, %v", res, err)
		}
	}
	withVec := 0
	for _, doc := range sa.docs {
		if doc[opensearch.VectorField] != nil {
			withVec++
		}
	}
	if want := len(ids["org1"]) + len(ids["org2"]); len(sa.docs) != want || withVec != want {
		t.Fatalf("the stand-in holds %d documents, %d with a vector; want %d, all with one", len(sa.docs), withVec, want)
	}
	engine, err := opensearch.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	run := func(q searchtest.RelevanceQuery, hybrid bool) ([]string, *search.Result) {
		req := &search.Request{Text: q.Text, Hybrid: hybrid, Page: 1, Limit: 10}
		sa.mu.Lock()
		sa.request = req
		sa.mu.Unlock()
		res, err := engine.Search(ctx, "org1", schema, req)
		if err != nil {
			t.Fatalf("%q: %v", q.Text, err)
		}
		var names []string
		for _, raw := range res.Records {
			var rec struct{ ID, CanonicalName string }
			json.Unmarshal(raw, &rec)
			if ids["org1"][rec.CanonicalName] != rec.ID {
				t.Fatalf("%q answered %s (%s), no company of org1", q.Text, rec.CanonicalName, rec.ID)
			}
			names = append(names, rec.CanonicalName)
		}
		return names, res
	}
	var sum [2][2]float64 // [shares keywords][hybrid]
	var n [2]int
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-28s %-6s %8s %8s  %s\n", "query", "shares", "keyword", "hybrid", "hybrid's top 3")
	for _, q := range searchtest.RelevanceQueries {
		shares := 0
		if !q.NoSharedKeyword {
			shares = 1
		}
		n[shares]++
		kw, kres := run(q, false)
		hy, hres := run(q, true)
		if kres.Ranking != search.RankingKeyword || hres.Ranking != search.RankingHybrid {
			t.Errorf("%q: rankings %q and %q, want keyword and hybrid", q.Text, kres.Ranking, hres.Ranking)
		}
		k, h := searchtest.NDCG(kw, q.Relevant, 10), searchtest.NDCG(hy, q.Relevant, 10)
		sum[shares][0] += k
		sum[shares][1] += h
		fmt.Fprintf(&table, "%-28s %-6v %8.2f %8.2f  %s\n", q.Text, shares == 1, k, h, strings.Join(hy[:min(3, len(hy))], ", "))
	}
	mean := func(shares, hybrid int) float64 { return sum[shares][hybrid] / float64(cmp.Or(n[shares], 1)) }
	t.Logf("nDCG@10 through the OpenSearch engine's code path (local model; k-NN exact, keyword ranking bleve's, not OpenSearch's BM25):%s\nno shared word (%d queries): keyword %.2f, hybrid %.2f\nshared words (%d queries): keyword %.2f, hybrid %.2f; %d k-NN queries",
		table.String(), n[0], mean(0, 0), mean(0, 1), n[1], mean(1, 0), mean(1, 1), sa.knn)
	if n[0] == 0 || n[1] == 0 {
		t.Fatalf("the set has %d queries sharing no word and %d sharing words: it should have both", n[0], n[1])
	}
	if mean(0, 1) < mean(0, 0)+osHybridMargin {
		t.Errorf("no shared word: hybrid %.2f does not beat keyword %.2f by %.2f", mean(0, 1), mean(0, 0), osHybridMargin)
	}
	if mean(1, 1) < mean(1, 0)-osHybridTolerance {
		t.Errorf("shared words: hybrid %.2f is more than %.2f below keyword %.2f", mean(1, 1), osHybridTolerance, mean(1, 0))
	}
}
