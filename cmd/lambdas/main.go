// Command lambdas runs the service as it runs in AWS, on this machine and
// without Docker: a stand-in for `sam local start-api`. It builds every
// function's bootstrap for this machine (bin/local-lambda/<name>/bootstrap,
// the deployed build flags), and runs each under Amazon's Lambda Runtime
// Interface Emulator, one emulator per concurrent instance, with its
// environment, timeout and memory size (package lambdaenv), behind a local front that
// turns HTTP requests into the events API Gateway and the webhook's
// function URL send (package lambdafront); the run state machine executes
// in a local Step Functions (package localsfn) whose Task states invoke the
// runner's bootstrap. Like the dev server it runs against the DynamoDB at
// AWS_ENDPOINT_URL_DYNAMODB, or one it starts in memory (-sharedDb), and
// creates the table and a demo organization with an admin key. Ctrl-C
// stops every process it started. The change history and the outbound
// webhooks run in this process with the dev server's code
// (eventfns.StartEvents), as the events and deliver functions have no event
// source here. This is what `make run-lambdas` starts. Every listener binds
// 127.0.0.1: the front on PORT (8080), DynamoDB Local on DYNAMODB_PORT
// (8000), the Step Functions on SFN_PORT (default 0: a free port, on the
// banner), and each emulator on two free ports of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sourcebase/sourcebase/internal/serve/eventfns"

	"github.com/sourcebase/sourcebase/internal/dev/lambdafront"
	"github.com/sourcebase/sourcebase/internal/dev/localdev"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	service.Logger(os.Stderr)
	root, err := moduleRoot()
	if err == nil {
		err = run(ctx, os.Stdout, nil, root, filepath.Join(root, "bin", "local-lambda"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lambdas:", err)
		os.Exit(1)
	}
}

// run builds the bootstraps of the repository at root into binDir and
// serves until ctx ends. ready, when set, receives the front's URL once it
// accepts requests.
func run(ctx context.Context, out io.Writer, ready chan<- string, root, binDir string) error {
	addr, sfnAddr, dbPort, err := listenAddrs()
	if err != nil {
		return err
	}
	slog.Info("building the function bootstraps", "dir", binDir)
	started := time.Now()
	if err := lambdafront.BuildBootstraps(root, binDir, runtime.GOARCH); err != nil {
		return err
	}
	slog.Info("built the function bootstraps", "took", time.Since(started).Round(time.Millisecond).String())

	ddb, st, cfg, err := localdev.OpenTable(ctx, dbPort)
	if err != nil {
		return err
	}
	defer ddb.Stop()
	// The service in this process, over the same table: the demo key, and
	// the change history as the dev server runs it (the events and
	// deliver functions' code, eventfns.StartEvents: the table's stream read
	// through DynamoDB Local's Streams API, deliveries from a queue in
	// this process). In AWS the events and deliver functions run it, on
	// the stream and the delivery queue; here there is neither an event
	// source mapping nor SQS, so their bootstraps are not started.
	deps := service.Build(st, cfg, nil)
	demo, err := localdev.CreateDemo(ctx, deps.Keys)
	if err != nil {
		return err
	}
	evs := eventfns.StartEvents(ctx, deps)
	defer evs.Stop()

	local, err := lambdafront.StartLocal(lambdafront.LocalOptions{
		Root:            root,
		BinDir:          binDir,
		Listen:          addr,
		SFNListen:       sfnAddr,
		DynamoDB:        ddb.Endpoint,
		AccessKeyID:     envOr("AWS_ACCESS_KEY_ID", "local"),
		SecretAccessKey: envOr("AWS_SECRET_ACCESS_KEY", "local"),
		Region:          envOr("AWS_REGION", "us-east-1"),
		Config:          bootstrapConfig(cfg),
		Log:             os.Stderr,
	})
	if err != nil {
		return err
	}
	defer local.Close()

	var names []string
	for _, f := range routes.Functions {
		if _, ok := local.Functions[f.Name]; ok {
			names = append(names, f.Name)
		}
	}
	localdev.Banner{Base: local.URL, DynamoDB: ddb.Endpoint, Table: st.Table, Demo: demo, Details: []string{
		"Functions: " + strings.Join(names, ", "),
		"  real bootstraps (" + binDir + "/<name>/bootstrap) under the Lambda Runtime API, behind a local API Gateway",
		"Webhooks: " + local.URL + lambdafront.WebhookPrefix + "... (function URL events)",
		"Step Functions: " + local.SFN + " (" + local.StateMachineARN + ")",
		"Change history and outbound webhooks: the table's stream read in this process (" + loopbackNote(cfg) + ")",
	}}.Write(out)
	if ready != nil {
		ready <- local.URL
	}
	<-ctx.Done()
	slog.Info("shutting down")
	return nil
}

// listenAddrs are the addresses of the front (PORT) and of the Step
// Functions (SFN_PORT), on 127.0.0.1, and DynamoDB Local's port
// (DYNAMODB_PORT). A taken port fails here, before the build, not after.
func listenAddrs() (front, sfn string, dbPort int, err error) {
	port, err := localdev.Port("PORT", 8080)
	if err != nil {
		return "", "", 0, err
	}
	if dbPort, err = localdev.Port("DYNAMODB_PORT", 8000); err != nil {
		return "", "", 0, err
	}
	sfnPort, err := localdev.Port("SFN_PORT", 0)
	if err != nil {
		return "", "", 0, err
	}
	if port != 0 && port == sfnPort {
		return "", "", 0, fmt.Errorf("PORT and SFN_PORT are both %d: set one to another port", port)
	}
	front = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	sfn = net.JoinHostPort("127.0.0.1", strconv.Itoa(sfnPort))
	for _, p := range []struct {
		name string
		port int
		addr string
	}{{"PORT", port, front}, {"SFN_PORT", sfnPort, sfn}} {
		if p.port == 0 {
			continue
		}
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			return "", "", 0, fmt.Errorf("listen on port %d (set %s to use another): %w", p.port, p.name, err)
		}
		ln.Close()
	}
	return front, sfn, dbPort, nil
}

// bootstrapConfig is the configuration of the function bootstraps: the
// front's, without what only this process uses. No delivery queue (there
// is no SQS here: the hooks function's manual retries answer that it
// cannot queue deliveries; the deliveries are made in this process), and
// webhook endpoints on loopback addresses refused, as in AWS, whatever the
// front's own WEBHOOKS_ALLOW_LOOPBACK.
func bootstrapConfig(cfg service.Config) service.Config {
	cfg.DeliverQueueURL, cfg.DeliverDLQURL, cfg.WebhooksAllowLoopback = "", "", false
	return cfg
}

// loopbackNote says whether this process delivers to endpoints on this
// machine: only with WEBHOOKS_ALLOW_LOOPBACK=true in its environment. The
// hooks bootstrap, which creates and changes endpoints, refuses such URLs
// either way, as the function does in AWS.
func loopbackNote(cfg service.Config) string {
	if cfg.WebhooksAllowLoopback {
		return service.EnvWebhooksAllowLoopback + "=true: its deliveries may reach this machine; the hooks function still refuses such endpoint URLs"
	}
	return "deliveries to public addresses only"
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// moduleRoot is the directory of the go.mod that has functions/, at or
// above the working directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "functions")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", errors.New("run from the repository: no go.mod with functions/ at or above " + wd)
		}
	}
}
