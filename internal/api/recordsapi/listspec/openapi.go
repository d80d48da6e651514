package listspec

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/listing"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
)

// The document of a kind's generic list (GET /v1/<name>): its paging, its
// filters (filter[field][op]=value), sort keys, fields and expansions
// (package listing), each typed from the list's schema (listing.Schema),
// the X-Query-Plan header both ways, and the answer's records as a list
// shapes them. The contract checker (package apitest) validates every
// list a test makes against it, and the MCP list tools take their
// arguments from it.
//
// What kin-openapi (the contract checker) can validate decided the filter's
// schema. It decodes a deepObject parameter property by property, each by
// its schema: a property that is anyOf a scalar and an object of operators
// decodes filter[f]=v as the scalar (typed: an integer field takes an
// integer, an enum one of its values, a date a date) and filter[f][op]=v
// as the object, each operator typed. Two things it cannot check, so that
// the schema is stricter than the validation there: it keeps only the
// properties the schema names (filter[unknown]=x and filter[f][unknownOp]=x
// are dropped, not refused), and it drops an operator whose value fails to
// decode inside an anyOf branch (filter[n][gte]=abc) instead of refusing
// it. The service refuses all of these (400), and requests are validated
// only when the service accepted them, so the document loses nothing the
// checker could hold the service to. Nor can its decoder hold a field
// given both ways (filter[f]=v&filter[f][gte]=w: a key that is a value
// and an object), which the checker therefore reads as filter[f][eq]=v
// (apitest.Contract). in and nin take one string of comma-separated
// values (typed by a pattern where the type has a syntax, and marked
// openapi.CommaSeparated): a deepObject array would be
// filter[f][in][0]=a, which the service does not take.

// Operation describes the generic list of d: op's summary and
// description are set; its parameters, headers and answer are added.
func Operation(op *openapi.Operation, d *resource.Def) {
	res := Resource(d)
	op.Description += " `filter[<field>][<operator>]=` keeps the records every condition holds for, `sort` orders them by up to " +
		strconv.Itoa(listing.MaxSortKeys) + " keys, `fields` answers only some fields and `expand` adds the records reference fields name " +
		"(docs/resources.md). The `" + listing.HeaderPlan + "` header names how the list was served. " +
		"A nested deepObject parameter is undefined in OpenAPI, so the published document does not declare `filter`: clients generated from it " +
		"send the same list, filters included, as a typed body to `POST /v1/" + d.Name + "/query`."
	op.Query = recordListQuery(d, res)
	op.Headers = []openapi.Param{{Name: listing.HeaderPlan, Schema: openapi.Schema{"type": "string"},
		Description: "asks for a kind of plan: `key` (the table in id order), `index` (one of the resource's indexes), " +
			"`index:<resource>.<field>` (that index) or `search` (the search engine, where this process holds one); " +
			"a 400 when that plan cannot serve the list. Every plan answers the same records; the plan decides what they cost"}}
	op.ResponseHeaders = map[string]openapi.Param{listing.HeaderPlan: {
		Description: "the plan that served the list: `key:<resource>`, `index:<resource>.<field>` or `search:<engine>`, " +
			"followed by `+filter` when conditions were evaluated on the records read and `+sort` when the records were ordered in memory",
		Schema: openapi.Schema{"type": "string", "pattern": `^(key|index|search):[A-Za-z0-9.-]+(\+filter)?(\+sort)?$`}}}
	op.Data, op.Paged = openapi.Schema{"type": "array", "items": openapi.Ref(ListedSchemaName(d))}, true
}

// recordListQuery are the query parameters of the generic list of d: the
// paging ones, sort, direction, filter, fields, expand (when d has
// Expandable fields) and the older lookup filters.
func recordListQuery(d *resource.Def, res listing.Resource) []openapi.Param {
	var out []openapi.Param
	for _, p := range operation.ListQuery(nil, nil) {
		switch p.Name {
		case "sort":
			out = append(out, sortParam(d, res.Schema))
		case "direction":
			p.Description = "`desc` (default) or `asc`: the order of a single sort key written without a sign (`sort=name`), " +
				"or of the ids when there is no `sort`; with several keys, or a key with a sign, give each key its order in `sort` (a 400 otherwise)"
			out = append(out, p)
		default:
			out = append(out, p)
		}
	}
	out = append(out, filterParam(d))
	fields := listFieldNames(d)
	out = append(out, openapi.Param{Name: listing.ParamFields, Schema: namesSchema(fields),
		Description: "answer only these top-level fields of each record, separated by commas (`id` is always answered): " + codes(fields)})
	if len(res.Expandable) > 0 {
		var each []string
		for _, name := range res.Expandable {
			f, _ := d.Field(name)
			what := "the " + ExpandTarget(f.Target).Singular
			if f.Kind == resource.Refs {
				what = "an array of the " + ExpandTarget(f.Target).Name + " that exist"
			}
			each = append(each, "`"+name+"` ("+what+")")
		}
		out = append(out, openapi.Param{Name: listing.ParamExpand, Schema: namesSchema(res.Expandable),
			Description: "reference fields, separated by commas, whose records each record carries under `expanded`, as `GET` answers them " +
				"(`null` when the record no longer exists): " + strings.Join(each, ", ")})
	}
	for _, f := range d.Filters() {
		out = append(out, openapi.Param{Name: f, Schema: openapi.Schema{"type": "string"},
			Description: "only records whose `" + f + "` is this value, served by its index; one of these at a time (`filter[" + f + "]=` combines with other conditions)"})
	}
	return out
}

// sortParam is the sort of a list of schema s: up to MaxSortKeys fields,
// each with an optional "-".
func sortParam(d *resource.Def, s *search.Schema) openapi.Param {
	var names, keys []string
	for _, f := range s.Fields {
		if f.Sortable {
			names = append(names, f.Name)
			keys = append(keys, f.Name, "-"+f.Name)
		}
	}
	key := "-?" + alternatives(names)
	return openapi.Param{Name: "sort",
		Description: "up to " + strconv.Itoa(listing.MaxSortKeys) + " sort keys separated by commas, `-` before a key for descending " +
			"(`sort=name,-createdAt`); one key without a sign is ordered by `direction`. Ties are broken by id in the order of the last key; " +
			"a record without a value sorts as the smallest. Default: by `id`, the order records were created in. " +
			"Fields: " + codes(names) + "; indexed (served without reading every record): " + codes(d.SortFields()),
		Schema: openapi.Schema{"type": "string", "pattern": "^" + key + "(," + key + "){0," + strconv.Itoa(listing.MaxSortKeys-1) + "}$",
			openapi.CommaSeparated: openapi.Schema{"type": "array", "minItems": 1, "maxItems": listing.MaxSortKeys,
				"items": openapi.Schema{"type": "string", "enum": operation.Enums(keys)}}}}
}

// namesSchema is a comma-separated list of some of names.
func namesSchema(names []string) openapi.Schema {
	name := alternatives(names)
	return openapi.Schema{"type": "string", "pattern": "^" + name + "(," + name + ")*$",
		openapi.CommaSeparated: openapi.Schema{"type": "array", "minItems": 1, "items": openapi.Schema{"type": "string", "enum": operation.Enums(names)}}}
}

// alternatives is a pattern matching one of names.
func alternatives(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "(" + strings.Join(quoted, "|") + ")"
}

// listFieldNames are the fields fields= may name: d's top-level fields but
// its secret ones (as listing.Parse reads fields=).
func listFieldNames(d *resource.Def) []string {
	var out []string
	for _, f := range d.AllFields() {
		if !f.Secret {
			out = append(out, f.Name)
		}
	}
	return out
}

// filterParam is filter, a deepObject whose schema is d's filter
// component (FilterObjectName: a named type in generated clients).
func filterParam(d *resource.Def) openapi.Param {
	return openapi.Param{Name: listing.ParamFilter, Style: "deepObject", Explode: true, Schema: openapi.Ref(FilterObjectName(d)),
		Description: "conditions every record answered meets, at most " + strconv.Itoa(listing.MaxFilters) + ": `filter[<field>]=<value>` (equal) or " +
			"`filter[<field>][<operator>]=<value>`, a nested field by its path (`filter[location.city]=Paris`). " +
			"Operators: `eq`, `ne` (a record without a value is not equal), `in` and `nin` (up to " + strconv.Itoa(search.MaxInValues) +
			" values separated by commas), `gt`, `gte`, `lt`, `lte` (numbers and dates), `contains` (strings, ignoring case and diacritics; " +
			"an array of strings: holds the element), `startsWith` (strings, ignoring case and diacritics), `exists` (`true` or `false`). " +
			"Values are of the field's type: a number, `true`/`false`, a date `YYYY-MM-DD`, a date-time in RFC 3339."}
}

// FilterObjectName is the component name of the filter of d's list:
// "DealFilter".
func FilterObjectName(d *resource.Def) string { return openapi.SchemaName(d) + "Filter" }

// filterObject is the filter of d's list: a property per field of its
// schema, the value for eq or an object of operators (a shared component
// per type, FilterSchemaName; inline for an enum, whose values are its
// own).
func filterObject(d *resource.Def) openapi.Schema {
	return conditions(d, false, "conditions on "+d.Name+" by field (`filter[<field>]` or `filter[<field>][<operator>]`), all of which must hold")
}

// QueryFilterObjectName is the component name of the filter of d's list
// query body: "DealQueryFilter".
func QueryFilterObjectName(d *resource.Def) string { return openapi.SchemaName(d) + "QueryFilter" }

// queryFilterObject is the filter of d's list query body: filterObject's
// conditions as typed JSON (in and nin take arrays; a shared component per
// type, QueryFilterSchemaName).
func queryFilterObject(d *resource.Def) openapi.Schema {
	return conditions(d, true, "conditions on "+d.Name+" by field, all of which must hold: `{\"<field>\": <value>}` (equal) or "+
		"`{\"<field>\": {\"<operator>\": <value>}}`, a nested field by its path (`\"location.city\"`); `in` and `nin` take an array")
}

// conditions is an object of a condition per field of d's list schema,
// as the query parameters (filter) or a query body (body) take them.
func conditions(d *resource.Def, body bool, description string) openapi.Schema {
	props := openapi.Schema{}
	for _, f := range listing.Schema(d).Fields {
		name := FilterSchemaName(f.Type)
		if body {
			name = QueryFilterSchemaName(f.Type)
		}
		props[f.Name] = openapi.Ref(name)
		if df, ok := d.FieldAt(f.Name); ok && df.Kind == resource.Enum {
			props[f.Name] = filterSchema(f.Type, openapi.Schema{"type": "string", "enum": operation.Enums(df.Values)}, body)
		}
	}
	return openapi.Schema{"type": "object", "additionalProperties": false, "properties": props, "description": description}
}

// QueryFilterSchemaName is the component name of a list query body's
// condition on a field of type t: "QueryStringFilter".
func QueryFilterSchemaName(t search.Type) string { return "Query" + FilterSchemaName(t) }

// QuerySchemaName is the component name of d's list query body:
// "DealQuery".
func QuerySchemaName(d *resource.Def) string { return openapi.SchemaName(d) + "Query" }

// querySchema is the body of POST /v1/<name>/query: the GET list's
// filter, sort, fields, expand, limit and cursor as typed JSON.
func querySchema(d *resource.Def) openapi.Schema {
	res := Resource(d)
	props := openapi.Schema{
		listing.BodyFilter: openapi.Ref(QueryFilterObjectName(d)),
		listing.BodySort: openapi.Schema{"type": "array", "maxItems": listing.MaxSortKeys,
			"description": "up to " + strconv.Itoa(listing.MaxSortKeys) + " sort keys, the first the most significant; ties are broken by id in the order of the last key, " +
				"and a record without a value sorts as the smallest. Default: by `id`, newest first. Indexed (served without reading every record): " + codes(d.SortFields()),
			"items": openapi.Ref(QuerySortKeyName(d))},
		listing.BodyFields: openapi.Schema{"type": "array", "minItems": 1, "items": openapi.Schema{"type": "string", "enum": operation.Enums(listFieldNames(d))},
			"description": "answer only these top-level fields of each record (`id` is always answered)"},
		listing.BodyLimit: openapi.Schema{"type": "integer", "minimum": 1, "maximum": httpapi.MaxLimit, "default": httpapi.DefaultLimit,
			"description": "records a page holds at most (fewer when the page would pass the answer's byte budget, or has read what a page may read)"},
		listing.BodyCursor: openapi.Schema{"type": "string", "minLength": 1, "maxLength": 4096,
			"description": "the `X-Next-Cursor` of the previous page, sent with the same filter and sort"},
	}
	if len(res.Expandable) > 0 {
		props[listing.BodyExpand] = openapi.Schema{"type": "array", "minItems": 1, "items": openapi.Schema{"type": "string", "enum": operation.Enums(res.Expandable)},
			"description": "reference fields whose records each record carries under `expanded`, as `GET` answers them (`null` when the record no longer exists)"}
	}
	return openapi.Schema{"type": "object", "additionalProperties": false, "properties": props,
		"description": "a list of " + d.Name + " as `GET /v1/" + d.Name + "` takes it, as typed JSON"}
}

// QuerySortKeyName is the component name of a sort key of d's list
// query body: "DealQuerySortKey".
func QuerySortKeyName(d *resource.Def) string { return openapi.SchemaName(d) + "QuerySortKey" }

// querySortKey is a sort key of d's list query body: a field holding one
// value, and its direction.
func querySortKey(d *resource.Def) openapi.Schema {
	var sortable []string
	for _, f := range Resource(d).Schema.Fields {
		if f.Sortable {
			sortable = append(sortable, f.Name)
		}
	}
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"field", "direction"},
		"description": "a sort key of " + d.Name + ": a field and its direction",
		"properties": openapi.Schema{
			"field":     openapi.Schema{"type": "string", "enum": operation.Enums(sortable), "description": "a field holding one value"},
			"direction": openapi.Schema{"type": "string", "enum": operation.Enums([]string{"asc", "desc"}), "description": "ascending or descending"}}}
}

// QueryOperation describes POST /v1/<name>/query of d.
func QueryOperation(op *openapi.Operation, d *resource.Def) {
	Operation(op, d)
	op.Query = nil
	op.Body, op.BodyOptional = openapi.Ref(QuerySchemaName(d)), true
}

// filterTypes are the search types, one for each filter schema.
var filterTypes = []search.Type{search.Keyword, search.Keywords, search.Integer, search.Number, search.Bool, search.Date, search.DateTime}

// FilterSchemaName is the component name of a filter on a field of type
// t: "StringFilter", "DateFilter".
func FilterSchemaName(t search.Type) string {
	switch t {
	case search.Keywords:
		return "StringArrayFilter"
	case search.Integer:
		return "IntegerFilter"
	case search.Number:
		return "NumberFilter"
	case search.Bool:
		return "BooleanFilter"
	case search.Date:
		return "DateFilter"
	case search.DateTime:
		return "DateTimeFilter"
	}
	return "StringFilter"
}

// FilterComponents adds the filter schemas to out: each type's, and the
// filter of each declared kind's list.
func FilterComponents(out map[string]openapi.Schema) {
	for _, t := range filterTypes {
		out[FilterSchemaName(t)] = filterSchema(t, filterValue(t), false)
		out[QueryFilterSchemaName(t)] = filterSchema(t, filterValue(t), true)
	}
	for _, d := range kinds.All() {
		out[FilterObjectName(d)] = filterObject(d)
		out[QueryFilterObjectName(d)] = queryFilterObject(d)
		out[QuerySchemaName(d)] = querySchema(d)
		out[QuerySortKeyName(d)] = querySortKey(d)
	}
}

// FilterOps are the operators a filter on a field of type t takes, in
// search.Ops's order: those search.ParseCondition accepts for it.
func FilterOps(t search.Type) []search.Op {
	var out []search.Op
	for _, op := range search.Ops {
		switch op {
		case search.Gt, search.Gte, search.Lt, search.Lte:
			if t != search.Number && t != search.Integer && t != search.Date && t != search.DateTime {
				continue
			}
		case search.Contains:
			if t != search.Keyword && t != search.Text && t != search.Keywords {
				continue
			}
		case search.StartsWith:
			if t != search.Keyword && t != search.Text {
				continue
			}
		}
		out = append(out, op)
	}
	return out
}

// filterSchema is a filter's value on a field of type t, whose values
// value describes: the value itself (eq), or an object of operators and
// their values; in a body (a list query's), in and nin take an array.
func filterSchema(t search.Type, value openapi.Schema, body bool) openapi.Schema {
	ops := openapi.Schema{}
	for _, op := range FilterOps(t) {
		switch op {
		case search.Exists:
			ops[string(op)] = openapi.Schema{"type": "boolean", "description": "true: the field has a value; false: it has none"}
		case search.In, search.Nin:
			ops[string(op)] = valueList(value)
			if body {
				ops[string(op)] = openapi.Schema{"type": "array", "minItems": 1, "maxItems": search.MaxInValues, "items": value,
					"description": "1 to " + strconv.Itoa(search.MaxInValues) + " values"}
			}
		case search.Contains, search.StartsWith:
			ops[string(op)] = openapi.Schema{"type": "string", "maxLength": search.MaxValueLength}
		default:
			ops[string(op)] = value
		}
	}
	return openapi.Schema{"description": "a condition on a field of type " + filterTypeName(t) + ": its value (equal), or an object of operators and their values",
		"anyOf": []any{value, openapi.Schema{"type": "object", "additionalProperties": false, "minProperties": 1, "properties": ops}}}
}

// filterValue is the schema of one value of a field of type t (an
// element, for an array of strings).
func filterValue(t search.Type) openapi.Schema {
	switch t {
	case search.Integer:
		return openapi.Schema{"type": "integer"}
	case search.Number:
		return openapi.Schema{"type": "number"}
	case search.Bool:
		return openapi.Schema{"type": "boolean"}
	case search.Date:
		return openapi.Schema{"type": "string", "format": "date"}
	case search.DateTime:
		return openapi.Schema{"type": "string", "format": "date-time"}
	}
	return openapi.Schema{"type": "string", "maxLength": search.MaxValueLength}
}

// valueList is the schema of in's and nin's values: one string, the
// values separated by commas, typed by a pattern where value has a syntax.
func valueList(value openapi.Schema) openapi.Schema {
	var one string
	switch {
	case value["enum"] != nil:
		var vs []string
		for _, v := range value["enum"].([]any) {
			vs = append(vs, v.(string))
		}
		one = alternatives(vs)
	case value["type"] == "integer":
		one = `[+-]?[0-9]+`
	case value["type"] == "number":
		one = `[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?`
	case value["type"] == "boolean":
		one = `(true|false)`
	case value["format"] == "date":
		one = `[0-9]{4}-[0-9]{2}-[0-9]{2}`
	}
	s := openapi.Schema{"type": "string", "description": "1 to " + strconv.Itoa(search.MaxInValues) + " values separated by commas",
		openapi.CommaSeparated: openapi.Schema{"type": "array", "minItems": 1, "maxItems": search.MaxInValues, "items": value,
			"description": "1 to " + strconv.Itoa(search.MaxInValues) + " values"}}
	if one != "" {
		s["pattern"] = "^" + one + "(," + one + ")*$"
	}
	return s
}

// filterTypeName names a filter's type as the documentation does.
func filterTypeName(t search.Type) string {
	switch t {
	case search.Integer:
		return "integer"
	case search.Number:
		return "number"
	case search.Bool:
		return "boolean"
	case search.Date:
		return "date"
	case search.DateTime:
		return "date-time"
	case search.Keywords:
		return "array of strings"
	}
	return "string"
}

// ListedSchemaName is the component name of d's records as its list
// answers them: "ListedCompany".
func ListedSchemaName(d *resource.Def) string { return "Listed" + openapi.SchemaName(d) }

// ListedSchema is d's record as its list answers it: every field, or the
// ones fields= names (and id); with expand=, the records its reference
// fields name, under expanded.
func ListedSchema(d *resource.Def) openapi.Schema {
	s := openapi.Record(d, openapi.Output)
	s["required"] = []any{resource.FieldID}
	s["description"] = operation.WithArticle(d.Singular) + " as its list answers it: every field, or those `fields` names (and `id`)"
	expandable := Expandable(d)
	if len(expandable) == 0 {
		return s
	}
	s["description"] = s["description"].(string) + "; with `expand`, the records its reference fields name, under `expanded`"
	props := openapi.Schema{}
	for _, name := range expandable {
		f, _ := d.Field(name)
		target := openapi.Ref(openapi.SchemaName(ExpandTarget(f.Target)))
		if f.Kind == resource.Refs {
			props[name] = openapi.Schema{"type": "array", "items": target, "description": "the " + ExpandTarget(f.Target).Name + " `" + name + "` names that exist"}
		} else {
			props[name] = openapi.Schema{"anyOf": []any{target, openapi.Schema{"type": "null"}},
				"description": "the " + ExpandTarget(f.Target).Singular + " `" + name + "` names; null when there is none"}
		}
	}
	s["properties"].(openapi.Schema)["expanded"] = openapi.Schema{"type": "object", "additionalProperties": false, "properties": props,
		"description": "with `expand`: for each reference field it names, the record (or records) the field refers to, as `GET` answers them"}
	return s
}

// DocList is what the generic list of d takes beyond paging, for
// docs/resources.md (resources.Markdown).
func DocList(d *resource.Def) *resource.DocList {
	res := Resource(d)
	out := &resource.DocList{Fields: listFieldNames(d), Expand: res.Expandable, IndexedSort: d.SortFields()}
	for _, f := range res.Schema.Fields {
		if f.Sortable {
			out.Sort = append(out.Sort, f.Name)
		}
		var ops []string
		for _, op := range FilterOps(f.Type) {
			ops = append(ops, string(op))
		}
		out.Filters = append(out.Filters, resource.DocFilter{Name: f.Name, Type: filterTypeName(f.Type), Ops: ops})
	}
	return out
}

func codes(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}
