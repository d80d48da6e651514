package listing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// HeaderPlan is the response header naming the plan that served a list.
// A request may send it too, naming the kind of plan it wants (key,
// index, index:<resource>.<field> or search): a list that plan cannot
// serve is a 400.
const HeaderPlan = "X-Query-Plan"

// Caps is what can serve a resource's lists in this process.
type Caps struct {
	Lookups []string // fields with an exact-match index
	Sorts   []string // fields with a sort index (id and IDOrder aside)
	IDOrder []string // fields whose order is the id order (createdAt)
	// Engine names the search engine holding the resource's records
	// ("embedded", "opensearch"); "" when none does here.
	Engine string
}

// Plan is how a list is served: by the search engine (Search set) or by
// a read of the table (Page, with Lookup/Value naming a lookup partition).
type Plan struct {
	// Name is what the X-Query-Plan header says: key:<resource>,
	// index:<resource>.<field> or search:<engine>, followed by +filter
	// when conditions are evaluated on the records read and +sort when
	// the records are ordered in memory.
	Name string
	// Search is the engine's request of a search plan; Bind and Start
	// make its cursors (the position is an ordinal).
	Search *search.Request
	Bind   string
	Start  int
	// Page is the store's query of the other plans.
	Page          store.Query
	Lookup, Value string
}

// idOrdered reports whether keys order by id (or a field in id order),
// and in which direction.
func (q *Query) idOrdered(caps Caps) (ordered, desc bool) {
	switch {
	case len(q.Sort) == 0:
		return true, q.Page.Desc
	case len(q.Sort) == 1 && (q.Sort[0].Field == "id" || slices.Contains(caps.IDOrder, q.Sort[0].Field)):
		return true, q.Sort[0].Desc
	}
	return false, false
}

// keys are the sort keys with the id breaking ties, in the direction of
// the last key (so one key sorts as its index does).
func (q *Query) keys() []search.SortKey {
	if len(q.Sort) == 0 {
		return []search.SortKey{{Field: "id", Desc: q.Page.Desc}}
	}
	out := slices.Clone(q.Sort)
	if out[len(out)-1].Field != "id" {
		out = append(out, search.SortKey{Field: "id", Desc: out[len(out)-1].Desc})
	}
	return out
}

// indexable is the filter an exact-match index can serve: an equality on
// a lookup field holding a string or a boolean; -1 when there is none.
func (q *Query) indexable(res Resource, caps Caps) int {
	return slices.IndexFunc(q.Filters, func(p *search.Predicate) bool {
		if p.Op != search.Eq || !slices.Contains(caps.Lookups, p.Field) {
			return false
		}
		switch p.Value.(type) {
		case string, bool:
			return true
		}
		return false
	})
}

// Plan picks how the list is served, preferring what reads least: the
// table or an index that serves it exactly; else the search engine; else
// the narrowest index (or the table) with the conditions evaluated on
// the records read and, for a sort no index serves, the records ordered
// in memory. hint (the X-Query-Plan request header) asks for a kind of
// plan. org and typ bind the search plan's cursors.
func (q *Query) Plan(res Resource, caps Caps, org, hint string) (Plan, error) {
	want := strings.TrimSpace(hint)
	switch {
	case want == "", want == "key", want == "index", want == "search", strings.HasPrefix(want, "index:"):
	default:
		return Plan{}, planError("%q is not a plan; ask for key, index, index:<resource>.<field> or search", hint)
	}
	name := res.Def.Name
	ordered, desc := q.idOrdered(caps)
	base := q.Page
	base.Sort, base.Desc, base.Bind = "", desc, q.canonical
	idx := q.indexable(res, caps)
	var plans []Plan

	// The table or an index serving the list exactly.
	if q.Lookup == "" && len(q.Filters) == 0 && ordered {
		plans = append(plans, Plan{Name: "key:" + name, Page: base})
	}
	if q.Lookup == "" && len(q.Filters) == 0 && len(q.Sort) == 1 && slices.Contains(caps.Sorts, q.Sort[0].Field) {
		p := base
		p.Sort, p.Desc = q.Sort[0].Field, q.Sort[0].Desc
		plans = append(plans, Plan{Name: "index:" + name + "." + p.Sort, Page: p})
	}
	if q.Lookup != "" && len(q.Filters) == 0 && ordered {
		plans = append(plans, Plan{Name: "index:" + name + "." + q.Lookup, Page: base, Lookup: q.Lookup, Value: q.Value})
	}
	if idx >= 0 && len(q.Filters) == 1 && q.Lookup == "" && ordered {
		p := base
		p.Match = q.matcher(res)
		plans = append(plans, Plan{Name: "index:" + name + "." + q.Filters[0].Field, Page: p, Lookup: q.Filters[0].Field, Value: lookupValue(q.Filters[0].Value)})
	}
	// The search engine.
	if caps.Engine != "" && q.Lookup == "" && (want == "search" || len(plans) == 0) {
		sp, err := q.searchPlan(res, caps, org)
		if err != nil && want == "search" {
			return Plan{}, err
		}
		switch {
		case err == nil:
			plans = append(plans, sp)
		case sp.Start > search.MaxOffset && q.Page.Cursor != "":
			// The engine's cursor, past the depth the engine serves: the
			// other plans go on from the same position (they order alike).
			base.Offset, base.Cursor = sp.Start, ""
		}
	}
	// An index or the table, with what it cannot decide done in memory.
	residual := func(p Plan, served bool) Plan {
		if len(q.Filters) > 0 && !(served && len(q.Filters) == 1) {
			p.Name += "+filter"
		}
		p.Page.Match = q.matcher(res)
		if p.Page.Sort == "" && !ordered {
			p.Name += "+sort"
			p.Page.Order = q.order(res)
		}
		return p
	}
	if q.Lookup != "" {
		plans = append(plans, residual(Plan{Name: "index:" + name + "." + q.Lookup, Page: base, Lookup: q.Lookup, Value: q.Value}, false))
	}
	if idx >= 0 && q.Lookup == "" {
		f := q.Filters[idx]
		plans = append(plans, residual(Plan{Name: "index:" + name + "." + f.Field, Page: base, Lookup: f.Field, Value: lookupValue(f.Value)}, true))
	}
	if q.Lookup == "" && len(q.Sort) == 1 && slices.Contains(caps.Sorts, q.Sort[0].Field) {
		p := base
		p.Sort, p.Desc = q.Sort[0].Field, q.Sort[0].Desc
		plans = append(plans, residual(Plan{Name: "index:" + name + "." + p.Sort, Page: p}, false))
	}
	if q.Lookup == "" {
		plans = append(plans, residual(Plan{Name: "key:" + name, Page: base}, false))
	}

	for _, p := range plans {
		kind, _, _ := strings.Cut(p.Name, ":")
		source, _, _ := strings.Cut(p.Name, "+")
		if want == "" || want == kind || want == source {
			p.Page.Bind += "|" + p.Name // a cursor is read by the plan that made it
			return p, nil
		}
	}
	if q.Lookup != "" {
		return Plan{}, planError("%q cannot serve a list filtered with ?%s=, which its index serves; filter with filter[%s]= instead", hint, q.Lookup, q.Lookup)
	}
	var names []string
	for _, p := range plans {
		source, _, _ := strings.Cut(p.Name, "+")
		if !slices.Contains(names, source) {
			names = append(names, source)
		}
	}
	return Plan{}, planError("%q cannot serve this list here; it can be served by %s", hint, strings.Join(names, ", "))
}

// planError is a 400 naming the X-Query-Plan request header.
func planError(format string, args ...any) error {
	return &apperr.InvalidError{Field: HeaderPlan, Message: fmt.Sprintf(format, args...), In: apperr.InHeader}
}

// searchPlan is the list as a search: its filters and keys (missing
// values smallest, as an index orders them), from the page's offset.
func (q *Query) searchPlan(res Resource, caps Caps, org string) (Plan, error) {
	p := Plan{Name: "search:" + caps.Engine}
	direction := "desc"
	if !q.Page.Desc {
		direction = "asc"
	}
	p.Bind = store.Binding(res.Def.Type, org, "search", direction, q.Page.Before, q.canonical)
	p.Start = q.Page.Offset
	if q.Page.Cursor != "" {
		pos, err := store.DecodeCursor(q.Page.Cursor, p.Bind, 12)
		if err != nil {
			return p, err
		}
		n, err := strconv.Atoi(pos)
		if err != nil || n < 0 {
			return p, apperr.InvalidQuery("cursor", "is not a valid cursor; pass the X-Next-Cursor header (or the Link header's URL) of the previous page unchanged")
		}
		p.Start += n
	}
	if p.Start > search.MaxOffset {
		return p, apperr.InvalidQuery("page", "reaches past the deepest offset the search engine serves (%d)", search.MaxOffset)
	}
	r := &search.Request{Sort: q.keys(), Before: q.Page.Before, Page: 1, Limit: q.Page.Limit, From: p.Start}
	if len(q.Filters) > 0 {
		r.Filter = &search.Predicate{And: q.Filters}
	}
	p.Search = r
	return p, nil
}

// lookupValue is a filter's value as a lookup index keys it.
func lookupValue(v any) string {
	if b, ok := v.(bool); ok {
		return strconv.FormatBool(b)
	}
	s, _ := v.(string)
	return s
}

// matcher decodes a stored record and reports whether every filter holds.
func (q *Query) matcher(res Resource) func(doc string) (any, bool) {
	filters := q.Filters
	return func(doc string) (any, bool) {
		rec, ok := decode(doc)
		if !ok {
			return nil, false
		}
		for _, p := range filters {
			if !search.Match(res.Schema, p, rec) {
				return nil, false
			}
		}
		return rec, true
	}
}

// order compares two records the matcher accepted by the list's keys.
func (q *Query) order(res Resource) func(a, b any) int {
	keys := q.keys()
	return func(a, b any) int {
		return search.Compare(res.Schema, keys, a.(map[string]any), b.(map[string]any))
	}
}

// decode reads a stored record, keeping numbers exact.
func decode(doc string) (map[string]any, bool) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var rec map[string]any
	if dec.Decode(&rec) != nil || rec == nil {
		return nil, false
	}
	return rec, true
}

// Expansion is a reference field's related records: its name and the
// record (or array of records) as GET answers them, null when the
// referenced record does not exist.
type Expansion struct {
	Field string
	Value json.RawMessage
}

// Project keeps only the named fields of an encoded record (id always;
// every field when fields is empty), in the record's order, and adds the
// expansions under "expanded" when there are any (in the order asked).
// Values are copied as they are (no re-encoding).
func Project(rec []byte, fields []string, expanded []Expansion) ([]byte, error) {
	if len(fields) == 0 && expanded == nil {
		return rec, nil
	}
	dec := json.NewDecoder(bytes.NewReader(rec))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(rec))
	b.WriteByte('{')
	key := func(k string) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k) // field names: nothing to escape
		b.Write(kb)
		b.WriteByte(':')
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if len(fields) > 0 && name != "id" && !slices.Contains(fields, name) {
			continue
		}
		key(name)
		b.Write(v)
	}
	if expanded != nil {
		key("expanded")
		b.WriteByte('{')
		for i, e := range expanded {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(e.Field)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(e.Value)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ReadLimit is the 400 of a list that would read more records than a
// page may (store.MaxPageReads) where no cursor can go on from what it
// read (a *store.ReadLimitError): it names the filters and sorts an index
// serves here, which read only what they answer. Any other err is
// returned as it is.
func (q *Query) ReadLimit(caps Caps, err error) error {
	var rl *store.ReadLimitError
	if !errors.As(err, &rl) {
		return err
	}
	var lookups []string
	for _, f := range caps.Lookups {
		lookups = append(lookups, "filter["+f+"]=…")
	}
	indexed := fmt.Sprintf("an equality filter an index serves (%s)", strings.Join(lookups, ", "))
	if len(lookups) == 0 {
		indexed = "no filter (no index of this resource serves one)"
	}
	if rl.Sort {
		sorts := append(append([]string{"id"}, caps.IDOrder...), caps.Sorts...)
		return apperr.InvalidQuery("sort", "no index serves this order with these filters, and ordering the list in memory would read more than %d records; sort by an indexed field (%s), or narrow the list with %s",
			rl.Max, strings.Join(sorts, ", "), indexed)
	}
	return apperr.InvalidQuery("page", "this list's filters are evaluated on the records read, and reaching this page would read more than %d records; page with the cursor of the previous page (X-Next-Cursor) instead, or narrow the list with %s",
		rl.Max, indexed)
}
