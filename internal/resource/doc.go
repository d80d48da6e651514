package resource

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// DocRoute is one route of a declared resource, for its documentation:
// Answer says what it does and answers ("" for the generic create, list,
// get, update, delete, upsert and batch, which the declaration says).
type DocRoute struct{ Method, Path, Answer string }

// DocList is what a resource's generic list takes beyond paging, for its
// documentation (made from the list's schema: recordsapi.DocList).
type DocList struct {
	// Filters are the fields filter[<field>][<op>]= may name.
	Filters []DocFilter
	// Sort are the fields sort= may name; IndexedSort those an index
	// orders (a list sorted by one of them alone reads no more than a page).
	Sort, IndexedSort []string
	// Fields are the fields fields= may name.
	Fields []string
	// Expand are the reference fields expand= may name.
	Expand []string
}

// DocFilter is a filterable field: its path, its type as the
// documentation names it ("string", "array of strings", "date") and the
// operators it takes.
type DocFilter struct {
	Name, Type string
	Ops        []string
}

// Markdown documents declared resources, one section each: its routes,
// every field with its type and rules, what its list takes (lists gives
// it; nil: only the lookup filters are said), unique fields, and what
// references to and from it do on write and on delete. routes gives each
// resource's routes; a Def's Rules, then notes (by resource name), add a
// paragraph of behaviour of its own; others describes the resources
// outside the layer that references may name. Titles are level 2.
func Markdown(defs []*Def, routes func(*Def) []DocRoute, lists func(*Def) *DocList, notes map[string]string, others map[string]DocExternal) string {
	w := docWriter{singular: map[string]string{}, anchor: map[string]string{}}
	for name, o := range others {
		w.singular[name], w.anchor[name] = o.Singular, o.Anchor
	}
	for _, d := range defs {
		w.singular[d.Name], w.anchor[d.Name] = d.Singular, d.Name
	}
	for _, d := range defs {
		note := d.Rules
		if n := notes[d.Name]; n != "" && note != "" {
			note += "\n\n" + n
		} else if n != "" {
			note = n
		}
		var list *DocList
		if lists != nil {
			list = lists(d)
		}
		w.def(d, defs, routes(d), list, note)
	}
	return w.b.String()
}

// DocExternal describes a resource outside the layer for the
// documentation: its singular and the anchor of its section.
type DocExternal struct{ Singular, Anchor string }

type docWriter struct {
	b        strings.Builder
	singular map[string]string // by resource name
	anchor   map[string]string // by resource name
}

// link is a resource's name linking to its section.
func (w *docWriter) link(name string) string { return "[" + name + "](#" + w.anchor[name] + ")" }

func (w *docWriter) def(d *Def, defs []*Def, routes []DocRoute, list *DocList, note string) {
	b := &w.b
	fmt.Fprintf(b, "## %s\n\n%s\n\n", title(d.Name), d.Doc)
	fmt.Fprintf(b, "Served by the `%s` function. Ids look like `%s_…`.\n\n", d.Function, d.IDPrefix)

	b.WriteString("| Method | Path | Answer |\n|---|---|---|\n")
	for _, r := range routes {
		fmt.Fprintf(b, "| `%s` | `%s` | %s |\n", r.Method, r.Path, routeDoc(d, r, list))
		if d.MultiGet && r.Method == "GET" && strings.HasSuffix(r.Path, "/{id}") {
			fmt.Fprintf(b, "| `GET` | `%s` | up to 100 %s of the organization in one read: in the order asked, each once, unknown ids left out; more than 100 ids or an empty id is 400 |\n",
				strings.TrimSuffix(r.Path, "{id}")+MultiGetPrefix+"{id},{id},…", d.Name)
		}
	}
	b.WriteString("\n")

	b.WriteString("| Field | Type | Rules | Description |\n|---|---|---|---|\n")
	for _, f := range d.allFields() {
		w.field(f, "")
	}
	b.WriteString("\n")

	if list != nil {
		w.filters(list)
	}
	if fs := d.Filters(); len(fs) > 0 {
		var parts []string
		for _, name := range fs {
			f, _ := d.Field(name)
			parts = append(parts, "`?"+name+"=`"+filterNote(f))
		}
		fmt.Fprintf(b, "- **Lookup filters** (one at a time, each served by its index): %s.\n", strings.Join(parts, ", "))
	} else {
		b.WriteString("- **Lookup filters**: none.\n")
	}
	if list != nil {
		w.shape(d, list)
	} else {
		fmt.Fprintf(b, "- **Sort** (`sort=`; text case-insensitive): %s.\n", codeList(d.SortFields()))
	}
	if d.Series {
		fmt.Fprintf(b, "- **Metric series**: its records hold them; a point's `resource` is `%s:<id>` ([`docs/metrics.md`](metrics.md)).\n", d.Name)
	}
	var unique []string
	for _, f := range d.Fields {
		if f.Unique {
			s := "`" + f.Name + "`"
			if f.Fold {
				s += " (case-insensitive)"
			}
			unique = append(unique, s)
		}
	}
	if len(unique) > 0 {
		fmt.Fprintf(b, "- **Unique** in the organization: %s; a second record with the same value is 409 naming the field and the record that holds it.\n", strings.Join(unique, ", "))
	}
	if refs := w.refPaths(d.Fields, ""); len(refs) > 0 {
		fmt.Fprintf(b, "- **References** (checked on create and when changed: an id that is not a record of the organization is 400 naming the field): %s.\n", strings.Join(refs, "; "))
	}
	w.deletes(d, defs)
	if note != "" {
		fmt.Fprintf(b, "\n%s\n", note)
	}
	b.WriteString("\n")
}

// filters lists the fields a list filters by, by type and operators (the
// syntax is the page's, said once).
func (w *docWriter) filters(l *DocList) {
	type group struct {
		typ, ops string
		names    []string
	}
	var groups []*group
	for _, f := range l.Filters {
		ops := strings.Join(f.Ops, ", ")
		i := slices.IndexFunc(groups, func(g *group) bool { return g.typ == f.Type && g.ops == ops })
		if i < 0 {
			groups = append(groups, &group{typ: f.Type, ops: ops})
			i = len(groups) - 1
		}
		groups[i].names = append(groups[i].names, f.Name)
	}
	var parts []string
	for _, g := range groups {
		parts = append(parts, fmt.Sprintf("%s (%s): %s", plural(g.typ), g.ops, codeList(g.names)))
	}
	fmt.Fprintf(&w.b, "- **Filters** (`filter[<field>]=`, `filter[<field>][<operator>]=`): %s.\n", strings.Join(parts, "; "))
}

// shape says what d's list sorts by, which fields it answers and which
// references it expands.
func (w *docWriter) shape(d *Def, l *DocList) {
	b := &w.b
	fmt.Fprintf(b, "- **Sort** (`sort=a,-b`; text case-insensitive): %s; served by an index when alone: %s.\n", codeList(l.Sort), codeList(l.IndexedSort))
	var left []string
	for _, f := range d.allFields() {
		if !slices.Contains(l.Fields, f.Name) {
			left = append(left, f.Name)
		}
	}
	if len(left) == 0 {
		b.WriteString("- **Fields** (`fields=`): any top-level field above.\n")
	} else {
		fmt.Fprintf(b, "- **Fields** (`fields=`): any top-level field above but %s.\n", codeList(left))
	}
	if len(l.Expand) == 0 {
		b.WriteString("- **Expand**: none.\n")
		return
	}
	var exp []string
	for _, name := range l.Expand {
		f, _ := d.Field(name)
		if f.Kind == Refs {
			exp = append(exp, fmt.Sprintf("`%s` (an array of the %s that exist)", name, w.link(f.Target)))
		} else {
			exp = append(exp, fmt.Sprintf("`%s` (%s, or `null`)", name, w.linkOne(f.Target)))
		}
	}
	fmt.Fprintf(b, "- **Expand** (`expand=`): %s.\n", strings.Join(exp, ", "))
}

// linkOne is "the <singular>" of a resource, linking to its section.
func (w *docWriter) linkOne(name string) string {
	return "the [" + w.singular[name] + "](#" + w.anchor[name] + ")"
}

// plural is a type's name for several fields of it.
func plural(typ string) string {
	if rest, ok := strings.CutPrefix(typ, "array of "); ok {
		return "arrays of " + rest
	}
	return typ + "s"
}

// routeDoc says what a route answers (list: what its list takes, when
// known). A route without an Answer is one of the generic ones, told by
// its method and path: create, batch and upsert write the collection
// (/<name>, /<name>/batch), get, update and delete one record (/{id}). A
// route that is none of them has no label to fall back on: it panics,
// rather than be documented as another.
func routeDoc(d *Def, r DocRoute, list *DocList) string {
	collection, one := strings.HasSuffix(r.Path, "/"+d.Name), strings.HasSuffix(r.Path, "/{id}")
	switch {
	case r.Answer != "":
		return r.Answer
	case r.Method == "POST" && collection:
		return "create: `201` with the " + d.Singular
	case r.Method == "POST" && strings.HasSuffix(r.Path, "/"+d.Name+"/batch"):
		return batchDoc(d)
	case r.Method == "POST" && strings.HasSuffix(r.Path, "/"+d.Name+"/query"):
		return "the list as a typed JSON body: `filter`, `sort`, `fields`, `expand`, `limit`, `cursor`; the same records, plan and cursors as `GET`"
	case r.Method == "GET" && collection:
		out := "list, newest first: `limit`, `page`, `lt`, `sort`, `direction`, `cursor`"
		if list != nil {
			out += ", `filter[…]`, `fields`"
			if len(list.Expand) > 0 {
				out += ", `expand`"
			}
		}
		if len(d.Filters()) > 0 {
			out += " and one lookup filter"
		}
		return out
	case r.Method == "GET" && one:
		return "one " + d.Singular + ", with its `ETag`"
	case r.Method == "PUT" && one:
		return "partial update: `200` with the " + d.Singular + "; `If-Match` honoured"
	case r.Method == "PUT" && collection:
		return upsertDoc(d)
	case r.Method == "DELETE" && one:
		return "`204`; `If-Match` honoured"
	}
	panic(fmt.Sprintf("resource: %s %s of %s is no generic route: its DocRoute needs an Answer", r.Method, r.Path, d.Name))
}

// upsertDoc is the label of PUT /<name>?match=: the upsert by a unique
// field, which creates or updates.
func upsertDoc(d *Def) string {
	return fmt.Sprintf("upsert by a unique field (`?match=` %s): `201` with the %s created when none holds the body's value, "+
		"else `200` with it updated (the fields sent)", orList(d.UniqueFields()), d.Singular)
}

// batchDoc is the label of POST /<name>/batch: operations applied in
// order, each answered in the one 200.
func batchDoc(d *Def) string {
	ops := "`create`, `update`, "
	if len(d.UniqueFields()) > 0 {
		ops += "`upsert`, "
	}
	return "batch of " + ops + "`delete` operations, applied in order: `200` with one result per operation " +
		"(`index`, `status`, and `data` or `error`), whatever their statuses; `atomic` writes all or none"
}

// orList is "`a`", "`a` or `b`", "`a`, `b` or `c`".
func orList(names []string) string {
	s := codeList(names)
	if i := strings.LastIndex(s, ", "); i >= 0 {
		s = s[:i] + " or " + s[i+len(", "):]
	}
	return s
}

func (w *docWriter) field(f Field, prefix string) {
	name := prefix + f.Name
	r := strings.Join(rules(f), "; ")
	if r == "" {
		r = "—"
	}
	fmt.Fprintf(&w.b, "| `%s` | %s | %s | %s |\n", name, w.typeDoc(f), r, escape(f.Doc))
	switch f.Kind {
	case Struct:
		for _, sub := range f.Fields {
			w.field(sub, name+".")
		}
	case Structs:
		for _, sub := range f.Fields {
			w.field(sub, name+"[].")
		}
	case Object:
		if f.Members != nil {
			w.field(*f.Members, name+".")
		}
	}
}

// typeDoc is a field's type, with the resources a reference names.
func (w *docWriter) typeDoc(f Field) string {
	switch f.Kind {
	case Ref:
		if f.TargetBy != "" {
			return "reference to " + w.targetsDoc(f)
		}
		return "reference to " + w.link(f.Target)
	case Refs:
		return "array of references to " + w.link(f.Target)
	case Enum:
		if f.Open {
			return "string"
		}
		return "string (enum)"
	case String, Text:
		return "string"
	case URL, Email, Date, DateTime:
		return "string (" + f.Kind.String() + ")"
	}
	return f.Kind.String()
}

// targetsDoc lists the resources a Ref with TargetBy names, by the
// sibling's value.
func (w *docWriter) targetsDoc(f Field) string {
	keys := make([]string, 0, len(f.Targets))
	for k := range f.Targets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (`%s` `%s`)", w.link(f.Targets[k]), f.TargetBy, k)
	}
	return strings.Join(parts, ", ")
}

// rules lists what a value must be and what the service does with it.
func rules(f Field) []string {
	var out []string
	switch {
	case f.ReadOnly:
		out = append(out, "read-only")
	case f.Required:
		out = append(out, "required")
	}
	if f.Immutable {
		out = append(out, "immutable (set on create only)")
	}
	if !f.ReadOnly {
		switch f.Kind {
		case String, Text, URL:
			if f.Verbatim {
				out = append(out, fmt.Sprintf("at most %s characters", count(f.MaxLength())))
			} else {
				out = append(out, fmt.Sprintf("1 to %s characters", count(f.MaxLength())))
			}
			if f.Kind == Text {
				out = append(out, "line breaks allowed")
			}
		case Email:
			out = append(out, "at most 254 characters")
		case Date:
			out = append(out, "YYYY-MM-DD")
		case DateTime:
			out = append(out, "RFC 3339, shown in UTC with milliseconds")
		case Int, Number:
			if f.Min != nil || f.Max != nil {
				out = append(out, bounds(f.Min, f.Max))
			}
		case Strings:
			out = append(out, fmt.Sprintf("at most %s items of 1 to %s characters, duplicates dropped", count(f.MaxElements()), count(f.MaxLength())))
		case Refs:
			out = append(out, fmt.Sprintf("at most %s ids, duplicates dropped", count(f.MaxElements())))
		case Structs:
			out = append(out, fmt.Sprintf("at most %s items", count(f.MaxElements())))
		case Object:
			out = append(out, fmt.Sprintf("any JSON object up to %d KiB, %d levels deep", jsonbody.MaxFreeBytes>>10, jsonbody.MaxDepth))
		}
	}
	if f.Rule != "" {
		out = append(out, f.Rule)
	}
	switch {
	case f.Kind == Enum && f.Open:
		out = append(out, "known values "+codeList(f.Values)+"; another may come, accept it")
	case f.Kind == Enum:
		out = append(out, "one of "+codeList(f.Values))
	}
	if f.Default != nil {
		v, _ := json.Marshal(f.Default)
		out = append(out, "default `"+string(v)+"`")
	}
	if f.Unique {
		if f.Fold {
			out = append(out, "unique (case-insensitive)")
		} else {
			out = append(out, "unique")
		}
	}
	if f.Lookup {
		out = append(out, "filter")
	}
	if f.Sort {
		out = append(out, "sortable")
	}
	if f.Restrict {
		out = append(out, "blocks deleting its target")
	}
	return out
}

// filterNote says what a filter value must be.
func filterNote(f Field) string {
	switch {
	case f.Kind == Enum:
		return " (" + codeList(f.Values) + ")"
	case f.Kind == Bool:
		return " (`true` or `false`)"
	case f.Fold:
		return " (case-insensitive)"
	}
	return ""
}

// refPaths describes the references among fields, nested ones by path.
func (w *docWriter) refPaths(fields []Field, prefix string) []string {
	var out []string
	for _, f := range fields {
		path := prefix + f.Name
		switch f.Kind {
		case Ref:
			if f.TargetBy != "" {
				out = append(out, fmt.Sprintf("`%s` names %s", path, w.targetsDoc(f)))
			} else {
				out = append(out, fmt.Sprintf("`%s` names %s", path, article(w.singular[f.Target])))
			}
		case Refs:
			out = append(out, fmt.Sprintf("each of `%s` names %s (400 naming `%s[i]`)", path, article(w.singular[f.Target]), path))
		case Struct:
			out = append(out, w.refPaths(f.Fields, path+".")...)
		case Structs:
			out = append(out, w.refPaths(f.Fields, path+"[i].")...)
		}
	}
	return out
}

// referrer is a field of another resource that may name a record.
type referrer struct {
	def      *Def
	path     string
	restrict bool
}

// referrers lists the fields of defs that may name a record of target.
func referrers(target string, defs []*Def) []referrer {
	var out []referrer
	var walk func(d *Def, fields []Field, prefix string)
	walk = func(d *Def, fields []Field, prefix string) {
		for _, f := range fields {
			path := prefix + f.Name
			switch f.Kind {
			case Ref, Refs:
				if f.Target == target || slices.Contains(mapValues(f.Targets), target) {
					out = append(out, referrer{d, path, f.Restrict})
				}
			case Struct:
				walk(d, f.Fields, path+".")
			case Structs:
				walk(d, f.Fields, path+"[].")
			}
		}
	}
	for _, d := range defs {
		walk(d, d.Fields, "")
	}
	return out
}

// writeDeletes says what deleting a record does to the records that name it.
func (w *docWriter) deletes(d *Def, defs []*Def) {
	b := &w.b
	var restrict, dangling []string
	for _, r := range referrers(d.Name, defs) {
		s := fmt.Sprintf("%s `%s`", w.link(r.def.Name), r.path)
		if r.restrict {
			restrict = append(restrict, s)
		} else {
			dangling = append(dangling, s)
		}
	}
	if len(restrict) > 0 {
		fmt.Fprintf(b, "- **Delete** is refused with 409 naming a referencing record while one of these names the %s: %s.\n", d.Singular, strings.Join(restrict, ", "))
	}
	switch {
	case len(dangling) > 0:
		fmt.Fprintf(b, "- **After a delete** these keep the %s's id as stored (a dangling reference, shown as is): %s.\n", d.Singular, strings.Join(dangling, ", "))
	case len(restrict) == 0:
		fmt.Fprintf(b, "- **Delete**: no other resource names %s.\n", article(d.Singular))
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func title(name string) string { return strings.ToUpper(name[:1]) + name[1:] }

func codeList(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
}

// count writes n with a thousands separator.
func count(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d,%03d", n/1000, n%1000)
}

// escape keeps a description inside its table cell.
func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
