package listing

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Members of a list query's body (POST /v1/<resource>/query): the GET
// list's parameters as typed JSON, for clients generated from the
// contract (a deepObject query parameter is undefined in OpenAPI).
const (
	BodyFilter = "filter" // {"<field>": <value>} or {"<field>": {"<operator>": <value>}}
	BodySort   = "sort"   // [{"field": "<field>", "direction": "asc"|"desc"}]
	BodyFields = "fields" // ["<field>"]
	BodyExpand = "expand" // ["<reference field>"]
	BodyLimit  = "limit"  // 1 to MaxLimit
	BodyCursor = "cursor" // X-Next-Cursor of the previous page
)

// BodyMembers are the members a list query's body takes.
var BodyMembers = []string{BodyFilter, BodySort, BodyFields, BodyExpand, BodyLimit, BodyCursor}

// Decode reads a list query's body for res: the same Query a GET of the
// list with the same filters, sort keys, fields, expansions, limit and
// cursor parses to (Parse), so that the planner, the byte budget and the
// cursors serve both alike. maxLimit is the largest limit (a larger one
// is a 400, where GET clamps it); parsePage reads limit and cursor as
// the GET list's paging (httpapi.ParsePage). An empty body is the first
// page of the whole list.
func Decode(res Resource, body []byte, maxLimit int, parsePage func(url.Values) (store.Query, error)) (*Query, error) {
	out := &Query{}
	paging := url.Values{}
	o := &jsonbody.Object{}
	if len(strings.TrimSpace(string(body))) > 0 {
		var err error
		if o, err = jsonbody.ParseObject(body, BodyMembers...); err != nil {
			return nil, err
		}
	}
	limit, err := o.Number(BodyLimit)
	if err != nil {
		return nil, err
	}
	if limit.Set && !limit.Null {
		n, err := strconv.Atoi(limit.Value.String())
		if err != nil || n < 1 || n > maxLimit {
			return nil, apperr.Invalid(BodyLimit, "must be an integer from 1 to %d", maxLimit)
		}
		paging.Set("limit", strconv.Itoa(n))
	}
	cursor, err := o.String(BodyCursor, jsonbody.Text{Max: 4096})
	if err != nil {
		return nil, err
	}
	if cursor.Set && !cursor.Null && cursor.Value != "" {
		paging.Set("cursor", cursor.Value)
	}
	if out.Page, err = parsePage(paging); err != nil {
		return nil, bodyError(err, BodyCursor)
	}

	if raw, ok := o.Raw(BodyFilter); ok && strings.TrimSpace(string(raw)) != "null" {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, apperr.Invalid(BodyFilter, "must be an object of fields, such as {\"sector\": \"AI\", \"employeeCount\": {\"gte\": 10}}")
		}
		for _, field := range slices.Sorted(maps.Keys(fields)) {
			path := BodyFilter + "." + field
			conds := map[string]json.RawMessage{string(search.Eq): fields[field]}
			if v := strings.TrimSpace(string(fields[field])); strings.HasPrefix(v, "{") {
				conds = nil
				if err := json.Unmarshal(fields[field], &conds); err != nil || len(conds) == 0 {
					return nil, apperr.Invalid(path, "must be a value (equal) or an object of operators and values, such as {\"gte\": 10}; operators are %s", opList())
				}
			}
			for _, op := range slices.Sorted(maps.Keys(conds)) {
				at := path
				if len(conds) > 1 || op != string(search.Eq) || strings.HasPrefix(strings.TrimSpace(string(fields[field])), "{") {
					at = path + "." + op
				}
				p, err := search.DecodeCondition(res.Schema, at, field, search.Op(op), conds[op])
				if err != nil {
					return nil, err
				}
				if err := checkEnum(res.Def, at, p); err != nil {
					return nil, bodyError(err, at)
				}
				out.Filters = append(out.Filters, p)
			}
		}
		if len(out.Filters) > MaxFilters {
			return nil, apperr.Invalid(BodyFilter, "holds %d conditions; a list takes at most %d", len(out.Filters), MaxFilters)
		}
	}

	sorts, err := o.Objects(BodySort, MaxSortKeys, "field", "direction")
	if err != nil {
		return nil, err
	}
	for _, it := range sorts.Value {
		name, err := it.String("field", jsonbody.Text{Min: 1, Max: 200})
		if err != nil {
			return nil, err
		}
		dir, err := it.Enum("direction", "asc", "desc")
		if err != nil {
			return nil, err
		}
		if !name.Set || name.Null || !dir.Set || dir.Null {
			return nil, apperr.Invalid(strings.TrimSuffix(it.Path(""), "."), "must name a field and a direction (asc or desc)")
		}
		f, ok := res.Schema.Field(name.Value)
		if !ok || !f.Sortable {
			return nil, apperr.Invalid(it.Path("field"), "%q is not a sortable field; sort by a field holding one value: %s", name.Value, sortable(res.Schema))
		}
		if slices.ContainsFunc(out.Sort, func(k search.SortKey) bool { return k.Field == f.Name }) {
			return nil, apperr.Invalid(it.Path("field"), "names %s twice", f.Name)
		}
		out.Sort = append(out.Sort, search.SortKey{Field: f.Name, Desc: dir.Value == "desc", MissingSmallest: true})
	}
	if len(out.Sort) == 1 {
		// As GET's direction, which orders a single key: the same list
		// binds its cursors alike.
		out.Page.Desc = out.Sort[0].Desc
	}
	out.finish()

	for _, names := range []struct {
		member  string
		allowed []string
		what    string
		into    *[]string
	}{
		{BodyFields, fieldNames(res.Def), "a field of " + res.Def.Name, &out.Fields},
		{BodyExpand, res.Expandable, "a reference field of " + res.Def.Name + " that can be expanded", &out.Expand},
	} {
		list, err := o.Strings(names.member, jsonbody.Text{Min: 1, Max: 200}, 200)
		if err != nil {
			return nil, err
		}
		if !list.Set || list.Null {
			continue
		}
		for i, name := range list.Value {
			if !slices.Contains(names.allowed, name) {
				at := fmt.Sprintf("%s[%d]", names.member, i)
				if len(names.allowed) == 0 {
					return nil, apperr.Invalid(at, "%q is not %s; this list has none", name, names.what)
				}
				return nil, apperr.Invalid(at, "%q is not %s; use %s", name, names.what, strings.Join(names.allowed, ", "))
			}
			if !slices.Contains(*names.into, name) {
				*names.into = append(*names.into, name)
			}
		}
		if len(*names.into) == 0 {
			return nil, apperr.Invalid(names.member, "names no field; give field names, or leave it out for all")
		}
	}
	return out, nil
}

// bodyError is a query parameter's 400 as a body member's: the same
// message, naming member ("" for the parameter's own name).
func bodyError(err error, member string) error {
	var inv *apperr.InvalidError
	if errors.As(err, &inv) && inv.In == apperr.InQuery {
		if member == "" {
			member = inv.Field
		}
		return apperr.Invalid(member, "%s", inv.Message)
	}
	return err
}

// BodyError is err, a 400 of a query parameter a list query's body sends
// as a member of the same name (cursor, sort), as that member's 400.
func BodyError(err error) error { return bodyError(err, "") }
