package httpapi

import (
	"net/url"
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

// ParsePage reads limit, page, lt, sort and direction. limit is clamped to
// 1..1000; page outside 1..100, a direction other than asc or desc, or a
// non-integer number is a 400. The sort field is checked by the collection,
// which knows its sortable fields.
func ParsePage(q url.Values) (store.Query, error) {
	out := store.Query{Limit: DefaultLimit, Desc: true}
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
	switch d := strings.ToLower(q.Get("direction")); d {
	case "", "desc":
	case "asc":
		out.Desc = false
	default:
		return out, apperr.InvalidQuery("direction", "must be asc or desc")
	}
	out.Before = q.Get("lt")
	out.Sort = q.Get("sort")
	return out, nil
}
