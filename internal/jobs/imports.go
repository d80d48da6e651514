package jobs

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
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

// MaxMapping is the most columns an import's mapping names.
const MaxMapping = 500

// DefaultConfidence is the confidence of the enrichment candidates an
// import adds when its request does not say (that of a workflow's).
const DefaultConfidence = 100

// DecodeImport reads POST /v1/imports's body into a job awaiting its
// upload: {resource, format, mode, match, mapping, dryRun, keepIds,
// confidence}.
func (s *Service) DecodeImport(body []byte) (*Job, error) {
	o, err := jsonbody.ParseObject(body, "resource", "format", "mode", "match", "mapping", "dryRun", "keepIds", "confidence")
	if err != nil {
		return nil, err
	}
	t, format, err := s.decodeTarget(o, "the resource the rows are records of", "")
	if err != nil {
		return nil, err
	}
	mode, err := o.Enum("mode", ModeCreate, ModeUpsert, ModeUpdate)
	if err != nil {
		return nil, err
	}
	if !mode.Set {
		mode.Value = ModeCreate
	}
	match, err := o.String("match", jsonbody.Text{Min: 1, Max: 100, Trim: true})
	if err != nil {
		return nil, err
	}
	dry, err := o.Bool("dryRun")
	if err != nil {
		return nil, err
	}
	keep, err := o.Bool("keepIds")
	if err != nil {
		return nil, err
	}
	conf, err := o.Number("confidence")
	if err != nil {
		return nil, err
	}
	j := s.newJob(KindImport, "imp")
	j.Resource, j.Format, j.Mode, j.Match, j.DryRun, j.KeepIDs = t.Def.Name, format, mode.Value, match.Value, dry.Value, keep.Value
	if conf.Set {
		c, perr := conf.Value.Float64()
		if perr != nil || c < 0 || c > 100 {
			return nil, apperr.Invalid("confidence", "must be a number from 0 to 100: the confidence of the enrichment candidates the import adds")
		}
		j.Confidence = &c
	}
	if conf.Set && len(t.Def.ImportFields(resource.ImportCandidate)) == 0 {
		return nil, apperr.Invalid("confidence", "applies to resources whose fields are reconciled from candidates (companies); %s have none", t.Def.Name)
	}
	if j.KeepIDs && j.Mode != ModeCreate {
		return nil, apperr.Invalid("keepIds", "applies to mode create only: an upsert or update keeps the ids of the records it writes")
	}
	switch j.Mode {
	case ModeCreate:
		if match.Set {
			return nil, apperr.Invalid("match", "does not apply to mode create")
		}
	case ModeUpsert:
		if t.Upsert == nil || len(t.Def.UniqueFields()) == 0 {
			return nil, apperr.Invalid("mode", "upsert needs a unique field to match by, and %s have none: use create or update", t.Def.Name)
		}
		if !match.Set {
			return nil, apperr.Invalid("match", "is required for mode upsert: one of %s", strings.Join(t.Def.UniqueFields(), ", "))
		}
		if _, err := t.Def.MatchField("match", j.Match); err != nil {
			return nil, apperr.Invalid("match", "must name a unique field of %s: %s", t.Def.Name, strings.Join(t.Def.UniqueFields(), ", "))
		}
	case ModeUpdate:
		if !match.Set {
			j.Match = resource.FieldID
		}
		if j.Match != resource.FieldID {
			if _, err := t.Def.MatchField("match", j.Match); err != nil {
				return nil, apperr.Invalid("match", "must be id or a unique field of %s (%s)", t.Def.Name, strings.Join(t.Def.UniqueFields(), ", "))
			}
		}
	}
	if raw, ok := o.Raw("mapping"); ok && string(raw) != "null" {
		m, err := o.FreeObject("mapping")
		if err != nil {
			return nil, err
		}
		if len(m.Value) > MaxMapping {
			return nil, apperr.Invalid("mapping", "names %d columns; at most %d", len(m.Value), MaxMapping)
		}
		j.Mapping = map[string]string{}
		for col, v := range m.Value {
			f, ok := v.(string)
			if !ok {
				return nil, apperr.Invalid("mapping."+col, "must be a field name (a string), or \"\" to skip the column")
			}
			j.Mapping[col] = f
		}
	}
	// The mapping's fields must be fields: checked now, on a header of
	// the mapped columns, rather than when the file arrives.
	if _, err := bulk.NewReader(strings.NewReader(csvHeader(j.Mapping)), s.readOptions(j, t), bulk.Position{}); err != nil && len(j.Mapping) > 0 {
		return nil, apperr.Invalid("mapping", "%s", strings.TrimPrefix(err.Error(), "bulk: "))
	}
	return j, nil
}

// csvHeader is a CSV header of the mapping's columns.
func csvHeader(m map[string]string) string {
	cols := make([]string, 0, len(m))
	for c := range m {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(cols)
	w.Flush()
	return b.String()
}

// readOptions are how an import reads its file.
func (s *Service) readOptions(j *Job, t Target) bulk.Options {
	o := bulk.Options{Format: j.Format, Def: t.Def, Mapping: j.Mapping}
	if j.Mode == ModeUpdate && j.Match == resource.FieldID || j.KeepIDs {
		o.Keep = []string{resource.FieldID}
	}
	return o
}

// confidence is that of the candidates the import adds.
func (j *Job) confidence() float64 {
	if j.Confidence != nil {
		return *j.Confidence
	}
	return DefaultConfidence
}

// CreateImport stores an import awaiting its upload and returns it with
// the URL to PUT the file to.
func (s *Service) CreateImport(ctx context.Context, org string, j *Job) (*Job, string, error) {
	j.Status, j.CreatedBy = StatusAwaitingUpload, store.ActorOf(ctx).Name()
	if err := s.coll.Create(ctx, org, j); err != nil {
		return nil, "", err
	}
	u, err := s.files.UploadURL(ctx, UploadKey(org, j.ID), URLTTL)
	if err != nil {
		return nil, "", fmt.Errorf("upload URL of import %s: %w", j.ID, err)
	}
	return j, u, nil
}

// UploadURL is a fresh upload URL of an import still awaiting its file.
func (s *Service) UploadURL(ctx context.Context, org string, j *Job) (string, error) {
	if j.Status != StatusAwaitingUpload {
		return "", nil
	}
	return s.files.UploadURL(ctx, UploadKey(org, j.ID), URLTTL)
}

// Uploaded queues the import whose file arrived at key (of size bytes)
// and, unless start is false (a state machine started by the upload runs
// it already), starts it. A second report of one upload changes nothing.
func (s *Service) Uploaded(ctx context.Context, key string, size int64, start bool) (*Job, error) {
	org, id := ParseUploadKey(key)
	if org == "" {
		return nil, fmt.Errorf("jobs: %q is not an import's upload", key)
	}
	info, err := s.files.Stat(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("import %s: its upload: %w", id, err)
	}
	j, err := s.save(ctx, org, id, func(j *Job) error {
		if j.Status != StatusAwaitingUpload {
			return store.ErrUnchanged
		}
		j.Status, j.Size, j.UploadVersion = StatusQueued, size, info.Version
		return nil
	})
	if errors.Is(err, store.ErrUnchanged) {
		return s.coll.Get(ctx, org, id)
	}
	if err != nil {
		return nil, err
	}
	if err := s.markPending(ctx, org, id); err != nil {
		return nil, err
	}
	if start && s.starter != nil {
		if err := s.starter.Start(ctx, org, id); err != nil {
			return nil, fmt.Errorf("start import %s: %w", id, err)
		}
	}
	return j, nil
}

// Step runs a job until it ends or until deadline, whichever is first,
// checkpointing as it goes; done says the job has ended. A step of an
// ended job does nothing. Every write of the step is the job's creator's,
// through the job (Job.actor): the state machine's and the Runner's steps
// alike. A job runs while it holds one of its organization's
// MaxRunningJobs slots (limits.go): a step that finds none free waits for
// one (up to queueWait) and, still without one, ends not done, having
// written nothing, to be run again.
func (s *Service) Step(ctx context.Context, org, id string, deadline time.Time) (done bool, err error) {
	j, err := s.coll.Get(ctx, org, id)
	if err != nil {
		return false, err
	}
	ctx = store.WithActor(ctx, j.actor())
	if j.Done() {
		return true, errors.Join(s.release(ctx, org, id), s.unmarkPending(ctx, org, id))
	}
	t, ok := s.targets[j.Resource]
	if !ok {
		return true, s.Fail(ctx, org, id, "the resource "+j.Resource+" no longer exists")
	}
	if j.Status == StatusAwaitingUpload {
		return false, apperr.Conflict("import %s has no file yet", j.ID)
	}
	if ok, err := s.waitSlot(ctx, org, id, deadline); err != nil || !ok {
		return false, err
	}
	if j, err = s.coll.Get(ctx, org, id); err != nil {
		return false, err
	}
	if j.Done() {
		return true, errors.Join(s.release(ctx, org, id), s.unmarkPending(ctx, org, id))
	}
	if j.Kind == KindExport {
		done, err = s.stepExport(ctx, org, j, t)
	} else {
		done, err = s.stepImport(ctx, org, j, t, deadline)
	}
	if done {
		err = errors.Join(err, s.release(context.WithoutCancel(ctx), org, id))
	}
	return done, err
}

// jobFailure is a failure that ends the job (a bad header, a missing
// file), as opposed to one worth another attempt (the table).
type jobFailure struct{ msg string }

func (e *jobFailure) Error() string { return e.msg }

func (s *Service) stepImport(ctx context.Context, org string, j *Job, t Target, deadline time.Time) (bool, error) {
	if j.Status == StatusAwaitingUpload {
		return false, apperr.Conflict("import %s has no file yet", j.ID)
	}
	if j.Status == StatusQueued {
		c, err := s.countRows(ctx, org, j, t)
		var jf *jobFailure
		if errors.As(err, &jf) {
			return true, s.Fail(ctx, org, j.ID, jf.msg)
		}
		if err != nil {
			return false, err
		}
		if err := s.writeDuplicates(ctx, org, j, c.duplicates); err != nil {
			return false, err
		}
		if j, err = s.save(ctx, org, j.ID, func(j *Job) error {
			now := s.now()
			j.Status, j.Total, j.StartedAt = StatusRunning, c.rows, &now
			j.IgnoredColumns, j.Duplicates = c.ignored, int64(len(c.duplicates))
			return nil
		}); err != nil {
			return false, err
		}
	}
	for time.Now().Before(deadline) {
		more, err := s.chunk(ctx, org, j, t)
		var jf *jobFailure
		if errors.As(err, &jf) {
			return true, s.Fail(ctx, org, j.ID, jf.msg)
		}
		if err != nil {
			return false, err
		}
		if j, err = s.coll.Get(ctx, org, j.ID); err != nil {
			return false, err
		}
		if !more {
			return true, s.finishImport(ctx, org, j)
		}
	}
	return false, nil
}

// openUpload opens the file an import reads from offset: the one that
// arrived (its UploadVersion), so that a file put at its key since fails
// the import instead of mixing into it.
func (s *Service) openUpload(ctx context.Context, org string, j *Job, offset int64) (io.ReadCloser, error) {
	r, err := s.files.OpenVersion(ctx, UploadKey(org, j.ID), offset, j.UploadVersion)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return nil, &jobFailure{"the uploaded file is gone"}
	case errors.Is(err, blob.ErrReplaced):
		return nil, &jobFailure{"another file was put at the upload URL after the import's file arrived: " +
			"an import reads the file it started with; create a new import for another file"}
	}
	return r, err
}

// counted is what reading an import's file once found: its rows, the
// columns not read, and the rows that repeat an earlier row's key.
type counted struct {
	rows       int64
	ignored    []bulk.IgnoredColumn
	duplicates []duplicate
}

// countRows reads the whole file once for its number of rows (total),
// checking its header, the columns it does not read and the keys its rows
// repeat (keys).
func (s *Service) countRows(ctx context.Context, org string, j *Job, t Target) (counted, error) {
	var c counted
	r, err := s.openUpload(ctx, org, j, 0)
	if err != nil {
		return c, err
	}
	defer r.Close()
	rd, err := bulk.NewReader(r, s.readOptions(j, t), bulk.Position{})
	if err != nil {
		return c, &jobFailure{"the file cannot be read: " + err.Error()}
	}
	seen := newKeySet(j, t)
	for {
		row, err := rd.Next()
		if err == io.EOF {
			c.ignored = rd.Ignored()
			return c, nil
		} else if err != nil {
			return c, &jobFailure{"the file cannot be read: " + err.Error()}
		}
		c.rows++
		if row.Err == nil {
			if d, ok := seen.add(row); ok {
				c.duplicates = append(c.duplicates, d)
			}
		}
	}
}

// rowResult is what writing one row did.
type rowResult struct {
	row     bulk.Row
	created bool
	err     error
	// unreadable: the row could not become a body (err is its *bulk.RowError).
	unreadable bool
}

// chunk writes the next chunk of rows and checkpoints; more says rows follow.
func (s *Service) chunk(ctx context.Context, org string, j *Job, t Target) (more bool, err error) {
	r, err := s.openUpload(ctx, org, j, j.Position.Offset)
	if err != nil {
		return false, err
	}
	defer r.Close()
	rd, err := bulk.NewReader(r, s.readOptions(j, t), j.Position)
	if err != nil {
		return false, &jobFailure{"the file cannot be read: " + err.Error()}
	}
	size := s.Chunk
	if size <= 0 {
		size = DefaultChunk
	}
	var rows []bulk.Row
	for len(rows) < size {
		row, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, &jobFailure{"the file cannot be read: " + err.Error()}
		}
		rows = append(rows, row)
	}
	pos := rd.Position()
	dups, err := s.readDuplicates(ctx, org, j, pos.Row)
	if err != nil {
		return false, err
	}
	for i := range rows {
		if d, ok := dups[rows[i].Number]; ok && rows[i].Err == nil {
			rows[i].Err = d.err()
		}
	}
	results := s.writeRows(ctx, org, j, t, rows)
	first := j.Position.Row + 1
	var failed []rowResult
	var created, updated int64
	for _, res := range results {
		switch {
		case res.err != nil:
			if !res.unreadable && isTransient(res.err) {
				// The table: the step fails and runs again from the checkpoint.
				return false, res.err
			}
			failed = append(failed, res)
		case res.created:
			created++
		default:
			updated++
		}
	}
	if len(failed) > 0 {
		if err := s.writeErrorPart(ctx, org, j, pos.Header, first, failed); err != nil {
			return false, err
		}
	}
	_, err = s.save(ctx, org, j.ID, func(cur *Job) error {
		if cur.Position.Row != j.Position.Row {
			return apperr.ConcurrentWrite("import %s was checkpointed by another step", j.ID)
		}
		cur.Position = pos
		cur.Processed += int64(len(rows))
		cur.Created += created
		cur.Updated += updated
		cur.Failed += int64(len(failed))
		if len(failed) > 0 && !slices.Contains(cur.ErrorParts, first) {
			cur.ErrorParts = append(cur.ErrorParts, first)
		}
		return nil
	})
	return len(rows) == size && err == nil, err
}

// isTransient reports an error worth running the step again for: the
// table unavailable or a write that raced another, not a row's fault.
func isTransient(err error) bool {
	if errors.Is(err, apperr.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	code, _ := apperr.CodeOf(err)
	return code == "" || code == apperr.CodeInternal
}

// groupRows is the most rows written in one transaction (a company with
// an externalId writes 3 items: 75 of DynamoDB's 100).
const groupRows = 25

// writeRows writes rows with the service's workers, at most its rate: in
// groups, each group's writes in one transaction (writeGroup).
func (s *Service) writeRows(ctx context.Context, org string, j *Job, t Target, rows []bulk.Row) []rowResult {
	workers := s.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	rate := s.RowsPerSecond
	if rate <= 0 {
		rate = DefaultRowsPerSecond
	}
	results := make([]rowResult, len(rows))
	type group struct{ from, to int }
	next := make(chan group)
	var wg sync.WaitGroup
	for range min(workers, max(len(rows), 1)) {
		wg.Go(func() {
			for g := range next {
				copy(results[g.from:g.to], s.writeGroup(ctx, org, j, t, rows[g.from:g.to]))
			}
		})
	}
	start, base := time.Now(), 0
	for from := 0; from < len(rows); from += groupRows {
		to := min(from+groupRows, len(rows))
		// The group's rows count against the creating key's rate limit
		// before they are written, waiting while it refuses them.
		waited, err := s.takeRows(ctx, org, j, to-from)
		if err != nil {
			for i := from; i < len(rows); i++ {
				results[i] = rowResult{row: rows[i], err: err}
			}
			break
		}
		if waited {
			start, base = time.Now(), from // no burst to catch up after a wait
		}
		// A group goes when the rate allows its first row.
		if wait := time.Until(start.Add(time.Duration(float64(from-base) / rate * float64(time.Second)))); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		next <- group{from, to}
	}
	close(next)
	wg.Wait()
	return results
}

// writeGroup writes rows in one transaction: each row's writes are
// collected in a unit (store.Unit), the rows that fail alone (a bad value)
// left out, and the unit committed. A row whose writes would take the unit
// past a transaction's items (a company with many candidates) starts a new
// one, the rows before it committed first. When a commit fails (a unique
// value taken, two rows of one record, a row already written before a
// crash), each of its rows is written alone instead, so that each gets its
// own answer.
func (s *Service) writeGroup(ctx context.Context, org string, j *Job, t Target, rows []bulk.Row) []rowResult {
	results := make([]rowResult, len(rows))
	if j.DryRun || len(rows) == 1 {
		for i, row := range rows {
			results[i] = s.writeRow(ctx, org, j, t, row)
		}
		return results
	}
	u := &store.Unit{}
	var written []int
	commit := func() {
		if err := s.st.Commit(ctx, u); err != nil {
			for _, i := range written {
				results[i] = s.writeRow(ctx, org, j, t, rows[i])
			}
		}
		u, written = &store.Unit{}, nil
	}
	for i, row := range rows {
		results[i] = s.writeRow(store.WithUnit(ctx, u), org, j, t, row)
		if results[i].err == nil && u.Writes() > store.MaxTransactItems && len(written) > 0 {
			u.Discard()
			commit()
			results[i] = s.writeRow(store.WithUnit(ctx, u), org, j, t, row)
		}
		if results[i].err != nil {
			u.Discard()
			continue
		}
		u.End()
		written = append(written, i)
	}
	commit()
	return results
}

// writeRow writes one row as its mode says (a dry run: in a unit that is
// never committed, so every check runs and nothing is written).
func (s *Service) writeRow(ctx context.Context, org string, j *Job, t Target, row bulk.Row) rowResult {
	res := rowResult{row: row}
	if row.Err != nil {
		res.err, res.unreadable = row.Err, true
		return res
	}
	if j.DryRun {
		ctx = store.WithUnit(ctx, &store.Unit{})
	}
	if len(row.Checks) > 0 && !store.InUnit(ctx) {
		// A row whose derived values are checked is written in a unit of
		// its own, committed only when they hold.
		return s.writeRowChecked(ctx, org, j, t, row)
	}
	ctx = resource.WithImport(ctx, resource.ImportJob{ID: j.ID, Confidence: j.confidence()})
	inUnit := store.InUnit(ctx)
	var rec any
	switch j.Mode {
	case ModeCreate:
		id, body, err := s.createTarget(j, t, row)
		if err != nil {
			res.err = err
			return res
		}
		rec, err = t.Create(resource.WithNewID(ctx, id), org, body)
		if err != nil && errors.Is(err, apperr.ErrConflict) && !inUnit {
			if s.madeByRow(ctx, org, j, t, id) {
				err, rec = nil, nil // made by this row before a crash
			}
		}
		res.created, res.err = err == nil, err
	case ModeUpsert:
		var created bool
		var err error
		rec, created, err = t.Upsert(ctx, org, j.Match, row.Body)
		res.created, res.err = created, err
	case ModeUpdate:
		id, body, err := s.updateTarget(ctx, org, j, t, row.Body)
		if err == nil {
			rec, err = t.Update(ctx, org, id, body)
		}
		res.err = err
	}
	if res.err == nil && rec != nil {
		res.err = checkDerived(rec, row.Checks)
	}
	return res
}

// writeRowChecked writes a row with derived values (resource.ImportDerived)
// in a unit of its own, committed only when the written record holds them.
func (s *Service) writeRowChecked(ctx context.Context, org string, j *Job, t Target, row bulk.Row) rowResult {
	u := &store.Unit{}
	res := s.writeRow(store.WithUnit(ctx, u), org, j, t, row)
	if res.err != nil {
		return res
	}
	u.End()
	if err := s.st.Commit(ctx, u); err != nil {
		var ue *store.UnitError
		if errors.As(err, &ue) {
			err = ue.Err
		}
		res.created, res.err = false, err
		if j.Mode == ModeCreate && errors.Is(err, apperr.ErrConflict) {
			if id, _, ierr := s.createTarget(j, t, row); ierr == nil && s.madeByRow(ctx, org, j, t, id) {
				res.created, res.err = true, nil
			}
		}
	}
	return res
}

// createTarget is the id a created row's record gets, and its body: the
// job's and the row's derived id, so that a row written again after a
// crash meets the record it made; or, with keepIds, the file's.
func (s *Service) createTarget(j *Job, t Target, row bulk.Row) (string, []byte, error) {
	if !j.KeepIDs {
		return ids.Derived(t.Def.IDPrefix, j.StartedAt.Time, j.ID+"#"+fmt.Sprint(row.Number)), row.Body, nil
	}
	o, err := jsonbody.ParseObject(row.Body)
	if err != nil {
		return "", nil, err
	}
	id, err := o.String(resource.FieldID, jsonbody.Text{Min: 1, Max: store.MaxIDLength, Trim: true})
	if err != nil {
		return "", nil, err
	}
	if !id.Set {
		return "", nil, apperr.Invalid(resource.FieldID, "is required: keepIds gives each record the id of the file's id column")
	}
	if !ids.Valid(t.Def.IDPrefix, id.Value) {
		return "", nil, apperr.Invalid(resource.FieldID, "%q is not an id of %s (%s_ and 26 base32 characters, as the service makes them)", id.Value, t.Def.Name, t.Def.IDPrefix)
	}
	body, err := withoutField(row.Body, resource.FieldID)
	return id.Value, body, err
}

// madeByRow reports whether the record id, which a create was refused as
// existing, is the one this row made before a crash: a derived id is the
// job's own; a kept id must have been created since the import started.
func (s *Service) madeByRow(ctx context.Context, org string, j *Job, t Target, id string) bool {
	rec, err := t.Get(ctx, org, id)
	if err != nil {
		return false
	}
	if !j.KeepIDs {
		return true
	}
	var meta struct {
		CreatedAt clock.Time `json:"createdAt"`
	}
	b, err := jsonMarshal(rec)
	return err == nil && jsonUnmarshal(b, &meta) == nil && j.StartedAt != nil && !meta.CreatedAt.Before(j.StartedAt.Time)
}

// updateTarget is the id of the record an update row names (its id, or
// its match field's value) and the body to update it with.
func (s *Service) updateTarget(ctx context.Context, org string, j *Job, t Target, body []byte) (string, []byte, error) {
	o, err := jsonbody.ParseObject(body)
	if err != nil {
		return "", nil, err
	}
	if j.Match == resource.FieldID {
		id, err := o.String(resource.FieldID, jsonbody.Text{Min: 1, Max: store.MaxIDLength, Trim: true})
		if err != nil {
			return "", nil, err
		}
		if !id.Set {
			return "", nil, apperr.Invalid(resource.FieldID, "is required: mode update matches records by id")
		}
		rest, err := withoutField(body, resource.FieldID)
		return id.Value, rest, err
	}
	f, err := t.Def.MatchField("match", j.Match)
	if err != nil {
		return "", nil, err
	}
	value, err := resource.MatchValue(body, f)
	if err != nil {
		return "", nil, err
	}
	id, err := t.Owner(ctx, org, f.Name, value)
	if err != nil {
		return "", nil, err
	}
	if id == "" {
		return "", nil, apperr.Invalid(f.Name, "matches no %s: mode update changes existing records only", t.Def.Singular)
	}
	return id, body, nil
}

// writeErrorPart writes the failed rows of the chunk from row first; header
// is the file's (CSV), read at its start.
func (s *Service) writeErrorPart(ctx context.Context, org string, j *Job, header []string, first int64, failed []rowResult) error {
	sort.Slice(failed, func(a, b int) bool { return failed[a].row.Number < failed[b].row.Number })
	var b bytes.Buffer
	ew := bulk.NewErrorWriter(&b, j.Format, header)
	for _, f := range failed {
		if err := ew.Write(f.row, rowMessage(f.err)); err != nil {
			return err
		}
	}
	if err := ew.Close(); err != nil {
		return err
	}
	_, err := s.files.Write(ctx, errorPartKey(org, j.ID, first), &b)
	return err
}

// rowMessage is a failed row's error as the errors file says it.
func rowMessage(err error) string {
	var re *bulk.RowError
	if errors.As(err, &re) {
		if re.Column == "" {
			return re.Message
		}
		return re.Column + ": " + re.Message
	}
	var inv *apperr.InvalidError
	if errors.As(err, &inv) {
		return inv.Error()
	}
	if errors.Is(err, apperr.ErrNotFound) {
		return "not found"
	}
	return err.Error()
}

// finishImport assembles the errors file from its parts and completes
// the job.
func (s *Service) finishImport(ctx context.Context, org string, j *Job) error {
	if len(j.ErrorParts) > 0 {
		if err := s.assembleErrors(ctx, org, j); err != nil {
			return err
		}
	}
	if _, err := s.save(ctx, org, j.ID, func(j *Job) error {
		if j.Done() {
			return store.ErrUnchanged
		}
		s.end(j, StatusCompleted)
		return nil
	}); err != nil && !errors.Is(err, store.ErrUnchanged) {
		return err
	}
	return s.unmarkPending(ctx, org, j.ID)
}

// assembleErrors streams the error parts, in row order, into one CSV
// with one header.
func (s *Service) assembleErrors(ctx context.Context, org string, j *Job) error {
	parts := slices.Clone(j.ErrorParts)
	slices.Sort(parts)
	pr, pw := io.Pipe()
	go func() {
		w := csv.NewWriter(pw)
		for i, first := range parts {
			r, err := s.files.Open(ctx, errorPartKey(org, j.ID, first), 0)
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			cr := csv.NewReader(r)
			cr.FieldsPerRecord = -1
			for n := 0; ; n++ {
				rec, err := cr.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					r.Close()
					pw.CloseWithError(err)
					return
				}
				if n == 0 && i > 0 {
					continue // the header, written once
				}
				w.Write(rec)
			}
			r.Close()
		}
		w.Flush()
		pw.CloseWithError(w.Error())
	}()
	_, err := s.files.Write(ctx, errorsKey(org, j.ID), pr)
	pr.CloseWithError(err)
	return err
}

// ErrorsURL is the download URL of a completed import's errors file, ""
// when no row failed.
func (s *Service) ErrorsURL(ctx context.Context, org string, j *Job) (string, error) {
	if j.Status != StatusCompleted || j.Failed == 0 {
		return "", nil
	}
	return s.files.DownloadURL(ctx, errorsKey(org, j.ID), URLTTL, j.ID+"-errors.csv", "text/csv; charset=utf-8")
}

// withoutField is the JSON object body without name.
func withoutField(body []byte, name string) ([]byte, error) {
	var m map[string]rawJSON
	if err := jsonUnmarshal(body, &m); err != nil {
		return nil, err
	}
	delete(m, name)
	return jsonMarshal(m)
}
