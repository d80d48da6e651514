// Package runs holds workflow runs: their creation (through the API, a
// webhook or a retry), their execution by an engine (Step Functions in AWS,
// in process locally) and their state changes, which are conditional
// writes so that a run moves queued -> running -> completed | failed once.
package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/telemetry"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Statuses of a run.
const (
	Queued    = "queued"
	Running   = "running"
	Completed = "completed"
	Failed    = "failed"
)

// What started a run (the run's "trigger" field).
const (
	StartedByAPI     = "api"
	StartedByWebhook = "webhook"
	StartedByRetry   = "retry"
	// StartedByUnknown: a run whose stored record cannot be read.
	StartedByUnknown = "unknown"
)

// MaxTitle is the longest run title, in characters.
const MaxTitle = 120

// Run is one execution of a workflow.
type Run struct {
	store.Versioned
	ID         string          `json:"id"`
	WorkflowID string          `json:"workflowId"`
	Status     string          `json:"status"`
	Title      string          `json:"title,omitempty"` // "" (left out) for a run made before runs had titles
	Input      map[string]any  `json:"input"`
	Output     map[string]any  `json:"output"`
	Error      *steps.RunError `json:"error"`
	DryRun     bool            `json:"dryRun"`
	RetryOf    *string         `json:"retryOf"`
	RetriedBy  *string         `json:"retriedBy"` // the retry of this run; a run is retried once
	StartedBy  string          `json:"startedBy"` // StartedByAPI, ...
	// RequestID is the request that started the run (its X-Request-Id):
	// the events of the run's writes and their deliveries carry it too.
	RequestID   string      `json:"requestId,omitempty"`
	CreatedAt   clock.Time  `json:"createdAt"`
	StartedAt   *clock.Time `json:"startedAt"`
	CompletedAt *clock.Time `json:"completedAt"`
}

// Done reports whether the run has finished.
func (r *Run) Done() bool { return r.Status == Completed || r.Status == Failed }

// record is the stored run: the run and its organization, which the
// start-up recovery (across organizations) needs, and who started it.
type record struct {
	Run
	OrganizationID string `json:"organizationId"`
	// Starter is the actor that created the run (store.Actor.Name: the
	// key, the webhook of a trigger), whose writes its steps are: ""
	// for a run created before runs recorded it.
	Starter string `json:"starter,omitempty"`
}

// StarterField is the stored field of a run's starter, which clients do
// not see.
const StarterField = "starter"

// writer is ctx making the run's writes: as its actor, for the request
// that started it.
func (r *record) writer(ctx context.Context) context.Context {
	if r.RequestID != "" {
		ctx = telemetry.WithRequestID(ctx, r.RequestID)
	}
	return store.WithActor(ctx, r.actor())
}

// actor is who the run's writes are made by: its starter (the system
// when unknown), through the run.
func (r *record) actor() store.Actor {
	a := store.ParseActor(r.Starter)
	a.Via = runVia(r.ID, r.WorkflowID)
	return a
}

// runVia is the via of the writes of run id of workflow wf.
func runVia(id, wf string) store.Via {
	return store.Via{Type: store.ViaWorkflowRun, ID: id, WorkflowID: wf}
}

// UnmarshalJSON reads a stored run: one stored before what started it was
// named startedBy holds it as trigger.
func (r *record) UnmarshalJSON(b []byte) error {
	type plain record
	var p struct {
		plain
		Legacy string `json:"trigger"`
	}
	// Numbers stay as sent (json.Number), as the store decodes them.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*r = record(p.plain)
	if r.StartedBy == "" {
		r.StartedBy = p.Legacy
	}
	return nil
}

// activeLookup is the sparse marker of an unfinished run, of every
// organization, in GSI5 (keys only; the table's layout 2). layout1Active
// is the marker layout 1 wrote (in GSI4, with the whole run): nothing
// writes it now, and the sweeps read it too, so that a run left
// unfinished before the upgrade is still found.
const (
	activeLookup  = "unfinished"
	layout1Active = "active"
)

var spec = store.Spec[record]{
	Type:    store.TypeRun,
	ID:      func(r *record) string { return r.ID },
	IDOrder: []string{"createdAt"},
	Lookups: []store.Lookup[record]{
		{Name: "workflowId", Index: store.GSI3, Key: func(r *record) string { return r.WorkflowID }},
		{Name: "status", Index: store.GSI1, Key: func(r *record) string { return r.Status }},
		// Unfinished runs of every organization, for recovery after a crash.
		// A sparse marker of the run's keys (GSI5 projects them alone).
		{Name: activeLookup, Index: store.GSI5, Global: true, Key: func(r *record) string {
			if r.Done() {
				return ""
			}
			return "1"
		}},
		{Name: layout1Active, Index: store.GSI4, Global: true, Key: func(*record) string { return "" }},
	},
	Undecodable: unreadable,
}

// unreadable is the run shown in place of a stored run that cannot be
// decoded: failed, saying why, so that one damaged item never fails a
// list or the start-up recovery, which stores it (the run then leaves the
// unfinished runs for good). What the item's keys tell is kept: its id,
// organization, workflow and, from the id, its creation time.
func unreadable(u store.Undecoded) *record {
	r := &record{OrganizationID: u.Org, Run: Run{
		ID: u.ID, WorkflowID: u.Lookups["workflowId"], Status: Failed, Title: "Unreadable run",
		Input: map[string]any{}, StartedBy: StartedByUnknown,
		Error: &steps.RunError{Message: "the stored run could not be read: " + u.Problem},
	}}
	if _, id, ok := strings.Cut(u.ID, "_"); ok {
		if parsed, err := ulid.ParseStrict(strings.ToUpper(id)); err == nil {
			r.CreatedAt = clock.Of(ulid.Time(parsed.Time()))
		}
	}
	return r
}

// Engine starts the execution of a stored run. Starting a run twice must
// be harmless.
type Engine interface {
	Start(ctx context.Context, run ExecutionInput) error
}

// Service manages runs.
type Service struct {
	coll      *store.Collection[record]
	workflows *workflows.Service
	executor  steps.Executor
	engine    Engine
	now       func() clock.Time
	// queuedTimeout: a run queued longer than this never started (its
	// start was interrupted) and is failed so it can be retried.
	queuedTimeout time.Duration
	// runningAfter: see RunningAfter.
	runningAfter time.Duration
}

// DefaultQueuedTimeout is how long a run may stay queued: far above the
// seconds an engine takes to pick a run up, short enough that a user whose
// run start was interrupted can retry it soon.
const DefaultQueuedTimeout = 2 * time.Minute

// startTimeout bounds handing a stored run to the engine.
const startTimeout = 20 * time.Second

// EngineFactory makes the engine of a run service while the service is
// built. It gets the service, complete but for its engine, whose Execute
// and Fail an in-process engine calls: so the service and the engine that
// executes its runs are each built once, with no setter afterwards.
type EngineFactory func(*Service) Engine

// UseEngine is the factory of an engine that needs nothing of the service
// (Step Functions, a test's engine).
func UseEngine(e Engine) EngineFactory { return func(*Service) Engine { return e } }

// NewService returns the run service, its runs executed by the engine
// that engine makes. With a nil engine, runs fail at once saying that no
// engine is configured (a function that only reads runs needs none).
func NewService(st *store.Store, wf *workflows.Service, cs *companies.Service, engine EngineFactory) *Service {
	s := &Service{
		coll:      store.NewCollection(st, spec),
		workflows: wf,
		executor:  steps.Executor{Companies: companyWriter{svc: cs}},
		now:       clock.Now,

		queuedTimeout: DefaultQueuedTimeout,
		runningAfter:  RunningAfter,
	}
	if engine != nil {
		s.engine = engine(s)
	}
	return s
}

// Engine is the engine that executes the service's runs; nil for none.
func (s *Service) Engine() Engine { return s.engine }

// SetQueuedTimeout sets how long a run may stay queued before it is failed
// as never started (DefaultQueuedTimeout unless set).
func (s *Service) SetQueuedTimeout(d time.Duration) { s.queuedTimeout = d }

// NewRun describes a run to create.
type NewRun struct {
	Input     map[string]any
	DryRun    bool
	Title     string // "" for a generated title
	StartedBy string
	RetryOf   string
	// ID is the new run's id; "" to generate one. Extra operations are
	// written in the same transaction as the run (such as the record of a
	// retry on its source run); when one's condition fails, nothing is
	// written and Create answers apperr.ErrConflict.
	ID    string
	Extra []store.Op
	// Undo takes Extra back: written with the run's delete when its
	// execution cannot be started for capacity (Create).
	Undo []store.Op
}

// Create stores a queued run of wf and starts it; the run executes wf's
// steps as they are now, unless they are nil (a workflow known only by its
// id and name): then its execution reads them. If the engine cannot
// start it, the run is marked failed with the reason, never left queued.
// The work is detached from the caller's cancellation (each storage call
// has its own deadline): a client that goes away cannot stop a written run
// from being started. A run whose start is interrupted anyway (a crash, a
// table that stops answering) is failed once it is stale; see failIfStale.
func (s *Service) Create(ctx context.Context, org string, wf *workflows.Workflow, n NewRun) (*Run, error) {
	ctx = context.WithoutCancel(ctx)
	now := s.now()
	r := &record{OrganizationID: org, Starter: store.ActorOf(ctx).Name(), Run: Run{
		ID: n.ID, WorkflowID: wf.ID, Status: Queued, Input: n.Input, DryRun: n.DryRun,
		StartedBy: n.StartedBy, CreatedAt: now, Title: n.Title, RequestID: telemetry.RequestID(ctx),
	}}
	if r.ID == "" {
		id, err := s.coll.NewID(ctx, org, "run")
		if err != nil {
			return nil, err
		}
		r.ID = id
	}
	if r.Input == nil {
		r.Input = map[string]any{}
	}
	if r.Title == "" {
		r.Title = generateTitle(wf.Name, n.StartedBy, n.DryRun, now.Time)
	}
	if n.RetryOf != "" {
		r.RetryOf = &n.RetryOf
	}
	if err := s.coll.Create(ctx, org, r, n.Extra...); err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := s.start(startCtx, r, wf.Steps); err != nil {
		slog.ErrorContext(ctx, "start run", "runId", r.ID, "err", err)
		if awsenv.Refused(err) {
			// Step Functions refused the start for capacity, so nothing
			// executes the run: take it back, with what was written with
			// it, and answer 503 with Retry-After, so that the request can
			// be made again. (After a deadline the execution may have
			// started: the run is failed as before, never taken back.)
			undoErr := s.coll.Delete(ctx, org, r.ID, n.Undo...)
			if undoErr == nil {
				return nil, err
			}
			slog.ErrorContext(ctx, "take back a run that could not be started", "runId", r.ID, "err", undoErr)
		}
		return s.finish(ctx, org, r.ID, r, nil, nil, &steps.RunError{Message: "the run could not be started: " + err.Error()})
	}
	return &r.Run, nil
}

// Start stores and starts a run of org's workflow workflowID (Create); a
// workflow that is not org's is apperr.ErrNotFound.
func (s *Service) Start(ctx context.Context, org, workflowID string, n NewRun) (*Run, error) {
	wf, err := s.workflows.Get(ctx, org, workflowID)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, org, wf, n)
}

// start starts r's execution. When run is not nil, the execution carries
// r as it was just written and run, the steps to execute (see Execute);
// a run started again (Recover) carries neither.
func (s *Service) start(ctx context.Context, r *record, run []steps.Step) error {
	if s.engine == nil {
		return errors.New("no run engine is configured (set STATE_MACHINE_ARN)")
	}
	in := ExecutionInput{OrganizationID: r.OrganizationID, RunID: r.ID, WorkflowID: r.WorkflowID}
	if run != nil {
		// A copy: the execution changes its run while the caller answers
		// with r (the input map is shared: neither changes it).
		in.Run, in.Steps = &HeldRun{Record: *r, Version: r.StoreVersion()}, &run
	}
	return s.engine.Start(ctx, in)
}

// generateTitle names a run by its workflow, what started it and its time,
// within MaxTitle.
func generateTitle(workflow, startedBy string, dryRun bool, at time.Time) string {
	how := map[string]string{StartedByAPI: "API run", StartedByWebhook: "webhook", StartedByRetry: "retry"}[startedBy]
	if dryRun {
		how = "dry " + how
	}
	suffix := " · " + how + " · " + at.Format("2006-01-02 15:04 UTC")
	room := MaxTitle - utf8.RuneCountInString(suffix)
	name := []rune(strings.TrimSpace(workflow))
	if len(name) > room {
		name = append(name[:room-1], '…')
	}
	return string(name) + suffix
}

// Get reads a run of org; a stale queued run is failed first.
func (s *Service) Get(ctx context.Context, org, id string) (*Run, error) {
	r, err := s.coll.Get(ctx, org, id)
	if err != nil {
		return nil, err
	}
	return s.failIfStale(ctx, org, &r.Run)
}

// Statuses lists the statuses of a run.
var Statuses = []string{Queued, Running, Completed, Failed}

// Filters are the fields a run list can be filtered by, one at a time:
// each is served by its lookup index.
var Filters = Def.Filters()

// List returns a page of org's runs, of one workflow when workflowID is
// set: then a workflow that is not org's (or no longer exists) is
// apperr.ErrNotFound.
func (s *Service) List(ctx context.Context, org, workflowID string, q store.Query) (store.Page[Run], error) {
	if workflowID == "" {
		return s.ListBy(ctx, org, q, "", "")
	}
	if _, err := s.workflows.Get(ctx, org, workflowID); err != nil {
		return store.Page[Run]{Items: []Run{}}, err
	}
	return s.ListBy(ctx, org, q, "workflowId", workflowID)
}

// ListBy returns a page of org's runs whose filter field (one of Filters;
// "" for none) equals value; a status other than those of a run is a 400.
func (s *Service) ListBy(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[Run], error) {
	switch filter {
	case "":
	case "status":
		if !slices.Contains(Statuses, value) {
			return store.Page[Run]{Items: []Run{}}, apperr.InvalidQuery("status", "must be one of %s", strings.Join(Statuses, ", "))
		}
		q.Where = &store.Where{Lookup: filter, Value: value}
	case "workflowId":
		q.Where = &store.Where{Lookup: filter, Value: value}
	default:
		return store.Page[Run]{Items: []Run{}}, apperr.InvalidQuery(filter, "is not a filter of workflow runs; filter by %s", strings.Join(Filters, " or "))
	}
	p, err := s.coll.List(ctx, org, q)
	out := store.MapPage(p, func(r *record) Run { return r.Run })
	s.failStaleIn(ctx, org, out.Items)
	return out, err
}

// Rename sets a run's title.
func (s *Service) Rename(ctx context.Context, org, id, title string) (*Run, error) {
	r, err := s.coll.Update(ctx, org, id, func(r *record) error {
		if r.Title == title {
			return store.ErrUnchanged
		}
		r.Title = title
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &r.Run, nil
}

// Retry creates a new run with a failed run's input and dry-run setting.
// Only a failed run can be retried, and only once: the source run records
// its retry (retriedBy) in the transaction that creates the retry, so of
// concurrent retries one succeeds and the others are conflicts naming it.
// To try again, retry the retry.
func (s *Service) Retry(ctx context.Context, org, id string) (*Run, error) {
	const attempts = 6
	for attempt := 1; ; attempt++ {
		src, version, err := s.coll.GetVersion(ctx, org, id)
		if err != nil {
			return nil, err
		}
		if src.RetriedBy != nil {
			return nil, apperr.Conflict("run %s has already been retried by run %s; retry that run to try again", src.ID, *src.RetriedBy)
		}
		if src.Status != Failed {
			return nil, apperr.Conflict("only a failed run can be retried; run %s is %s", src.ID, src.Status)
		}
		wf, err := s.workflows.Get(ctx, org, src.WorkflowID)
		if errors.Is(err, apperr.ErrNotFound) {
			return nil, apperr.Conflict("the workflow of run %s has been deleted; it cannot be retried", src.ID)
		}
		if err != nil {
			return nil, err
		}
		id, err := s.coll.NewID(ctx, org, "run")
		if err != nil {
			return nil, err
		}
		n := NewRun{ID: id, Input: src.Input, DryRun: src.DryRun, StartedBy: StartedByRetry, RetryOf: src.ID}
		src.RetriedBy = &n.ID
		mark, err := s.coll.ReplaceOp(org, src, version)
		if err != nil {
			return nil, err
		}
		src.RetriedBy = nil
		unmark, err := s.coll.ReplaceOp(org, src, version+1)
		if err != nil {
			return nil, err
		}
		n.Extra, n.Undo = []store.Op{mark}, []store.Op{unmark}
		run, err := s.Create(ctx, org, wf, n)
		if err == nil || !errors.Is(err, apperr.ErrConflict) || attempt == attempts {
			return run, err
		}
		// The source changed meanwhile (most likely another retry won):
		// read it again.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}

// Execute runs a run's steps: the work of the runner Lambda and of the
// in-process engine. A run executes the steps its workflow had when the
// run was created, carried in the execution's input (ExecutionInput.Steps),
// or, in an execution that does not carry them, the workflow's steps as
// it executes (a workflow deleted by then fails the run). The execution
// reads the run unless its input carries the run as its creation wrote it
// (HeldRun) and that is safe to trust (see held); then, with the steps
// carried too, it reads nothing before the steps. Otherwise it reads the
// run and the workflow in one call. It executes the steps and records the
// outcome; a run still executing after RunningAfter is marked running
// meanwhile (see markRunning), so a run that finishes sooner is written
// once, from queued to its outcome. A finished run that is read is left
// alone, so a duplicate delivery does nothing. The returned error means
// the execution was interrupted (the run stays queued or running for the
// engine to retry or fail); a failing step is a failed run, not an error.
func (s *Service) Execute(ctx context.Context, in ExecutionInput) (*Run, error) {
	org, id := in.OrganizationID, in.RunID
	// Through the run from the start (a meter tells a run's calls by it);
	// as its starter once the run is read.
	ctx = store.WithVia(ctx, runVia(id, in.WorkflowID))
	var (
		r     = s.held(in)
		err   error
		wf    *workflows.Workflow
		wfErr error
	)
	switch {
	case r != nil:
	case in.WorkflowID != "" && in.Steps == nil:
		run := s.coll.Fetch(org, id)
		wf, wfErr = s.workflows.GetWith(ctx, org, in.WorkflowID, run)
		r, err = run.Result()
	default:
		r, err = s.coll.Get(ctx, org, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	if r.Done() {
		return &r.Run, nil
	}
	ctx = r.writer(ctx)
	switch {
	case in.Steps != nil && in.WorkflowID == r.WorkflowID:
		wf = &workflows.Workflow{ID: r.WorkflowID, Steps: *in.Steps}
	case (wf == nil && wfErr == nil) || in.WorkflowID != r.WorkflowID: // not read, or not the run's
		wf, wfErr = s.workflows.Get(ctx, org, r.WorkflowID)
	}
	if r.StartedAt == nil {
		now := s.now()
		r.StartedAt = &now
	}
	started := *r.StartedAt
	marked, err := s.markRunning(ctx, org, id, started)
	if err != nil {
		return nil, fmt.Errorf("mark run %s running: %w", id, err)
	}
	defer marked()
	if errors.Is(wfErr, apperr.ErrNotFound) {
		marked()
		return s.finish(ctx, org, id, r, &started, nil, &steps.RunError{Message: "the workflow was deleted before the run executed"})
	}
	if wfErr != nil {
		return nil, wfErr
	}
	res, err := s.executor.Execute(steps.WithRunID(ctx, id), org, wf.Steps, r.Input, r.DryRun)
	if err != nil {
		return nil, fmt.Errorf("execute run %s: %w", id, err)
	}
	marked()
	done, err := s.finish(ctx, org, id, r, &started, res.Output, res.Error)
	if errors.Is(err, apperr.ErrTooLarge) {
		return s.finish(ctx, org, id, nil, &started, nil, &steps.RunError{Message: "the run's output is too large to store (the record limit is 400 KB)"})
	}
	return done, err
}

// held is the run the execution input carries, when it can stand for a
// read of the run: the run as its creation wrote it (queued, its version
// known), this execution's, and created less than half the queued timeout
// ago. Younger than that, a run is not yet failed as stale by a reader,
// and markRunning marks it running before it could be; a rename since is
// kept, as the outcome's write builds on the run as stored when its
// version moved (store.Collection.UpdateHeld). It cannot be a run an
// earlier invocation finished: the state machine sends the run with its
// first invocation only (ExecuteAgain, after a transient Lambda error,
// reads it), and the in-process engine executes each run it starts once.
func (s *Service) held(in ExecutionInput) *record {
	h := in.Run
	if h == nil || h.Version <= 0 {
		return nil
	}
	r := h.Record
	if r.ID != in.RunID || r.OrganizationID != in.OrganizationID || r.WorkflowID != in.WorkflowID || r.Status != Queued ||
		r.StartedAt != nil || s.now().Sub(r.CreatedAt.Time) >= s.queuedTimeout/2 {
		return nil
	}
	r.SetStoreVersion(h.Version)
	return &r
}

// RunningAfter is how long a run executes before it is marked running.
const RunningAfter = time.Second

// markRunning marks the run running, at started, once it has executed
// for RunningAfter (s.runningAfter), trying again every RunningAfter while
// the write fails; the function it returns stops that and waits for a
// write under way. The write is conditional on the run still queued, and
// the outcome's write on the version it read: whichever lands second sees
// the other's and builds on it (store.Collection.UpdateHeld).
//
// With a delay of 0 (SetRunningAfter), the run is marked running before
// its steps, and a failure to is the execution's error.
func (s *Service) markRunning(ctx context.Context, org, id string, started clock.Time) (stop func(), err error) {
	mark := func() (*record, error) {
		return s.coll.Update(ctx, org, id, func(r *record) error {
			if r.Status != Queued {
				return store.ErrUnchanged
			}
			r.Status, r.StartedAt = Running, &started
			return nil
		})
	}
	delay := min(s.runningAfter, s.queuedTimeout/4) // running well before it could look stale
	if delay <= 0 {
		_, err := mark()
		return func() {}, err
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(delay):
			}
			_, err := mark()
			if err == nil {
				return
			}
			slog.WarnContext(ctx, "mark run running", "runId", id, "err", err)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}, nil
}

// SetRunningAfter sets how long a run executes before it is marked
// running (RunningAfter unless set); 0 marks it before its steps.
func (s *Service) SetRunningAfter(d time.Duration) { s.runningAfter = d }

// Fail marks an unfinished run failed with message; the path the state
// machine takes when execution itself failed (timeout, crash).
func (s *Service) Fail(ctx context.Context, org, id, message string) (*Run, error) {
	ctx = store.WithVia(ctx, runVia(id, ""))
	r, err := s.coll.Get(ctx, org, id) // for its starter; the outcome's write builds on it
	if err != nil {
		return nil, fmt.Errorf("record outcome of run %s: %w", id, err)
	}
	return s.finish(r.writer(ctx), org, id, r, nil, nil, &steps.RunError{Message: message})
}

// finish records the outcome of an unfinished run; a finished run keeps
// its first outcome. held, when not nil, is the run as this process last
// wrote it: the outcome is written without reading the run again, unless
// it changed since (store.Collection.UpdateHeld).
func (s *Service) finish(ctx context.Context, org, id string, held *record, started *clock.Time, output map[string]any, runErr *steps.RunError) (*Run, error) {
	outcome := func(r *record) error {
		if r.Done() {
			return store.ErrUnchanged
		}
		if r.StartedAt == nil {
			r.StartedAt = started
		}
		s.setOutcome(r, output, runErr)
		return nil
	}
	var (
		r   *record
		err error
	)
	if held != nil {
		r, err = s.coll.UpdateHeld(ctx, org, held, outcome)
	} else {
		r, err = s.coll.Update(ctx, org, id, outcome)
	}
	if err != nil {
		return nil, fmt.Errorf("record outcome of run %s: %w", id, err)
	}
	return &r.Run, nil
}

// setOutcome finishes r: completed with output, or failed with runErr.
func (s *Service) setOutcome(r *record, output map[string]any, runErr *steps.RunError) {
	now := s.now()
	r.CompletedAt = &now
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	if runErr != nil {
		r.Status, r.Error, r.Output = Failed, runErr, nil
	} else {
		r.Status, r.Output = Completed, output
	}
}

// Recover handles runs a previous process left unfinished: queued runs
// are started again unless stale (then failed as never started); running
// runs, whose steps may have partly applied, are failed with a message
// saying so; a run whose stored record cannot be read is stored as its
// failed placeholder. It returns how many runs it resumed and how many it
// failed.
func (s *Service) Recover(ctx context.Context) (resumed, failed int, err error) {
	for _, lookup := range []string{activeLookup, layout1Active} {
		r, f, err := s.recover(ctx, lookup)
		resumed, failed = resumed+r, failed+f
		if err != nil {
			return resumed, failed, err
		}
	}
	return resumed, failed, nil
}

// recover is Recover of the runs one marker (lookup) finds.
func (s *Service) recover(ctx context.Context, lookup string) (resumed, failed int, err error) {
	q := store.Query{Limit: 100, Desc: true, MaxBytes: recoverBudget, Where: &store.Where{Lookup: lookup, Value: "1"}}
	for {
		p, err := s.coll.List(ctx, "", q)
		if err != nil {
			return resumed, failed, err
		}
		for _, r := range p.Items {
			switch {
			case r.Done(): // only an unreadable run's placeholder is done and still active
				_, err := s.coll.Repair(ctx, r.OrganizationID, r.ID)
				if errors.Is(err, apperr.ErrConflict) {
					continue // changed meanwhile: no longer this process's to repair
				}
				if err != nil {
					return resumed, failed, fmt.Errorf("store the placeholder of unreadable run %s: %w", r.ID, err)
				}
				failed++
			case r.Status == Queued && !s.stale(&r.Run) && s.start(ctx, &r, nil) == nil:
				resumed++
			default:
				if _, err := s.Fail(ctx, r.OrganizationID, r.ID, s.recoverMessage(&r.Run)); err != nil {
					return resumed, failed, err
				}
				failed++
			}
		}
		if p.Next == "" {
			return resumed, failed, nil
		}
		q.Cursor = p.Next
	}
}

// recoverBudget bounds the memory one page of unfinished runs takes.
const recoverBudget = 5_000_000
