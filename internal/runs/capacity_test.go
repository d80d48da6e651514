package runs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
)

// switchable is an engine whose answer the test sets: held (start
// nothing), failing, or Step Functions throttling every start (a stand-in
// of its API answering ThrottlingException).
type switchable struct {
	mode      atomic.Value // "held", "failing", "throttled"
	throttled runs.StepFunctions
}

func (s *switchable) Start(ctx context.Context, in runs.ExecutionInput) error {
	switch s.mode.Load() {
	case "failing":
		return failing{}.Start(ctx, in)
	case "throttled":
		return s.throttled.Start(ctx, in)
	case "timed out": // the call may have started the execution
		return awsenv.Classify(fmt.Errorf("start: %w", context.DeadlineExceeded), "the run could not be started")
	}
	return nil
}

func newSwitchable(t *testing.T) *switchable {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.swf.base.model#ThrottlingException","message":"Rate exceeded"}`)
	}))
	t.Cleanup(srv.Close)
	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), RetryMaxAttempts: 2})
	s := &switchable{throttled: runs.StepFunctions{Client: client, StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:runs"}}
	s.mode.Store("held")
	return s
}

func TestARunStepFunctionsCannotStartForCapacityIsTakenBackWithWhatWasWrittenWithIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine := newSwitchable(t)
	svc, wf := setup(t, `[]`, runs.UseEngine(engine))
	count := func() int {
		t.Helper()
		p, err := svc.List(ctx, "org1", "", store.Query{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Items)
	}

	// Started through the API.
	engine.mode.Store("throttled")
	if _, err := svc.Start(ctx, "org1", wf.ID, runs.NewRun{StartedBy: runs.StartedByAPI}); !errors.Is(err, apperr.ErrUnavailable) {
		t.Fatalf("a run whose start is throttled: %v; want ErrUnavailable (503 with Retry-After)", err)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d runs left by a start that was throttled", n)
	}
	// A start whose call timed out may have started the execution: the
	// run is kept, failed, never taken back.
	engine.mode.Store("timed out")
	kept, err := svc.Start(ctx, "org1", wf.ID, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil || kept.Status != runs.Failed {
		t.Fatalf("a run whose start timed out: %+v, %v; want it kept, failed", kept, err)
	}

	// Started by a webhook delivery with an id: the delivery's record is
	// taken back too, so that the sender's retry starts the run.
	engine.mode.Store("throttled")
	h := http.Header{}
	h.Set("X-Service-Webhook-Secret", wf.Trigger.Secret)
	h.Set("X-GitHub-Delivery", "d-throttled")
	d := runs.Delivery{Slug: wf.Trigger.Slug, Header: h, Query: url.Values{}, Body: []byte(`{}`)}
	if _, _, err := svc.Receive(ctx, d); !errors.Is(err, apperr.ErrUnavailable) {
		t.Fatalf("a delivery whose run's start is throttled: %v; want ErrUnavailable", err)
	}
	engine.mode.Store("held")
	run, replayed, err := svc.Receive(ctx, d)
	if err != nil || replayed || run == nil {
		t.Fatalf("the sender's retry of the delivery: run %v, replayed %v, %v; want a new run", run, replayed, err)
	}

	// A retry of a failed run: the source's mark is taken back.
	engine.mode.Store("failing")
	src, err := svc.Start(ctx, "org1", wf.ID, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil || src.Status != runs.Failed {
		t.Fatalf("a run that could not be started: %+v, %v; want it failed", src, err)
	}
	engine.mode.Store("throttled")
	if _, err := svc.Retry(ctx, "org1", src.ID); !errors.Is(err, apperr.ErrUnavailable) {
		t.Fatalf("a retry whose start is throttled: %v; want ErrUnavailable", err)
	}
	engine.mode.Store("held")
	retried, err := svc.Retry(ctx, "org1", src.ID)
	if err != nil || retried.RetryOf == nil || *retried.RetryOf != src.ID {
		t.Fatalf("the retry once Step Functions takes it: %+v, %v", retried, err)
	}
	if n := count(); n != 4 {
		t.Errorf("%d runs; want 4 (the timed out one, the delivery's, the failed one, its retry)", n)
	}
}
