package opensearch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/search/opensearch/golden"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// recorded is one request the fake OpenSearch received.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// fakeOpenSearch records requests and answers each with the next canned
// response (status and body); the last one repeats.
type fakeOpenSearch struct {
	mu      sync.Mutex
	got     []recorded
	answers []canned
}

type canned struct {
	status int
	body   string
}

func newFake(t *testing.T, answers ...canned) (*fakeOpenSearch, *httptest.Server) {
	f := &fakeOpenSearch{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.got = append(f.got, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		a := f.answers[min(len(f.got), len(f.answers))-1]
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeOpenSearch) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

func testConfig(endpoint, service string) opensearch.Config {
	return opensearch.Config{
		Endpoint: endpoint, Service: service, IndexPrefix: "sb",
		AWS: aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")},
	}
}

// checkSigned checks that r carries a SigV4 signature for service over
// its body.
func checkSigned(t *testing.T, r recorded, service string) {
	t.Helper()
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/eu-west-1/"+service+"/aws4_request") ||
		!strings.Contains(auth, "SignedHeaders=") || !strings.Contains(auth, "Signature=") {
		t.Errorf("%s %s: Authorization %q is not SigV4 for %s in eu-west-1", r.Method, r.Path, auth, service)
	}
	sum := sha256.Sum256(r.Body)
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != hex.EncodeToString(sum[:]) {
		t.Errorf("%s %s: X-Amz-Content-Sha256 %q is not the body's hash", r.Method, r.Path, got)
	}
	if r.Header.Get("X-Amz-Date") == "" {
		t.Errorf("%s %s: no X-Amz-Date", r.Method, r.Path)
	}
}

func hitsResponse(total int, docIDs ...string) string {
	var hits []string
	for _, id := range docIDs {
		hits = append(hits, fmt.Sprintf(`{"_index":"sb-notes","_id":%q,"_score":null,"sort":[%q]}`, id, id))
	}
	return fmt.Sprintf(`{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":%d,"relation":"eq"},"max_score":null,"hits":[%s]}}`, total, strings.Join(hits, ","))
}

func TestASearchSendsTheGoldenBodySignedForServerlessAndAnswersWithTheCurrentRecordsInHitOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	reg := resource.NewRegistry(st, []*resource.Def{notes}, nil)
	svc, _ := reg.Service("notes")
	var ids []string
	for _, name := range []string{"Acme one", "Acme two", "Acme three"} {
		r, err := svc.Create(ctx, "org1", []byte(`{"name":"`+name+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID())
	}
	if _, err := svc.Update(ctx, "org1", ids[2], []byte(`{"name":"Acme three (renamed)"}`)); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, "org1", ids[1]); err != nil {
		t.Fatal(err)
	}
	// The index still holds the deleted record, and the renamed one as it was.
	fake, srv := newFake(t, canned{200, hitsResponse(57, "org1:"+ids[2], "org1:"+ids[1], "org1:"+ids[0])})
	engine, err := opensearch.New(st, testConfig(srv.URL, opensearch.ServiceServerless))
	if err != nil {
		t.Fatal(err)
	}
	s := search.SchemaOf(notes)
	c := golden.Cases[slices.IndexFunc(golden.Cases, func(c golden.Case) bool { return c.Name == "nested" })]
	req, err := search.Decode(s, []byte(c.Body), 1, search.DefaultLimit)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Search(ctx, "org1", s, req)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, raw := range res.Records {
		var v struct{ Name string }
		json.Unmarshal(raw, &v)
		names = append(names, v.Name)
	}
	if strings.Join(names, "|") != "Acme three (renamed)|Acme one" || res.Total != 57 || res.Ranking != search.RankingKeyword {
		t.Errorf("records %q total %d ranking %q; want the current records in hit order without the deleted one, total 57", names, res.Total, res.Ranking)
	}
	reqs := fake.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/sb-notes/_search" {
		t.Errorf("request %s %s, want POST /sb-notes/_search", r.Method, r.Path)
	}
	want, err := os.ReadFile("testdata/query-nested.json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(r.Body)) != strings.TrimSpace(string(want)) {
		t.Errorf("body differs from testdata/query-nested.json:\n%s", r.Body)
	}
	checkSigned(t, r, "aoss")
}

func TestAManagedDomainIsSignedForEsAndAMissingIndexIsAnEmptyResult(t *testing.T) {
	t.Parallel()
	fake, srv := newFake(t, canned{404, `{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [sb-notes]"}],"type":"index_not_found_exception","reason":"no such index [sb-notes]","index":"sb-notes"},"status":404}`})
	engine, err := opensearch.New(testenv.Store(t), testConfig(srv.URL, opensearch.ServiceManaged))
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Search(context.Background(), "org1", search.SchemaOf(notes), &search.Request{Text: "acme", Page: 1, Limit: 10})
	if err != nil || res.Total != 0 || len(res.Records) != 0 {
		t.Fatalf("search of a missing index: %+v, %v; want an empty result", res, err)
	}
	checkSigned(t, fake.requests()[0], "es")
}

func TestAnOpenSearchErrorIsAnError(t *testing.T) {
	t.Parallel()
	_, srv := newFake(t, canned{400, `{"error":{"root_cause":[{"type":"query_shard_exception","reason":"bad"}],"type":"search_phase_execution_exception","reason":"all shards failed"},"status":400}`})
	engine, err := opensearch.New(testenv.Store(t), testConfig(srv.URL, opensearch.ServiceServerless))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Search(context.Background(), "org1", search.SchemaOf(notes), &search.Request{Page: 1, Limit: 10}); err == nil || !strings.Contains(err.Error(), "all shards failed") {
		t.Fatalf("search answered 400: %v, want the error", err)
	}
}

func TestEnsureIndexesPutsEachMappingAndAcceptsAnIndexThatExists(t *testing.T) {
	t.Parallel()
	fake, srv := newFake(t,
		canned{200, `{"acknowledged":true,"shards_acknowledged":true,"index":"sb-notes"}`},
		canned{400, `{"error":{"root_cause":[{"type":"resource_already_exists_exception","reason":"exists"}],"type":"resource_already_exists_exception","reason":"index [sb-companies/x] already exists","index":"sb-companies"},"status":400}`})
	c, err := opensearch.NewClient(testConfig(srv.URL, opensearch.ServiceServerless))
	if err != nil {
		t.Fatal(err)
	}
	companies := schemaAs("companies")
	if err := c.EnsureIndexes(context.Background(), []*search.Schema{search.SchemaOf(notes), companies}, golden.Dimensions); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureIndexes(context.Background(), []*search.Schema{search.SchemaOf(notes)}, 0); err != nil {
		t.Fatal(err)
	}
	reqs := fake.requests()
	if len(reqs) != 3 || reqs[0].Method != http.MethodPut || reqs[0].Path != "/sb-notes" || reqs[1].Path != "/sb-companies" || reqs[2].Path != "/sb-notes" {
		t.Fatalf("requests %+v, want PUT /sb-notes and /sb-companies, then /sb-notes", reqs)
	}
	for i, name := range map[int]string{0: "mapping-notes.json", 2: golden.KeywordOnlyMapping} {
		want, _ := os.ReadFile("testdata/" + name)
		if strings.TrimSpace(string(reqs[i].Body)) != strings.TrimSpace(string(want)) {
			t.Errorf("index body differs from testdata/%s:\n%s", name, reqs[i].Body)
		}
	}
	checkSigned(t, reqs[0], "aoss")
}

func TestAConfigurationWithoutEndpointServiceOrPrefixIsRefused(t *testing.T) {
	for _, c := range []opensearch.Config{
		testConfig("", "aoss"), testConfig("search.example.com", "aoss"), testConfig("https://x.example.com", "opensearch"),
		{Endpoint: "https://x.example.com", Service: "es"},
	} {
		if _, err := opensearch.NewClient(c); err == nil {
			t.Errorf("NewClient(%+v) accepted", c)
		}
	}
}
