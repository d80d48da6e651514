package apitest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// Sample bodies come from the declarations alone: each writable field gets
// a valid value of its Kind (or its Example), referenced records are
// created first through the API. The contract suite and the performance
// report's every-endpoint table use them.

// sampleSeq makes every generated value different from every other one,
// so unique fields get unique values and two samples differ field by field.
var sampleSeq atomic.Int64

// NextSeq is a number no earlier call returned.
func NextSeq() int64 { return sampleSeq.Add(1) }

// Sample returns a create body of def for c's organization: every
// writable field (full) or only the required ones, each with a valid value.
func Sample(t testing.TB, c *Client, def *resource.Def, full bool) map[string]any {
	t.Helper()
	return SampleFields(t, c, def.Fields, full)
}

// SampleFields is a valid value of each of fields (the writable ones;
// only the required ones unless full).
func SampleFields(t testing.TB, c *Client, fields []resource.Field, full bool) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, f := range fields {
		if f.ReadOnly || (!full && !f.Required) {
			continue
		}
		out[f.Name] = SampleValue(t, c, f, out)
	}
	return out
}

// SampleValue is a valid value of f; siblings are the fields of the same
// object decided so far (a Ref's TargetBy field comes before it).
func SampleValue(t testing.TB, c *Client, f resource.Field, siblings map[string]any) any {
	t.Helper()
	if f.Example != nil {
		return JSONCopy(t, f.Example)
	}
	n := NextSeq()
	switch f.Kind {
	case resource.String, resource.Text:
		return sampleText(f, n)
	case resource.Enum:
		return f.Values[0]
	case resource.URL:
		return fmt.Sprintf("https://example.com/%s/%d", f.Name, n)
	case resource.Email:
		return fmt.Sprintf("user%d@example.com", n)
	case resource.Date:
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(n)).Format(time.DateOnly)
	case resource.DateTime:
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format("2006-01-02T15:04:05.000Z")
	case resource.Int, resource.Number:
		lo, hi := 0.0, 1e6
		if f.Min != nil {
			lo = *f.Min
		}
		if f.Max != nil {
			hi = *f.Max
		}
		v := lo + float64(n%int64(hi-lo))
		if f.Kind == resource.Number && v+0.5 <= hi {
			v += 0.5
		}
		return v
	case resource.Bool:
		return true
	case resource.Strings:
		return []any{sampleText(f, n)}
	case resource.Object:
		return map[string]any{"key": fmt.Sprintf("value %d", n), "nested": map[string]any{"n": float64(n)}}
	case resource.Ref:
		return CreateTarget(t, c, refTarget(f, siblings))
	case resource.Refs:
		return []any{CreateTarget(t, c, f.Target)}
	case resource.Struct:
		return SampleFields(t, c, f.Fields, true)
	case resource.Structs:
		return []any{SampleFields(t, c, f.Fields, true)}
	}
	t.Fatalf("field %s: the sample generator does not know kind %v", f.Name, f.Kind)
	return nil
}

// refTarget is the resource a Ref names: its Target, or the one its
// TargetBy sibling selects (the sibling's first value when not decided).
func refTarget(f resource.Field, siblings map[string]any) string {
	if f.TargetBy == "" {
		return f.Target
	}
	kind, _ := siblings[f.TargetBy].(string)
	return f.Targets[kind]
}

func sampleText(f resource.Field, n int64) string {
	s := fmt.Sprintf("%s %d", f.Name, n)
	limit := f.MaxLen
	if limit == 0 {
		limit = 200
	}
	if len(s) > limit {
		s = fmt.Sprint(n)
		s = s[max(0, len(s)-limit):]
	}
	return s
}

// CreateTarget creates a record of the named resource in c's organization
// (its required fields only) and returns its id.
func CreateTarget(t testing.TB, c *Client, name string) string {
	t.Helper()
	if name == resources.Companies {
		return idOf(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprintf("Company %d", NextSeq())}).Want(t, 201).Object(t))
	}
	i := slices.IndexFunc(resources.All(), func(d *resource.Def) bool { return d.Name == name })
	if i < 0 {
		t.Fatalf("a reference to %q, which is no declared resource", name)
	}
	def := resources.All()[i]
	return idOf(t, c.Do("POST", "/v1/"+def.Name, Sample(t, c, def, false)).Want(t, 201).Object(t))
}

// idOf is the id of a record.
func idOf(t testing.TB, rec map[string]any) string {
	t.Helper()
	id, ok := rec["id"].(string)
	if !ok || id == "" {
		t.Fatalf("record has no id: %v", rec)
	}
	return id
}

// JSONCopy is a deep copy of v through JSON.
func JSONCopy(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
