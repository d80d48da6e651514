package lambdafront

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/localsfn"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/embed"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/sizing"
)

// BuildBootstraps compiles every bootstrap of routes.Builds (each
// function, and the OpenSearch build of those with EngineBuilds) with the
// flags of the deployed build (lambdaenv.BuildFlags, plus each build's
// tags) for linux/goarch into binDir/<asset>/bootstrap, with the
// documentation pages beside those that ship them: one go build per
// set of tags, as `make build` builds them. The CDK tests, the performance
// report and the local Lambda mode use it.
func BuildBootstraps(root, binDir, goarch string) error {
	var sets [][]routes.Build // by tags, in order
	for _, b := range routes.Builds() {
		i := slices.IndexFunc(sets, func(set []routes.Build) bool { return slices.Equal(set[0].Tags, b.Tags) })
		if i < 0 {
			sets, i = append(sets, nil), len(sets)
		}
		sets[i] = append(sets[i], b)
	}
	for _, set := range sets {
		if err := buildSet(root, binDir, goarch, set); err != nil {
			return err
		}
	}
	return nil
}

// buildSet builds bootstraps that share their tags in one go build.
func buildSet(root, binDir, goarch string, set []routes.Build) error {
	tmp, err := os.MkdirTemp("", "local-lambda-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	flags := slices.Clone(lambdaenv.BuildFlags)
	if len(set[0].Tags) > 0 {
		flags[slices.Index(flags, "-tags")+1] += "," + strings.Join(set[0].Tags, ",")
	}
	args := append(append([]string{"build"}, flags...), "-o", tmp+string(filepath.Separator))
	for _, b := range set {
		args = append(args, b.Package)
	}
	testinputs.Tree()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	for _, b := range set {
		dst := filepath.Join(binDir, b.Asset, "bootstrap")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(tmp, path.Base(b.Package)), dst); err != nil {
			return fmt.Errorf("install %s: %w", dst, err)
		}
		if b.Pages {
			if err := CopyPages(root, filepath.Dir(dst)); err != nil {
				return err
			}
		}
	}
	return nil
}

// CopyPages puts the documentation pages (root's docs/*.md) in
// dir/docs (routes.PagesDir), beside a bootstrap of a function with
// routes.Function.Pages, as `make build` does.
func CopyPages(root, dir string) error {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		return fmt.Errorf("no documentation pages in %s: %v", filepath.Join(root, "docs"), err)
	}
	out := filepath.Join(dir, routes.PagesDir)
	if err := os.RemoveAll(out); err != nil { // no page left over from an earlier build
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(p)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// LocalOptions configure a local stack.
type LocalOptions struct {
	// Root is the repository root: node_modules (aws-local-stepfunctions).
	Root string
	// BinDir holds the bootstraps, <BinDir>/<name>/bootstrap (BuildBootstraps).
	BinDir string
	// Listen is the front's address; "" is 127.0.0.1 on a free port.
	Listen string
	// SFNListen is the local Step Functions' address (localsfn); "" is
	// 127.0.0.1 on a free port.
	SFNListen string
	// DynamoDB is the endpoint every function uses (AWS_ENDPOINT_URL_DYNAMODB),
	// with these credentials (DynamoDB Local keeps tables per access key
	// id unless started with -sharedDb) and Region (default us-east-1).
	DynamoDB        string
	AccessKeyID     string
	SecretAccessKey string // default "local"
	Region          string
	// Config is the functions' configuration (the table, key cache, store
	// timeout); the state machine and webhook base are set here.
	Config service.Config
	// SkipWaits makes the state machine's retry intervals take no time.
	SkipWaits bool
	// Log receives the functions' and the interpreter's output; nil discards it.
	Log io.Writer
}

// Local is the whole service as it runs in AWS, on this machine: every
// function's bootstrap under the Runtime API, the run state machine in
// localsfn with its Task states invoking the runner's bootstrap, and the
// front (API Gateway and the function URL) in front of them.
type Local struct {
	// URL is the front's base URL (also WEBHOOK_BASE_URL and, for the mcp
	// function, SEARCH_BASE_URL).
	URL string
	// SFN is the local Step Functions endpoint (AWS_ENDPOINT_URL_SFN).
	SFN string
	// StateMachineARN is the run state machine's ARN.
	StateMachineARN string
	// JobsStateMachineARN is the job state machine's ARN.
	JobsStateMachineARN string
	// Files are the bulk jobs' files (S3's stand-in), served at the
	// front's blob.PathPrefix; an upload starts its import's execution.
	Files *blob.Dir
	// Functions are the running functions, by name: those behind the
	// front, the runner, and, invoked directly, the operator's (admin) and
	// those an event source feeds in AWS (events, deliver): nothing here
	// feeds them (the front's process runs their code itself,
	// eventfns.StartEvents); a caller invokes them with their sample events.
	// Their delivery queues are LocalQueueURL: there is no SQS here.
	Functions map[string]*lambdaenv.Function

	front    *Front
	sfn      *localsfn.Server
	filesDir string
	srv      *http.Server
	done     chan struct{}
}

// FunctionARN is the ARN the Runtime API reports for a local function.
func FunctionARN(name string) string {
	return "arn:aws:lambda:us-east-1:000000000000:function:" + name
}

// StartLocal starts the functions, the state machine and the front.
func StartLocal(o LocalOptions) (_ *Local, err error) {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.SecretAccessKey == "" {
		o.SecretAccessKey = "local"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	listen := o.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	l := &Local{URL: "http://" + ln.Addr().String(), Functions: map[string]*lambdaenv.Function{}, done: make(chan struct{})}
	defer func() {
		if err != nil {
			ln.Close()
			l.stop()
		}
	}()
	l.StateMachineARN = localsfn.StateMachineARN("sourcebase-runs")
	l.JobsStateMachineARN = localsfn.StateMachineARN("sourcebase-jobs")
	filesDir, err := os.MkdirTemp("", "sourcebase-files-")
	if err != nil {
		return nil, err
	}
	l.filesDir = filesDir
	if l.Files, err = blob.NewDir(filesDir, l.URL); err != nil {
		return nil, err
	}

	newFunction := func(f routes.Function, sfnURL string) (*lambdaenv.Function, error) {
		cfg := o.Config
		cfg.WebhookBaseURL = l.URL
		cfg.StateMachineARN, cfg.SearchBaseURL = "", ""
		if f.SearchesByAPI {
			cfg.SearchBaseURL = l.URL // the front, as the HTTP API's URL in AWS
		}
		if f.StartsRuns {
			cfg.StateMachineARN = l.StateMachineARN
		}
		if f.RunsJobs || f.Reach == routes.ByStateMachine {
			// S3's stand-in: the front's directory and URLs.
			cfg.BulkDir, cfg.BulkFilesURL, cfg.BulkFilesSecret = l.Files.Root, l.Files.BaseURL, hex.EncodeToString(l.Files.Secret)
		}
		if f.RunsJobs {
			cfg.JobsStateMachineARN = l.JobsStateMachineARN
		}
		if f.Embeds && (cfg.Embeddings == "" || cfg.Embeddings == service.EmbeddingsLocal) {
			// The local model as make run's (make model installed it at
			// the module's root), named by its absolute path: a bootstrap
			// runs in a directory of its own.
			if file, ok := embed.FindFile(cmp.Or(cfg.EmbeddingsModelFile, filepath.Join(o.Root, embed.DefaultLocalModelFile))); ok {
				cfg.EmbeddingsModelFile, _ = filepath.Abs(file)
			}
		}
		if (f.Reach == routes.ByStream || f.Reach == routes.ByQueue) && !f.OpenSearchOnly {
			// They refuse to start without their queues (ServeEvents,
			// ServeDeliver): name ones that answer nothing.
			cfg.DeliverQueueURL, cfg.DeliverDLQURL = LocalQueueURL, LocalQueueURL+"-dlq"
		}
		env := []string{
			"AWS_REGION=" + o.Region,
			"AWS_DEFAULT_REGION=" + o.Region,
			"AWS_ACCESS_KEY_ID=" + o.AccessKeyID,
			"AWS_SECRET_ACCESS_KEY=" + o.SecretAccessKey,
			"AWS_EC2_METADATA_DISABLED=true",
			"AWS_ENDPOINT_URL_DYNAMODB=" + o.DynamoDB,
		}
		if sfnURL != "" {
			env = append(env, "AWS_ENDPOINT_URL_SFN="+sfnURL)
		}
		vars := cfg.Env()
		keys := make([]string, 0, len(vars))
		for k := range vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+vars[k])
		}
		size, err := sizing.Of(f) // the timeout and memory size it deploys with
		if err != nil {
			return nil, err
		}
		fn := lambdaenv.NewFunction(lambdaenv.Options{
			Name:      f.Name,
			Bootstrap: filepath.Join(o.BinDir, f.Name, "bootstrap"),
			Env:       env,
			Timeout:   size.Timeout,
			MemoryMB:  size.MemoryMB,
			Log:       o.Log,
		})
		l.Functions[f.Name] = fn
		return fn, nil
	}
	for _, f := range routes.Functions {
		if _, err := os.Stat(filepath.Join(o.BinDir, f.Name, "bootstrap")); err != nil {
			return nil, fmt.Errorf("the %s bootstrap is missing (build it with BuildBootstraps): %w", f.Name, err)
		}
	}
	runner, _ := routes.FunctionNamed(lambdas.Runner)
	runnerFn, err := newFunction(runner, "")
	if err != nil {
		return nil, err
	}
	tasks := map[string]localsfn.Invoker{FunctionARN(runner.Name): runnerFn}
	l.sfn, err = localsfn.Start(localsfn.Options{
		StateMachines: map[string]string{
			l.StateMachineARN:     runs.StateMachineDefinition(FunctionARN(runner.Name)),
			l.JobsStateMachineARN: jobs.StateMachineDefinition(FunctionARN(runner.Name)),
		},
		Addr:      o.SFNListen,
		Tasks:     localsfn.Lambdas(tasks),
		SkipWaits: o.SkipWaits,
		Dir:       o.Root,
		Log:       o.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("start the local Step Functions: %w", err)
	}
	l.SFN = l.sfn.URL

	invokers := map[string]Invoker{}
	for _, f := range routes.Functions {
		switch f.Reach {
		case routes.ByAPI, routes.ByURL, routes.ByOperator:
		case routes.ByStream, routes.ByQueue:
			if f.OpenSearchOnly {
				continue
			}
		default: // the runner, started above
			continue
		}
		// The operator's (admin) and the event sources' (events, deliver)
		// are invoked directly, through Functions, with their sample events.
		fn, err := newFunction(f, l.SFN)
		if err != nil {
			return nil, err
		}
		if f.Reach == routes.ByAPI || f.Reach == routes.ByURL {
			invokers[f.Name] = fn
		}
	}
	table, err := deployedRoutes()
	if err != nil {
		return nil, err
	}
	l.front, err = New(Options{Routes: table, Functions: invokers, Log: slog.New(slog.NewTextHandler(o.Log, nil))})
	if err != nil {
		return nil, err
	}
	// An upload starts its import's execution, as S3's Object Created
	// event does through EventBridge in AWS.
	sfnClient := l.sfn.Client()
	l.Files.OnUpload = func(key string, size int64) {
		_, id := jobs.ParseUploadKey(key)
		if id == "" {
			return
		}
		in, _ := json.Marshal(map[string]any{"detail": map[string]any{"object": map[string]any{"key": key, "size": size}}})
		if _, err := sfnClient.StartExecution(context.Background(), &sfn.StartExecutionInput{
			StateMachineArn: aws.String(l.JobsStateMachineARN), Name: aws.String(id), Input: aws.String(string(in))}); err != nil {
			slog.Error("start an uploaded import", "key", key, "err", err)
		}
	}
	l.srv = &http.Server{Handler: service.WithFiles(l.Files.Handler(), l.front), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		defer close(l.done)
		if err := l.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("front", "err", err)
		}
	}()
	return l, nil
}

// LocalQueueURL is the delivery queue the local events and deliver
// bootstraps are given: no SQS runs here, so a delivery they queue fails
// (their sample events queue none).
const LocalQueueURL = "http://127.0.0.1:9/000000000000/sourcebase-local-deliveries.fifo"

// SFNClient is a Step Functions client of the local state machine.
func (l *Local) SFNClient() *sfn.Client { return l.sfn.Client() }

// Close stops the front, the state machine and every function instance.
func (l *Local) Close() {
	if l.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		l.srv.Shutdown(ctx)
		cancel()
		<-l.done
	}
	l.stop()
}

func (l *Local) stop() {
	if l.filesDir != "" {
		defer os.RemoveAll(l.filesDir)
	}
	if l.sfn != nil {
		l.sfn.Close()
	}
	for _, fn := range l.Functions {
		fn.Close()
	}
}

// deployedRoutes are the route table as the stack deploys it: the
// deployment model's (internal/deploymodel/model.json, which make
// generate writes from the registry), so that the front, like API
// Gateway, routes by what is deployed and links no handler.
func deployedRoutes() ([]routes.Route, error) {
	m, err := deploymodel.Load()
	if err != nil {
		return nil, err
	}
	out := make([]routes.Route, len(m.Routes))
	for i, r := range m.Routes {
		out[i] = routes.Route{Method: r.Method, Path: r.Path, Function: r.Function}
	}
	return out, nil
}
