package opensearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
)

// bulkDoc is one action of a recorded _bulk body and its document.
type bulkDoc struct {
	op, index, id string
	doc           map[string]json.RawMessage
}

func bulkDocs(t *testing.T, body []byte) []bulkDoc {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	var out []bulkDoc
	for i := 0; i < len(lines); i++ {
		var meta map[string]struct {
			Index string `json:"_index"`
			ID    string `json:"_id"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &meta); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for op, m := range meta {
			d := bulkDoc{op: op, index: m.Index, id: m.ID}
			if op == "index" {
				i++
				if err := json.Unmarshal([]byte(lines[i]), &d.doc); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
			}
			out = append(out, d)
		}
	}
	return out
}

// okItems is a _bulk answer of docs' actions, each successful.
func okItems(docs []bulkDoc) string {
	var items []string
	for _, d := range docs {
		items = append(items, fmt.Sprintf(`{%q:{"_index":%q,"_id":%q,"status":200}}`, d.op, d.index, d.id))
	}
	return `{"took":3,"errors":false,"items":[` + strings.Join(items, ",") + `]}`
}

// managedIndexer is an indexer of the searchable resources on a managed
// domain (where it indexes vectors) at f, with keeper.
func managedIndexer(t *testing.T, f *bulkFake, keeper *vectors.Keeper) *opensearch.Indexer {
	t.Helper()
	cfg := testConfig(f.start(t), opensearch.ServiceManaged)
	cfg.IndexPrefix = "sourcebase"
	c, err := opensearch.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return opensearch.NewIndexer(c, searchable(), keeper)
}

func TestTheIndexerPutsEachRecordsEmbeddingFromTheLocalModelInItsDocument(t *testing.T) {
	t.Parallel()
	model := embedtest.Local(t)
	ev := sampleEvent(t)
	_, actions := opensearch.Bulk("sourcebase", searchable(), ev)
	f := &bulkFake{status: 200}
	ix := managedIndexer(t, f, vectors.New(model, nil, false))
	// The answer has one item per action.
	var fakeDocs []bulkDoc
	for _, a := range actions {
		op := "index"
		if a.Delete {
			op = "delete"
		}
		fakeDocs = append(fakeDocs, bulkDoc{op: op, index: a.Index, id: a.ID})
	}
	f.response = okItems(fakeDocs)
	res, err := ix.Handle(context.Background(), ev)
	if err != nil || len(res.BatchItemFailures) != 0 {
		t.Fatalf("%+v, %v; want no failures", res, err)
	}
	if len(f.bulks) != 1 {
		t.Fatalf("%d bulks, want 1", len(f.bulks))
	}
	bySchema := map[string]*search.Schema{}
	for _, s := range searchable() {
		bySchema[opensearch.IndexName("sourcebase", s.Resource)] = s
	}
	docs := bulkDocs(t, f.bulks[0].Body)
	withVector := 0
	for i, d := range docs {
		if d.op != "index" {
			continue
		}
		if _, pending := d.doc[opensearch.PendingField]; pending {
			t.Errorf("%s is pending with the local model", d.id)
		}
		var rec map[string]any
		raw, _ := json.Marshal(d.doc)
		json.Unmarshal(raw, &rec)
		text := search.SemanticText(bySchema[d.index], rec)
		rawVec, has := d.doc[opensearch.VectorField]
		// The workspace is in the batch twice, renamed: its first
		// action is replaced by the second, which alone has the vector.
		superseded := slices.ContainsFunc(docs[i+1:], func(later bulkDoc) bool { return later.id == d.id })
		if text == "" || superseded {
			if has {
				t.Errorf("%s (text %q, superseded %v) has a vector", d.id, text, superseded)
			}
			continue
		}
		want, err := model.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		var got []float32
		if err := json.Unmarshal(rawVec, &got); err != nil || !slices.Equal(got, want[0]) || len(got) != model.Dimensions() {
			t.Errorf("%s: %s is not the embedding of %q (%d dimensions): %v", d.id, opensearch.VectorField, text, model.Dimensions(), err)
		}
		withVector++
	}
	if withVector != 3 {
		t.Errorf("%d documents with a vector, want 3 (the company, the renamed workspace, the activity)", withVector)
	}
	// The indexes are created with the model's dimension.
	var m struct {
		Mappings struct {
			Properties map[string]struct{ Dimension int }
		}
	}
	if len(f.createBodies) == 0 || json.Unmarshal(f.createBodies[0], &m) != nil || m.Mappings.Properties[opensearch.VectorField].Dimension != model.Dimensions() {
		t.Errorf("the indexes were not created with a %d-dimension %s", model.Dimensions(), opensearch.VectorField)
	}
}

// failingInvokeModel is a stand-in of Bedrock's InvokeModel on loopback
// that answers every call with status (400: ValidationException, 500:
// InternalServerException), counting them.
type failingInvokeModel struct {
	status int
	calls  atomic.Int64
}

func (s *failingInvokeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	io.Copy(io.Discard, r.Body)
	kind := map[int]string{400: "ValidationException", 500: "InternalServerException"}[s.status]
	w.Header().Set("X-Amzn-Errortype", kind)
	w.WriteHeader(s.status)
	io.WriteString(w, `{"message":"the stand-in fails"}`)
}

func failingBedrock(t *testing.T, status int) (*bedrock.Provider, *failingInvokeModel) {
	s := &failingInvokeModel{status: status}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), RetryMaxAttempts: 2})
	return &bedrock.Provider{Client: client}, s
}

func TestARecordWhoseTextCannotBeEmbeddedIsIndexedPendingForKeywordSearchAndRetried(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 500} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			provider, stand := failingBedrock(t, status)
			// Bedrock's vectors are kept in the table, as deployed.
			keeper := vectors.New(provider, testenv.Store(t), true)
			ev := sampleEvent(t)
			f := &bulkFake{status: 200}
			ix := managedIndexer(t, f, keeper)
			_, actions := opensearch.Bulk("sourcebase", searchable(), ev)
			var answer []bulkDoc
			for _, a := range actions {
				answer = append(answer, bulkDoc{op: map[bool]string{true: "delete", false: "index"}[a.Delete], index: a.Index, id: a.ID})
			}
			f.response = okItems(answer)
			res, err := ix.Handle(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if stand.calls.Load() == 0 {
				t.Fatal("Bedrock's stand-in was not called")
			}
			var failed []string
			for _, fl := range res.BatchItemFailures {
				failed = append(failed, fl.ItemIdentifier)
			}
			// The company, the renamed workspace (its first action is
			// replaced in the same bulk) and the activity: retried.
			if want := "4000000000000000000003017,4000000000000000000005017,4000000000000000000010017"; strings.Join(failed, ",") != want {
				t.Errorf("batch item failures %v, want %s", failed, want)
			}
			docs := bulkDocs(t, f.bulks[0].Body)
			pending := 0
			for i, d := range docs {
				if d.op != "index" {
					continue
				}
				if _, has := d.doc[opensearch.VectorField]; has {
					t.Errorf("%s has a vector", d.id)
				}
				// Indexed all the same, with its fields: keyword-searchable.
				if d.doc["id"] == nil || d.doc[opensearch.OrgField] == nil {
					t.Errorf("%s was not indexed with its fields: %v", d.id, d.doc)
				}
				superseded := slices.ContainsFunc(docs[i+1:], func(later bulkDoc) bool { return later.id == d.id })
				if string(d.doc[opensearch.PendingField]) == "true" {
					pending++
				} else if !superseded {
					t.Errorf("%s is not pending", d.id)
				}
			}
			if pending != 3 {
				t.Errorf("%d pending documents, want 3", pending)
			}
		})
	}
}

func TestOnServerlessTheIndexerIndexesNoVectors(t *testing.T) {
	t.Parallel()
	f := &bulkFake{status: 200, response: `{"took":1,"errors":false,"items":[]}`}
	c, err := opensearch.NewClient(testConfig(f.start(t), opensearch.ServiceServerless))
	if err != nil {
		t.Fatal(err)
	}
	ix := opensearch.NewIndexer(c, searchable(), fixedKeeper())
	ev := sampleEvent(t)
	ix.Handle(context.Background(), ev) // the answer's items do not match: an error, after the bulk
	if len(f.bulks) != 1 || strings.Contains(string(f.bulks[0].Body), opensearch.VectorField) || strings.Contains(string(f.bulks[0].Body), opensearch.PendingField) {
		t.Errorf("the bulk on Serverless: %s", f.bulks[0].Body)
	}
	for _, b := range f.createBodies {
		if strings.Contains(string(b), "knn") {
			t.Errorf("an index created on Serverless with k-NN: %s", b)
		}
	}
}
