package bedrock_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
)

// invokeModel is a stand-in of Bedrock's InvokeModel on loopback: it
// checks each request's shape, answers Titan V2's body (a vector from the
// text, so that answers can be told apart), throttles the first throttle
// calls and fails texts that say "fail".
type invokeModel struct {
	t        *testing.T
	throttle atomic.Int64
	calls    atomic.Int64
	inFlight atomic.Int64
	mu       sync.Mutex
	most     int64
	texts    []string
}

func (s *invokeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	s.mu.Lock()
	s.most = max(s.most, n)
	s.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // long enough for calls to overlap
	if r.Method != http.MethodPost || r.URL.Path != "/model/"+embed.TitanV2+"/invoke" ||
		r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json" ||
		!strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		s.t.Errorf("request %s %s, headers %v", r.Method, r.URL.Path, r.Header)
	}
	var in struct {
		InputText  string `json:"inputText"`
		Dimensions int    `json:"dimensions"`
		Normalize  bool   `json:"normalize"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &in); err != nil || in.Dimensions != bedrock.Dimensions || !in.Normalize {
		s.t.Errorf("body %s: %v", body, err)
	}
	if s.throttle.Add(-1) >= 0 {
		w.Header().Set("X-Amzn-Errortype", "ThrottlingException")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"message":"Too many requests, please wait before trying again."}`)
		return
	}
	if strings.Contains(in.InputText, "fail") {
		w.Header().Set("X-Amzn-Errortype", "ValidationException")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"message":"Malformed input request"}`)
		return
	}
	s.mu.Lock()
	s.texts = append(s.texts, in.InputText)
	s.mu.Unlock()
	v := make([]float32, bedrock.Dimensions)
	v[len(in.InputText)%bedrock.Dimensions] = 3 // not unit length: the provider scales it
	json.NewEncoder(w).Encode(map[string]any{"embedding": v, "inputTextTokenCount": len(strings.Fields(in.InputText))})
}

func provider(t *testing.T, s *invokeModel, concurrent int) *bedrock.Provider {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	return &bedrock.Provider{Client: client, Concurrent: concurrent}
}

func TestBedrockEmbedsEachTextInOrderAtMostConcurrentCallsAtOnce(t *testing.T) {
	s := &invokeModel{t: t}
	b := provider(t, s, 3)
	var texts []string
	for i := range 20 {
		texts = append(texts, strings.Repeat("x", i+1))
	}
	got, err := b.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 || s.calls.Load() != 20 {
		t.Fatalf("%d vectors in %d calls, want 20 in 20", len(got), s.calls.Load())
	}
	for i, v := range got {
		if len(v) != bedrock.Dimensions || v[(i+1)%bedrock.Dimensions] != 1 {
			t.Errorf("vector %d is not its text's, of unit length", i)
		}
	}
	if s.most > 3 || s.most < 2 {
		t.Errorf("%d calls at once, want at most 3 (and more than one)", s.most)
	}
	if b.Name() != "bedrock:"+embed.TitanV2 || b.Dimensions() != 512 {
		t.Errorf("name %q, dimensions %d", b.Name(), b.Dimensions())
	}
}

func TestBedrockRetriesThrottlingAndFailsWholeOnAnError(t *testing.T) {
	s := &invokeModel{t: t}
	s.throttle.Store(2)
	b := provider(t, s, 1)
	got, err := b.Embed(context.Background(), []string{"one", "two"})
	if err != nil || len(got) != 2 {
		t.Fatalf("throttled twice, then: %v, %d vectors", err, len(got))
	}
	if s.calls.Load() != 4 {
		t.Errorf("%d calls, want 2 throttled and 2 answered", s.calls.Load())
	}
	// An error of the model embeds none of the texts: the caller keeps
	// the records keyword-searchable and tries again later.
	got, err = b.Embed(context.Background(), []string{"fine", "please fail", "fine too"})
	if err == nil || got != nil || !strings.Contains(err.Error(), "ValidationException") || !strings.Contains(err.Error(), "text 2 of 3") {
		t.Fatalf("an invalid text: %v, %v", got, err)
	}
}

func TestBedrockCutsATextToTheModelsLimitAtARuneBoundary(t *testing.T) {
	s := &invokeModel{t: t}
	b := provider(t, s, 1)
	long := strings.Repeat("é", bedrock.MaxChars) // two bytes each
	if _, err := b.Embed(context.Background(), []string{long}); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := s.texts[0]; len(got) > bedrock.MaxChars || !strings.HasPrefix(long, got) || len(got)%2 != 0 {
		t.Errorf("sent %d bytes of it", len(got))
	}
	if math.Abs(float64(len(s.texts[0]))-float64(bedrock.MaxChars)) > 1 {
		t.Errorf("sent %d bytes, want the first %d", len(s.texts[0]), bedrock.MaxChars)
	}
}
