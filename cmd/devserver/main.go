// Command devserver runs the whole service in one process on loopback: every
// resource group on one mux, against the table at AWS_ENDPOINT_URL_DYNAMODB,
// or, when that is unset, against a DynamoDB Local it starts in memory
// (-sharedDb, so the admin CLI sees the same tables) and stops on exit. It
// creates the table and a demo organization with an admin key, and prints
// how to call the API. Workflow runs execute in process; runs a previous
// process left unfinished are resumed or failed at start, and runs left
// queued too long are failed periodically. This is what `make run` starts.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/sourcebase/sourcebase/docs"
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/dev/localdev"
	"github.com/sourcebase/sourcebase/internal/docspage"
	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/serve/eventfns"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	service.Logger(os.Stderr)
	if err := run(ctx, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "devserver:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. ready, when set, receives the base URL once
// the server accepts requests.
func run(ctx context.Context, out io.Writer, ready chan<- string) error {
	port, err := localdev.Port("PORT", 8080)
	if err != nil {
		return err
	}
	dbPort, err := localdev.Port("DYNAMODB_PORT", 8000)
	if err != nil {
		return err
	}
	ddb, st, cfg, err := localdev.OpenTable(ctx, dbPort)
	if err != nil {
		return err
	}
	defer ddb.Stop()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen on port %d (set PORT to use another): %w", port, err)
	}
	base := "http://" + ln.Addr().String()
	if cfg.WebhookBaseURL == "" {
		cfg.WebhookBaseURL = base
	}
	deps := service.Build(st, cfg, service.InProcessRuns())
	var awsCfg aws.Config // Bedrock's credentials and region, when EMBEDDINGS=bedrock
	if cfg.Embeddings == service.EmbeddingsBedrock {
		if awsCfg, err = awsenv.Load(ctx); err != nil {
			return err
		}
	}
	keeper, err := service.Keeper(awsCfg, st, cfg, bedrock.New)
	if err != nil {
		return err
	}
	deps.Search = embedded.NewEngine(st, keeper)
	deps.NewMCP = mcpserver.Handler(docs.Pages)
	engine := service.InProcess(deps)
	defer engine.Close(10 * time.Second)
	evs := eventfns.StartEvents(ctx, deps)
	defer evs.Stop()
	if resumed, failed, err := deps.Runs.Recover(ctx); err != nil {
		return fmt.Errorf("recover unfinished runs: %w", err)
	} else if resumed+failed > 0 {
		slog.Info("recovered runs left unfinished by a previous process", "resumed", resumed, "failed", failed)
	}
	jobsDir, err := os.MkdirTemp("", "sourcebase-files-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(jobsDir)
	jobRunner, files, err := service.LocalJobs(ctx, &deps, jobsDir, base, jobsapi.Targets)
	if err != nil {
		return fmt.Errorf("bulk jobs: %w", err)
	}
	defer jobRunner.Close()
	if cfg.ImportRowsPerSecond > 0 {
		deps.Jobs.RowsPerSecond = cfg.ImportRowsPerSecond
	}
	demo, err := localdev.CreateDemo(ctx, deps.Keys)
	if err != nil {
		return err
	}

	bundle, bundleErr := docspage.FindBundle()
	if bundleErr != nil {
		slog.Warn("the /docs page is unavailable", "err", bundleErr)
	}
	srv := newServer(service.WithFiles(files.Handler(), withDocs(api.Handler(deps), docspage.Handler(bundle, bundleErr, api.OpenAPIPath))), serverTimeouts)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go sweepPeriodically(ctx, sweeps(deps), sweepEvery)

	embeddings := "none (EMBEDDINGS=off, or the local model is not installed: make model): hybrid search ranks by keywords"
	if keeper != nil {
		embeddings = keeper.Model() + " (EMBEDDINGS=" + cmp.Or(cfg.Embeddings, service.EmbeddingsLocal) + "; docs/search.md says how to switch)"
	}
	localdev.Banner{Base: base, DynamoDB: ddb.Endpoint, Table: st.Table, Demo: demo, Details: []string{
		"API reference: " + base + "/docs (the OpenAPI document: " + base + api.OpenAPIPath + ")",
		"Embeddings: " + embeddings}}.Write(out)
	if ready != nil {
		ready <- base
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// withDocs serves the reference page's paths (/docs) with docs, the rest
// with the API.
func withDocs(api, docs http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if docspage.Paths(r.URL.Path) {
			docs.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// timeouts of the HTTP server.
type timeouts struct{ readHeader, read, write, idle time.Duration }

// serverTimeouts: a client must send its headers within 10 s and its whole
// request (at most 1 MiB) within 30 s, so slow senders cannot hold
// connections; a response may take up to 60 s (several storage calls of
// at most STORE_TIMEOUT each); an idle keep-alive connection is closed
// after 2 minutes.
var serverTimeouts = timeouts{readHeader: 10 * time.Second, read: 30 * time.Second, write: 60 * time.Second, idle: 2 * time.Minute}

func newServer(h http.Handler, t timeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.readHeader, ReadTimeout: t.read, WriteTimeout: t.write, IdleTimeout: t.idle}
}

// sweepEvery is how often runs left queued too long are failed.
const sweepEvery = time.Minute

// sweeps is what the dev server sweeps every sweepEvery: what the runner
// sweeps on its schedule in AWS (app.Sweep); it reports how much it did.
func sweeps(deps service.Deps) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		r, err := service.Sweep(ctx, deps)
		return r.FailedRuns + r.CompletedPurges, err
	}
}

// sweepPeriodically calls sweep every interval until ctx ends.
func sweepPeriodically(ctx context.Context, sweep func(context.Context) (int, error), every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// The sweep logs what it did and what failed.
		sweep(ctx)
	}
}
