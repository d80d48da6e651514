package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestParsePageReadsThePagingParametersAndRefusesAnythingElse(t *testing.T) {
	t.Parallel()
	q, err := httpapi.ParsePage(url.Values{})
	if err != nil || q.Limit != httpapi.DefaultLimit || !q.Desc || q.Offset != 0 || q.MaxBytes <= 0 || q.MaxBytes >= httpapi.ListBudget {
		t.Errorf("no parameters: %+v, %v", q, err)
	}
	q, err = httpapi.ParsePage(url.Values{"limit": {" 20 "}, "page": {"3"}, "direction": {"asc"}, "sort": {"name"}, "lt": {"x"}, "cursor": {"c"}})
	if err != nil || q.Limit != 20 || q.Offset != 40 || q.Desc || q.Sort != "name" || q.Before != "x" || q.Cursor != "c" {
		t.Errorf("every parameter: %+v, %v", q, err)
	}
	// limit is clamped, not refused.
	for s, want := range map[string]int{"0": 1, "-5": 1, "1000": 1000, "1001": 1000, "99999999": 1000} {
		if q, err := httpapi.ParsePage(url.Values{"limit": {s}}); err != nil || q.Limit != want {
			t.Errorf("limit=%s: %d, %v; want %d", s, q.Limit, err, want)
		}
	}
	for _, c := range []struct {
		q     url.Values
		param string
	}{
		{url.Values{"limit": {"ten"}}, "limit"},
		{url.Values{"limit": {"1.5"}}, "limit"},
		{url.Values{"page": {"0"}}, "page"},
		{url.Values{"page": {"101"}}, "page"},
		{url.Values{"page": {"x"}}, "page"},
		{url.Values{"direction": {"ASC"}}, "direction"},
		{url.Values{"direction": {"ascending"}}, "direction"},
		{url.Values{"limit": {"1", "2"}}, "limit"},
		{url.Values{"offset": {"5"}}, "offset"},
	} {
		_, err := httpapi.ParsePage(c.q)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.In != apperr.InQuery || !strings.Contains(err.Error(), c.param) {
			t.Errorf("%v: %v, want a query error naming %s", c.q, err, c.param)
		}
	}
	// The unknown parameter's message lists those accepted.
	if _, err := httpapi.ParsePage(url.Values{"offset": {"5"}}); !strings.Contains(err.Error(), strings.Join(httpapi.ListParams, ", ")) {
		t.Errorf("an unknown parameter: %v", err)
	}
}

func TestBudgetIsListBudgetUnlessWithBudgetLowersIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct{ set, want int }{
		{1, 1}, {5000, 5000}, {httpapi.ListBudget - 1, httpapi.ListBudget - 1},
		{httpapi.ListBudget, httpapi.ListBudget}, {httpapi.ListBudget + 1, httpapi.ListBudget},
		{0, httpapi.ListBudget}, {-10, httpapi.ListBudget},
	} {
		if got := httpapi.Budget(httpapi.WithBudget(ctx, c.set)); got != c.want {
			t.Errorf("WithBudget(%d): Budget %d, want %d", c.set, got, c.want)
		}
	}
	if got := httpapi.Budget(ctx); got != httpapi.ListBudget {
		t.Errorf("no budget set: %d", got)
	}
}

// item is a record of a list whose JSON takes a known number of bytes.
type item struct {
	ID  string `json:"id"`
	Pad string `json:"pad"`
}

// listServer serves a page of n records (pad bytes of padding each, the
// position of record i being "pos-i") at /list, within a budget given as
// ?budget=; more says whether the page has a next one.
func listServer(t *testing.T, n, pad int, more bool) *httptest.Server {
	t.Helper()
	items := make([]item, n)
	pos := make([]string, n)
	for i := range items {
		items[i] = item{ID: fmt.Sprintf("rec_%03d", i), Pad: strings.Repeat("p", pad)}
		pos[i] = fmt.Sprintf("pos-%d", i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, err := strconv.Atoi(r.URL.Query().Get("budget")); err == nil {
			r = r.WithContext(httpapi.WithBudget(r.Context(), b))
		}
		httpapi.List(w, r, store.NewPage(items, pos, store.Binding("test"), more))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// getList reads a list answer: its records and its headers.
func getList(t *testing.T, u string) ([]item, http.Header, []byte) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Data []item `json:"data"`
	}
	var raw json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&raw); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d, %v", u, res.StatusCode, err)
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Data, res.Header, append(raw, '\n')
}

func TestAListEndsWithinItsBudgetAndItsCursorContinuesAfterTheLastRecordSent(t *testing.T) {
	t.Parallel()
	srv := listServer(t, 20, 1000, false)
	// Without a budget below the whole page, everything is sent and no
	// next page is announced.
	all, h, _ := getList(t, srv.URL+"/list")
	if len(all) != 20 || h.Get(httpapi.HeaderNextCursor) != "" || h.Get(httpapi.HeaderLink) != "" {
		t.Fatalf("the whole page: %d records, cursor %q, link %q", len(all), h.Get(httpapi.HeaderNextCursor), h.Get(httpapi.HeaderLink))
	}
	for _, budget := range []int{3500, 5000, 10_000, 15_000} {
		got, h, body := getList(t, fmt.Sprintf("%s/list?budget=%d&page=2&limit=20", srv.URL, budget))
		n := len(got)
		if n == 0 || n == 20 {
			t.Errorf("budget %d: %d records", budget, n)
			continue
		}
		// The body fits the budget, and one more record would not have.
		size := store.WireSize(body)
		if size > budget {
			t.Errorf("budget %d: a body of %d bytes (as Lambda carries it)", budget, size)
		}
		next, _ := json.Marshal(all[n])
		if size+1+store.WireSize(next) <= budget {
			t.Errorf("budget %d: the page ended at %d records, %d bytes, though the next one fit", budget, n, size)
		}
		for i, it := range got {
			if it != all[i] {
				t.Errorf("budget %d: record %d is %s", budget, i, it.ID)
			}
		}
		cursor := h.Get(httpapi.HeaderNextCursor)
		if pos, err := store.DecodeCursor(cursor, store.Binding("test"), 100); err != nil || pos != fmt.Sprintf("pos-%d", n-1) {
			t.Errorf("budget %d: the cursor %q is at %q (%v), want after record %d", budget, cursor, pos, err, n-1)
		}
		// Link: the same path and parameters with the cursor, without page.
		link := h.Get(httpapi.HeaderLink)
		u, ok := strings.CutPrefix(link, "<")
		u, ok2 := strings.CutSuffix(u, `>; rel="next"`)
		parsed, err := url.Parse(u)
		if !ok || !ok2 || err != nil || parsed.Path != "/list" || parsed.Query().Get("cursor") != cursor ||
			parsed.Query().Has("page") || parsed.Query().Get("limit") != "20" || parsed.Query().Get("budget") != strconv.Itoa(budget) {
			t.Errorf("budget %d: Link %q", budget, link)
		}
	}
}

func TestAListAlwaysSendsOneRecordEvenOverItsBudget(t *testing.T) {
	t.Parallel()
	srv := listServer(t, 3, 5000, false)
	got, h, _ := getList(t, srv.URL+"/list?budget=100")
	if len(got) != 1 || h.Get(httpapi.HeaderNextCursor) == "" {
		t.Errorf("records over the budget: %d sent, cursor %q", len(got), h.Get(httpapi.HeaderNextCursor))
	}
}

func TestAPageWithMoreRecordsAnnouncesTheStoresCursor(t *testing.T) {
	t.Parallel()
	srv := listServer(t, 5, 10, true)
	got, h, _ := getList(t, srv.URL+"/list")
	cursor := h.Get(httpapi.HeaderNextCursor)
	if pos, err := store.DecodeCursor(cursor, store.Binding("test"), 100); len(got) != 5 || err != nil || pos != "pos-4" {
		t.Errorf("%d records, cursor at %q (%v)", len(got), pos, err)
	}
	// A cursor is bound to its list.
	if _, err := store.DecodeCursor(cursor, store.Binding("another"), 100); err == nil {
		t.Error("a cursor was accepted by another list")
	}
}

func TestAnEmptyPageIsAnEmptyArray(t *testing.T) {
	t.Parallel()
	srv := listServer(t, 0, 0, false)
	_, _, body := getList(t, srv.URL+"/list")
	if string(body) != "{\"data\":[]}\n" {
		t.Errorf("an empty page: %q", body)
	}
}

func TestReadBodyTakesOneMebibyteAndRefusesMoreWith413(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := httpapi.ReadBody(w, r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.Data(w, 200, len(b))
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct{ size, status int }{{0, 200}, {httpapi.MaxBodyBytes, 200}, {httpapi.MaxBodyBytes + 1, 413}, {3 * httpapi.MaxBodyBytes, 413}} {
		res, err := http.Post(srv.URL, "application/json", strings.NewReader(strings.Repeat("a", c.size)))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("a body of %d bytes: %d %v", c.size, res.StatusCode, body)
		}
		if c.status == 200 && body["data"] != float64(c.size) {
			t.Errorf("a body of %d bytes read as %v", c.size, body["data"])
		}
		if c.status == 413 && !strings.Contains(fmt.Sprint(body["error"]), "1 MiB") {
			t.Errorf("413 says %v", body)
		}
	}
}
