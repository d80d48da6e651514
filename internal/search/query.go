// Package search is the search capability of the service: the search
// request (text, a filter tree of typed predicates, sort, flags, paging)
// decoded and checked against a resource's searchable fields, and the
// engines that answer it.
package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// Type is the type of a searchable field: which operators apply to it and
// what values they take.
type Type int

// Field types.
const (
	Keyword  Type = iota // a string matched as a whole (ids, enums, urls)
	Text                 // a string of words (names, descriptions)
	Number               // a JSON number
	Integer              // a whole number
	Bool                 // true or false
	Date                 // YYYY-MM-DD
	DateTime             // RFC 3339 date-time
	Keywords             // an array of strings, each matched as a whole
)

var typeNames = map[Type]string{Keyword: "string", Text: "string", Number: "number", Integer: "integer", Bool: "boolean", Date: "date (YYYY-MM-DD)", DateTime: "date-time (RFC 3339)", Keywords: "string"}

// Field is one searchable field of a resource.
type Field struct {
	Name string
	Type Type
	// Weight ranks a text match in this field against matches in others
	// (a name outranks a description); 0 keeps the field out of text search.
	Weight float64
	// Sortable fields may be named in sort.
	Sortable bool
}

// Schema is what one resource offers to search.
type Schema struct {
	Resource string // plural name: "workspaces"
	Type     string // the records' item type in the table
	Fields   []Field
}

// Field returns the named field.
func (s *Schema) Field(name string) (Field, bool) {
	i := slices.IndexFunc(s.Fields, func(f Field) bool { return f.Name == name })
	if i < 0 {
		return Field{}, false
	}
	return s.Fields[i], true
}

// Op is a predicate's operator.
type Op string

// Operators.
const (
	Eq         Op = "eq"         // equal (for an array field: holds the value)
	Ne         Op = "ne"         // not equal (absent counts as not equal)
	In         Op = "in"         // equal to one of the values
	Nin        Op = "nin"        // equal to none of the values
	Gt         Op = "gt"         // greater than (numbers, dates)
	Gte        Op = "gte"        // greater than or equal
	Lt         Op = "lt"         // less than
	Lte        Op = "lte"        // less than or equal
	Contains   Op = "contains"   // strings: holds the value, ignoring case and diacritics; arrays: holds the element
	StartsWith Op = "startsWith" // strings: begins with the value, ignoring case and diacritics
	Exists     Op = "exists"     // value true: the field is set (not null); false: it is not
)

// Ops lists the operators in the order the documentation gives them.
var Ops = []Op{Eq, Ne, In, Nin, Gt, Gte, Lt, Lte, Contains, StartsWith, Exists}

// Limits of a search request.
const (
	MaxDepth      = 8     // predicates nest at most this deep
	MaxPredicates = 100   // predicates in one request, groups included
	MaxInValues   = 100   // values of one in or nin
	MaxTextLength = 500   // characters of text
	MaxSortKeys   = 3     // sort keys
	MaxLimit      = 400   // results per page
	DefaultLimit  = 100   // results per page when limit is not given, as lists
	MaxOffset     = 10000 // (page-1)*limit
)

// Predicate is one node of the filter tree. It holds when its own
// condition (if it names a field) holds, every predicate of And holds,
// and (if Or is not empty) at least one of Or holds: a node with none of
// them holds for every record. Match evaluates it on a record exactly as
// the engines do.
type Predicate struct {
	Field string
	Op    Op
	Value any // string, float64 (Number), int64 (Integer), bool, time.Time (Date, DateTime, in UTC), or []any of those for in/nin; bool for exists
	And   []*Predicate
	Or    []*Predicate
}

// SortKey orders results by a field: strings by their folded value
// (fold.Text: lower case, without diacritics), numbers numerically, dates
// and date-times chronologically, false before true; ids (Field "id") as
// they are, byte by byte. A record without a value for the field (null,
// absent, an empty array, an empty string, or a string longer than
// MaxTermLength) sorts last in either direction, or with MissingSmallest
// as the smallest value. Compare applies the keys to two records exactly
// as the engines do.
type SortKey struct {
	Field string
	Desc  bool
	// MissingSmallest sorts a record without a value as smaller than any
	// value (first ascending, last descending), as a DynamoDB sort index
	// orders an item without the attribute; unset, it sorts last in both
	// directions, as POST /search documents.
	MissingSmallest bool
}

// Request is a decoded search, or a list served by an engine.
type Request struct {
	Text     string
	Filter   *Predicate // nil: every record
	Sort     []SortKey  // empty: by relevance when there is text, else newest first
	Hybrid   bool
	Fuzzy    bool
	FullText bool
	// Before, when set, keeps only the records whose id is less than it
	// (byte by byte): a list's lt cursor. See AdmitsID.
	Before string
	Page   int
	Limit  int
	// From is how many results come before page 1 (a list's cursor
	// position); 0 for a search. Offset stays within MaxOffset.
	From int
}

// Offset is the number of results before the page.
func (r *Request) Offset() int { return r.From + (r.Page-1)*r.Limit }

// AdmitsID reports whether a record of this id is within r.Before (every
// id is when Before is empty): what the engines filter on, for a caller
// that evaluates a request in memory with Match.
func (r *Request) AdmitsID(id string) bool { return r.Before == "" || id < r.Before }

// Decode reads a search body (an empty body is an empty search) for
// schema, with page and limit already read from the query.
func Decode(s *Schema, body []byte, page, limit int) (*Request, error) {
	req := &Request{Page: page, Limit: limit}
	if len(strings.TrimSpace(string(body))) == 0 {
		return req, nil
	}
	o, err := jsonbody.ParseObject(body, memberNames...)
	if err != nil {
		return nil, err
	}
	text, err := o.String("text", jsonbody.Text{Max: MaxTextLength, Trim: true})
	if err != nil {
		return nil, err
	}
	req.Text = text.Value
	for name, dst := range map[string]*bool{"hybrid": &req.Hybrid, "fuzzy": &req.Fuzzy, "fullText": &req.FullText} {
		b, err := o.Bool(name)
		if err != nil {
			return nil, err
		}
		*dst = b.Value
	}
	if req.Filter, err = decodeFilters(s, o); err != nil {
		return nil, err
	}
	if req.Sort, err = decodeSort(s, o); err != nil {
		return nil, err
	}
	return req, nil
}

// DecodeSimilar reads the body of a similar records request (an empty
// body asks for every record): only "filters", as a search's.
func DecodeSimilar(s *Schema, body []byte, page, limit int) (*Request, error) {
	req := &Request{Page: page, Limit: limit}
	if len(strings.TrimSpace(string(body))) == 0 {
		return req, nil
	}
	o, err := jsonbody.ParseObject(body, "filters")
	if err != nil {
		return nil, err
	}
	if req.Filter, err = decodeFilters(s, o); err != nil {
		return nil, err
	}
	return req, nil
}

// decodeFilters reads a body's "filters": nil when absent, null or empty.
func decodeFilters(s *Schema, o *jsonbody.Object) (*Predicate, error) {
	filters, err := o.Object("filters", "and", "or")
	if err != nil || !filters.Set || filters.Null {
		return nil, err
	}
	p, count := &Predicate{}, 0
	if err := decodeGroups(s, filters.Value, p, 1, &count); err != nil {
		return nil, err
	}
	if len(p.And)+len(p.Or) == 0 {
		return nil, nil
	}
	return p, nil
}

// decodeGroups reads the and and or arrays of o into p.
func decodeGroups(s *Schema, o *jsonbody.Object, p *Predicate, depth int, count *int) error {
	for _, group := range []string{"and", "or"} {
		items, err := o.Objects(group, MaxPredicates, "field", "operator", "value", "and", "or")
		if err != nil {
			return err
		}
		for _, item := range items.Value {
			*count++
			if *count > MaxPredicates {
				return apperr.Invalid("filters", "must hold at most %d predicates", MaxPredicates)
			}
			if depth > MaxDepth {
				return apperr.Invalid(strings.TrimSuffix(item.Path(""), "."), "nests deeper than %d levels", MaxDepth)
			}
			child, err := decodePredicate(s, item, depth, count)
			if err != nil {
				return err
			}
			if group == "and" {
				p.And = append(p.And, child)
			} else {
				p.Or = append(p.Or, child)
			}
		}
	}
	return nil
}

func decodePredicate(s *Schema, o *jsonbody.Object, depth int, count *int) (*Predicate, error) {
	p := &Predicate{}
	field, err := o.String("field", jsonbody.Text{Min: 1, Max: 100})
	if err != nil {
		return nil, err
	}
	_, hasOp := o.Raw("operator")
	_, hasValue := o.Raw("value")
	if !field.Set || field.Null {
		if hasOp || hasValue {
			return nil, apperr.Invalid(o.Path("field"), "is required with an operator or a value")
		}
	} else {
		f, ok := s.Field(field.Value)
		if !ok {
			return nil, apperr.Invalid(o.Path("field"), "%q is not a searchable field of %s; use one of %s", field.Value, s.Resource, fieldNames(s))
		}
		op, err := o.Enum("operator", opNames()...)
		if err != nil {
			return nil, err
		}
		if !op.Set || op.Null {
			return nil, apperr.Invalid(o.Path("operator"), "is required; use one of %s", strings.Join(opNames(), ", "))
		}
		p.Field, p.Op = f.Name, Op(op.Value)
		raw, _ := o.Raw("value")
		if p.Value, err = decodeValue(f, p.Op, raw, o.Path("value")); err != nil {
			return nil, err
		}
	}
	if err := decodeGroups(s, o, p, depth+1, count); err != nil {
		return nil, err
	}
	if p.Field == "" && len(p.And)+len(p.Or) == 0 {
		return nil, apperr.Invalid(strings.TrimSuffix(o.Path(""), "."), "must name a field with an operator and a value, or hold and/or predicates")
	}
	return p, nil
}

// decodeValue checks raw as the value of op on f.
func decodeValue(f Field, op Op, raw json.RawMessage, path string) (any, error) {
	at := place{path: path}
	if raw == nil {
		return nil, at.invalid("is required for %s", op)
	}
	if jsonType(raw) == "null" {
		if op == Exists {
			return nil, at.invalid("must be true or false for exists, not null")
		}
		if op == In || op == Nin {
			return nil, at.invalid("must be an array of %s values for %s, not null", typeNames[f.Type], op)
		}
		return nil, at.invalid("must be a %s for %s, not null; use exists to find records without a value", typeNames[f.Type], f.Name)
	}
	if err := checkOp(f, op, at); err != nil {
		return nil, err
	}
	switch op {
	case Exists:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, at.invalid("must be true or false for exists")
		}
		return b, nil
	case In, Nin:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || items == nil {
			return nil, at.invalid("must be an array of %s values for %s", typeNames[f.Type], op)
		}
		if len(items) == 0 || len(items) > MaxInValues {
			return nil, at.invalid("must hold 1 to %d values for %s", MaxInValues, op)
		}
		out := make([]any, len(items))
		for i, it := range items {
			item := place{path: fmt.Sprintf("%s[%d]", path, i)}
			if jsonType(it) == "null" {
				return nil, item.invalid("must be a %s for %s, not null", typeNames[f.Type], f.Name)
			}
			v, err := scalar(f, it, item)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return scalar(f, raw, at)
}

// place is where a value was given, for its errors: a path in the body,
// or a query parameter (with a note on which of its values).
type place struct {
	path  string
	query bool
	note  string // appended to messages: " (value 2 of 3)"
}

func (p place) invalid(format string, args ...any) error {
	if p.query {
		return apperr.InvalidQuery(p.path, format+"%s", append(args, p.note)...)
	}
	return apperr.Invalid(p.path, format+"%s", append(args, p.note)...)
}

// checkOp refuses an operator f's type does not take: comparisons apply
// to numbers and dates, contains and startsWith to strings (contains also
// to arrays of strings, where it means holding the element).
func checkOp(f Field, op Op, at place) error {
	switch op {
	case Gt, Gte, Lt, Lte:
		switch f.Type {
		case Number, Integer, Date, DateTime:
		default:
			return at.invalid("cannot be compared with %s: %s is a %s field; %s applies to numbers and dates", op, f.Name, typeNames[f.Type], op)
		}
	case Contains, StartsWith:
		switch {
		case f.Type == Keyword || f.Type == Text:
		case f.Type == Keywords && op == Contains:
		default:
			return at.invalid("cannot be matched with %s: %s is a %s field; %s applies to strings", op, f.Name, typeNames[f.Type], op)
		}
	}
	return nil
}

// MaxValueLength is the longest string value of a predicate, in bytes.
const MaxValueLength = 1000

// scalar reads one JSON value of f's type.
func scalar(f Field, raw json.RawMessage, at place) (any, error) {
	bad := func() error {
		return at.invalid("must be a %s for %s, not %s", typeNames[f.Type], f.Name, jsonType(raw))
	}
	switch f.Type {
	case Keyword, Text, Keywords:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, bad()
		}
		return stringValue(s, at)
	case Number:
		var n float64
		if jsonType(raw) != "a number" || json.Unmarshal(raw, &n) != nil {
			return nil, bad()
		}
		return n, nil
	case Integer:
		var n int64
		if jsonType(raw) != "a number" || json.Unmarshal(raw, &n) != nil {
			return nil, at.invalid("must be an integer for %s, not %s", f.Name, strings.TrimSpace(string(raw)))
		}
		return n, nil
	case Bool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, bad()
		}
		return b, nil
	case Date, DateTime:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, bad()
		}
		return timeValue(f, s, at)
	}
	return nil, bad()
}

// stringValue checks a string value: at most MaxValueLength bytes of UTF-8.
func stringValue(s string, at place) (any, error) {
	if len(s) > MaxValueLength {
		return nil, at.invalid("must be at most %d bytes", MaxValueLength)
	}
	if !utf8.ValidString(s) {
		return nil, at.invalid("must be valid UTF-8")
	}
	return s, nil
}

// timeValue reads a date (YYYY-MM-DD) or date-time (RFC 3339) as a time
// in UTC.
func timeValue(f Field, s string, at place) (any, error) {
	t, err := parseTime(f.Type, s)
	if err != nil {
		return nil, at.invalid("must be a %s for %s, not %s", typeNames[f.Type], f.Name, shown(s))
	}
	return t.UTC(), nil
}

// parseTime reads a value of a Date (YYYY-MM-DD) or DateTime (RFC 3339)
// field, in a predicate or a record.
func parseTime(t Type, s string) (time.Time, error) {
	layout := time.RFC3339Nano
	if t == Date {
		layout = time.DateOnly
	}
	return time.Parse(layout, s)
}

func decodeSort(s *Schema, o *jsonbody.Object) ([]SortKey, error) {
	items, err := o.Objects("sort", MaxSortKeys, "field", "direction")
	if err != nil {
		return nil, err
	}
	var out []SortKey
	for _, it := range items.Value {
		name, err := it.String("field", jsonbody.Text{Min: 1, Max: 100})
		if err != nil {
			return nil, err
		}
		if !name.Set || name.Null {
			return nil, apperr.Invalid(it.Path("field"), "is required")
		}
		f, ok := s.Field(name.Value)
		if !ok || !f.Sortable {
			return nil, apperr.Invalid(it.Path("field"), "%q is not a sortable field of %s; use one of %s", name.Value, s.Resource, sortableNames(s))
		}
		dir, err := it.Enum("direction", "asc", "desc")
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(k SortKey) bool { return k.Field == f.Name }) {
			return nil, apperr.Invalid(it.Path("field"), "names %s twice", f.Name)
		}
		out = append(out, SortKey{Field: f.Name, Desc: dir.Value == "desc"})
	}
	return out, nil
}

func opNames() []string {
	out := make([]string, len(Ops))
	for i, op := range Ops {
		out[i] = string(op)
	}
	return out
}

func fieldNames(s *Schema) string {
	var out []string
	for _, f := range s.Fields {
		out = append(out, f.Name)
	}
	return strings.Join(out, ", ")
}

func sortableNames(s *Schema) string {
	var out []string
	for _, f := range s.Fields {
		if f.Sortable {
			out = append(out, f.Name)
		}
	}
	return strings.Join(out, ", ")
}

// jsonType names the JSON type of raw for messages.
func jsonType(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "":
		return "nothing"
	case t == "null":
		return "null"
	case t == "true" || t == "false":
		return "a boolean"
	case t[0] == '"':
		return "a string"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "an array"
	default:
		return "a number"
	}
}

// ParsePaging reads page (at least 1, default 1) and limit (1 to MaxLimit,
// default DefaultLimit) from a search's query; the deep offset
// (page-1)*limit may not pass MaxOffset. Other parameters are refused.
func ParsePaging(q url.Values) (page, limit int, err error) {
	for name, vs := range q {
		if name != "page" && name != "limit" {
			return 0, 0, apperr.InvalidQuery(name, "is not a parameter of search; use page and limit in the query and the rest in the body")
		}
		if len(vs) > 1 {
			return 0, 0, apperr.InvalidQuery(name, "is given %d times; give it once", len(vs))
		}
	}
	page, limit = 1, DefaultLimit
	if v := q.Get("page"); v != "" || q.Has("page") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, apperr.InvalidQuery("page", "must be an integer of at least 1, not %q", v)
		}
		page = n
	}
	if v := q.Get("limit"); v != "" || q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			return 0, 0, apperr.InvalidQuery("limit", "must be an integer from 1 to %d, not %q", MaxLimit, v)
		}
		limit = n
	}
	if page > MaxOffset+1 || (page-1)*limit > MaxOffset {
		return 0, 0, apperr.InvalidQuery("page", "reaches past the deepest offset a search serves: (page-1)*limit must be at most %d, and page %d with limit %d is %d", MaxOffset, page, limit, (page-1)*limit)
	}
	return page, limit, nil
}

// FuzzyApplies says whether a search of resource uses r.Fuzzy, by the
// spec's rules: document search ignores fuzzy, company search ignores it
// when hybrid, activity search uses it only when fullText is off.
func FuzzyApplies(resource string, r *Request) bool {
	switch resource {
	case "documents":
		return false
	case "companies":
		return !r.Hybrid
	case "activities":
		return !r.FullText
	}
	return true
}

// Fuzziness is the edit distance a fuzzy search allows a word, by its
// length: none for 1-2 characters, one for 3-5, two from 6 on.
func Fuzziness(word string) int {
	switch n := utf8.RuneCountInString(word); {
	case n <= 2:
		return 0
	case n <= 5:
		return 1
	default:
		return 2
	}
}

// Result is one page of a search.
type Result struct {
	Records []json.RawMessage // the records as stored, in order
	// Stamps are the records' shape stamps as stored (store.Stamped), in
	// the same order, when the engine keeps them (nil otherwise): a
	// stamped record is answered as it is.
	Stamps  []string
	Total   int    // matching records in all
	Ranking string // how text was ranked: RankingKeyword, RankingHybrid or RankingSemantic
	// Semantic is SemanticPending when a record of the page (or the
	// record whose similar records were asked) has no embedding yet.
	Semantic string
}

// RankingKeyword: text ranked by BM25 over the weighted fields (a hybrid
// search too when the deployment has no embedding model).
const RankingKeyword = "keyword"

// Engine answers searches of one organization's records.
type Engine interface {
	Search(ctx context.Context, org string, s *Schema, r *Request) (*Result, error)
	// Similar answers the records of org nearest by meaning to record id
	// of s (never itself): apperr.ErrNotFound when there is no such
	// record, ErrSemanticOff without an embedding model.
	Similarer
	// Name names the engine ("embedded", "opensearch"): a list it serves
	// says so in X-Query-Plan.
	Name() string
}

var typeDocs = map[Type]string{Keyword: "string", Text: "string (text)", Number: "number", Integer: "integer", Bool: "boolean", Date: "date", DateTime: "date-time", Keywords: "array of strings"}

// Markdown documents the searchable fields of each schema.
func Markdown(schemas []*Schema) string {
	var b strings.Builder
	for _, s := range schemas {
		fmt.Fprintf(&b, "\n### %s\n\n| Field | Type | Weight | Sortable |\n|---|---|---|---|\n", s.Resource)
		for _, f := range s.Fields {
			weight, sortable := "", ""
			if f.Weight > 0 {
				weight = strconv.FormatFloat(f.Weight, 'g', -1, 64)
			}
			if f.Sortable {
				sortable = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, typeDocs[f.Type], weight, sortable)
		}
	}
	return b.String()
}

// DecodeCondition reads one condition of a JSON body: field (a field of
// s, by its path), op and its value raw (an array for in and nin, a
// boolean for exists, else one value of the field's type), with errors
// naming path as a body field.
func DecodeCondition(s *Schema, path, field string, op Op, raw json.RawMessage) (*Predicate, error) {
	f, ok := s.Field(field)
	if !ok {
		return nil, apperr.Invalid(path, "%q is not a filterable field of %s; use one of %s", field, s.Resource, fieldNames(s))
	}
	if !slices.Contains(Ops, op) {
		return nil, apperr.Invalid(path, "%q is not an operator; use one of %s", op, strings.Join(opNames(), ", "))
	}
	v, err := decodeValue(f, op, raw, path)
	if err != nil {
		return nil, err
	}
	return &Predicate{Field: f.Name, Op: op, Value: v}, nil
}
