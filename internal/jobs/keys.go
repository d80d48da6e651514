package jobs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/bulk"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// A file names each record once: a row whose key (the value of the field
// the mode matches records by, or of a unique field, or its kept id) is
// an earlier row's fails, in every mode, rather than write that record
// again. The keys are found when the file is counted, before any row is
// written, and the duplicate rows are kept in a file of the import's
// (duplicatesKey) that each step reads.

// duplicate is a row that repeats the key of an earlier row.
type duplicate struct {
	Row   int64  `json:"row"`
	First int64  `json:"first"`
	Field string `json:"field"`
	Value string `json:"value"`
}

func (d duplicate) err() error {
	return apperr.Invalid(d.Field, "%q is also the %s of row %d: a file names each record once (fix one of the rows and import it again)",
		truncate(d.Value, 50), d.Field, d.First)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// duplicatesKey is where the duplicate rows of an import are kept.
func duplicatesKey(org, id string) string { return "imports/" + org + "/" + id + "/duplicates.ndjson" }

// keySet is the keys of the rows read so far: a 64-bit hash of each, with
// the row that holds it (8 + 8 bytes a row: 100,000 rows hold under 4 MB).
type keySet struct {
	fields []resource.Field // the fields whose values are keys
	id     bool             // the id column is a key (keepIds, or mode update by id)
	seen   map[uint64]int64
}

// newKeySet is the key set of an import: its mode's match field (upsert,
// update), else every unique field (create); and the id when rows name it.
func newKeySet(j *Job, t Target) *keySet {
	k := &keySet{seen: map[uint64]int64{}}
	switch {
	case j.Mode == ModeUpdate && j.Match == resource.FieldID:
		k.id = true
	case j.Mode == ModeUpsert || j.Mode == ModeUpdate:
		if f, err := t.Def.MatchField("match", j.Match); err == nil {
			k.fields = []resource.Field{f}
		}
	default:
		for _, name := range t.Def.UniqueFields() {
			if f, ok := t.Def.Field(name); ok {
				k.fields = append(k.fields, f)
			}
		}
		k.id = j.KeepIDs
	}
	return k
}

// add records the keys of row; a key an earlier row holds makes it a
// duplicate of that row. A row whose key cannot be read (a bad value)
// has none: it fails on its own when written.
func (k *keySet) add(row bulk.Row) (duplicate, bool) {
	var dup duplicate
	found := false
	try := func(field, value string) {
		h := fnv.New64a()
		h.Write([]byte(field))
		h.Write([]byte{0})
		h.Write([]byte(value))
		sum := h.Sum64()
		if first, ok := k.seen[sum]; ok {
			if !found {
				dup, found = duplicate{Row: row.Number, First: first, Field: field, Value: value}, true
			}
			return
		}
		k.seen[sum] = row.Number
	}
	if k.id {
		if o, err := jsonbody.ParseObject(row.Body); err == nil {
			if id, err := o.String(resource.FieldID, jsonbody.Text{Trim: true}); err == nil && id.Value != "" {
				try(resource.FieldID, id.Value)
			}
		}
	}
	for _, f := range k.fields {
		if v, err := resource.MatchValue(row.Body, f); err == nil {
			try(f.Name, v)
		}
	}
	return dup, found
}

// writeDuplicates keeps the duplicate rows of an import for its steps.
func (s *Service) writeDuplicates(ctx context.Context, org string, j *Job, dups []duplicate) error {
	if len(dups) == 0 {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range dups {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	_, err := s.files.Write(ctx, duplicatesKey(org, j.ID), &b)
	return err
}

// readDuplicates are the duplicate rows of an import up to row last, by
// row, from the first after the import's checkpoint: the file is in row
// order, so a chunk reads what comes before it and stops past its end.
func (s *Service) readDuplicates(ctx context.Context, org string, j *Job, last int64) (map[int64]duplicate, error) {
	if j.Duplicates == 0 {
		return nil, nil
	}
	r, err := s.files.Open(ctx, duplicatesKey(org, j.ID), 0)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, &jobFailure{"the import's list of repeated keys is gone"}
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := map[int64]duplicate{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var d duplicate
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("import %s: repeated keys: %w", j.ID, err)
		}
		if d.Row > last {
			break
		}
		if d.Row > j.Position.Row {
			out[d.Row] = d
		}
	}
	return out, sc.Err()
}

// checkDerived checks that the written record rec holds the row's values
// of derived fields (resource.ImportDerived): a value the service would
// not derive fails the row, whose writes are then left out.
func checkDerived(rec any, checks map[string]json.RawMessage) error {
	if len(checks) == 0 {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	var written map[string]any
	if err := json.Unmarshal(b, &written); err != nil {
		return err
	}
	for path, raw := range checks {
		var want any
		if err := json.Unmarshal(raw, &want); err != nil {
			return apperr.Invalid(path, "is not a JSON value")
		}
		var got any = written
		for _, name := range strings.Split(path, ".") {
			m, _ := got.(map[string]any)
			got = m[name]
		}
		if !reflect.DeepEqual(got, want) {
			shown, _ := json.Marshal(got)
			return apperr.Invalid(path, "is %s in the file, and the service derives %s from the record's other fields: "+
				"it is read-only, so leave the cell empty or as the service derives it", raw, shown)
		}
	}
	return nil
}
