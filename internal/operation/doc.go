package operation

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/openapi"
)

// The pieces of OpenAPI text that operations of several features share.

// ListQuery are the query parameters of a list sorted by one of
// sortable, filtered by one of filters (an equality on that field).
func ListQuery(sortable, filters []string) []openapi.Param {
	str := openapi.Schema{"type": "string"}
	sortEnum := make([]any, len(sortable))
	for i, s := range sortable {
		sortEnum[i] = s
	}
	ps := []openapi.Param{
		{Name: "limit", Description: "records per page, 1 to " + strconv.Itoa(httpapi.MaxLimit) + " (outside: clamped); default " + strconv.Itoa(httpapi.DefaultLimit),
			Schema: openapi.Schema{"type": "integer", "default": httpapi.DefaultLimit}},
		{Name: "page", Description: "the page, 1 to " + strconv.Itoa(httpapi.MaxPage) + "; for deeper lists follow `cursor`",
			Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": httpapi.MaxPage, "default": 1}},
		{Name: "cursor", Description: "the `X-Next-Cursor` of the previous page (bound to this list: same sort and filter)", Schema: str},
		{Name: "sort", Description: "the field to order by; default `id`, the order records were created in", Schema: openapi.Schema{"type": "string", "enum": sortEnum}},
		{Name: "direction", Description: "`desc` (default, newest first) or `asc`", Schema: openapi.Schema{"type": "string", "enum": []any{"asc", "desc"}, "default": "desc"}},
		{Name: "lt", Description: "only records whose `id` is less than this one, whatever the sort", Schema: str},
	}
	for _, f := range filters {
		ps = append(ps, openapi.Param{Name: f, Description: "only records whose `" + f + "` is this value (one filter at a time)", Schema: str})
	}
	return ps
}

// WithArticle is a noun with its indefinite article: "a deal", "an activity".
func WithArticle(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// ArrayOf is the schema of an array of the component name.
func ArrayOf(name string) openapi.Schema {
	return openapi.Schema{"type": "array", "items": openapi.Ref(name)}
}

// Enums are vs as the values of an enum.
func Enums(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// NullableString is s as a string or null.
func NullableString(s openapi.Schema) openapi.Schema {
	s["type"] = []any{"string", "null"}
	return s
}

// PageOnlyQuery are the paging parameters of a list in id order.
func PageOnlyQuery() []openapi.Param {
	var out []openapi.Param
	for _, p := range ListQuery(nil, nil) {
		if p.Name == "limit" || p.Name == "cursor" {
			out = append(out, p)
		}
	}
	return out
}

// ValueOrList is one of the values scalars describe, or an array of 1 to
// most of them.
func ValueOrList(description string, most int, scalars ...any) openapi.Schema {
	list := openapi.Schema{"type": "array", "minItems": 1, "maxItems": most, "items": openapi.Schema{"anyOf": scalars}}
	return openapi.Schema{"description": description, "anyOf": append(slices.Clip(scalars), list)}
}
