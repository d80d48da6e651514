// Package functions_test runs the functions as they deploy: every
// functions/<name> built as a Lambda bootstrap (the deployed flags), run
// under the Lambda Runtime API (internal/dev/lambdaenv) against DynamoDB Local,
// with the run state machine executed by the local Step Functions stand-in
// (internal/dev/localsfn) whose Task states invoke the real runner bootstrap.
package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/lambdafront"
	"github.com/sourcebase/sourcebase/internal/dev/localsfn"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// repoRoot is the module root, relative to this package.
const repoRoot = ".."

var (
	// bootstraps maps each function to its bootstrap for this machine.
	bootstraps = map[string]string{}
	// deployedSizes maps each function to the size of its linux/arm64
	// bootstrap, built stripped as it deploys.
	deployedSizes = map[string]int64{}
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipped under -short: the functions' tests build every bootstrap (make test runs them)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "bootstraps")
	if err == nil {
		err = buildAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "build the bootstraps:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	testenv.MainThen(m, func() { os.RemoveAll(dir) })
}

// buildAll builds every function of routes.Functions twice, with the
// deployed build flags (lambdaenv.BuildFlags): for this machine, to run,
// and for linux/arm64, to measure. One go command per architecture builds
// them all (it shares the compiled packages between them).
func buildAll(dir string) error {
	var pkgs []string
	for _, f := range routes.Functions {
		pkgs = append(pkgs, "./functions/"+f.Name)
	}
	build := func(arch string) error {
		out := filepath.Join(dir, arch) + string(filepath.Separator)
		args := append(append([]string{"build"}, lambdaenv.BuildFlags...), "-o", out)
		testinputs.Tree()
		cmd := exec.Command("go", append(args, pkgs...)...)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("GOARCH=%s go build: %v\n%s", arch, err, b)
		}
		return nil
	}
	archs := []string{runtime.GOARCH}
	if runtime.GOARCH != "arm64" {
		archs = append(archs, "arm64")
	}
	errs := make([]error, len(archs))
	var wg sync.WaitGroup
	for i, arch := range archs {
		wg.Go(func() { errs[i] = build(arch) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, f := range routes.Functions {
		bootstraps[f.Name] = filepath.Join(dir, runtime.GOARCH, f.Name)
		fi, err := os.Stat(filepath.Join(dir, "arm64", f.Name))
		if err != nil {
			return err
		}
		deployedSizes[f.Name] = fi.Size()
		if f.Pages { // beside the bootstrap, as a deployment ships them
			if err := lambdafront.CopyPages(repoRoot, filepath.Join(dir, runtime.GOARCH)); err != nil {
				return err
			}
		}
	}
	return nil
}

// The local names of the deployed resources.
var (
	runnerARN       = "arn:aws:lambda:us-east-1:000000000000:function:sourcebase-runner"
	stateMachineARN = localsfn.StateMachineARN("sourcebase-runs")
)

// functionURL is the webhook function's public base in the sample events.
const functionURL = "https://abcdefg.lambda-url.us-east-1.on.aws"

// env is a deployment on this machine: a fresh table in DynamoDB Local,
// the functions' bootstraps started on first use with the environment
// the stack gives them, and the state machine in localsfn with its Task
// states invoking the runner bootstrap.
type env struct {
	t    *testing.T
	st   *store.Store
	deps service.Deps // the service in this process over the same table, for setup and checks
	base []string     // what every function's environment has besides the configuration
	cfg  service.Config
	sfn  *localsfn.Server
	logs *lockedBuffer

	mu         sync.Mutex
	fns        map[string]*lambdaenv.Function
	task       localsfn.TaskFunc // the state machine's Task states; Lambda(runner) unless a test wraps it
	openSearch *openSearchStandIn
	sqs        *sqsStandIn
	front      string // the URL of the functions behind the local front (the HTTP API), once started
}

// lazyInvoker invokes a function of e, started on first use.
type lazyInvoker struct {
	e    *env
	name string
}

func (l lazyInvoker) Invoke(ctx context.Context, payload []byte) (lambdaenv.Result, error) {
	return l.e.fn(l.name).Invoke(ctx, payload)
}

// frontURL is the HTTP API's URL: this env's functions behind the local
// front, as a function that searches through the API reaches them.
// Called with e.mu held.
func (e *env) frontURL() string {
	if e.front != "" {
		return e.front
	}
	invokers := map[string]lambdafront.Invoker{}
	for _, f := range routes.Functions {
		if f.Reach == routes.ByAPI || f.Reach == routes.ByURL {
			invokers[f.Name] = lazyInvoker{e, f.Name}
		}
	}
	front, err := lambdafront.New(lambdafront.Options{Routes: api.Routes(), Functions: invokers})
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(front)
	e.t.Cleanup(srv.Close)
	e.front = srv.URL
	return e.front
}

// openSearchStandIn answers the indexer's calls as an OpenSearch endpoint
// would (no OpenSearch runs here): index creation acknowledged, every item
// of a _bulk request done; it records what it was sent.
type openSearchStandIn struct {
	url     string
	mu      sync.Mutex
	indexes []string   // created, by path
	actions [][]string // per _bulk request: "index <id>" or "delete <id>"
}

func startOpenSearchStandIn(t *testing.T) *openSearchStandIn {
	o := &openSearchStandIn{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		defer o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPut:
			o.indexes = append(o.indexes, r.URL.Path)
			fmt.Fprintf(w, `{"acknowledged":true,"shards_acknowledged":true,"index":%q}`, strings.TrimPrefix(r.URL.Path, "/"))
		case r.Method == http.MethodPost && r.URL.Path == "/_bulk":
			var actions, items []string
			for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
				var meta map[string]struct {
					ID string `json:"_id"`
				}
				if json.Unmarshal([]byte(line), &meta) != nil {
					continue
				}
				for op, m := range meta {
					if op == "index" || op == "delete" {
						actions = append(actions, op+" "+m.ID)
						items = append(items, fmt.Sprintf(`{%q:{"_id":%q,"status":200}}`, op, m.ID))
					}
				}
			}
			o.actions = append(o.actions, actions)
			fmt.Fprintf(w, `{"took":1,"errors":false,"items":[%s]}`, strings.Join(items, ","))
		default:
			http.Error(w, `{"error":"not served here"}`, http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	o.url = srv.URL
	return o
}

// The delivery queues' URLs the functions are given (the stack's are its
// queues' URLs): SQS calls go to the stand-in.
const (
	deliverQueueURL = "https://sqs.us-east-1.amazonaws.com/000000000000/sourcebase-deliveries.fifo"
	deliverDLQURL   = "https://sqs.us-east-1.amazonaws.com/000000000000/sourcebase-deliveries-dlq.fifo"
)

// sqsStandIn is the SQS endpoint of the functions that queue or make
// deliveries (no SQS runs here): it records each call's action
// (X-Amz-Target) and refuses it, so that a test sees what would have been
// sent.
type sqsStandIn struct {
	url   string
	mu    sync.Mutex
	calls []string
}

func startSQSStandIn(t *testing.T) *sqsStandIn {
	q := &sqsStandIn{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		q.mu.Lock()
		q.calls = append(q.calls, r.Header.Get("X-Amz-Target"))
		q.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"the functions' tests run no SQS"}`)
	}))
	t.Cleanup(srv.Close)
	q.url = srv.URL
	return q
}

// Calls are the SQS actions called so far.
func (q *sqsStandIn) Calls() []string {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.calls...)
}

// queueOnly leaves the runs the in-process service creates queued, for the
// runner (or a test) to execute.
type queueOnly struct{}

func (queueOnly) Start(context.Context, runs.ExecutionInput) error { return nil }

func newEnv(t *testing.T) *env {
	t.Helper()
	st := testenv.Store(t)
	creds, err := st.DB.Options().Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg := service.DefaultConfig()
	cfg.Table, cfg.WebhookBaseURL = st.Table, functionURL
	e := &env{
		t:    t,
		st:   st,
		deps: service.Build(st, cfg, runs.UseEngine(queueOnly{})),
		cfg:  cfg,
		logs: &lockedBuffer{},
		fns:  map[string]*lambdaenv.Function{},
		// DynamoDB Local keeps tables per access key: the functions use
		// the test's, so they see its table.
		base: []string{
			"AWS_ACCESS_KEY_ID=" + creds.AccessKeyID,
			"AWS_SECRET_ACCESS_KEY=" + creds.SecretAccessKey,
			"AWS_REGION=us-east-1",
			"AWS_DEFAULT_REGION=us-east-1",
			"AWS_EC2_METADATA_DISABLED=true",
			"AWS_ENDPOINT_URL_DYNAMODB=" + testenv.Endpoint(t),
		},
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("function and interpreter output:\n%s", e.logs.String())
		}
	})
	e.task = localsfn.Lambda(e.fn(lambdas.Runner))
	e.sfn, err = localsfn.Start(localsfn.Options{
		StateMachines: map[string]string{stateMachineARN: runs.StateMachineDefinition(runnerARN)},
		Tasks: func(ctx context.Context, resource string, input []byte) ([]byte, error) {
			if resource != runnerARN {
				return nil, &localsfn.TaskError{Name: "Lambda.ResourceNotFoundException", Cause: "Function not found: " + resource}
			}
			e.mu.Lock()
			task := e.task
			e.mu.Unlock()
			return task(ctx, resource, input)
		},
		// The definition's retry intervals (1 s, doubling) are not what
		// these tests are about.
		SkipWaits: true,
		Dir:       repoRoot,
		Log:       e.logs,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.sfn.Close)
	return e
}

// fn returns the function name, starting it on first use with its
// environment: the configuration (cfg.Env()), plus the state machine for
// a function that starts runs and the HTTP API's URL for one that
// searches through it.
func (e *env) fn(name string) *lambdaenv.Function {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.fns[name]; ok {
		return f
	}
	f, ok := routes.FunctionNamed(name)
	if !ok {
		e.t.Fatalf("no function %s", name)
	}
	cfg := e.cfg
	vars := append([]string(nil), e.base...)
	// The indexer, not the events function, though both read the stream.
	if f.Name == lambdas.Indexer {
		if e.openSearch == nil {
			e.openSearch = startOpenSearchStandIn(e.t)
		}
		cfg.SearchEngine, cfg.OpenSearchEndpoint = service.SearchOpenSearch, e.openSearch.url
	}
	if f.StartsRuns {
		cfg.StateMachineARN = stateMachineARN
		vars = append(vars, "AWS_ENDPOINT_URL_SFN="+e.sfn.URL)
	}
	if f.SearchesByAPI {
		cfg.SearchBaseURL = e.frontURL()
	}
	// The delivery queue where deliveries are queued (hooks, events) or
	// made (deliver), and its dead-letter queue for the deliver function,
	// as the stack gives them; SQS is the stand-in, which records calls.
	if f.SendsDeliveries || f.Reach == routes.ByQueue {
		if e.sqs == nil {
			e.sqs = startSQSStandIn(e.t)
		}
		cfg.DeliverQueueURL = deliverQueueURL
		vars = append(vars, "AWS_ENDPOINT_URL_SQS="+e.sqs.url)
	}
	if f.Reach == routes.ByQueue {
		cfg.DeliverDLQURL = deliverDLQURL
	}
	for k, v := range cfg.Env() {
		vars = append(vars, k+"="+v)
	}
	rf := lambdaenv.NewFunction(lambdaenv.Options{
		Name:      "sourcebase-" + name,
		Bootstrap: bootstraps[name],
		Env:       vars,
		Timeout:   testenv.Scaled(30 * time.Second),
		MemoryMB:  256,
		Log:       prefixed{e.logs, name},
	})
	e.t.Cleanup(rf.Close)
	e.fns[name] = rf
	return rf
}

// setTask replaces the state machine's Task handler.
func (e *env) setTask(task localsfn.TaskFunc) {
	e.mu.Lock()
	e.task = task
	e.mu.Unlock()
}

// invoke invokes the function with payload; a function error fails the test.
func (e *env) invoke(name string, payload []byte) []byte {
	e.t.Helper()
	res, err := e.fn(name).Invoke(context.Background(), payload)
	if err != nil {
		e.t.Fatalf("invoke %s: %v", name, err)
	}
	if res.Error != nil {
		e.t.Fatalf("%s failed: %v", name, res.Error)
	}
	return res.Payload
}

// http invokes an HTTP function with an API Gateway (or function URL)
// event and returns its response.
func (e *env) http(name string, ev []byte) events.APIGatewayV2HTTPResponse {
	e.t.Helper()
	var res events.APIGatewayV2HTTPResponse
	out := e.invoke(name, ev)
	if err := json.Unmarshal(out, &res); err != nil {
		e.t.Fatalf("%s answered %s: %v", name, out, err)
	}
	return res
}

// awaitExecution waits for the run's execution (named after the run) to end.
func (e *env) awaitExecution(runID string) localsfn.Execution {
	e.t.Helper()
	arn := localsfn.ExecutionARN(stateMachineARN, runID)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(60*time.Second))
	defer cancel()
	for {
		if _, ok := e.sfn.Describe(arn); ok {
			break
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("no execution %s was started", arn)
		case <-time.After(20 * time.Millisecond):
		}
	}
	ex, err := e.sfn.Wait(ctx, arn)
	if err != nil {
		e.t.Fatalf("execution %s: %v", arn, err)
	}
	return ex
}

// run reads a run from the table.
func (e *env) run(org, id string) *runs.Run {
	e.t.Helper()
	r, err := e.deps.Runs.Get(context.Background(), org, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// workflow creates a workflow of org from a create body, in this process.
func (e *env) workflow(org, body string) *workflows.Workflow {
	e.t.Helper()
	in, err := workflows.DecodeCreate([]byte(body))
	if err != nil {
		e.t.Fatal(err)
	}
	wf, err := e.deps.Workflows.Create(context.Background(), org, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return wf
}

// queued creates a queued run of wf, in this process.
func (e *env) queued(org string, wf *workflows.Workflow, input map[string]any) *runs.Run {
	e.t.Helper()
	r, err := e.deps.Runs.Create(context.Background(), org, wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: input})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// prefixed writes each write's lines to w under the function's name.
type prefixed struct {
	w    *lockedBuffer
	name string
}

func (p prefixed) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			p.w.Write([]byte(p.name + ": " + line))
		}
	}
	return len(b), nil
}
