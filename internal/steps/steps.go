// Package steps defines the steps of a workflow and runs them.
//
// A workflow is an ordered list of steps {id, type, with}. A run executes the
// steps in order against a run context {"input": <run input>, "steps": {<id>:
// <output>}}. Values in "with" follow the Amazon States Language Parameters
// convention: a key ending in ".$" takes its value from a JSONPath evaluated
// against the run context, and the resolved key drops the ".$" suffix.
//
// The package is pure domain logic: company writes go through the Companies
// interface, implemented over the real store elsewhere.
package steps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// Step types.
const (
	TypeSet           = "set"
	TypeUpsertCompany = "upsertCompany"
	TypeTagCompany    = "tagCompany"
	TypeFail          = "fail"
	// TypeWriteMetricPoints writes points of metric series: with
	// {"points": [...]}, the body of POST /v1/data/metric-points.
	TypeWriteMetricPoints = "writeMetricPoints"
	// TypeAddEnrichment writes candidate values of a record's attributes:
	// with {resourceType? (default "companies"), resourceId, values: [...]},
	// the values as POST /v1/enrichments/resources/{resourceType}/{resourceId}
	// takes them (source defaulting to "workflow", whose sourceId defaults
	// to the run id).
	TypeAddEnrichment = "addEnrichment"
)

// Limits enforced by Parse.
const (
	// MaxSteps is the largest number of steps a workflow may have.
	MaxSteps = 50
	// MaxIDLength is the longest step id.
	MaxIDLength = 64
	// MaxWithDepth is how many levels of objects and arrays "with" may span,
	// counting the "with" object itself as level 1.
	MaxWithDepth = 10
	// MaxPathLength is the longest JSONPath accepted; it bounds the cost of
	// parsing and evaluating paths that arrive in a 1 MiB request body.
	MaxPathLength = 1024
)

// Limits of what one step may output; a step whose output exceeds them
// fails, naming the step. The last step's output is the run's output, which
// the run record stores beside the run input (at most 128 KiB as JSON), so
// the limits keep every run record decodable and well under DynamoDB's
// 400 KB item limit: 128 KiB of input + 224 KiB of output + the run's own
// fields. 224 KiB also holds a company record with a full 128 KiB custom,
// so an upsertCompany step can output the company it wrote.
const (
	// MaxOutputBytes bounds the compact JSON size of one step's output.
	MaxOutputBytes = 224 << 10
	// MaxOutputDepth bounds how many levels of objects and arrays one step's
	// output spans (the output object is level 1): twice the nesting a
	// free-form input may have, so a step can wrap a whole input.
	MaxOutputDepth = 2 * jsonbody.MaxDepth
)

// stepTypes lists the known types in the order error messages show them.
var stepTypes = []string{TypeSet, TypeUpsertCompany, TypeTagCompany, TypeFail, TypeWriteMetricPoints, TypeAddEnrichment}

// Step is one step of a workflow definition, as stored and as shown in the workflow record.
type Step struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	With map[string]any `json:"with"` // always an object in JSON output ({} when none)
}

// MarshalJSON encodes the step, writing a nil With as {} so that clients
// always see an object.
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step // drops the method, so json.Marshal does not recurse
	p := plain(s)
	if p.With == nil {
		p.With = map[string]any{}
	}
	return json.Marshal(p)
}

// ValidationError names the offending field with a JSON-ish path, e.g. Field "steps[2].with.name.$".
type ValidationError struct {
	Field   string
	Message string
}

// Error returns "<field>: <message>".
func (e *ValidationError) Error() string {
	return e.Field + ": " + e.Message
}

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Parse decodes and validates a JSON array of steps, the raw value of "steps"
// in a workflow create or update body. null or an empty value means no steps.
// Every violation is reported as a *ValidationError naming the field.
//
// Numbers decode as float64, so stored and evaluated values are ordinary JSON
// values. Duplicate object keys are rejected rather than silently resolved to
// the last one, because the author's intent is ambiguous.
func Parse(raw []byte) ([]Step, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []Step{}, nil
	}
	// The steps array is level 1 and each step object level 2, so "with" is level 3.
	v, err := decodeStrict(raw, "steps", MaxWithDepth+2)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return []Step{}, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, invalid("steps", "must be an array, got %s", jsonType(v))
	}
	if len(items) > MaxSteps {
		return nil, invalid("steps", "at most %d steps are allowed, got %d", MaxSteps, len(items))
	}
	steps := make([]Step, 0, len(items))
	firstIndex := make(map[string]int, len(items))
	for i, item := range items {
		step, err := parseStep(fmt.Sprintf("steps[%d]", i), item)
		if err != nil {
			return nil, err
		}
		if j, dup := firstIndex[step.ID]; dup {
			return nil, invalid(fmt.Sprintf("steps[%d].id", i), "duplicate id %q (already used by steps[%d])", step.ID, j)
		}
		firstIndex[step.ID] = i
		steps = append(steps, step)
	}
	return steps, nil
}

func parseStep(field string, v any) (Step, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Step{}, invalid(field, "must be an object, got %s", jsonType(v))
	}
	for _, k := range sortedKeys(obj) {
		if k != "id" && k != "type" && k != "with" {
			return Step{}, invalid(field+"."+k, "unknown field (allowed: id, type, with)")
		}
	}

	id, err := parseID(field+".id", obj["id"])
	if err != nil {
		return Step{}, err
	}
	typ, err := parseType(field+".type", obj["type"])
	if err != nil {
		return Step{}, err
	}

	with := map[string]any{}
	switch w := obj["with"].(type) {
	case nil: // absent or null: no parameters
	case map[string]any:
		with = w
	default:
		return Step{}, invalid(field+".with", "must be an object, got %s", jsonType(w))
	}
	if err := checkParameters(field+".with", with); err != nil {
		return Step{}, err
	}
	if err := checkRequired(field+".with", typ, with); err != nil {
		return Step{}, err
	}
	return Step{ID: id, Type: typ, With: with}, nil
}

func parseID(field string, v any) (string, error) {
	if v == nil {
		return "", invalid(field, "is required")
	}
	id, ok := v.(string)
	if !ok {
		return "", invalid(field, "must be a string, got %s", jsonType(v))
	}
	if len(id) == 0 || len(id) > MaxIDLength {
		return "", invalid(field, "must be 1 to %d characters", MaxIDLength)
	}
	for _, r := range id {
		if !isIDChar(r) {
			return "", invalid(field, "may contain only letters A-Z a-z, digits, '_' and '-'")
		}
	}
	return id, nil
}

// isIDChar keeps ids safe to use unquoted in JSONPaths ($.steps.<id>) and URLs.
func isIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

func parseType(field string, v any) (string, error) {
	if v == nil {
		return "", invalid(field, "is required (one of: %s)", strings.Join(stepTypes, ", "))
	}
	typ, ok := v.(string)
	if !ok {
		return "", invalid(field, "must be a string, got %s", jsonType(v))
	}
	if !slices.Contains(stepTypes, typ) {
		return "", invalid(field, "unknown type %q (allowed: %s)", typ, strings.Join(stepTypes, ", "))
	}
	return typ, nil
}

// checkParameters walks "with" (objects, and objects inside arrays) and checks
// every key: not empty, and for ".$" keys a valid JSONPath whose resolved key
// does not collide with a literal key of the same object.
func checkParameters(field string, v any) error {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			kf := field + "." + k
			if k == "" {
				return invalid(field, "keys must not be empty")
			}
			name, isPath := strings.CutSuffix(k, ".$")
			if !isPath {
				if err := checkParameters(kf, t[k]); err != nil {
					return err
				}
				continue
			}
			if name == "" {
				return invalid(kf, `must name the key before ".$"`)
			}
			// "k.$.$" sets "k.$", which only a literal "k.$" could also set,
			// and a "k.$" key is never literal.
			if _, clash := t[name]; clash && !strings.HasSuffix(name, ".$") {
				return invalid(kf, "conflicts with %q: both set the key %q", name, name)
			}
			s, ok := t[k].(string)
			if !ok {
				return invalid(kf, "must be a JSONPath string, got %s", jsonType(t[k]))
			}
			if _, err := compilePath(s); err != nil {
				return invalid(kf, "%v", err)
			}
		}
	case []any:
		for i, e := range t {
			if err := checkParameters(fmt.Sprintf("%s[%d]", field, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRequired applies the per-type checks to literal values. A ".$" key
// satisfies a requirement because its value is only known at run time, when
// Execute checks it again.
func checkRequired(field, typ string, with map[string]any) error {
	switch typ {
	case TypeFail:
		if _, dynamic := with["message.$"]; dynamic {
			return nil
		}
		v, ok := with["message"]
		if !ok {
			return invalid(field+".message", `is required (or "message.$")`)
		}
		if _, ok := v.(string); !ok {
			return invalid(field+".message", "must be a string, got %s", jsonType(v))
		}
	case TypeTagCompany:
		if _, dynamic := with["companyId.$"]; !dynamic {
			v, ok := with["companyId"]
			if !ok {
				return invalid(field+".companyId", `is required (or "companyId.$")`)
			}
			if s, ok := v.(string); !ok || s == "" {
				return invalid(field+".companyId", "must be a non-empty string")
			}
		}
		if _, dynamic := with["tags.$"]; !dynamic {
			v, ok := with["tags"]
			if !ok {
				return invalid(field+".tags", `is required (or "tags.$")`)
			}
			if _, err := tagList(field+".tags", v); err != nil {
				return err
			}
		}
	case TypeAddEnrichment:
		if _, dynamic := with["resourceId.$"]; !dynamic {
			if v, ok := with["resourceId"].(string); !ok || v == "" {
				return invalid(field+".resourceId", `is required (or "resourceId.$"): the id of the record`)
			}
		}
		if v, ok := with["resourceType"]; ok {
			if _, isString := v.(string); !isString {
				return invalid(field+".resourceType", "must be a string, got %s", jsonType(v))
			}
		}
		if _, dynamic := with["values.$"]; dynamic {
			return nil
		}
		v, ok := with["values"]
		if !ok {
			return invalid(field+".values", `is required (or "values.$"): an array of enrichment values`)
		}
		if _, ok := v.([]any); !ok {
			return invalid(field+".values", "must be an array of enrichment values, got %s", jsonType(v))
		}
	case TypeWriteMetricPoints:
		if _, dynamic := with["points.$"]; dynamic {
			return nil
		}
		v, ok := with["points"]
		if !ok {
			return invalid(field+".points", `is required (or "points.$"): an array of metric points`)
		}
		if _, ok := v.([]any); !ok {
			return invalid(field+".points", "must be an array of metric points, got %s", jsonType(v))
		}
	case TypeUpsertCompany:
		identified := false
		for _, k := range companyIdentifiers {
			if _, dynamic := with[k+".$"]; dynamic {
				identified = true
				continue
			}
			switch v := with[k].(type) {
			case nil: // absent, or null to clear the field on update
			case string:
				identified = identified || v != ""
			default:
				return invalid(field+"."+k, "must be a string, got %s", jsonType(v))
			}
		}
		if !identified {
			return invalid(field, `needs at least one of %s (a non-empty string or a ".$" path) to find or create the company`,
				strings.Join(companyIdentifiers, ", "))
		}
	}
	return nil
}

// companyIdentifiers are the fields an upsert can match an existing company by.
var companyIdentifiers = []string{"canonicalName", "externalId", "website"}

// tagList checks that v is an array of non-empty strings, both in Parse and in Execute.
func tagList(field string, v any) ([]string, error) {
	var items []any
	switch t := v.(type) {
	case []any:
		items = t
	case []string: // steps built in Go rather than parsed from JSON
		items = make([]any, len(t))
		for i, s := range t {
			items[i] = s
		}
	default:
		return nil, invalid(field, "must be an array of strings, got %s", jsonType(v))
	}
	tags := make([]string, 0, len(items))
	for i, e := range items {
		s, ok := e.(string)
		if !ok || s == "" {
			return nil, invalid(fmt.Sprintf("%s[%d]", field, i), "must be a non-empty string")
		}
		tags = append(tags, s)
	}
	return tags, nil
}

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return "number"
	case string:
		return "string"
	case []any, []string:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// sortedKeys makes validation report the same error for the same input every time.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
