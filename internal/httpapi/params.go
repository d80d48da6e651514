package httpapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Paging limits of list endpoints.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
	MaxPage      = 100
)

// ListParams are the query parameters every list accepts, in the order
// error messages name them.
var ListParams = []string{"limit", "page", "lt", "sort", "direction", "cursor"}

// ParsePage reads limit, page, lt, sort, direction and cursor. limit is
// clamped to 1..1000; page outside 1..100, a direction other than asc or
// desc, a non-integer number, a parameter given twice or any other
// parameter is a 400. The sort and the cursor are checked by the list,
// which knows its sortable fields and the list a cursor belongs to. The
// page's records are capped to the list byte budget.
func ParsePage(q url.Values) (store.Query, error) {
	out := store.Query{Limit: DefaultLimit, Desc: true, MaxBytes: ListBudget - envelopeSize}
	for name, vs := range q {
		if !slices.Contains(ListParams, name) {
			return out, apperr.InvalidQuery(name, "is not accepted; accepted parameters are %s", strings.Join(ListParams, ", "))
		}
		if len(vs) > 1 {
			return out, apperr.InvalidQuery(name, "is given %d times; give it once", len(vs))
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return out, apperr.InvalidQuery("limit", "must be an integer (1 to %d)", MaxLimit)
		}
		out.Limit = min(max(n, 1), MaxLimit)
	}
	page := 1
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > MaxPage {
			return out, apperr.InvalidQuery("page", "must be an integer from 1 to %d", MaxPage)
		}
		page = n
	}
	out.Offset = (page - 1) * out.Limit
	switch q.Get("direction") { // the spec's values, as the contract's enum: no other spelling
	case "", "desc":
	case "asc":
		out.Desc = false
	default:
		return out, apperr.InvalidQuery("direction", "must be asc or desc")
	}
	out.Before = q.Get("lt")
	out.Sort = q.Get("sort")
	out.Cursor = q.Get("cursor")
	return out, nil
}
