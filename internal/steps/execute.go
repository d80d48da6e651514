package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// Companies is what the company-writing steps need; implemented elsewhere (package companies) over the real store.
type Companies interface {
	// Upsert finds the organization's company matching fields' externalId, website or canonicalName (first that matches, in that order),
	// and creates it (origin "workflow") or applies fields as a partial update. With dryRun nothing is written and the result says what would happen.
	Upsert(ctx context.Context, org string, fields map[string]any, dryRun bool) (UpsertResult, error)
	// AddTags adds tags (deduplicated, order kept) to the company; with dryRun nothing is written.
	AddTags(ctx context.Context, org, companyID string, tags []string, dryRun bool) (UpsertResult, error)
}

// Metrics is what the writeMetricPoints step needs; implemented elsewhere
// (package runs, over package metrics).
type Metrics interface {
	// WritePoints writes the points of body ({"points": [...]}, the body
	// of POST /v1/data/metric-points) for org, in one transaction, and
	// returns them as written; with dryRun it checks them, writes
	// nothing, and returns them without ids.
	WritePoints(ctx context.Context, org string, body map[string]any, dryRun bool) ([]any, error)
}

// Enrichment is what the addEnrichment step needs; implemented elsewhere
// (package runs, over package enrichment).
type Enrichment interface {
	// AddValues writes candidate values (the "values" of the body of POST
	// /v1/enrichments/resources/{resourceType}/{resourceId}) of a record of
	// org and returns them as written; with dryRun it checks them, writes
	// nothing, and returns them without ids.
	AddValues(ctx context.Context, org, resourceType, resourceID string, values any, dryRun bool) ([]any, error)
}

type runIDKey struct{}

// WithRunID gives the steps executed with ctx the id of their run.
func WithRunID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runIDKey{}, id)
}

// RunID is the id of the run executing, "" when unknown.
func RunID(ctx context.Context) string { id, _ := ctx.Value(runIDKey{}).(string); return id }

// UpsertResult is the step-facing result of a company write.
//
// In a dry run the executor reports "would create" when Created is true or
// WouldCreate is non-nil, and otherwise "would update" Company with WouldUpdate
// (which may be empty when nothing would change).
type UpsertResult struct {
	Company     any            // the company record after the write (in a dry run, the existing record, or the one it would create with a "dry_" id)
	Created     bool           // the write created the company (or, in a dry run, would create it)
	WouldCreate map[string]any // dry run only: fields that would be created
	WouldUpdate map[string]any // dry run only: fields that would change
}

// RunError is the failure of a run: the message and the id of the step that failed.
type RunError struct {
	Message string `json:"message"`
	Step    string `json:"step"`
}

// Result of executing a workflow's steps.
type Result struct {
	// Output is the output of the last step; with no steps, the run input
	// itself ({} when input is nil). It is nil when the run failed.
	Output map[string]any
	// Error is non-nil when the run failed.
	Error *RunError
}

// Executor runs steps. Org scopes every company operation.
type Executor struct {
	Companies Companies
	Metrics   Metrics
	// Enrichment serves the addEnrichment steps.
	Enrichment Enrichment
}

// Execute runs steps in order against the run context {"input": input,
// "steps": {<id>: <output>}}. A failing step ends the run with Result.Error
// set; the returned error is reserved for the run being interrupted (context
// cancelled or expired) and for programming errors such as unencodable input
// or a company step without Companies, so the caller can retry those rather
// than record a failed run.
func (e Executor) Execute(ctx context.Context, org string, steps []Step, input map[string]any, dryRun bool) (Result, error) {
	// A JSON round trip gives the paths plain JSON values to walk and keeps
	// the run from ever mutating the caller's input.
	plainInput, err := plainObject(input)
	if err != nil {
		return Result{}, fmt.Errorf("steps: run input: %w", err)
	}
	outputs := map[string]any{}
	runContext := map[string]any{"input": plainInput, "steps": outputs}

	output := plainInput
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("steps: run interrupted before step %q: %w", step.ID, err)
		}
		out, err := e.runStep(ctx, org, step, runContext, dryRun)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil || errors.Is(err, context.Canceled) {
				return Result{}, fmt.Errorf("steps: run interrupted in step %q: %w", step.ID, err)
			}
			var failed *failError
			if errors.As(err, &failed) {
				return Result{Error: &RunError{Message: failed.message, Step: step.ID}}, nil
			}
			var bug *programmingError
			if errors.As(err, &bug) {
				return Result{}, bug.err
			}
			return Result{Error: &RunError{Message: err.Error(), Step: step.ID}}, nil
		}
		outputs[step.ID] = out
		output = out
	}
	return Result{Output: output}, nil
}

// failError is how a fail step ends the run with exactly its message.
type failError struct{ message string }

func (f *failError) Error() string { return f.message }

// programmingError marks a step error that is the caller's bug, not the workflow's.
type programmingError struct{ err error }

func (p *programmingError) Error() string { return p.err.Error() }

// runStep performs the step and bounds its output (MaxOutputBytes,
// MaxOutputDepth). Without the bound, a few steps that each copy the whole
// run context ("x.$": "$") would double its size step after step; with it
// the context stays below (steps+1) times the limit, and the run's output
// always fits its record and decodes again.
func (e Executor) runStep(ctx context.Context, org string, step Step, runContext map[string]any, dryRun bool) (map[string]any, error) {
	out, err := e.perform(ctx, org, step, runContext, dryRun)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("step %q: encoding output: %w", step.ID, err)
	}
	if len(b) > MaxOutputBytes {
		return nil, fmt.Errorf("step %q: the output is %d bytes of JSON, more than the %s a step may output", step.ID, len(b), jsonbody.KiB(MaxOutputBytes))
	}
	if jsonbody.Depth(b, MaxOutputDepth) > MaxOutputDepth {
		return nil, fmt.Errorf("step %q: the output is nested deeper than %d levels, the most a step may output", step.ID, MaxOutputDepth)
	}
	return out, nil
}

// perform resolves the step's parameters and performs it. It returns a
// *failError for a fail step, and any other error for a step that failed.
func (e Executor) perform(ctx context.Context, org string, step Step, runContext map[string]any, dryRun bool) (map[string]any, error) {
	resolved, err := resolveParameters("with", step.With, runContext)
	if err != nil {
		return nil, fmt.Errorf("step %q: %w", step.ID, err)
	}
	with, _ := resolved.(map[string]any) // an object resolves to an object, even a nil one

	switch step.Type {
	case TypeSet:
		return with, nil
	case TypeFail:
		msg, ok := with["message"].(string)
		if !ok {
			return nil, fmt.Errorf("step %q: message must be a string, got %s", step.ID, jsonType(with["message"]))
		}
		return nil, &failError{message: msg}
	case TypeUpsertCompany:
		if e.Companies == nil {
			return nil, &programmingError{errors.New("steps: Executor.Companies is nil")}
		}
		res, err := e.Companies.Upsert(ctx, org, with, dryRun)
		if err != nil {
			return nil, err
		}
		return upsertOutput(res, dryRun)
	case TypeTagCompany:
		if e.Companies == nil {
			return nil, &programmingError{errors.New("steps: Executor.Companies is nil")}
		}
		companyID, ok := with["companyId"].(string)
		if !ok || companyID == "" {
			return nil, fmt.Errorf("step %q: companyId must be a non-empty string, got %s", step.ID, describe(with["companyId"]))
		}
		tags, err := tagList("tags", with["tags"])
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", step.ID, err)
		}
		res, err := e.Companies.AddTags(ctx, org, companyID, tags, dryRun)
		if err != nil {
			return nil, err
		}
		return tagOutput(res, dryRun)
	case TypeAddEnrichment:
		if e.Enrichment == nil {
			return nil, &programmingError{errors.New("steps: Executor.Enrichment is nil")}
		}
		typ, _ := with["resourceType"].(string)
		if typ == "" {
			typ = "companies"
		}
		id, ok := with["resourceId"].(string)
		if !ok || id == "" {
			return nil, fmt.Errorf("step %q: resourceId must be a non-empty string, got %s", step.ID, describe(with["resourceId"]))
		}
		values, err := e.Enrichment.AddValues(ctx, org, typ, id, with["values"], dryRun)
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", step.ID, err)
		}
		if dryRun {
			return plainOutput(map[string]any{"dryRun": true, "wouldAdd": values})
		}
		return plainOutput(map[string]any{"values": values})
	case TypeWriteMetricPoints:
		if e.Metrics == nil {
			return nil, &programmingError{errors.New("steps: Executor.Metrics is nil")}
		}
		body, err := metricPointsBody(with)
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", step.ID, err)
		}
		points, err := e.Metrics.WritePoints(ctx, org, body, dryRun)
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", step.ID, err)
		}
		if dryRun {
			return plainOutput(map[string]any{"dryRun": true, "wouldWrite": points})
		}
		return plainOutput(map[string]any{"points": points})
	default:
		return nil, fmt.Errorf("step %q: unknown type %q", step.ID, step.Type)
	}
}

// metricPointDefaults are the keys of a writeMetricPoints step's with that
// every point lacking them takes; resourceType and resourceId together make
// a resource ("companies" and an id a path resolved make "companies:<id>").
var metricPointDefaults = []string{"resource", "key", "source", "dealId", "unit", "currency"}

// metricPointsBody is the write body of a writeMetricPoints step: its
// points, each completed with the step's defaults.
func metricPointsBody(with map[string]any) (map[string]any, error) {
	list, ok := with["points"].([]any)
	if !ok {
		return nil, fmt.Errorf("points must be an array of metric points, got %s", jsonType(with["points"]))
	}
	defaults := map[string]any{}
	for _, k := range metricPointDefaults {
		if v, ok := with[k]; ok {
			defaults[k] = v
		}
	}
	typ, hasType := with["resourceType"]
	id, hasID := with["resourceId"]
	if hasType != hasID {
		return nil, errors.New("resourceType and resourceId go together: both or neither")
	}
	if hasType {
		if _, both := defaults["resource"]; both {
			return nil, errors.New("give resource or resourceType and resourceId, not both")
		}
		t, ok1 := typ.(string)
		i, ok2 := id.(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("resourceType and resourceId must be strings, got %s and %s", jsonType(typ), jsonType(id))
		}
		defaults["resource"] = t + ":" + i
	}
	points := make([]any, len(list))
	for i, p := range list {
		m, ok := p.(map[string]any)
		if !ok {
			points[i] = p // the write names it
			continue
		}
		out := make(map[string]any, len(m)+len(defaults))
		for k, v := range defaults {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		points[i] = out
	}
	return map[string]any{"points": points}, nil
}

func upsertOutput(res UpsertResult, dryRun bool) (map[string]any, error) {
	switch {
	case !dryRun:
		return plainOutput(map[string]any{"company": res.Company, "created": res.Created})
	case res.Created || res.WouldCreate != nil:
		out := map[string]any{"dryRun": true, "wouldCreate": objectOrEmpty(res.WouldCreate)}
		if res.Company != nil {
			// The record it would create, under a placeholder id, so later
			// steps of the dry run can address it.
			out["company"] = res.Company
		}
		return plainOutput(out)
	default:
		return plainOutput(map[string]any{"dryRun": true, "wouldUpdate": objectOrEmpty(res.WouldUpdate), "company": res.Company})
	}
}

func tagOutput(res UpsertResult, dryRun bool) (map[string]any, error) {
	if !dryRun {
		return plainOutput(map[string]any{"company": res.Company})
	}
	return plainOutput(map[string]any{"dryRun": true, "wouldUpdate": objectOrEmpty(res.WouldUpdate), "company": res.Company})
}

func objectOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// plainOutput turns typed company records into plain JSON values, so later
// steps can address them with JSONPath (e.g. "$.steps.up.company.id").
func plainOutput(out map[string]any) (map[string]any, error) {
	plain, err := plainObject(out)
	if err != nil {
		return nil, fmt.Errorf("encoding step output: %w", err)
	}
	return plain, nil
}

// plainObject round-trips m through JSON; nil becomes {}.
func plainObject(m map[string]any) (map[string]any, error) {
	if m == nil {
		return map[string]any{}, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return exactNumbers(out).(map[string]any), nil
}

// exactNumbers replaces each json.Number by a Go number that holds it
// exactly: float64 when that loses nothing, else int64 (integers beyond
// 2^53), so paths and filters compare numbers; any other number (a 20-digit
// integer, 1e400) stays a json.Number and is written back as it came.
func exactNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = exactNumbers(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = exactNumbers(e)
		}
		return v
	case json.Number:
		if f, err := v.Float64(); err == nil && exactFloat(string(v), f) {
			return f
		}
		if i, err := v.Int64(); err == nil {
			return i
		}
		return v
	default:
		return v
	}
}

// exactFloat reports whether f, written in its shortest form, is the same
// decimal value as s: then a float64 loses nothing of what was sent.
func exactFloat(s string, f float64) bool {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	sent, ok1 := new(big.Rat).SetString(s)
	back, ok2 := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok1 && ok2 && sent.Cmp(back) == 0
}

// describe says what a wrong runtime value was, without echoing large values.
func describe(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return "an empty string"
	}
	return jsonType(v)
}
