package opensearch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/search/opensearch/golden"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

// fixedProvider embeds every text as vec (or fails with err): the query
// vector of the golden bodies.
type fixedProvider struct {
	vec []float32
	err error
}

func (p fixedProvider) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if p.err != nil {
		return nil, p.err
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = slices.Clone(p.vec)
	}
	return out, nil
}

func (p fixedProvider) Dimensions() int { return len(p.vec) }
func (p fixedProvider) Name() string    { return "test:fixed" }

func fixedKeeper() *vectors.Keeper {
	return vectors.New(fixedProvider{vec: golden.QueryVector}, nil, false)
}

// hit is one canned search hit: its document id and, when pending,
// PendingField in its _source.
type hit struct {
	id      string
	pending bool
}

func searchResponse(total int, hits ...hit) string {
	var out []string
	for _, h := range hits {
		src := ""
		if h.pending {
			src = `,"_source":{"_pending":true}`
		}
		out = append(out, fmt.Sprintf(`{"_index":"sb-notes","_id":%q,"_score":1.5%s}`, h.id, src))
	}
	return fmt.Sprintf(`{"took":2,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":%d,"relation":"eq"},"max_score":1.5,"hits":[%s]}}`, total, strings.Join(out, ","))
}

func docHits(ids ...string) []hit {
	out := make([]hit, len(ids))
	for i, id := range ids {
		out[i] = hit{id: id}
	}
	return out
}

// managed is an engine over a managed domain (the service on which it
// ranks by meaning) at srv, with keeper.
func managed(t *testing.T, st *store.Store, url string, keeper *vectors.Keeper) *opensearch.Engine {
	t.Helper()
	cfg := testConfig(url, opensearch.ServiceManaged)
	cfg.Keeper = keeper
	e, err := opensearch.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// sameAsGolden checks that a request's body is the golden file's.
func sameAsGolden(t *testing.T, r recorded, name string) {
	t.Helper()
	want, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(r.Body)) != strings.TrimSpace(string(want)) {
		t.Errorf("%s %s: body differs from testdata/%s:\n%s", r.Method, r.Path, name, r.Body)
	}
}

func semanticCase(t *testing.T, name string) (*search.Schema, *search.Request) {
	t.Helper()
	i := slices.IndexFunc(golden.SemanticCases, func(c golden.SemanticCase) bool { return c.Name == name })
	req, err := golden.SemanticCases[i].Request()
	if err != nil {
		t.Fatal(err)
	}
	return search.SchemaOf(notes), req
}

// knnFilters are the filters of every k-NN query among reqs: each must
// hold the caller's organization's term.
func checkKNNFiltersHoldTheOrg(t *testing.T, reqs []recorded, org string) {
	t.Helper()
	n := 0
	for _, r := range reqs {
		var body struct {
			Query struct {
				KNN map[string]struct {
					Filter struct {
						Bool struct{ Filter []json.RawMessage }
					}
				}
			}
		}
		if json.Unmarshal(r.Body, &body) != nil || body.Query.KNN == nil {
			continue
		}
		n++
		clause, ok := body.Query.KNN[opensearch.VectorField]
		want := fmt.Sprintf(`{"term":{"_org":%q}}`, org)
		if !ok || len(clause.Filter.Bool.Filter) == 0 || compact(clause.Filter.Bool.Filter[0]) != want {
			t.Errorf("a k-NN query without the filter %s first: %s", want, r.Body)
		}
	}
	if n == 0 {
		t.Error("no k-NN query was sent")
	}
}

func compact(raw json.RawMessage) string {
	var v any
	json.Unmarshal(raw, &v)
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAHybridSearchSendsTheGoldenKNNKeywordAndCountBodies(t *testing.T) {
	t.Parallel()
	near := golden.NearIDs
	fake, srv := newFake(t,
		canned{200, searchResponse(2, docHits(near...)...)},
		canned{200, searchResponse(500, hit{id: "org1:nte_01J00000000000000000000009"})},
		canned{200, searchResponse(1)})
	engine := managed(t, testenv.Store(t), srv.URL, fixedKeeper())
	s, req := semanticCase(t, "hybrid-knn")
	res, err := engine.Search(context.Background(), "org1", s, req)
	if err != nil {
		t.Fatal(err)
	}
	// 500 keyword matches (one read: the window does not hold them all),
	// and the two nearest by meaning, of which one matches the words.
	if res.Total != 501 || res.Ranking != search.RankingHybrid || len(res.Records) != 0 {
		t.Errorf("total %d, ranking %q, %d records; want 501, hybrid, none (page 2 of 3 results)", res.Total, res.Ranking, len(res.Records))
	}
	reqs := fake.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want the k-NN query, the keyword query and the count", len(reqs))
	}
	for i, name := range []string{"query-hybrid-knn.json", "query-hybrid-keyword.json", "query-hybrid-count.json"} {
		if reqs[i].Method != http.MethodPost || reqs[i].Path != "/sb-notes/_search" {
			t.Errorf("request %d: %s %s, want POST /sb-notes/_search", i, reqs[i].Method, reqs[i].Path)
		}
		sameAsGolden(t, reqs[i], name)
		checkSigned(t, reqs[i], "es")
	}
	checkKNNFiltersHoldTheOrg(t, reqs, "org1")
}

func TestAHybridSearchWithASortSendsTheKNNQueryThenTheUnionInTheSortsOrder(t *testing.T) {
	t.Parallel()
	fake, srv := newFake(t,
		canned{200, searchResponse(3, docHits(append([]string{"org2:nte_01J00000000000000000000007"}, golden.NearIDs...)...)...)},
		canned{200, searchResponse(7)})
	engine := managed(t, testenv.Store(t), srv.URL, fixedKeeper())
	s, req := semanticCase(t, "hybrid-sorted")
	res, err := engine.Search(context.Background(), "org1", s, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 7 || res.Ranking != search.RankingHybrid {
		t.Errorf("total %d, ranking %q; want the union's 7, hybrid", res.Total, res.Ranking)
	}
	reqs := fake.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the k-NN query and the union", len(reqs))
	}
	// The sort is not the k-NN query's business: it is the unsorted one.
	sameAsGolden(t, reqs[0], "query-hybrid-knn.json")
	// Another organization's hit is not in the union's ids.
	sameAsGolden(t, reqs[1], "query-hybrid-sorted.json")
	checkKNNFiltersHoldTheOrg(t, reqs, "org1")
}

// createNotes creates notes of the given names in org and answers their ids.
func createNotes(t *testing.T, st *store.Store, org string, names ...string) []string {
	t.Helper()
	reg := resource.NewRegistry(st, []*resource.Def{notes}, nil)
	svc, _ := reg.Service("notes")
	var ids []string
	for _, name := range names {
		r, err := svc.Create(context.Background(), org, []byte(`{"name":"`+name+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID())
	}
	return ids
}

func names(res *search.Result) string {
	var out []string
	for _, raw := range res.Records {
		var v struct{ Name string }
		json.Unmarshal(raw, &v)
		out = append(out, v.Name)
	}
	return strings.Join(out, "|")
}

func TestAHybridSearchFusesTheRankingsByReciprocalRankDropsOtherOrganizationsAndSaysPending(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ids := createNotes(t, st, "org1", "A", "B", "C", "D")
	other := createNotes(t, st, "org2", "X")
	doc := func(i int) string { return "org1:" + ids[i] }
	fake, srv := newFake(t,
		// By meaning: C, then another organization's record (which the
		// _org filter never lets through: dropped all the same), then A.
		canned{200, searchResponse(3, hit{id: doc(2)}, hit{id: "org2:" + other[0]}, hit{id: doc(0)})},
		// By words, every match in the window: A, B (not embedded yet), D.
		canned{200, searchResponse(3, hit{id: doc(0)}, hit{id: doc(1), pending: true}, hit{id: doc(3)})})
	engine := managed(t, st, srv.URL, fixedKeeper())
	res, err := engine.Search(context.Background(), "org1", search.SchemaOf(notes), &search.Request{Text: "acme", Hybrid: true, Page: 1, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	// A: 1/61+1/62; C: 1/61; B: 1/62; D: 1/63.
	if got := names(res); got != "A|C|B" || res.Total != 4 || res.Ranking != search.RankingHybrid || res.Semantic != search.SemanticPending {
		t.Errorf("records %s, total %d, ranking %q, semantic %q; want A|C|B of 4, hybrid, pending (B has no vector yet)", got, res.Total, res.Ranking, res.Semantic)
	}
	if n := len(fake.requests()); n != 2 {
		t.Errorf("%d requests, want 2: the window holds every keyword match, so no count", n)
	}
	checkKNNFiltersHoldTheOrg(t, fake.requests(), "org1")

	// Page 2 holds D, and nothing pending.
	fake2, srv2 := newFake(t,
		canned{200, searchResponse(2, hit{id: doc(2)}, hit{id: doc(0)})},
		canned{200, searchResponse(3, hit{id: doc(0)}, hit{id: doc(1), pending: true}, hit{id: doc(3)})})
	res, err = managed(t, st, srv2.URL, fixedKeeper()).Search(context.Background(), "org1", search.SchemaOf(notes), &search.Request{Text: "acme", Hybrid: true, Page: 2, Limit: 3})
	if err != nil || names(res) != "D" || res.Semantic != "" || res.Total != 4 {
		t.Errorf("page 2: %s of %d, semantic %q, %v; want D of 4, not pending", names(res), res.Total, res.Semantic, err)
	}
	var keyword struct{ From, Size int }
	json.Unmarshal(fake2.requests()[1].Body, &keyword)
	if keyword.From != 0 || keyword.Size != 3+3+search.SemanticCandidates {
		t.Errorf("the keyword query reads from %d, %d matches; want from 0, the page's end plus %d", keyword.From, keyword.Size, search.SemanticCandidates)
	}
}

func TestAHybridSearchRanksByKeywordsWhenTheTextCannotBeEmbeddedOrThereIsNoModelOrItIsServerless(t *testing.T) {
	t.Parallel()
	s := search.SchemaOf(notes)
	req := &search.Request{Text: "acme", Hybrid: true, Page: 1, Limit: 10}
	want, err := opensearch.Query("org1", s, req)
	if err != nil {
		t.Fatal(err)
	}
	failing := vectors.New(fixedProvider{err: errors.New("the model is down")}, nil, false)
	for name, mk := range map[string]func(url string) (*opensearch.Engine, error){
		"provider fails": func(url string) (*opensearch.Engine, error) {
			cfg := testConfig(url, opensearch.ServiceManaged)
			cfg.Keeper = failing
			return opensearch.New(testenv.Store(t), cfg)
		},
		"no keeper": func(url string) (*opensearch.Engine, error) {
			return opensearch.New(testenv.Store(t), testConfig(url, opensearch.ServiceManaged))
		},
		"serverless": func(url string) (*opensearch.Engine, error) {
			cfg := testConfig(url, opensearch.ServiceServerless)
			cfg.Keeper = fixedKeeper()
			return opensearch.New(testenv.Store(t), cfg)
		},
	} {
		fake, srv := newFake(t, canned{200, searchResponse(0)})
		engine, err := mk(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		res, err := engine.Search(context.Background(), "org1", s, req)
		if err != nil || res.Ranking != search.RankingKeyword {
			t.Errorf("%s: %+v, %v; want keyword ranking", name, res, err)
		}
		if reqs := fake.requests(); len(reqs) != 1 || string(reqs[0].Body) != string(want) {
			t.Errorf("%s: %d requests; want the keyword query alone", name, len(reqs))
		}
		if name != "provider fails" {
			if _, err := engine.Similar(context.Background(), "org1", s, "nte_1", req); !errors.Is(err, search.ErrSemanticOff) {
				t.Errorf("%s: similar records: %v, want ErrSemanticOff", name, err)
			}
		}
	}
}

func TestSimilarRecordsReadTheRecordsVectorCountThenSendTheGoldenKNNQuery(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ids := createNotes(t, st, "org1", "A", "B")
	self := "org1:" + golden.SimilarID
	fake, srv := newFake(t,
		canned{200, fmt.Sprintf(`{"_index":"sb-notes","_id":%q,"_version":3,"_seq_no":7,"_primary_term":1,"found":true,"_source":{"_vec":[0.6,0,-0.8]}}`, self)},
		canned{200, searchResponse(42)},
		canned{200, searchResponse(42, hit{id: "org1:" + ids[1]}, hit{id: "org2:" + ids[0]}, hit{id: "org1:" + ids[0]})})
	engine := managed(t, st, srv.URL, fixedKeeper())
	s, req := semanticCase(t, "similar-knn")
	res, err := engine.Similar(context.Background(), "org1", s, golden.SimilarID, req)
	if err != nil {
		t.Fatal(err)
	}
	if names(res) != "B|A" || res.Total != 42 || res.Ranking != search.RankingSemantic || res.Semantic != "" {
		t.Errorf("records %s, total %d, ranking %q, semantic %q; want B|A (another organization's hit dropped) of 42, semantic", names(res), res.Total, res.Ranking, res.Semantic)
	}
	reqs := fake.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want the get, the count and the k-NN query", len(reqs))
	}
	if r := reqs[0]; r.Method != http.MethodGet || r.Path != "/sb-notes/_doc/"+self || !strings.Contains(r.Query, "_source_includes=_vec%2C_pending") {
		t.Errorf("first request %s %s?%s, want GET /sb-notes/_doc/%s?_source_includes=_vec,_pending", r.Method, r.Path, r.Query, self)
	}
	sameAsGolden(t, reqs[1], "query-similar-count.json")
	sameAsGolden(t, reqs[2], "query-similar-knn.json")
	checkKNNFiltersHoldTheOrg(t, reqs, "org1")
	for _, r := range reqs {
		checkSigned(t, r, "es")
	}
}

func TestSimilarRecordsOfARecordWithoutAVectorAreNoneYetAndOfNoRecordNotFound(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	id := createNotes(t, st, "org1", "A")[0]
	s := search.SchemaOf(notes)
	req := &search.Request{Page: 1, Limit: 10}
	missingDoc := `{"_index":"sb-notes","_id":"org1:x","found":false}`
	missingIndex := `{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [sb-notes]"}],"type":"index_not_found_exception","reason":"no such index [sb-notes]","index":"sb-notes"},"status":404}`
	for _, c := range []struct {
		name, id string
		answer   canned
		pending  bool
		err      error
	}{
		{"not indexed yet", id, canned{404, missingDoc}, true, nil},
		{"no index yet", id, canned{404, missingIndex}, true, nil},
		{"indexed pending", id, canned{200, `{"_index":"sb-notes","_id":"org1:` + id + `","found":true,"_source":{"_pending":true}}`}, true, nil},
		{"indexed without text", id, canned{200, `{"_index":"sb-notes","_id":"org1:` + id + `","found":true,"_source":{}}`}, false, nil},
		{"no such record", "nte_01J00000000000000000000000", canned{404, missingDoc}, false, apperr.ErrNotFound},
		{"another organization's record", id, canned{404, missingDoc}, false, apperr.ErrNotFound},
	} {
		fake, srv := newFake(t, c.answer)
		org := "org1"
		if c.name == "another organization's record" {
			org = "org2"
		}
		res, err := managed(t, st, srv.URL, fixedKeeper()).Similar(context.Background(), org, s, c.id, req)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: %+v, %v; want %v", c.name, res, err, c.err)
			}
			continue
		}
		if err != nil || res.Total != 0 || len(res.Records) != 0 || res.Ranking != search.RankingSemantic || (res.Semantic == search.SemanticPending) != c.pending {
			t.Errorf("%s: %+v, %v; want no records, pending %v", c.name, res, err, c.pending)
		}
		if n := len(fake.requests()); n != 1 {
			t.Errorf("%s: %d requests, want the get alone", c.name, n)
		}
	}
}

func TestSimilarRecordsPastTheLastSendNoKNNQuery(t *testing.T) {
	t.Parallel()
	fake, srv := newFake(t,
		canned{200, `{"_index":"sb-notes","_id":"org1:nte_1","found":true,"_source":{"_vec":[1,0,0]}}`},
		canned{200, searchResponse(15)})
	res, err := managed(t, testenv.Store(t), srv.URL, fixedKeeper()).Similar(context.Background(), "org1", search.SchemaOf(notes), "nte_1", &search.Request{Page: 3, Limit: 10})
	if err != nil || res.Total != 15 || len(res.Records) != 0 || len(fake.requests()) != 2 {
		t.Errorf("%+v, %v, %d requests; want 15 in all, page 3 empty, no k-NN query", res, err, len(fake.requests()))
	}
}

func TestAHybridSearchRanksByKeywordsWhenTheIndexRefusesTheKNNQuery(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	ids := createNotes(t, st, "org1", "A")
	// An index made without _vec (EMBEDDINGS=off when it was created).
	fake, srv := newFake(t,
		canned{400, `{"error":{"root_cause":[{"type":"query_shard_exception","reason":"failed to create query: Field '_vec' is not knn_vector type."}],"type":"search_phase_execution_exception","reason":"all shards failed"},"status":400}`},
		canned{200, searchResponse(1, hit{id: "org1:" + ids[0]})})
	s := search.SchemaOf(notes)
	req := &search.Request{Text: "acme", Hybrid: true, Page: 1, Limit: 10}
	res, err := managed(t, st, srv.URL, fixedKeeper()).Search(context.Background(), "org1", s, req)
	if err != nil || names(res) != "A" || res.Ranking != search.RankingKeyword || res.Total != 1 {
		t.Fatalf("%+v, %v; want A by keywords", res, err)
	}
	want, _ := opensearch.Query("org1", s, req)
	if reqs := fake.requests(); len(reqs) != 2 || string(reqs[1].Body) != string(want) {
		t.Errorf("%d requests; want the refused k-NN query, then the keyword query", len(reqs))
	}
	// An error of OpenSearch itself is the search's error.
	_, srv = newFake(t, canned{503, `{"error":{"root_cause":[],"type":"unavailable","reason":"try later"},"status":503}`})
	if _, err := managed(t, st, srv.URL, fixedKeeper()).Search(context.Background(), "org1", s, req); err == nil {
		t.Error("a 503 was no error")
	}
}
