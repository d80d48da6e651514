// Package app builds the service from its configuration: the one place
// where environment variables are read and dependencies wired, shared by
// the Lambda functions, the dev server and the operator CLI.
package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/keys"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// DefaultTable is the table name when TABLE_NAME is unset.
const DefaultTable = "sourcebase"

// Config is the service's configuration.
type Config struct {
	Table           string        // TABLE_NAME
	CacheTTL        time.Duration // API_KEY_CACHE_TTL
	StateMachineARN string        // STATE_MACHINE_ARN: runs execute in Step Functions when set
	WebhookBaseURL  string        // WEBHOOK_BASE_URL: public base of the webhook endpoint, shown in trigger urls
	StoreTimeout    time.Duration // STORE_TIMEOUT: deadline of one storage call, retries included
}

// MaxStoreTimeout is the longest STORE_TIMEOUT (store.MaxCallTimeout).
const MaxStoreTimeout = store.MaxCallTimeout

// ParseStoreTimeout reads STORE_TIMEOUT: a Go duration from 100ms to
// MaxStoreTimeout; empty means store.DefaultCallTimeout.
func ParseStoreTimeout(s string) (time.Duration, error) {
	if s == "" {
		return store.DefaultCallTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("STORE_TIMEOUT: %q is not a Go duration such as 10s", s)
	}
	if d < 100*time.Millisecond || d > MaxStoreTimeout {
		return 0, fmt.Errorf("STORE_TIMEOUT: %s is outside 100ms..%s", d, MaxStoreTimeout)
	}
	return d, nil
}

// The environment variables of the configuration.
const (
	EnvTable           = "TABLE_NAME"
	EnvCacheTTL        = "API_KEY_CACHE_TTL"
	EnvStateMachineARN = "STATE_MACHINE_ARN"
	EnvWebhookBaseURL  = "WEBHOOK_BASE_URL"
	EnvStoreTimeout    = "STORE_TIMEOUT"
)

// DefaultConfig is the configuration of an empty environment.
func DefaultConfig() Config {
	return Config{Table: DefaultTable, CacheTTL: auth.MaxCacheTTL, StoreTimeout: store.DefaultCallTimeout}
}

// ConfigFromEnv reads the configuration, rejecting invalid values.
func ConfigFromEnv() (Config, error) {
	c := Config{Table: os.Getenv(EnvTable), StateMachineARN: os.Getenv(EnvStateMachineARN), WebhookBaseURL: os.Getenv(EnvWebhookBaseURL)}
	if c.Table == "" {
		c.Table = DefaultTable
	}
	ttl, err := auth.ParseCacheTTL(os.Getenv(EnvCacheTTL))
	if err != nil {
		return c, err
	}
	c.CacheTTL = ttl
	if c.StoreTimeout, err = ParseStoreTimeout(os.Getenv(EnvStoreTimeout)); err != nil {
		return c, err
	}
	return c, nil
}

// Env is the environment that ConfigFromEnv reads back as c: what the
// infrastructure gives a function. The state machine and webhook base are
// left out when unset.
func (c Config) Env() map[string]string {
	env := map[string]string{
		EnvTable:        c.Table,
		EnvCacheTTL:     c.CacheTTL.String(),
		EnvStoreTimeout: c.StoreTimeout.String(),
	}
	if c.StateMachineARN != "" {
		env[EnvStateMachineARN] = c.StateMachineARN
	}
	if c.WebhookBaseURL != "" {
		env[EnvWebhookBaseURL] = c.WebhookBaseURL
	}
	return env
}

// Logger installs the JSON logger (with request ids) as the default.
func Logger(w io.Writer) *slog.Logger {
	l := slog.New(httpapi.LogHandler{Handler: slog.NewJSONHandler(w, nil)})
	slog.SetDefault(l)
	return l
}

// Build wires the services over st; runs execute on the engine that
// engine makes: Step Functions (FromEnv), in process (InProcessRuns), or
// none (nil: a run fails at once saying so).
func Build(st *store.Store, cfg Config, engine runs.EngineFactory) api.Deps {
	k := keys.New(st)
	cs := companies.NewService(st)
	wf := workflows.NewService(st, cfg.WebhookBaseURL)
	reg := resources.NewRegistry(st, resource.External{Singular: "company", Exists: cs.Exists}, companies.FieldNames())
	return api.Deps{
		Store:     st,
		Keys:      k,
		Auth:      auth.New(k, cfg.CacheTTL),
		Companies: cs,
		Workflows: wf,
		Runs:      runs.NewService(st, wf, cs, engine),
		Resources: reg,
		Entries:   resources.NewEntries(st, reg, companyReader(cs), cs.Exists),
	}
}

// InProcessRuns makes runs execute in this process, 8 at once (dev
// server, tests): pass it to Build.
func InProcessRuns() runs.EngineFactory { return runs.InProcessEngine(8) }

// InProcess is the in-process engine of services built with
// InProcessRuns (to Close it); nil when runs execute elsewhere.
func InProcess(deps api.Deps) *runs.InProcess {
	e, _ := deps.Runs.Engine().(*runs.InProcess)
	return e
}

// StoreFromEnv opens the table named by the configuration through the
// SDK's standard AWS configuration.
func StoreFromEnv(ctx context.Context) (*store.Store, Config, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, cfg, err
	}
	db, err := store.NewClient(ctx, store.TimeoutsFor(cfg.StoreTimeout))
	if err != nil {
		return nil, cfg, err
	}
	return store.New(db, cfg.Table), cfg, nil
}

// FromEnv builds the services from the environment.
func FromEnv(ctx context.Context) (api.Deps, Config, error) {
	st, cfg, err := StoreFromEnv(ctx)
	if err != nil {
		return api.Deps{}, cfg, err
	}
	var engine runs.EngineFactory
	if cfg.StateMachineARN != "" {
		awsCfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return api.Deps{}, cfg, fmt.Errorf("load AWS configuration: %w", err)
		}
		engine = runs.UseEngine(runs.StepFunctions{Client: sfn.NewFromConfig(awsCfg), StateMachineARN: cfg.StateMachineARN})
	}
	return Build(st, cfg, engine), cfg, nil
}

// Must exits with a message when err is set: for main functions.
func Must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// companyReader reads companies by id for list entries.
func companyReader(cs *companies.Service) resources.RecordReader {
	return func(ctx context.Context, org string, ids []string) (map[string]any, error) {
		found, err := cs.GetMany(ctx, org, ids)
		out := make(map[string]any, len(found))
		for i := range found {
			out[found[i].ID] = &found[i]
		}
		return out, err
	}
}
