package recordsapi_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Issue 45, item 1: a list whose filter no index serves reads at most
// store.MaxPageReads records a page (a page that has read them ends with
// a cursor), a sort in memory or a page reached through such a filter
// that would read more is a 400 naming what an index serves, and the
// records a request reads and does not return count against its key's
// rate limit (one request per store.RecordsPerRequest).
func TestAListNoIndexServesReadsABoundedPageAndPaysForWhatItReads(t *testing.T) {
	t.Parallel()
	e := apitest.NewWith(t, apitest.Options{})
	const reads, companies, needles = 150, 260, 5
	e.Store.PageReads = reads // the bound, lowered so that a few hundred records pass it
	c := e.Org(t)
	// The needles are created first: newest first, a list reaches them last.
	for start := 0; start < companies; start += 100 {
		var ops []any
		for i := start; i < min(start+100, companies); i++ {
			desc := "plain"
			if i < needles {
				desc = "a needle"
			}
			ops = append(ops, map[string]any{"op": "create", "data": map[string]any{"canonicalName": fmt.Sprintf("Read %03d", i), "externalId": fmt.Sprint("crm-", i), "description": desc}})
		}
		c.Do("POST", "/v1/companies/batch", map[string]any{"operations": ops}).Want(t, 200)
	}
	const filter = "/v1/companies?filter[description][contains]=needle&limit=10"

	// Paged with cursors, the filter finds every needle, a page at most
	// reads records at a time: the first page read only plain ones.
	var found []string
	pages := 0
	for next := ""; pages == 0 || next != ""; pages++ {
		path := filter
		if next != "" {
			path += "&cursor=" + url.QueryEscape(next)
		}
		r := c.Do("GET", path, nil, "X-Query-Plan", "key").Want(t, 200)
		if plan := r.Header.Get("X-Query-Plan"); plan != "key:companies+filter" {
			t.Fatalf("served by %q", plan)
		}
		for _, rec := range r.List(t) {
			found = append(found, rec["canonicalName"].(string))
		}
		if pages == 0 && len(found) != 0 {
			t.Errorf("the first page, which may read %d of %d records, found %v", reads, companies, found)
		}
		next = r.Header.Get("X-Next-Cursor")
		if pages > companies/reads+2 {
			t.Fatalf("%d pages and still a cursor", pages)
		}
	}
	if len(found) != needles || pages < 2 {
		t.Errorf("the filter found %v in %d pages, want the %d needles in at least 2", found, pages, needles)
	}

	// A page past the records it may read through the filter: 400 naming
	// page, the cursor and an indexed filter.
	msg := c.Do("GET", filter+"&page=2", nil, "X-Query-Plan", "key").Want(t, 400).Error(t)
	for _, want := range []string{"page", strconv.Itoa(reads), "X-Next-Cursor", "filter[externalId]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("page=2: %q does not name %q", msg, want)
		}
	}
	// A sort no index serves, over more records than a page may read: 400
	// naming sort and the indexed sorts, after reading at most the bound.
	msg = c.Do("GET", "/v1/companies?sort=description&limit=10", nil, "X-Query-Plan", "key").Want(t, 400).Error(t)
	for _, want := range []string{"sort", strconv.Itoa(reads), "canonicalName"} {
		if !strings.Contains(msg, want) {
			t.Errorf("sort=description: %q does not name %q", msg, want)
		}
	}
	// Narrowed by an index, the same sort is ordered in memory.
	r := c.Do("GET", "/v1/companies?filter[externalId]=crm-1&sort=description", nil, "X-Query-Plan", "index").Want(t, 200)
	if n := len(r.List(t)); n != 1 {
		t.Errorf("a sort in memory of one record answered %d", n)
	}

	// The rate limit: a page that read reads records and returned none
	// counts 1 + reads/RecordsPerRequest requests (seen by the next answer).
	remaining := func() (int64, time.Duration) {
		r := c.Do("GET", "/v1/companies?limit=1", nil).Want(t, 200)
		n, err := strconv.ParseInt(r.Header.Get("X-RateLimit-Remaining"), 10, 64)
		reset, err2 := strconv.Atoi(r.Header.Get("X-RateLimit-Reset"))
		if err != nil || err2 != nil {
			t.Fatalf("rate limit headers %v", r.Header)
		}
		return n, time.Duration(reset) * time.Second
	}
	for attempt := 0; ; attempt++ {
		before, reset := remaining()
		start := time.Now()
		c.Do("GET", filter, nil, "X-Query-Plan", "key").Want(t, 200)
		after, _ := remaining()
		if time.Since(start) >= reset-time.Second && attempt < 3 {
			continue // a new window began: measure again
		}
		if spent, want := before-after, int64(2+reads/store.RecordsPerRequest); spent != want {
			t.Errorf("a page that read %d records and returned none, and a plain page, spent %d requests of the key, want %d", reads, spent, want)
		}
		break
	}
}
