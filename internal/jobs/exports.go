package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/bulk"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

type rawJSON = json.RawMessage

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
func jsonMarshal(v any) ([]byte, error)   { return json.Marshal(v) }

// exportPage is the records an export reads per query.
const exportPage = 100

// MaxFilterValues is the most values one filter field lists.
const MaxFilterValues = 100

// DecodeExport reads POST /v1/exports's body into a queued job:
// {resource, format, filter, fields, escapeFormulas}. filter maps scalar
// fields to a value or a list of values (equal to one of them); fields
// names the columns; escapeFormulas false writes a CSV's formula-like text
// cells raw (bulk.Writer.EscapeFormulas).
func (s *Service) DecodeExport(body []byte) (*Job, error) {
	o, err := jsonbody.ParseObject(body, "resource", "format", "filter", "fields", "escapeFormulas")
	if err != nil {
		return nil, err
	}
	t, format, err := s.decodeTarget(o, "the resource to export", bulk.CSV)
	if err != nil {
		return nil, err
	}
	fields, err := o.Strings("fields", jsonbody.Text{Min: 1, Max: 100, Trim: true}, 200)
	if err != nil {
		return nil, err
	}
	if _, err := bulk.Columns(t.Def, fields.Value); err != nil {
		return nil, apperr.Invalid("fields", "%s", err.Error())
	}
	escape, err := o.Bool("escapeFormulas")
	if err != nil {
		return nil, err
	}
	j := s.newJob(KindExport, "exp")
	j.Resource, j.Format, j.Fields, j.Status = t.Def.Name, format, fields.Value, StatusQueued
	j.RawFormulas = escape.Set && !escape.Null && !escape.Value
	if escape.Set && !escape.Null && format != bulk.CSV {
		return nil, apperr.Invalid("escapeFormulas", "applies to csv exports only: an ndjson file holds values as JSON, which no spreadsheet evaluates")
	}
	if raw, ok := o.Raw("filter"); ok && string(raw) != "null" {
		m, err := o.FreeObject("filter")
		if err != nil {
			return nil, err
		}
		for name, v := range m.Value {
			f, ok := t.Def.Field(name)
			if !ok || !scalar(f.Kind) {
				return nil, apperr.Invalid("filter."+name, "is not a field of %s one can filter by (a field holding one value)", t.Def.Name)
			}
			list, isList := v.([]any)
			if !isList {
				list = []any{v}
			}
			if len(list) == 0 || len(list) > MaxFilterValues {
				return nil, apperr.Invalid("filter."+name, "lists %d values; 1 to %d", len(list), MaxFilterValues)
			}
			for _, x := range list {
				switch x.(type) {
				case string, bool, json.Number, float64, nil:
				default:
					return nil, apperr.Invalid("filter."+name, "must be a value or a list of values (strings, numbers, booleans, null)")
				}
			}
		}
		j.Filter = m.Value
	}
	return j, nil
}

// scalar reports a kind of field holding one value.
func scalar(k resource.Kind) bool {
	switch k {
	case resource.Strings, resource.Refs, resource.Object, resource.Struct, resource.Structs:
		return false
	}
	return true
}

// CreateExport stores a queued export and starts it.
func (s *Service) CreateExport(ctx context.Context, org string, j *Job) (*Job, error) {
	j.CreatedBy = store.ActorOf(ctx).Name()
	if err := s.coll.Create(ctx, org, j); err != nil {
		return nil, err
	}
	if err := s.markPending(ctx, org, j.ID); err != nil {
		return nil, err
	}
	if s.starter != nil {
		if err := s.starter.Start(ctx, org, j.ID); err != nil {
			if awsenv.Refused(err) {
				// Step Functions refused the start for capacity: nothing
				// runs the export, so take it back, and the request's retry
				// (503, Retry-After) leaves one export. (After a deadline
				// it may have started: it is kept.)
				if undo := errors.Join(s.coll.Delete(ctx, org, j.ID), s.unmarkPending(ctx, org, j.ID)); undo != nil {
					slog.ErrorContext(ctx, "take back an export that could not be started", "jobId", j.ID, "err", undo)
				}
			}
			return nil, fmt.Errorf("start export %s: %w", j.ID, err)
		}
	}
	return j, nil
}

// DownloadURL is the download URL of a completed export, "" before.
func (s *Service) DownloadURL(ctx context.Context, org string, j *Job) (string, error) {
	if j.Status != StatusCompleted {
		return "", nil
	}
	return s.files.DownloadURL(ctx, exportKey(org, j.ID, j.Format), URLTTL, j.Resource+"-"+j.ID+j.Format.Ext(), j.Format.ContentType())
}

// stepExport writes the whole export in one step: the records in id
// order, a page at a time, streamed to the file store (never the whole
// file in memory). Run again after a failure, it writes the file again
// from the start.
func (s *Service) stepExport(ctx context.Context, org string, j *Job, t Target) (bool, error) {
	j, err := s.save(ctx, org, j.ID, func(j *Job) error {
		now := s.now()
		j.Status, j.StartedAt = StatusRunning, &now
		return nil
	})
	if err != nil {
		return false, err
	}
	cols, err := bulk.Columns(t.Def, j.Fields)
	if err != nil {
		return true, s.Fail(ctx, org, j.ID, err.Error())
	}
	pr, pw := io.Pipe()
	var rows int64
	go func() {
		w := bulk.NewWriter(pw, j.Format, cols)
		w.EscapeFormulas(!j.RawFormulas)
		q := store.Query{Limit: exportPage}
		for {
			page, err := t.List(ctx, org, q)
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			for _, rec := range page.Items {
				doc := []byte(rec.EncodedJSON())
				if ok, err := matches(doc, j.Filter, t.Def); err != nil {
					pw.CloseWithError(err)
					return
				} else if !ok {
					continue
				}
				if err := w.Write(doc); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		err := w.Close()
		rows = w.Rows()
		pw.CloseWithError(err)
	}()
	_, err = s.files.Write(ctx, exportKey(org, j.ID, j.Format), pr)
	pr.CloseWithError(err)
	if err != nil {
		return false, err
	}
	if _, err := s.save(ctx, org, j.ID, func(cur *Job) error {
		cur.Rows = rows
		s.end(cur, StatusCompleted)
		return nil
	}); err != nil {
		return false, err
	}
	return true, s.unmarkPending(ctx, org, j.ID)
}

// matches reports whether a record (its JSON) meets filter: each field
// equal to its value, or to one of its list's (text compared without
// regard to case).
func matches(doc []byte, filter map[string]any, d *resource.Def) (bool, error) {
	if len(filter) == 0 {
		return true, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var rec map[string]any
	if err := dec.Decode(&rec); err != nil {
		return false, fmt.Errorf("export: a stored record is not JSON: %w", err)
	}
	for name, want := range filter {
		list, ok := want.([]any)
		if !ok {
			list = []any{want}
		}
		got := rec[name]
		hit := false
		for _, w := range list {
			if sameValue(got, w) {
				hit = true
				break
			}
		}
		if !hit {
			return false, nil
		}
	}
	return true, nil
}

// sameValue compares a record's value with a filter's.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		g, ok := got.(string)
		return ok && strings.EqualFold(g, w)
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	}
	gf, ok1 := resource.NumberOf(got)
	wf, ok2 := resource.NumberOf(want)
	return ok1 && ok2 && gf == wf
}
