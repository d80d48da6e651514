package resource

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// Kind is the type of a field's value.
type Kind int

// Field kinds.
const (
	String   Kind = iota // single-line text (MaxLen, default 200)
	Text                 // multi-line text (MaxLen, default 20,000)
	Enum                 // one of Values
	URL                  // an absolute http(s) URL
	Email                // an e-mail address
	Date                 // a calendar date, YYYY-MM-DD
	DateTime             // an RFC 3339 time, stored and shown as clock.Layout
	Int                  // an integer (Min/Max)
	Number               // a finite number (Min/Max)
	Bool                 // true or false
	Strings              // an array of single-line texts (MaxItems, MaxLen), duplicates dropped
	Object               // a free-form JSON object (input.MaxFreeBytes, input.MaxDepth)
	Ref                  // the id of a record of Target (or of Targets[<TargetBy field>])
	Refs                 // an array of ids of records of Target, duplicates dropped
	Struct               // an object with the declared Fields
	Structs              // an array of objects with the declared Fields (MaxItems)
)

var kindNames = map[Kind]string{
	String: "string", Text: "text", Enum: "enum", URL: "URL", Email: "e-mail", Date: "date", DateTime: "date-time",
	Int: "integer", Number: "number", Bool: "boolean", Strings: "array of strings", Object: "object",
	Ref: "reference", Refs: "array of references", Struct: "object", Structs: "array of objects",
}

func (k Kind) String() string { return kindNames[k] }

// Field declares one field of a resource: its type, the rules a value must
// meet, and what the service does with it (indexes, uniqueness, references).
type Field struct {
	Name     string
	Kind     Kind
	Doc      string // one line for the documentation
	Required bool   // must be sent (non-null) on create
	// ReadOnly fields are set by the service (ids, times, computed values);
	// a client that sends one gets a 400 saying so.
	ReadOnly bool
	// Import says what an import does with a read-only field's column
	// (ImportRefused unless declared); ImportNote says, for ImportIgnored,
	// why the column is not read.
	Import     ImportRule
	ImportNote string
	// Immutable fields are set on create and cannot change afterwards.
	Immutable bool
	MaxLen    int      // characters of a text (default 200; Text: 20,000)
	MaxItems  int      // elements of an array (default 100)
	Min, Max  *float64 // bounds of a number
	Values    []string // Enum
	// Target names the resource a Ref or Refs field points at. A Ref whose
	// target depends on a sibling field (participants: {type, id}) names
	// that sibling in TargetBy and maps its values to resources in Targets.
	Target   string
	TargetBy string
	Targets  map[string]string
	Fields   []Field // Struct, Structs
	Default  any     // the value of a new record when the field is not sent
	// Example is a valid value for the documentation and the contract
	// tests, declared where a generic value of the Kind would not be valid
	// (an e-mail list, a color, a currency, ids that must match others).
	Example any
	// Unique: at most one record of an organization has a value (Fold:
	// compared case-insensitively).
	Unique bool
	Fold   bool
	// Lookup makes the field a list filter (?name=value) served by an index.
	Lookup bool
	// Sort makes the list sortable by the field, served by an index.
	Sort bool
	// Restrict refuses deleting a record this Ref points at (409 naming the
	// referencing record) instead of leaving the reference dangling. The
	// field must be a Lookup, so the referencing records can be found.
	Restrict bool
	// Verbatim texts (String, Text) are kept as sent: not trimmed, and ""
	// is a value (MaxLen still applies).
	Verbatim bool
	// Validate, when set, checks a sent non-null value further (a company
	// website: a URL or a bare domain); path names the field in errors.
	Validate func(path string, v any) error
	// Rule documents what Validate checks, for the Rules column.
	Rule string
	// Secret fields are never filtered, sorted or chosen by a list (a
	// webhook trigger's secret, shown only when it is made): a filter
	// would tell what the record hides.
	Secret bool
	// Search weighs a match of a search's text in this field (a name
	// outranks a description); 0 keeps the field out of text matching. It
	// applies to the resources whose Def is Searchable.
	Search float64

	// How a record shows the field (the OpenAPI schemas' required and
	// nullable derive from it): every field of a record is always there,
	// null when it holds no value ([] for arrays, {} for objects, false
	// for booleans, the Default when declared); a Required field is never
	// null. Records built outside the layer (companies, workflows, runs)
	// declare where they differ; a test holds them to their Go types.
	//
	// Always: the field always holds a value, never null, in records and
	// bodies (a read-only field the service always sets, such as a
	// company's origin or a run's status); a Struct is then always whole,
	// every part of it there (a workflow's trigger).
	Always bool
	// Nullable: an Object or Struct that is null when it holds nothing,
	// rather than {} (a run's output and error); a Struct, when there, is
	// whole.
	Nullable bool
	// Omitted: a field left out when it holds no value, rather than null
	// (the parts of a company's location; a trigger's secret, shown only
	// when it is made).
	Omitted bool

	// Members, for a read-only Object whose members are named by the data
	// (a company's enrichment, keyed by attribute), is what each member's
	// value is; its Name names the key in the documentation
	// ("{attribute}"). nil: a free-form object.
	Members *Field
	// Open: an Enum of a record whose Values are the values known now, not
	// a closed set (a run's status): a client must accept another, so an
	// answer's schema lists them as examples rather than as an enum.
	// Bodies and filters still take only Values.
	Open bool
}

// MaxEmail is the longest e-mail address an Email field takes, in
// characters (RFC 5321's path limit), whatever its MaxLen.
const MaxEmail = 254

// Between returns bounds for Min and Max.
func Between(lo, hi float64) (*float64, *float64) { return &lo, &hi }

// MaxLength is the longest text f accepts: MaxLen, else 200 (Text:
// 20,000; URL: 2,048).
func (f Field) MaxLength() int {
	switch {
	case f.MaxLen > 0:
		return f.MaxLen
	case f.Kind == Text:
		return 20000
	case f.Kind == URL:
		return 2048
	default:
		return 200
	}
}

// MaxElements is the most elements an array field accepts: MaxItems, else
// 100.
func (f Field) MaxElements() int {
	if f.MaxItems > 0 {
		return f.MaxItems
	}
	return 100
}

// empty is the value of a field that holds nothing: [] for arrays, {} for
// objects (null when Nullable), false for booleans, null otherwise; or the
// declared Default.
func (f Field) empty() any {
	if f.Default != nil {
		return f.Default
	}
	switch f.Kind {
	case Strings, Refs, Structs:
		return []any{}
	case Object, Struct:
		if f.Nullable {
			return nil
		}
		return map[string]any{}
	case Bool:
		return false
	default:
		return nil
	}
}

// names lists the names of fields.
func names(fields []Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// decode reads f from o: set when sent, and the value (nil for null).
// Null is refused for required fields; it clears any other.
func (f Field) decode(o *jsonbody.Object) (value any, set bool, err error) {
	raw, ok := o.Raw(f.Name)
	if !ok {
		return nil, false, nil
	}
	path := o.Path(f.Name)
	if string(raw) == "null" {
		if f.Required {
			return nil, true, apperr.Invalid(path, "is required and cannot be null")
		}
		return f.empty(), true, nil
	}
	v, err := f.decodeValue(o, path)
	if err == nil && f.Validate != nil {
		err = f.Validate(path, v)
	}
	return v, true, err
}

func (f Field) decodeValue(o *jsonbody.Object, path string) (any, error) {
	text := jsonbody.Text{Min: 1, Max: f.MaxLength(), Trim: true}
	switch f.Kind {
	case String, Text:
		text.MultiLine = f.Kind == Text
		if f.Verbatim {
			text.Min, text.Trim = 0, false
		}
		s, err := o.String(f.Name, text)
		return s.Value, err
	case Enum:
		s, err := o.String(f.Name, jsonbody.Text{})
		if err == nil && !slices.Contains(f.Values, s.Value) {
			err = apperr.Invalid(path, "must be one of %s", strings.Join(f.Values, ", "))
		}
		return s.Value, err
	case URL:
		s, err := o.String(f.Name, text)
		if err == nil {
			u, perr := url.Parse(s.Value)
			if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s.Value, " \t") {
				err = apperr.Invalid(path, "must be an absolute http or https URL")
			}
		}
		return s.Value, err
	case Email:
		s, err := o.String(f.Name, jsonbody.Text{Min: 1, Max: MaxEmail, Trim: true})
		if err == nil && !ValidEmail(s.Value) {
			err = apperr.Invalid(path, "must be an e-mail address such as name@example.com")
		}
		return s.Value, err
	case Date:
		s, err := o.String(f.Name, jsonbody.Text{Trim: true})
		if err == nil {
			if _, perr := time.Parse(time.DateOnly, s.Value); perr != nil {
				err = apperr.Invalid(path, "must be a date as YYYY-MM-DD")
			}
		}
		return s.Value, err
	case DateTime:
		s, err := o.String(f.Name, jsonbody.Text{Trim: true})
		if err != nil {
			return nil, err
		}
		t, perr := time.Parse(time.RFC3339Nano, s.Value)
		if perr != nil {
			return nil, apperr.Invalid(path, "must be an RFC 3339 date-time such as 2026-01-31T09:30:00Z")
		}
		return clock.Of(t).String(), nil
	case Int, Number:
		return f.decodeNumber(o, path)
	case Bool:
		b, err := o.Bool(f.Name)
		return b.Value, err
	case Strings:
		s, err := o.Strings(f.Name, text, f.MaxElements())
		return toAny(s.Value), err
	case Refs:
		s, err := o.Strings(f.Name, jsonbody.Text{Min: 1, Max: 256, Trim: true}, f.MaxElements())
		return toAny(s.Value), err
	case Ref:
		s, err := o.String(f.Name, jsonbody.Text{Min: 1, Max: 256, Trim: true})
		return s.Value, err
	case Object:
		m, err := o.FreeObject(f.Name)
		return m.Value, err
	case Struct:
		sub, err := o.Object(f.Name, names(f.Fields)...)
		if err != nil {
			return nil, err
		}
		return decodeFields(f.Fields, sub.Value, true)
	case Structs:
		subs, err := o.Objects(f.Name, f.MaxElements(), names(f.Fields)...)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(subs.Value))
		for _, sub := range subs.Value {
			m, err := decodeFields(f.Fields, sub, true)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("resource: field %s has unknown kind %d", f.Name, f.Kind)
}

func (f Field) decodeNumber(o *jsonbody.Object, path string) (any, error) {
	n, err := o.Number(f.Name)
	if err != nil {
		return nil, err
	}
	x, perr := n.Value.Float64()
	if perr != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, apperr.Invalid(path, "must be a finite number")
	}
	if f.Kind == Int {
		if _, ierr := n.Value.Int64(); ierr != nil {
			return nil, apperr.Invalid(path, "must be an integer")
		}
	}
	if f.Min != nil && x < *f.Min || f.Max != nil && x > *f.Max {
		return nil, apperr.Invalid(path, "must be %s", bounds(f.Min, f.Max))
	}
	return n.Value, nil
}

func bounds(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("from %g to %g", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf("at least %g", *lo)
	default:
		return fmt.Sprintf("at most %g", *hi)
	}
}

func toAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// decodeFields reads a whole object of fields (a Struct's): every declared
// field present, required ones sent.
func decodeFields(fields []Field, o *jsonbody.Object, whole bool) (map[string]any, error) {
	out := map[string]any{}
	for _, f := range fields {
		if _, sent := o.Raw(f.Name); sent && f.ReadOnly {
			return nil, apperr.Invalid(o.Path(f.Name), "is read-only; the service sets it")
		}
		if f.ReadOnly {
			out[f.Name] = f.empty()
			continue
		}
		v, set, err := f.decode(o)
		if err != nil {
			return nil, err
		}
		if !set {
			if whole && f.Required {
				return nil, apperr.Invalid(o.Path(f.Name), "is required")
			}
			v = f.empty()
		}
		out[f.Name] = v
	}
	return out, nil
}

// NumberOf reads a stored number (json.Number as decoded, or a Go number).
func NumberOf(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

// equalJSON compares two JSON values as encoded.
func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// ValidEmail reports whether s is a plain e-mail address (no display name)
// whose domain has at least two labels: name@example.com, not name@example.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	domain := s[strings.LastIndexByte(s, '@')+1:]
	return strings.Contains(strings.Trim(domain, "."), ".") && !strings.HasPrefix(domain, "[")
}
