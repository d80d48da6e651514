package keysapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestTwentyParallelIdenticalCreatesWithOneIdempotencyKeyMakeOneRecordAndTheSameAnswer(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	body := map[string]any{"canonicalName": "Once Inc", "tags": []any{"a"}}
	rs := make([]*apitest.Response, 20)
	apitest.InParallel(len(rs), func(i int) { rs[i] = c.Do("POST", "/v1/companies", body, "Idempotency-Key", "create-once-1") })
	replayed := 0
	for _, r := range rs {
		r.Want(t, 201)
		if !bytes.Equal(r.Body, rs[0].Body) {
			t.Errorf("answers differ:\n%s\n%s", r.Body, rs[0].Body)
		}
		if r.Header.Get("Idempotent-Replayed") == "true" {
			replayed++
		}
	}
	if replayed != len(rs)-1 {
		t.Errorf("%d answers marked Idempotent-Replayed, want %d", replayed, len(rs)-1)
	}
	if list := apitest.Companies(t, c); len(list) != 1 || apitest.IDOf(t, list[0]) != apitest.IDOf(t, rs[0].Object(t)) {
		t.Errorf("companies %s, want just the one created", apitest.JSONOf(list))
	}
}

func TestAnIdempotencyKeyIsScopedToTheOrganizationMethodAndPathAndBoundToTheBody(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	key := []string{"Idempotency-Key", "k-1"}
	first := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "A"}, key...).Want(t, 201)
	apitest.WantError(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "B"}, key...), 422, "Idempotency-Key", "different request body")
	// The same key elsewhere is another key.
	c.Do("POST", "/v1/workflows", map[string]any{"name": "W"}, key...).Want(t, 201)
	other := e.Org(t)
	theirs := other.Do("POST", "/v1/companies", map[string]any{"canonicalName": "A"}, key...).Want(t, 201)
	if theirs.Header.Get("Idempotent-Replayed") != "" || apitest.IDOf(t, theirs.Object(t)) == apitest.IDOf(t, first.Object(t)) {
		t.Errorf("another organization's key replayed this organization's answer: %s", theirs.Body)
	}
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Errorf("%d companies, want 1", len(list))
	}
	// Without a key every request runs.
	c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "A"}).Want(t, 201)
	c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "A"}).Want(t, 201)
	if list := apitest.Companies(t, c); len(list) != 3 {
		t.Errorf("%d companies, want 3", len(list))
	}
	// A refusal is an answer too, and is replayed.
	bad := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": 7}, "Idempotency-Key", "k-2")
	apitest.WantError(t, bad, 400, "canonicalName")
	again := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": 7}, "Idempotency-Key", "k-2")
	if again.Status != 400 || !bytes.Equal(again.Body, bad.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("repeat answered %d %s, want the replayed 400", again.Status, again.Body)
	}
}

func TestEveryCreatingPostReplaysItsFirstAnswerForARepeatedIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	once := func(path string, body any, status int) map[string]any {
		t.Helper()
		first := c.Do("POST", path, body, "Idempotency-Key", "key "+path).Want(t, status)
		again := c.Do("POST", path, body, "Idempotency-Key", "key "+path).Want(t, status)
		if !bytes.Equal(first.Body, again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("POST %s: repeat answered %s, want the replayed %s", path, again.Body, first.Body)
		}
		return first.Object(t)
	}
	wf := once("/v1/workflows", map[string]any{"name": "Fails", "steps": []any{apitest.Step("stop", "fail", map[string]any{"message": "no"})}}, 201)
	if list := c.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 1 {
		t.Errorf("%d workflows, want 1", len(list))
	}
	run := once("/v1/workflows/"+apitest.IDOf(t, wf)+"/runs", map[string]any{"input": map[string]any{"n": 1}}, 202)
	if runs := apitest.RunsOf(t, c, apitest.IDOf(t, wf)); len(runs) != 1 {
		t.Errorf("%d runs, want 1", len(runs))
	}
	apitest.WantStatus(t, apitest.AwaitRun(t, c, apitest.IDOf(t, run)), "failed")
	retry := once("/v1/workflow-runs/"+apitest.IDOf(t, run)+"/retry", nil, 202)
	if retry["retryOf"] != apitest.IDOf(t, run) {
		t.Errorf("retry %s, want a retry of %s", apitest.JSONOf(retry), apitest.IDOf(t, run))
	}
	if runs := apitest.RunsOf(t, c, apitest.IDOf(t, wf)); len(runs) != 2 {
		t.Errorf("%d runs, want the run and one retry", len(runs))
	}
}

func TestAnInvalidIdempotencyKeyIs400NamingTheHeader(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, key := range []string{"", strings.Repeat("k", 256), "ключ", "tab\there"} {
		apitest.WantError(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "A"}, "Idempotency-Key", key), 400, "Idempotency-Key")
	}
	c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "A"}, "Idempotency-Key", strings.Repeat("k", 255)).Want(t, 201)
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Errorf("%d companies, want only the one with a valid key", len(list))
	}
}

// companyWrite reports whether a DynamoDB request writes a company (a put,
// or a transaction holding one, as a searchable record's writes are), and
// leaves r's body readable.
func companyWrite(r *http.Request) bool {
	target := r.Header.Get("X-Amz-Target")
	if !strings.HasSuffix(target, ".PutItem") && !strings.HasSuffix(target, ".TransactWriteItems") {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return bytes.Contains(body, []byte(`"S":"COMPANY"`))
}

// failingPuts fails every DynamoDB write of a company while on.
type failingPuts struct{ on atomic.Bool }

func (f *failingPuts) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.on.Load() && companyWrite(r) {
		return nil, errors.New("injected failure")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestAServerErrorIsNotKeptAndReleasesTheIdempotencyKey(t *testing.T) {
	t.Parallel()
	faults := &failingPuts{}
	e := apitest.NewWith(t, apitest.Options{Transport: faults})
	c := e.Org(t)
	body := map[string]any{"canonicalName": "Retried Inc"}
	faults.on.Store(true)
	failed := c.Do("POST", "/v1/companies", body, "Idempotency-Key", "k-5xx")
	faults.on.Store(false)
	if failed.Status < 500 {
		t.Fatalf("status %d with storage failing, want 5xx; body %s", failed.Status, failed.Body)
	}
	again := c.Do("POST", "/v1/companies", body, "Idempotency-Key", "k-5xx").Want(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the retry after a 5xx was a replay: %s", again.Body)
	}
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Errorf("%d companies, want 1", len(list))
	}
}

// gatedPuts holds every DynamoDB write of a company until released, and
// reports when a duplicate reads the idempotency record.
type gatedPuts struct {
	release  chan struct{}
	looked   chan struct{}
	lookOnce atomic.Bool
}

func (g *gatedPuts) RoundTrip(r *http.Request) (*http.Response, error) {
	if companyWrite(r) {
		<-g.release
	} else if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetItem") {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte("IDEMPOTENCY")) && g.lookOnce.CompareAndSwap(false, true) {
			close(g.looked)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestADuplicateArrivingWhileTheFirstRequestRunsWaitsForItsAnswer(t *testing.T) {
	t.Parallel()
	gate := &gatedPuts{release: make(chan struct{}), looked: make(chan struct{})}
	e := apitest.NewWith(t, apitest.Options{Transport: gate})
	c := e.Org(t)
	body := map[string]any{"canonicalName": "Slow Inc"}
	answers := make(chan *apitest.Response, 2)
	for range 2 {
		go func() { answers <- c.Do("POST", "/v1/companies", body, "Idempotency-Key", "slow") }()
	}
	// One request holds the key and is stuck writing the company; once the
	// other has found the key taken, let the first finish.
	<-gate.looked
	close(gate.release)
	a, b := <-answers, <-answers
	a.Want(t, 201)
	b.Want(t, 201)
	if !bytes.Equal(a.Body, b.Body) || a.Header.Get("Idempotent-Replayed") == b.Header.Get("Idempotent-Replayed") {
		t.Errorf("answers %s (replayed %q) and %s (replayed %q), want one answer and its replay",
			a.Body, a.Header.Get("Idempotent-Replayed"), b.Body, b.Header.Get("Idempotent-Replayed"))
	}
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Errorf("%d companies, want 1", len(list))
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestAKeyClaimedByARequestThatNeverAnsweredIsTakenOverAfterItsLease(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	body, _ := json.Marshal(map[string]any{"canonicalName": "Orphan Inc"})
	// What a process that died mid-request leaves behind: a claim whose
	// lease has run out (the layout of httpapi's idempotency records).
	past := time.Now().UTC().Add(-time.Hour)
	op, err := e.Store.CreateExpiringOp(store.Item{
		PK:   store.OrgPartition(c.Org, "IDEMPOTENCY") + "#" + sha256Hex([]byte("POST /v1/companies\nabandoned")),
		SK:   "IDEMPOTENCY",
		Type: "IDEMPOTENCY",
		Doc: map[string]any{"state": "claimed", "fingerprint": sha256Hex(body), "method": "POST", "path": "/v1/companies",
			"claimedAt": past, "leaseUntil": past.Add(time.Minute)},
	}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Transact(context.Background(), nil, op); err != nil {
		t.Fatal(err)
	}
	first := c.Do("POST", "/v1/companies", body, "Idempotency-Key", "abandoned").Want(t, 201)
	if first.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the takeover was answered as a replay: %s", first.Body)
	}
	again := c.Do("POST", "/v1/companies", body, "Idempotency-Key", "abandoned").Want(t, 201)
	if !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("repeat answered %s, want the replay of %s", again.Body, first.Body)
	}
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Errorf("%d companies, want 1", len(list))
	}
}

// stallAfterClaim passes DynamoDB calls through until, once armed, a
// request has claimed an Idempotency-Key: from then on the table is frozen
// (each call hangs until its deadline, as in a storage stall) until thawed.
type stallAfterClaim struct {
	armed, stalled atomic.Bool
}

func (s *stallAfterClaim) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.stalled.Load() {
		return apitest.Frozen(r)
	}
	claim := s.armed.Load() && idempotencyClaim(r)
	res, err := http.DefaultTransport.RoundTrip(r)
	if claim && err == nil && res.StatusCode == http.StatusOK {
		s.armed.Store(false)
		s.stalled.Store(true)
	}
	return res, err
}

// idempotencyClaim reports whether a DynamoDB request writes an
// Idempotency-Key's claim, and leaves r's body readable.
func idempotencyClaim(r *http.Request) bool {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem") || r.Body == nil {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return bytes.Contains(body, []byte("IDEMPOTENCY")) && bytes.Contains(body, []byte("claimed"))
}

// postWithKey posts body as c with an Idempotency-Key, with a client that
// gives up after a minute, so a hanging server fails the test instead of
// stalling it.
func postWithKey(t *testing.T, c *apitest.Client, path string, body any, key string) *apitest.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", c.Base+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("X-Service-Client-Id", c.ClientID)
	req.Header.Set("X-Service-Api-Key", c.Secret)
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("POST %s got no answer: %v", path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return &apitest.Response{Status: res.StatusCode, Header: res.Header, Body: out}
}

func TestARetryAfterA503InAStorageStallIsNotLockedOutByItsIdempotencyKey(t *testing.T) {
	testenv.Long(t, "waits out a storage stall")
	t.Parallel()
	stall := &stallAfterClaim{}
	st := testenv.StoreOn(t, testenv.ClientAt(t, testenv.Endpoint(t), stall, apitest.FaultTimeouts()))
	e := apitest.NewWith(t, apitest.Options{Store: st})
	c := e.Org(t)
	c.Do("GET", "/v1/companies", nil).Want(t, 200) // the key is now cached
	body := map[string]any{"canonicalName": "Stalled Inc"}

	// The key is claimed, then the table stalls: the create and the
	// release of the key both fail.
	stall.armed.Store(true)
	apitest.WantUnavailable(t, postWithKey(t, c, "/v1/companies", body, "k-stall"))
	stall.stalled.Store(false) // the table answers again

	// Retried as the 503 says, with the same key: it runs now.
	again := postWithKey(t, c, "/v1/companies", body, "k-stall")
	if again.Status != 201 {
		t.Fatalf("BUG: the retry after a 503 answered %d %s, want 201: the 503 left the Idempotency-Key claimed", again.Status, again.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the retry after a 503 was a replay: %s", again.Body)
	}
	postWithKey(t, c, "/v1/companies", body, "k-stall").Want(t, 201)
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Errorf("%d companies, want 1", len(list))
	}
}

func TestAKeyWhoseReleaseFailedInAStallIsReleasedWhenTheTableAnswersAgain(t *testing.T) {
	testenv.Long(t, "waits out a storage stall")
	t.Parallel()
	stall := &stallAfterClaim{}
	st := testenv.StoreOn(t, testenv.ClientAt(t, testenv.Endpoint(t), stall, apitest.FaultTimeouts()))
	a := apitest.NewWith(t, apitest.Options{Store: st})
	b := apitest.NewWith(t, apitest.Options{Store: st}) // another instance of the service
	c := a.Org(t)
	onB := b.As(t, c)
	c.Do("GET", "/v1/companies", nil).Want(t, 200)
	onB.Do("GET", "/v1/companies", nil).Want(t, 200)
	body := map[string]any{"canonicalName": "Stalled Elsewhere Inc"}

	stall.armed.Store(true)
	apitest.WantUnavailable(t, postWithKey(t, c, "/v1/companies", body, "k-stall"))
	stall.stalled.Store(false)

	// The instance that answered 503 releases the key once the table
	// answers again; a retry reaching another instance then runs. (A
	// generous bound on a condition, not a timing assertion: the key's
	// lease would hold it for 2 minutes.)
	k := store.IdempotencyKey(c.Org, "POST", "/v1/companies", "k-stall")
	deadline := time.Now().Add(time.Minute)
	for {
		var rec map[string]any
		_, err := st.GetLive(context.Background(), k.PK, k.SK, &rec)
		if errors.Is(err, apperr.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("BUG: the Idempotency-Key of a request answered 503 is still held a minute after the table answers again: %v %v", rec, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	again := postWithKey(t, onB, "/v1/companies", body, "k-stall").Want(t, 201)
	if again.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the retry after a 503 was a replay: %s", again.Body)
	}
	if list := apitest.Companies(t, c); len(list) != 1 {
		t.Errorf("%d companies, want 1", len(list))
	}
}
