package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/telemetry"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// held is an engine that starts nothing: runs stay queued.
type held struct{}

func (held) Start(context.Context, runs.ExecutionInput) error { return nil }

type failing struct{}

func (failing) Start(context.Context, runs.ExecutionInput) error {
	return errors.New("state machine unavailable")
}

// setup builds a run service over a fresh table with one workflow, its
// runs executed by the engine engine makes (nil: none).
func setup(t *testing.T, stepsJSON string, engine runs.EngineFactory) (*runs.Service, *workflows.Workflow) {
	t.Helper()
	svc, wf, _ := setupWith(t, stepsJSON, nil, engine)
	return svc, wf
}

// setupWith is setup with the store's requests going through transport;
// restart builds another service over the same table, as the next
// process would.
func setupWith(t *testing.T, stepsJSON string, transport http.RoundTripper, engine runs.EngineFactory) (
	svc *runs.Service, wf *workflows.Workflow, restart func(runs.EngineFactory) *runs.Service) {
	t.Helper()
	st := testenv.StoreWith(t, transport)
	wfs := workflows.NewService(st, "http://example.test")
	in, err := workflows.DecodeCreate([]byte(`{"name":"Recover me","steps":` + stepsJSON + `}`))
	if err != nil {
		t.Fatal(err)
	}
	wf, err = wfs.Create(context.Background(), "org1", in)
	if err != nil {
		t.Fatal(err)
	}
	restart = func(engine runs.EngineFactory) *runs.Service {
		return runs.NewService(st, wfs, companies.NewService(st), engine)
	}
	return restart(engine), wf, restart
}

func wait(t *testing.T, svc *runs.Service, id string) *runs.Run {
	t.Helper()
	deadline := time.Now().Add(testenv.Scaled(30 * time.Second))
	for {
		r, err := svc.Get(context.Background(), "org1", id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Done() || time.Now().After(deadline) {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRecoverResumesQueuedRunsAndFailsInterruptedOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cut := &cutAfterPut{}
	svc, wf, restart := setupWith(t, `[{"id":"s","type":"set","with":{"v.$":"$.input.v"}}]`, cut, runs.UseEngine(held{}))
	queued, err := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: map[string]any{"v": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	interrupted, _ := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	// A process that marked the run running and died before finishing:
	// its context ends right after the write that marked the run running
	// (at once here, not after runs.RunningAfter).
	svc.SetRunningAfter(0)
	runCtx, cancel := context.WithCancel(ctx)
	cut.arm(cancel)
	if _, err := svc.Execute(runCtx, runs.ExecutionInput{OrganizationID: "org1", RunID: interrupted.ID, WorkflowID: interrupted.WorkflowID}); err == nil {
		t.Fatal("execute with a cancelled context reported success")
	}
	if r, _ := svc.Get(ctx, "org1", interrupted.ID); r.Status != runs.Running {
		t.Fatalf("interrupted run is %s, want running", r.Status)
	}

	svc = restart(runs.InProcessEngine(2))
	defer svc.Engine().(*runs.InProcess).Close(time.Second)
	resumed, failed, err := svc.Recover(ctx)
	if err != nil || resumed != 1 || failed != 1 {
		t.Fatalf("Recover = %d resumed, %d failed, %v; want 1, 1", resumed, failed, err)
	}
	if r := wait(t, svc, queued.ID); r.Status != runs.Completed || fmt.Sprint(r.Output["v"]) != "1" {
		t.Errorf("resumed run: %s %v", r.Status, r.Output)
	}
	r := wait(t, svc, interrupted.ID)
	if r.Status != runs.Failed || r.Error == nil || !strings.Contains(r.Error.Message, "stopped while this run was running") {
		t.Errorf("interrupted run: %s %+v", r.Status, r.Error)
	}
	if resumed, failed, _ := svc.Recover(ctx); resumed+failed != 0 {
		t.Errorf("second Recover found %d runs", resumed+failed)
	}
}

// cutAfterPut, once armed, cancels a context right after the next
// successful PutItem: the moment a run has been marked running.
type cutAfterPut struct {
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (c *cutAfterPut) arm(cancel context.CancelFunc) {
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
}

func (c *cutAfterPut) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil && err == nil && res.StatusCode == 200 && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem") {
		c.cancel()
		c.cancel = nil
	}
	return res, err
}

func TestARunThatCannotStartIsFailedNotLeftQueued(t *testing.T) {
	t.Parallel()
	svc, wf := setup(t, `[]`, runs.UseEngine(failing{}))
	r, err := svc.Create(context.Background(), "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != runs.Failed || r.Error == nil || !strings.Contains(r.Error.Message, "state machine unavailable") {
		t.Fatalf("run = %s %+v, want failed with the reason", r.Status, r.Error)
	}
}

func TestAServiceWithoutAnEngineFailsRunsWithAClearError(t *testing.T) {
	t.Parallel()
	svc, wf := setup(t, `[]`, nil)
	r, err := svc.Create(context.Background(), "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != runs.Failed || !strings.Contains(r.Error.Message, "STATE_MACHINE_ARN") {
		t.Fatalf("run = %s %+v", r.Status, r.Error)
	}
}

// stepFunctionsAPI records StartExecution calls the way the Step Functions
// JSON protocol carries them, and answers a repeated name as AWS does.
type stepFunctionsAPI struct {
	mu    sync.Mutex
	names map[string]bool
	calls []map[string]string
}

// stepFunctionsEngine is the Step Functions engine over a stand-in of
// the StartExecution API that records its calls.
func stepFunctionsEngine(t *testing.T) (*stepFunctionsAPI, runs.StepFunctions) {
	api := &stepFunctionsAPI{names: map[string]bool{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), RetryMaxAttempts: 1})
	return api, runs.StepFunctions{Client: client, StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:runs"}
}

func (s *stepFunctionsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in map[string]string
	_ = json.Unmarshal(body, &in)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, map[string]string{"target": r.Header.Get("X-Amz-Target"), "name": in["name"], "input": in["input"], "arn": in["stateMachineArn"],
		"traceHeader": in["traceHeader"]})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if s.names[in["name"]] {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"com.amazonaws.swf.service.v2.model#ExecutionAlreadyExists","message":"Execution Already Exists"}`)
		return
	}
	s.names[in["name"]] = true
	io.WriteString(w, `{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:runs:`+in["name"]+`","startDate":1.7e9}`)
}

// TestAnExecutionContinuesTheTraceOfTheRequestThatStartedIt: a run started
// in a sampled trace (an actively traced function's invocation) hands the
// trace on to Step Functions (StartExecution's traceHeader, with the
// current segment as the parent), which traces the execution and the
// runner's invocations in it; an unsampled one hands on nothing.
func TestAnExecutionContinuesTheTraceOfTheRequestThatStartedIt(t *testing.T) {
	api, e := stepFunctionsEngine(t)
	d, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	t.Setenv(telemetry.EnvDaemonAddress, d.LocalAddr().String())
	const root = "1-67891233-abcdef012345678912345678"
	traced := context.WithValue(context.Background(), "x-amzn-trace-id", "Root="+root+";Parent=53995c3f42cd8ad8;Sampled=1") //nolint:staticcheck // aws-lambda-go's key
	traced, seg := telemetry.Start(traced, "POST /v1/workflows/{id}/runs")
	if seg == nil {
		t.Fatal("no segment in a sampled trace")
	}
	if err := e.Start(traced, runs.ExecutionInput{OrganizationID: "org_1", RunID: "run_traced", WorkflowID: "wf_01abc"}); err != nil {
		t.Fatal(err)
	}
	unsampled := context.WithValue(context.Background(), "x-amzn-trace-id", "Root="+root+";Parent=53995c3f42cd8ad8;Sampled=0") //nolint:staticcheck // aws-lambda-go's key
	if err := e.Start(unsampled, runs.ExecutionInput{OrganizationID: "org_1", RunID: "run_untraced", WorkflowID: "wf_01abc"}); err != nil {
		t.Fatal(err)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if h := api.calls[0]["traceHeader"]; !strings.HasPrefix(h, "Root="+root+";Parent=") || !strings.HasSuffix(h, ";Sampled=1") || strings.Contains(h, "53995c3f42cd8ad8") {
		t.Errorf("the traced start's traceHeader is %q, want the trace with the request's segment as parent", h)
	}
	if h := api.calls[1]["traceHeader"]; h != "" {
		t.Errorf("an unsampled start handed on %q", h)
	}
}

func TestStepFunctionsEngineStartsOneExecutionNamedAfterTheRun(t *testing.T) {
	t.Parallel()
	api, e := stepFunctionsEngine(t)
	for range 2 {
		if err := e.Start(context.Background(), runs.ExecutionInput{OrganizationID: "org_1", RunID: "run_01abc", WorkflowID: "wf_01abc"}); err != nil {
			t.Fatalf("Start: %v", err)
		}
	}
	if len(api.calls) != 2 {
		t.Fatalf("%d calls, want 2", len(api.calls))
	}
	c := api.calls[0]
	if c["target"] != "AWSStepFunctions.StartExecution" || c["name"] != "run_01abc" || c["arn"] != e.StateMachineARN ||
		c["input"] != `{"organizationId":"org_1","runId":"run_01abc","workflowId":"wf_01abc","run":null,"steps":null}` {
		t.Errorf("request = %v", c)
	}

	// Steps carried are sent; an input that would be over MaxCarried is
	// sent with ids only (the execution then reads what it needs).
	small := []steps.Step{{ID: "s", Type: "set", With: map[string]any{"ok": true}}}
	large := []steps.Step{{ID: "s", Type: "set", With: map[string]any{"text": strings.Repeat("a", runs.MaxCarried)}}}
	for _, tc := range []struct {
		id    string
		steps []steps.Step
		want  string
	}{
		{"run_small", small, `{"organizationId":"org_1","runId":"run_small","workflowId":"wf_01abc","run":null,"steps":[{"id":"s","type":"set","with":{"ok":true}}]}`},
		{"run_large", large, `{"organizationId":"org_1","runId":"run_large","workflowId":"wf_01abc","run":null,"steps":null}`},
	} {
		if err := e.Start(context.Background(), runs.ExecutionInput{OrganizationID: "org_1", RunID: tc.id, WorkflowID: "wf_01abc", Steps: &tc.steps}); err != nil {
			t.Fatalf("Start %s: %v", tc.id, err)
		}
		if got := api.calls[len(api.calls)-1]["input"]; got != tc.want {
			t.Errorf("input of %s = %.300s, want %s", tc.id, got, tc.want)
		}
	}
}

func TestRunnerTaskExecutesOnceAndFailPathKeepsTheFirstOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, wf := setup(t, `[{"id":"s","type":"set","with":{"ok":true}}]`, runs.UseEngine(held{}))
	r1, _ := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	res, err := svc.HandleTask(ctx, runs.Task{Action: "execute", OrganizationID: "org1", RunID: r1.ID})
	if err != nil || res.Status != runs.Completed {
		t.Fatalf("execute = %+v %v", res, err)
	}
	res, err = svc.HandleTask(ctx, runs.Task{Action: "fail", OrganizationID: "org1", RunID: r1.ID, Error: &runs.TaskError{Error: "States.Timeout"}})
	if err != nil || res.Status != runs.Completed {
		t.Fatalf("fail after completion = %+v %v, want completed kept", res, err)
	}
	if _, err := svc.HandleTask(ctx, runs.Task{Action: "bogus", OrganizationID: "org1", RunID: r1.ID}); err == nil {
		t.Error("unknown action accepted")
	}
	if _, err := svc.HandleTask(ctx, runs.Task{Action: "execute", OrganizationID: "org2", RunID: r1.ID}); err == nil {
		t.Error("another organization's run executed")
	}
}

func TestAServiceBuiltWithTheInProcessEngineExecutesItsRunsWithNothingSetAfterwards(t *testing.T) {
	t.Parallel()
	svc, wf := setup(t, `[{"id":"s","type":"set","with":{"ok":true}}]`, runs.InProcessEngine(1))
	engine, ok := svc.Engine().(*runs.InProcess)
	if !ok {
		t.Fatalf("engine %T, want the in-process engine", svc.Engine())
	}
	defer engine.Close(time.Second)
	r, err := svc.Create(context.Background(), "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI})
	if err != nil {
		t.Fatal(err)
	}
	if done := wait(t, svc, r.ID); done.Status != runs.Completed || done.Output["ok"] != true {
		t.Errorf("run %s %v, want completed with ok", done.Status, done.Output)
	}
}

// runWrites counts the puts of run items and, once armed, holds every
// Query (an upsertCompany step's lookup) until released.
type runWrites struct {
	mu      sync.Mutex
	puts    int
	hold    chan struct{}
	holding chan struct{}
}

func (w *runWrites) RoundTrip(r *http.Request) (*http.Response, error) {
	target := r.Header.Get("X-Amz-Target")
	if strings.HasSuffix(target, ".Query") {
		w.mu.Lock()
		hold := w.hold
		w.mu.Unlock()
		if hold != nil {
			w.holding <- struct{}{}
			<-hold
		}
	}
	if strings.HasSuffix(target, ".PutItem") && r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		if strings.Contains(string(b), `#RUN"`) {
			w.mu.Lock()
			w.puts++
			w.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (w *runWrites) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.puts
	w.puts = 0
	return n
}

func TestAQuickRunIsWrittenOnceAfterItsCreationAndALongOneIsMarkedRunningMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := &runWrites{holding: make(chan struct{}, 1)}
	svc, wf, _ := setupWith(t, `[{"id":"up","type":"upsertCompany","with":{"canonicalName.$":"$.input.name"}}]`, w, runs.UseEngine(held{}))

	quick, err := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: map[string]any{"name": "Quick"}})
	if err != nil {
		t.Fatal(err)
	}
	w.take()
	done, err := svc.Execute(ctx, runs.ExecutionInput{OrganizationID: "org1", RunID: quick.ID, WorkflowID: quick.WorkflowID})
	if err != nil || done.Status != runs.Completed || done.StartedAt == nil || done.CompletedAt.Before(done.StartedAt.Time) {
		t.Fatalf("quick run: %+v, %v", done, err)
	}
	if n := w.take(); n != 1 {
		t.Errorf("a run finishing within runs.RunningAfter was written %d times by its execution, want once", n)
	}

	// A run whose step takes longer is running while it executes.
	svc.SetRunningAfter(time.Millisecond)
	long, err := svc.Create(ctx, "org1", wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: map[string]any{"name": "Long"}})
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.hold = make(chan struct{})
	w.mu.Unlock()
	result := make(chan *runs.Run, 1)
	go func() {
		r, err := svc.Execute(ctx, runs.ExecutionInput{OrganizationID: "org1", RunID: long.ID, WorkflowID: long.WorkflowID})
		if err != nil {
			t.Error(err)
		}
		result <- r
	}()
	<-w.holding // the step is under way
	deadline := time.Now().Add(testenv.Scaled(30 * time.Second))
	var running *runs.Run
	for running == nil || running.Status != runs.Running {
		if time.Now().After(deadline) {
			t.Fatalf("the executing run is %s, want running", running.Status)
		}
		time.Sleep(time.Millisecond)
		if running, err = svc.Get(ctx, "org1", long.ID); err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	close(w.hold)
	w.hold = nil
	w.mu.Unlock()
	r := <-result
	if r.Status != runs.Completed || !r.StartedAt.Equal(running.StartedAt.Time) {
		t.Errorf("long run: %s started %v, want completed, started when marked running (%v)", r.Status, r.StartedAt, running.StartedAt)
	}
}
