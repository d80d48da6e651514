package embedded_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
	"github.com/sourcebase/sourcebase/internal/embed/embedtest"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
)

// titanStandIn is a stand-in of Bedrock's InvokeModel on loopback for
// Titan Text Embeddings V2: it answers each text's vector from the local
// model (a real embedding, padded to Titan's 512 dimensions), counts the
// calls, and answers 400 while down is set.
type titanStandIn struct {
	t     *testing.T
	local *embed.Local
	calls atomic.Int64
	down  atomic.Bool
	stall atomic.Bool // answer nothing until the caller gives up
}

func (s *titanStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	var in struct {
		InputText string `json:"inputText"`
	}
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/model/"+embed.TitanV2+"/invoke" || json.Unmarshal(body, &in) != nil {
		s.t.Errorf("InvokeModel %s %s", r.URL.Path, body)
	}
	if s.stall.Load() {
		<-r.Context().Done()
		return
	}
	if s.down.Load() {
		w.Header().Set("X-Amzn-Errortype", "ValidationException")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"message":"the model is not available"}`))
		return
	}
	v, _ := s.local.Embed(r.Context(), []string{in.InputText})
	out := make([]float32, bedrock.Dimensions)
	copy(out, v[0])
	json.NewEncoder(w).Encode(map[string]any{"embedding": out, "inputTextTokenCount": 3})
}

// TestWithBedrockARecordIsFoundByKeywordUntilItsEmbeddingLandsAndIsEmbeddedOncePerText
// runs the engine on the Bedrock provider against a stand-in of
// InvokeModel: a model that fails leaves records searchable by keyword
// (pending); once it answers, they are embedded, kept in the table and
// read back by a new process instead of embedded again; a record is
// embedded again only when its text changes, and its vector leaves with it.
func TestWithBedrockARecordIsFoundByKeywordUntilItsEmbeddingLandsAndIsEmbeddedOncePerText(t *testing.T) {
	t.Parallel()
	stand := &titanStandIn{t: t, local: embedtest.Local(t)}
	stand.down.Store(true)
	srv := httptest.NewServer(stand)
	t.Cleanup(srv.Close)
	client := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")},
		func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	e := newEnv(t, nil)
	keeper := func(cooldown time.Duration) *vectors.Keeper {
		k := vectors.New(&bedrock.Provider{Client: client}, e.st, true)
		k.Cooldown = cooldown
		return k
	}
	e.engine = embedded.New(e.st, 0, keeper(time.Hour))
	cars := e.create(`{"name": "Voltride", "body": "builds electric cars and delivery vans"}`)
	bakery := e.create(`{"name": "Crumb", "body": "a chain of bakeries selling bread"}`)
	hybrid := func(text string) *search.Result {
		t.Helper()
		req, err := search.Decode(e.schema, []byte(`{"hybrid": true, "text": "`+text+`"}`), 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.engine.Search(context.Background(), e.org, e.schema, req)
		if err != nil {
			t.Fatalf("a hybrid search with the model down: %v", err)
		}
		return res
	}

	// The model is down: the search answers by keyword, and says the
	// records' embeddings are pending.
	if res := hybrid("cars"); res.Total != 1 || res.Ranking != search.RankingKeyword || res.Semantic != search.SemanticPending {
		t.Errorf("model down: total %d, ranking %q, semantic %q; want the keyword match, pending", res.Total, res.Ranking, res.Semantic)
	}
	// Failed a moment ago, the model is left alone: no call.
	before := stand.calls.Load()
	if res := hybrid("cars"); res.Semantic != search.SemanticPending || stand.calls.Load() != before {
		t.Errorf("within the cooldown: semantic %q, %d calls; want pending and none", res.Semantic, stand.calls.Load()-before)
	}
	// It answers again (a process past its cooldown): the next search
	// embeds both records and the text.
	stand.down.Store(false)
	e.engine = embedded.New(e.st, 0, keeper(time.Nanosecond))
	before = stand.calls.Load()
	res := hybrid("automobile")
	if res.Ranking != search.RankingHybrid || res.Semantic != "" || res.Total != 2 || !slices.Equal(noteIDs(t, res), []string{cars, bakery}) {
		t.Errorf("model up: %v ranking %q semantic %q, want the car maker first, nothing pending", noteIDs(t, res), res.Ranking, res.Semantic)
	}
	if calls := stand.calls.Load() - before; calls != 3 {
		t.Errorf("%d InvokeModel calls, want 3: two records and the text", calls)
	}
	stored, err := e.st.Vectors(context.Background(), e.org, notes.Type, []string{cars, bakery})
	if err != nil || len(stored) != 2 || len(stored[cars].Values) != bedrock.Dimensions || stored[cars].Model != "bedrock:"+embed.TitanV2 {
		t.Fatalf("vectors kept: %d, %v", len(stored), err)
	}
	// A new process reads the vectors instead of embedding again.
	e.engine = embedded.New(e.st, 0, keeper(time.Nanosecond))
	before = stand.calls.Load()
	if res := hybrid("automobile"); !slices.Equal(noteIDs(t, res), []string{cars, bakery}) {
		t.Errorf("a new process: %v", noteIDs(t, res))
	}
	if calls := stand.calls.Load() - before; calls != 1 {
		t.Errorf("a new process made %d InvokeModel calls, want 1 (the text)", calls)
	}
	// A change of a field that is not text embeds nothing; of the text, that record.
	ctx := context.Background()
	if _, err := e.svc.Update(ctx, e.org, bakery, []byte(`{"size": 3}`)); err != nil {
		t.Fatal(err)
	}
	before = stand.calls.Load()
	hybrid("automobile")
	if calls := stand.calls.Load() - before; calls != 1 {
		t.Errorf("after a change of size: %d calls, want 1 (the text)", calls)
	}
	if _, err := e.svc.Update(ctx, e.org, bakery, []byte(`{"body": "sells electric scooters"}`)); err != nil {
		t.Fatal(err)
	}
	// A keyword search does not wait for the model.
	before = stand.calls.Load()
	if _, total := e.names(`{"text": "scooters"}`); total != 1 || stand.calls.Load() != before {
		t.Errorf("a keyword search after a text change: %d found, %d InvokeModel calls; want 1, none", total, stand.calls.Load()-before)
	}
	hybrid("automobile")
	if calls := stand.calls.Load() - before; calls != 2 {
		t.Errorf("after a change of the text: %d calls, want 2 (the record and the text)", calls)
	}
	// The record's deletion deletes its vector.
	if err := e.svc.Delete(ctx, e.org, cars); err != nil {
		t.Fatal(err)
	}
	if stored, err := e.st.Vectors(ctx, e.org, notes.Type, []string{cars, bakery}); err != nil || len(stored) != 1 {
		t.Errorf("after the deletion: %d vectors kept, %v; want the other record's only", len(stored), err)
	}
}

// TestAModelThatStallsHoldsNoSearchPastTheBudget: a Bedrock that never
// answers leaves a hybrid search to rank by keywords, its records pending,
// once the keeper's budget has run out.
func TestAModelThatStallsHoldsNoSearchPastTheBudget(t *testing.T) {
	t.Parallel()
	stand := &titanStandIn{t: t, local: embedtest.Local(t)}
	stand.stall.Store(true)
	srv := httptest.NewServer(stand)
	t.Cleanup(srv.Close)
	client := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		RetryMaxAttempts: 1}, func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	e := newEnv(t, nil)
	k := vectors.New(&bedrock.Provider{Client: client}, e.st, true)
	k.Budget = testenv.Scaled(200 * time.Millisecond)
	e.engine = embedded.New(e.st, 0, k)
	e.create(`{"name": "Voltride", "body": "builds electric cars"}`)
	req, err := search.Decode(e.schema, []byte(`{"hybrid": true, "text": "cars"}`), 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.engine.Search(context.Background(), e.org, e.schema, req)
	if err != nil || res.Total != 1 || res.Ranking != search.RankingKeyword || res.Semantic != search.SemanticPending {
		t.Fatalf("a stalled model: %+v, %v; want the keyword match, pending", res, err)
	}
}

// noteIDs are the ids of a result's records.
func noteIDs(t *testing.T, res *search.Result) []string {
	t.Helper()
	var out []string
	for _, raw := range res.Records {
		var rec struct{ ID string }
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.ID)
	}
	return out
}
