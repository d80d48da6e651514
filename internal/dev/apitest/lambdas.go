package apitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/lambdafront"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// EnvTarget chooses what New serves: unset (or "inprocess"), the handler
// stack in this process, as `make run` serves it; "lambdas", the real
// function bootstraps behind the local API Gateway front, as
// `make run-lambdas` serves them (package lambdafront), so that the same
// HTTP suites check both.
const EnvTarget = "SOURCEBASE_TARGET"

// TargetLambdas is the value of EnvTarget for the Lambda mode.
const TargetLambdas = "lambdas"

// Lambdas reports whether the tests run against the Lambda functions.
func Lambdas() bool { return os.Getenv(EnvTarget) == TargetLambdas }

// InProcessOnly skips t when the tests run against the Lambda functions:
// for tests that need in-process hooks (a transport or store of their
// own, key cache options, the in-process engine, fault injection, calls
// across the whole table) that a separate process cannot offer. reason
// says which.
func InProcessOnly(t testing.TB, reason string) {
	t.Helper()
	if Lambdas() {
		t.Skipf("in-process only (%s=%s): %s", EnvTarget, TargetLambdas, reason)
	}
}

// The Lambda mode's service, started once per test binary: every
// function's bootstrap, the run state machine and the front, over one
// table of the test binary's DynamoDB Local under one access key (DynamoDB
// Local keeps tables per access key id). Tests stay apart by making their
// own organizations.
var lambdas struct {
	once  sync.Once
	local *lambdafront.Local
	store *store.Store
	err   error
}

// lambdaTable is the one table of the Lambda mode.
const lambdaTable = "sourcebase-lambdas"

// LambdaFunctions are the running functions of the local Lambda
// deployment by name (nil before a lambdas Env started them): their
// instances' cold starts, for the performance report.
func LambdaFunctions() map[string]*lambdaenv.Function {
	if lambdas.local == nil {
		return nil
	}
	return lambdas.local.Functions
}

func newLambdas(t testing.TB) *Env {
	t.Helper()
	endpoint := testenv.Endpoint(t)
	lambdas.once.Do(func() { lambdas.err = startLambdas(endpoint) })
	if lambdas.err != nil {
		t.Fatalf("apitest: start the Lambda functions: %v", lambdas.err)
	}
	l := lambdas.local
	cfg := service.Config{Table: lambdaTable, CacheTTL: auth.MaxCacheTTL, WebhookBaseURL: l.URL, StateMachineARN: l.StateMachineARN}
	engine := runs.UseEngine(runs.StepFunctions{Client: l.SFNClient(), StateMachineARN: l.StateMachineARN})
	deps := service.Build(lambdas.store, cfg, engine)
	return &Env{URL: l.URL, Deps: deps, Store: lambdas.store}
}

func startLambdas(endpoint string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(root))
	bin := filepath.Join(os.TempDir(), "sourcebase-test-lambdas", hex.EncodeToString(sum[:6]))
	if err := lambdafront.BuildBootstraps(root, bin, runtime.GOARCH); err != nil {
		return err
	}
	accessKey := "lambdas" + ids.Random(8)
	db := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, "local", ""),
	}, store.ClientOptions(store.TimeoutsFor(testenv.StoreTimeout())))
	if _, err := store.CreateTable(context.Background(), db, lambdaTable); err != nil {
		return err
	}
	lambdas.store = store.New(db, lambdaTable)
	local, err := lambdafront.StartLocal(lambdafront.LocalOptions{
		Root:        root,
		BinDir:      bin,
		DynamoDB:    endpoint,
		AccessKeyID: accessKey,
		Config: service.Config{Table: lambdaTable, CacheTTL: auth.MaxCacheTTL, StoreTimeout: min(testenv.StoreTimeout(), store.MaxCallTimeout),
			ImportRowsPerSecond: 100_000}, // imports as fast as the table takes them
		Log: &warnings{},
	})
	if err != nil {
		return err
	}
	lambdas.local = local
	return nil
}

// moduleRoot is the directory of the root module's go.mod, above the
// working directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "functions")); err == nil {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod with functions/ above " + wd)
		}
	}
}

// warnings passes the functions' log lines at level WARN or ERROR, and
// whatever is not a JSON log line (a panic, a crash), to stderr: testenv
// keeps the in-process logger at WARN too.
// With SOURCEBASE_LAMBDA_LOG=all, every line passes.
type warnings struct {
	mu  sync.Mutex
	buf []byte
}

var verbose = os.Getenv("SOURCEBASE_LAMBDA_LOG") == "all"

func (w *warnings) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := w.buf[:i]
		if len(line) > 0 && (verbose || line[0] != '{' || bytes.Contains(line, []byte(`"level":"WARN"`)) || bytes.Contains(line, []byte(`"level":"ERROR"`))) {
			fmt.Fprintf(os.Stderr, "lambda: %s\n", line)
		}
		w.buf = w.buf[i+1:]
	}
}
