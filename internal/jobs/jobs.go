// Package jobs runs bulk data jobs: imports of a CSV or NDJSON file into
// the records of one resource, and exports of a resource's records to
// such a file. A job is a record of the table; its files live in a file
// store (blob: S3 in AWS, a directory of the dev server locally). An
// import waits for its upload, then runs in steps, each ending in a
// checkpoint (the file position, the counts), so that a crash loses no
// row and writes none twice: a step run again starts from the last
// checkpoint, and a row it creates again gets the id it got the first
// time (resource.WithNewID), which the table refuses twice. An export
// walks the records by id and streams them to the file store. In AWS a
// Step Functions state machine runs the steps (StateMachineDefinition);
// locally a Runner of the dev server does, with the same code.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/bulk"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// The kinds of job: also the kinds of via its writes carry (store.Via).
const (
	KindImport = store.ViaImport // "import"
	KindExport = store.ViaExport // "export"
)

// The statuses of a job.
const (
	StatusAwaitingUpload = "awaitingUpload" // an import whose file has not arrived
	StatusQueued         = "queued"         // ready, not started
	StatusRunning        = "running"
	StatusCompleted      = "completed"
	StatusFailed         = "failed"
)

// The modes of an import.
const (
	ModeCreate = "create" // every row a new record
	ModeUpsert = "upsert" // the record whose unique field (match) holds the row's value, created when none does
	ModeUpdate = "update" // the record the row names (by id, or match), which must exist
)

// Table item types of jobs and of the index of unfinished ones.
const (
	TypeJob     = "JOB"
	typePending = "JOBPENDING"
)

// URLTTL is how long an upload or download URL works.
const URLTTL = time.Hour

// Job is a job's record.
type Job struct {
	store.Versioned
	ID       string            `json:"id"`
	Kind     string            `json:"kind"`
	Resource string            `json:"resource"`
	Format   bulk.Format       `json:"format"`
	Mode     string            `json:"mode,omitempty"`
	Match    string            `json:"match,omitempty"`
	Mapping  map[string]string `json:"mapping,omitempty"`
	DryRun   bool              `json:"dryRun,omitempty"`
	// KeepIDs: an import's created records take the ids of the file's id
	// column (a copy into another organization keeps its references).
	KeepIDs bool `json:"keepIds,omitempty"`
	// Confidence is that of the enrichment candidates an import adds
	// (resource.ImportCandidate columns); DefaultConfidence when unset.
	Confidence *float64 `json:"confidence,omitempty"`
	// IgnoredColumns are the columns an import does not read, and why
	// (found when the file is counted).
	IgnoredColumns []bulk.IgnoredColumn `json:"ignoredColumns,omitempty"`
	// Duplicates are the rows of an import that repeat a key of an earlier
	// row (found when the file is counted): each fails.
	Duplicates int64          `json:"duplicates,omitempty"`
	Filter     map[string]any `json:"filter,omitempty"`
	Fields     []string       `json:"fields,omitempty"`
	// RawFormulas: an export (CSV) whose formula-like text cells are
	// written unescaped (its body's escapeFormulas false).
	RawFormulas bool   `json:"rawFormulas,omitempty"`
	Status      string `json:"status"`
	// Total is the file's rows (an import, once counted); Rows those an
	// export wrote.
	Total     int64 `json:"total"`
	Processed int64 `json:"processed"`
	Created   int64 `json:"created"`
	Updated   int64 `json:"updated"`
	Failed    int64 `json:"failed"`
	Rows      int64 `json:"rows"`
	// Error says why the job failed.
	Error string `json:"error,omitempty"`
	// Position is the import's checkpoint: where the next step reads.
	Position bulk.Position `json:"position"`
	// ErrorParts are the first rows of the checkpointed chunks that had
	// failed rows: each wrote its part of the errors file.
	ErrorParts []int64 `json:"errorParts,omitempty"`
	// Size is the uploaded file's size in bytes.
	Size int64 `json:"size"`
	// UploadVersion names the uploaded file the import reads (blob.Info's
	// Version, recorded when it arrived): a file put at its key since
	// fails the import rather than mix into it.
	UploadVersion string `json:"uploadVersion,omitempty"`
	// CreatedBy is the actor that created the job (store.Actor.Name: the
	// key of the request), whose writes the job's are ("" for a job
	// created before jobs recorded it: the system's).
	CreatedBy   string      `json:"createdBy,omitempty"`
	CreatedAt   clock.Time  `json:"createdAt"`
	UpdatedAt   clock.Time  `json:"updatedAt"`
	StartedAt   *clock.Time `json:"startedAt"`
	CompletedAt *clock.Time `json:"completedAt"`
}

// actor is who the job's writes are made by: the actor that created it,
// through the job (store.Via of the job's kind and id), so that the change
// history shows an import's rows as its key's, via the import.
func (j *Job) actor() store.Actor {
	a := store.ParseActor(j.CreatedBy)
	a.Via = store.Via{Type: j.Kind, ID: j.ID}
	return a
}

// Done reports whether the job has ended.
func (j *Job) Done() bool { return j.Status == StatusCompleted || j.Status == StatusFailed }

// UploadKey is where an import's file is uploaded.
func UploadKey(org, id string) string { return "imports/" + org + "/" + id + "/upload" }

// errorsKey is where an import's errors file is assembled.
func errorsKey(org, id string) string { return "imports/" + org + "/" + id + "/errors.csv" }

// errorPartKey is the part of the errors file of the chunk from row first.
func errorPartKey(org, id string, first int64) string {
	return fmt.Sprintf("imports/%s/%s/errors/%012d.csv", org, id, first)
}

// exportKey is where an export's file is written.
func exportKey(org, id string, f bulk.Format) string {
	return "exports/" + org + "/" + id + "/data" + f.Ext()
}

// ParseUploadKey reads the organization and job of an upload's key ("", ""
// for another key): how a completed upload (an S3 event, the dev
// server's file store) finds its job.
func ParseUploadKey(key string) (org, id string) {
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0] != "imports" || parts[3] != "upload" || parts[1] == "" || parts[2] == "" {
		return "", ""
	}
	return parts[1], parts[2]
}

// Target is a kind of record jobs move: its declaration and its
// service's writes and reads — the API's, so that a row is checked and
// written exactly as a request's body would be.
type Target struct {
	Def    *resource.Def
	Create func(ctx context.Context, org string, body []byte) (any, error)
	Update func(ctx context.Context, org, id string, body []byte) (any, error)
	// Upsert is nil for a kind without a unique field.
	Upsert func(ctx context.Context, org, field string, body []byte) (any, bool, error)
	Get    func(ctx context.Context, org, id string) (any, error)
	// List reads a page of records (store.Query: id order, cursor).
	List func(ctx context.Context, org string, q store.Query) (store.Page[store.JSON], error)
	// Owner is the id of the record whose unique field holds value, "" for none.
	Owner func(ctx context.Context, org, field, value string) (string, error)
}

// Starter starts running a job: the dev server's Runner, or a Step
// Functions execution in AWS.
type Starter interface {
	Start(ctx context.Context, org, id string) error
}

// Service keeps jobs and runs their steps.
type Service struct {
	st      *store.Store
	coll    *store.Collection[Job]
	files   blob.Store
	targets map[string]Target
	starter Starter
	now     func() clock.Time
	// RowsPerSecond bounds an import's writes (DefaultRowsPerSecond when 0).
	RowsPerSecond float64
	// Chunk is the rows between two checkpoints (DefaultChunk when 0).
	Chunk int
	// Workers write a chunk's rows in parallel (DefaultWorkers when 0).
	Workers int
	// Limits counts an import's rows against the rate limit of the key
	// that created it (takeRows); nil counts none.
	Limits RowLimiter
}

// Defaults of a Service.
const (
	DefaultRowsPerSecond = 200
	DefaultChunk         = 500
	DefaultWorkers       = 4
)

var spec = store.Spec[Job]{
	Type:    TypeJob,
	ID:      func(j *Job) string { return j.ID },
	IDOrder: []string{"createdAt"},
	Lookups: []store.Lookup[Job]{{Name: "kind", Index: store.GSI3, Key: func(j *Job) string { return j.Kind }}},
}

// New returns the service over st and files, writing and reading the
// records of targets (by resource name).
func New(st *store.Store, files blob.Store, targets []Target) *Service {
	s := &Service{st: st, coll: store.NewCollection(st, spec), files: files, targets: map[string]Target{}, now: clock.Now}
	for _, t := range targets {
		s.targets[t.Def.Name] = t
	}
	return s
}

// SetStarter sets what starts the jobs (made after the service, as it
// calls the service back).
func (s *Service) SetStarter(st Starter) { s.starter = st }

// Files is the file store of the jobs.
func (s *Service) Files() blob.Store { return s.files }

// Get reads a job of org of the kind.
func (s *Service) Get(ctx context.Context, org, kind, id string) (*Job, error) {
	j, err := s.coll.Get(ctx, org, id)
	if err != nil {
		return nil, err
	}
	if j.Kind != kind {
		return nil, apperr.ErrNotFound
	}
	return j, nil
}

// List reads a page of org's jobs of the kind, newest first by default.
func (s *Service) List(ctx context.Context, org, kind string, q store.Query) (store.Page[Job], error) {
	q.Where = &store.Where{Lookup: "kind", Value: kind}
	return s.coll.List(ctx, org, q)
}

// target is the resource name's target, or a 400 naming the field.
func (s *Service) target(field, name string) (Target, error) {
	t, ok := s.targets[name]
	if !ok {
		var names []string
		for n := range s.targets {
			names = append(names, n)
		}
		return Target{}, apperr.Invalid(field, "must name a resource: one of %s", strings.Join(sorted(names), ", "))
	}
	return t, nil
}

// decodeTarget reads a job body's resource (what names it, for the
// message of a missing one) and format (def when absent; "" makes it
// required).
func (s *Service) decodeTarget(o *jsonbody.Object, what string, def bulk.Format) (Target, bulk.Format, error) {
	res, err := o.String("resource", jsonbody.Text{Min: 1, Max: 100, Trim: true})
	if err != nil {
		return Target{}, "", err
	}
	if !res.Set {
		return Target{}, "", apperr.Invalid("resource", "is required: %s, such as companies", what)
	}
	t, err := s.target("resource", res.Value)
	if err != nil {
		return Target{}, "", err
	}
	format, err := o.Enum("format", string(bulk.CSV), string(bulk.NDJSON))
	if err != nil {
		return Target{}, "", err
	}
	if !format.Set {
		if def == "" {
			return Target{}, "", apperr.Invalid("format", "is required: csv or ndjson")
		}
		return t, def, nil
	}
	return t, bulk.Format(format.Value), nil
}

// newJob is a job of the kind, created now.
func (s *Service) newJob(kind, prefix string) *Job {
	now := s.now()
	return &Job{ID: ids.New(prefix), Kind: kind, CreatedAt: now, UpdatedAt: now}
}

// save writes j's changes by fn in a version-checked update, and returns
// the job as stored.
func (s *Service) save(ctx context.Context, org, id string, fn func(j *Job) error) (*Job, error) {
	return s.coll.Update(ctx, org, id, func(j *Job) error {
		if err := fn(j); err != nil {
			return err
		}
		j.UpdatedAt = s.now()
		return nil
	})
}

// pending is the item marking an unfinished job, so that a runner that
// starts finds the jobs a crash left (Pending): an item of a work queue
// of every organization (store.QueueKey).
func pendingKey(org, id string) store.Key { return store.QueueKey(typePending, org+"#"+id) }

type pendingDoc struct {
	Org string `json:"org"`
	ID  string `json:"id"`
}

// Pending lists the jobs queued or running, of every organization: what
// a runner that starts resumes.
func (s *Service) Pending(ctx context.Context) ([]pendingDoc, error) {
	var out []pendingDoc
	for _, pk := range store.QueuePartitions(typePending) {
		_, err := s.st.ReadRange(ctx, pk, "", "\xff", func(doc json.RawMessage) (bool, error) {
			var p pendingDoc
			if err := json.Unmarshal(doc, &p); err != nil {
				return false, err
			}
			out = append(out, p)
			return true, nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// StuckAfter is a job's bound: an unfinished job unchanged for longer is
// stuck (Stuck). A running job checkpoints every chunk (seconds), and a
// queued one waits for a slot a minute at a time, so half an hour without
// a change means no runner works on it.
const StuckAfter = 30 * time.Minute

// Stuck counts the jobs, of every organization, queued or running and
// unchanged for longer than StuckAfter: what the sweep reports as the
// JobsStuck metric, which an alarm watches.
func (s *Service) Stuck(ctx context.Context) (int, error) {
	pending, err := s.Pending(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pending {
		j, err := s.coll.Get(ctx, p.Org, p.ID)
		if errors.Is(err, apperr.ErrNotFound) {
			continue // finished meanwhile, its marker left for the runner
		}
		if err != nil {
			return n, err
		}
		if !j.Done() && s.now().Sub(j.UpdatedAt.Time) > StuckAfter {
			n++
		}
	}
	return n, nil
}

// Fail ends a job as failed with msg (the state machine's catch, a
// runner out of attempts); a job already ended stays as it is.
func (s *Service) Fail(ctx context.Context, org, id, msg string) error {
	_, err := s.save(ctx, org, id, func(j *Job) error {
		if j.Done() {
			return store.ErrUnchanged
		}
		s.end(j, StatusFailed)
		j.Error = msg
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrUnchanged) {
		return err
	}
	if err := s.release(ctx, org, id); err != nil {
		return err
	}
	return s.unmarkPending(ctx, org, id)
}

// end marks j ended with status.
func (s *Service) end(j *Job, status string) {
	now := s.now()
	j.Status, j.CompletedAt = status, &now
}

func (s *Service) markPending(ctx context.Context, org, id string) error {
	k := pendingKey(org, id)
	op, err := s.st.PutOp(store.Item{PK: k.PK, SK: k.SK, Type: typePending, Doc: pendingDoc{Org: org, ID: id}})
	if err != nil {
		return err
	}
	return s.st.Transact(ctx, nil, op)
}

func (s *Service) unmarkPending(ctx context.Context, org, id string) error {
	k := pendingKey(org, id)
	err := s.st.Delete(ctx, k.PK, k.SK)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil
	}
	return err
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
