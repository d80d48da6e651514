// Package listing reads what a list request asks for beyond paging — its
// filters (filter[field][op]=value), sort keys (sort=a,-b), chosen fields
// (fields=) and related records (expand=) — against a resource's
// declaration, and plans how the list is served: by the table's key, by
// one of its indexes, or by the search engine, with any condition an
// index cannot decide evaluated on the records read. Every plan gives the
// same answer; the plan only decides what it costs (Plan.Name says which
// served a list, in the X-Query-Plan response header).
package listing

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Limits of a list request.
const (
	MaxFilters  = 20 // filter[...] parameters
	MaxSortKeys = search.MaxSortKeys
)

// Parameters a list takes besides the paging ones and its lookup filters.
const (
	ParamFields = "fields"
	ParamExpand = "expand"
	ParamFilter = "filter"
)

// Query is a parsed list request.
type Query struct {
	// Page holds the paging parameters (limit, page, lt, cursor,
	// direction) and the byte budget; its Sort and Desc are set by the plan.
	Page store.Query
	// Filters must all hold: filter[...] parameters, in a canonical order.
	Filters []*search.Predicate
	// Lookup and Value are a lookup filter given the older way
	// (?companyId=...): served by its index, as the resource defines the
	// lookup (case-insensitive where the field folds case).
	Lookup, Value string
	// Sort keys as asked, without the id that breaks ties; empty for the
	// default (id, newest first).
	Sort []search.SortKey
	// Fields, when set, are the only fields answered (id always).
	Fields []string
	// Expand names reference fields whose records each answer carries.
	Expand []string

	canonical string // the filters and sort keys, for cursor binding
}

// Resource is what the parser and the planner know of a kind of record.
type Resource struct {
	Def    *resource.Def
	Schema *search.Schema // its filterable and sortable fields (Schema)
	// Expandable lists the reference fields expand= may name.
	Expandable []string
}

// Schema is the search schema of d without the fields a client may
// never filter or sort by (secrets, shown only when made): the fields
// of its lists.
func Schema(d *resource.Def) *search.Schema {
	s := search.SchemaOf(d)
	secret := secretPaths("", d.Fields)
	s.Fields = slices.DeleteFunc(slices.Clone(s.Fields), func(f search.Field) bool { return slices.Contains(secret, f.Name) })
	return s
}

func secretPaths(prefix string, fs []resource.Field) []string {
	var out []string
	for _, f := range fs {
		if f.Secret {
			out = append(out, prefix+f.Name)
		}
		out = append(out, secretPaths(prefix+f.Name+".", f.Fields)...)
	}
	return out
}

// filterParam is filter[<field>] or filter[<field>][<op>].
var filterParam = regexp.MustCompile(`^filter\[([^\[\]]+)\](?:\[([^\[\]]+)\])?$`)

// Parse reads a list request's query for res. parsePage reads the paging
// parameters (httpapi.ParsePage), given only those. A parameter the list
// does not take, a field that is not filterable or sortable, an operator
// or value that does not fit the field, or a field named twice is a 400
// naming the parameter.
func Parse(res Resource, q url.Values, parsePage func(url.Values) (store.Query, error)) (*Query, error) {
	out := &Query{}
	paging := url.Values{}
	lookups := res.Def.Filters()
	var filterKeys []string
	for name, vs := range q {
		if len(vs) > 1 {
			return nil, apperr.InvalidQuery(name, "is given %d times; give it once", len(vs))
		}
		switch {
		case slices.Contains(pagingParams, name):
			paging[name] = vs
		case name == ParamFields || name == ParamExpand:
		case slices.Contains(lookups, name):
			if out.Lookup != "" {
				a, b := min(out.Lookup, name), max(out.Lookup, name)
				return nil, apperr.InvalidQuery(b, "cannot be combined with %s; filter by several fields with filter[%s]=…&filter[%s]=…", a, a, b)
			}
			out.Lookup, out.Value = name, vs[0]
		case strings.HasPrefix(name, ParamFilter+"["):
			filterKeys = append(filterKeys, name)
		default:
			accepted := append(append(slices.Clone(pagingParams), ParamFields, ParamExpand, "filter[<field>][<operator>]"), lookups...)
			return nil, apperr.InvalidQuery(name, "is not accepted; accepted parameters are %s", strings.Join(accepted, ", "))
		}
	}
	page, err := parsePage(paging)
	if err != nil {
		return nil, err
	}
	out.Page = page
	if len(filterKeys) > MaxFilters {
		return nil, apperr.InvalidQuery(ParamFilter, "is given %d times; a list takes at most %d filters", len(filterKeys), MaxFilters)
	}
	for _, name := range filterKeys {
		m := filterParam.FindStringSubmatch(name)
		if m == nil {
			return nil, apperr.InvalidQuery(name, "is not a filter; write filter[<field>]=<value> or filter[<field>][<operator>]=<value> with an operator of %s", opList())
		}
		field, op := m[1], search.Op(m[2])
		if op == "" {
			op = search.Eq
		}
		if !slices.Contains(search.Ops, op) {
			return nil, apperr.InvalidQuery(name, "%q is not an operator; use one of %s", m[2], opList())
		}
		p, err := search.ParseCondition(res.Schema, name, field, op, q.Get(name))
		if err != nil {
			return nil, err
		}
		if err := checkEnum(res.Def, name, p); err != nil {
			return nil, err
		}
		out.Filters = append(out.Filters, p)
	}
	if out.Sort, err = parseSort(res.Schema, q.Get("sort"), q.Get("direction")); err != nil {
		return nil, err
	}
	out.finish()
	if out.Fields, err = parseNames(q, ParamFields, fieldNames(res.Def), "a field of "+res.Def.Name); err != nil {
		return nil, err
	}
	if out.Expand, err = parseNames(q, ParamExpand, res.Expandable, "a reference field of "+res.Def.Name+" that can be expanded"); err != nil {
		return nil, err
	}
	return out, nil
}

// finish puts the filters in their canonical order (by field, then
// operator) and names the list's filters and sort keys for its cursors:
// the same list asked with query parameters or a body (Decode) is served
// alike and takes the same cursors.
func (q *Query) finish() {
	slices.SortStableFunc(q.Filters, func(a, b *search.Predicate) int {
		return strings.Compare(a.Field+"\x00"+string(a.Op), b.Field+"\x00"+string(b.Op))
	})
	var canon []string
	for _, p := range q.Filters {
		v, _ := json.Marshal(p.Value)
		canon = append(canon, fmt.Sprintf("filter[%s][%s]=%s", p.Field, p.Op, v))
	}
	for _, k := range q.Sort {
		canon = append(canon, fmt.Sprintf("sort:%s:%t", k.Field, k.Desc))
	}
	q.canonical = strings.Join(canon, "&")
}

// checkEnum refuses a value an enum field cannot hold: a 400, as an
// index lookup of it would answer, rather than an empty list.
func checkEnum(d *resource.Def, param string, p *search.Predicate) error {
	f, ok := d.FieldAt(p.Field)
	if !ok || f.Kind != resource.Enum || !slices.Contains([]search.Op{search.Eq, search.Ne, search.In, search.Nin}, p.Op) {
		return nil
	}
	values := []any{p.Value}
	if vs, ok := p.Value.([]any); ok {
		values = vs
	}
	for _, v := range values {
		if s, ok := v.(string); ok && !slices.Contains(f.Values, s) {
			return apperr.InvalidQuery(param, "%q is not a value of %s; use one of %s", s, p.Field, strings.Join(f.Values, ", "))
		}
	}
	return nil
}

// pagingParams are read by the paging parser (httpapi.ListParams).
var pagingParams = []string{"limit", "page", "lt", "sort", "direction", "cursor"}

func opList() string {
	names := make([]string, len(search.Ops))
	for i, op := range search.Ops {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}

// parseSort reads sort (keys separated by commas, "-" before a key for
// descending) and direction (which applies to a single key without a
// sign; desc when not given, the spec's default).
func parseSort(s *search.Schema, sort, direction string) ([]search.SortKey, error) {
	if strings.TrimSpace(sort) == "" {
		return nil, nil
	}
	parts := strings.Split(sort, ",")
	if len(parts) > MaxSortKeys {
		return nil, apperr.InvalidQuery("sort", "names %d keys; sort by at most %d", len(parts), MaxSortKeys)
	}
	var out []search.SortKey
	for _, part := range parts {
		name := strings.TrimSpace(part)
		desc := strings.HasPrefix(name, "-")
		name = strings.TrimPrefix(name, "-")
		f, ok := s.Field(name)
		if !ok || !f.Sortable {
			return nil, apperr.InvalidQuery("sort", "%q is not a sortable field; sort by a field holding one value: %s", name, sortable(s))
		}
		if slices.ContainsFunc(out, func(k search.SortKey) bool { return k.Field == f.Name }) {
			return nil, apperr.InvalidQuery("sort", "names %s twice", f.Name)
		}
		if len(parts) == 1 && !desc {
			desc = direction != "asc"
		} else if direction != "" {
			return nil, apperr.InvalidQuery("direction", "applies to a single sort key without a sign; with several keys, or a key written -%s, give each key its direction in sort (a - before a key sorts it descending)", name)
		}
		out = append(out, search.SortKey{Field: f.Name, Desc: desc, MissingSmallest: true})
	}
	return out, nil
}

func sortable(s *search.Schema) string {
	var out []string
	for _, f := range s.Fields {
		if f.Sortable {
			out = append(out, f.Name)
		}
	}
	return strings.Join(out, ", ")
}

// fieldNames are the names of d's record fields.
func fieldNames(d *resource.Def) []string {
	var out []string
	for _, f := range d.AllFields() {
		if !f.Secret {
			out = append(out, f.Name)
		}
	}
	return out
}

// parseNames reads a comma-separated list of names, each one of allowed.
func parseNames(q url.Values, param string, allowed []string, what string) ([]string, error) {
	v, ok := q[param]
	if !ok {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(v[0], ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(allowed, name) {
			if len(allowed) == 0 {
				return nil, apperr.InvalidQuery(param, "%q is not %s; this list has none", name, what)
			}
			return nil, apperr.InvalidQuery(param, "%q is not %s; use %s", name, what, strings.Join(allowed, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, apperr.InvalidQuery(param, "names no field; give field names separated by commas")
	}
	return out, nil
}
