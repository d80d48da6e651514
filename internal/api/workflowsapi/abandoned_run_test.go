package workflowsapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// isRunWrite reports whether r is the PutItem that stores a new run.
func isRunWrite(r *http.Request) bool {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem") || r.Body == nil {
		return false
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return bytes.Contains(b, []byte(`#RUN"`)) && bytes.Contains(b, []byte(`attribute_not_exists`))
}

// slowRunWrite writes a new run, says so on stored, then holds the
// answer until the call's context ends or the test releases it: a request
// whose client gives up while its run is being stored, however slow the
// machine is (no timer decides when the client gives up).
type slowRunWrite struct {
	armed   atomic.Bool
	once    sync.Once
	stored  chan struct{}
	release chan struct{}
}

func (s *slowRunWrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if !s.armed.Load() || !isRunWrite(r) {
		return http.DefaultTransport.RoundTrip(r)
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	s.once.Do(func() { close(s.stored) })
	select {
	case <-r.Context().Done():
		if err == nil {
			res.Body.Close()
		}
		return nil, r.Context().Err()
	case <-s.release:
		return res, err
	}
}

func TestARunWhoseClientGaveUpDuringTheStartIsStillStartedAndCompletes(t *testing.T) {
	t.Parallel()
	slow := &slowRunWrite{stored: make(chan struct{}), release: make(chan struct{})}
	e := apitest.NewWith(t, apitest.Options{Transport: slow})
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Abandoned", apitest.Step("s", "set", map[string]any{"v.$": "$.input.v"}))

	slow.armed.Store(true)
	ctx, giveUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", c.Base+"/v1/workflows/"+wf+"/runs", strings.NewReader(`{"input":{"v":1}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Client-Id", c.ClientID)
	req.Header.Set("X-Service-Api-Key", c.Secret)
	answered := make(chan *http.Response, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		answered <- res
	}()
	select {
	case <-slow.stored:
	case res := <-answered:
		t.Fatalf("the client got an answer (%v) before the run was stored; the fault did not hold the run write", res)
	case <-time.After(testenv.Scaled(30 * time.Second)):
		t.Fatal("the run write did not arrive")
	}
	giveUp()
	if res := <-answered; res != nil {
		t.Fatalf("the client got %d after giving up", res.StatusCode)
	}
	close(slow.release)
	slow.armed.Store(false)

	within := testenv.Scaled(30 * time.Second)
	deadline := time.Now().Add(within)
	for {
		rs := apitest.RunsOf(t, c, wf)
		if len(rs) == 1 && rs[0]["status"] == "completed" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after the client gave up the runs are %s, want one completed run", within, apitest.JSONOf(rs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lostRunWrite writes a new run but answers every such write with a
// DynamoDB 500, as if the table failed after storing it: the run is
// stored queued and never started.
type lostRunWrite struct{ armed atomic.Bool }

func (l *lostRunWrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if !l.armed.Load() || !isRunWrite(r) {
		return http.DefaultTransport.RoundTrip(r)
	}
	if res, err := http.DefaultTransport.RoundTrip(r); err == nil {
		res.Body.Close()
	}
	return apitest.DynamoError(500, "InternalServerError")(r)
}

func TestARunLeftQueuedByAnInterruptedStartIsFailedWhenReadAndCanBeRetried(t *testing.T) {
	t.Parallel()
	lost := &lostRunWrite{}
	st := testenv.StoreWith(t, lost)
	e := apitest.NewWith(t, apitest.Options{Store: st})
	e.Deps.Runs.SetQueuedTimeout(time.Second)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Interrupted", apitest.Step("s", "set", map[string]any{"v.$": "$.input.v"}))

	lost.armed.Store(true)
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "POST", "/v1/workflows/"+wf+"/runs", map[string]any{"input": map[string]any{"v": 1}}))
	lost.armed.Store(false)

	rs := apitest.RunsOf(t, c, wf)
	if len(rs) != 1 || rs[0]["status"] != "queued" {
		t.Fatalf("runs after the interrupted start: %s, want one queued run", apitest.JSONOf(rs))
	}
	id := apitest.IDOf(t, rs[0])
	// Once it has been queued longer than the bound, reading it fails it.
	deadline := time.Now().Add(testenv.Scaled(30 * time.Second))
	for rs[0]["status"] == "queued" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		rs = apitest.RunsOf(t, c, wf)
	}
	if rs[0]["status"] != "failed" {
		t.Fatalf("the stale run is %s, want failed: %s", rs[0]["status"], apitest.JSONOf(rs[0]))
	}
	msg, _ := apitest.ObjectAt(t, rs[0], "error")["message"].(string)
	if !strings.Contains(msg, "was not started within 1s") || !strings.Contains(msg, "retry it") {
		t.Errorf("error message %q does not say the run never started and can be retried", msg)
	}
	if got := c.Do("GET", "/v1/workflow-runs/"+id, nil).Want(t, 200).Object(t); got["status"] != "failed" {
		t.Errorf("GET of the run: %s, want failed", apitest.JSONOf(got))
	}
	retry := c.Do("POST", "/v1/workflow-runs/"+id+"/retry", nil)
	if retry.Status != 201 && retry.Status != 202 {
		t.Fatalf("retry of the failed run: %d %s", retry.Status, retry.Body)
	}
	apitest.WantStatus(t, apitest.AwaitRun(t, c, apitest.IDOf(t, retry.Object(t))), "completed")
}

func TestReadingAStaleQueuedRunByIDFailsIt(t *testing.T) {
	t.Parallel()
	lost := &lostRunWrite{}
	e := apitest.NewWith(t, apitest.Options{Store: testenv.StoreWith(t, lost)})
	e.Deps.Runs.SetQueuedTimeout(time.Second)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Interrupted", apitest.Step("s", "set", map[string]any{"v": 1}))
	lost.armed.Store(true)
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "POST", "/v1/workflows/"+wf+"/runs", map[string]any{}))
	lost.armed.Store(false)
	id := apitest.IDOf(t, apitest.RunsOf(t, c, wf)[0])

	run, done := apitest.PollRun(t, c, id, testenv.Scaled(30*time.Second))
	if !done || run["status"] != "failed" {
		t.Fatalf("the stale run read by id is %s, want failed", apitest.JSONOf(run))
	}
}
