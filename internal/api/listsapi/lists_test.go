package listsapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// nextLink is a Link header naming the next page.
var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// countingTransport counts the response bytes the service reads from the table.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		res.Body = countingBody{res.Body, &c.n}
	}
	return res, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// largestCustom finds the longest custom string a company is accepted with.
func largestCustom(t *testing.T, c *apitest.Client) int {
	t.Helper()
	for _, n := range []int{395_000, 390_000, 380_000, 350_000, 300_000, 250_000, 200_000, 150_000, 100_000} {
		r := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "probe", "custom": map[string]any{"blob": strings.Repeat("x", n)}})
		if r.Status == 201 {
			c.Do("DELETE", "/v1/companies/"+apitest.IDOf(t, r.Object(t)), nil).Want(t, 204)
			return n
		}
	}
	t.Fatal("no company with a custom of 100 KB or more is accepted")
	return 0
}

func TestListsOfRecordsAtTheSizeLimitStayWithinTheByteBudgetAndTheNextLinkVisitsEveryRecordOnce(t *testing.T) {
	testenv.Long(t, "lists of records at the size limit")
	t.Parallel()
	table := &countingTransport{}
	e := apitest.NewWith(t, apitest.Options{Transport: table})
	c := e.Org(t)
	size := largestCustom(t, c)

	const count = 150
	ids := make([]string, count)
	var wg sync.WaitGroup
	work := make(chan int, count)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				body := map[string]any{
					"canonicalName": fmt.Sprintf("Company %03d", count-i), // name order is the reverse of creation
					"custom":        map[string]any{"blob": strings.Repeat("x", size-20)},
				}
				ids[i] = apitest.IDOf(t, e.As(t, c).Do("POST", "/v1/companies", body).Want(t, 201).Object(t))
			}
		}()
	}
	for i := range count {
		work <- i
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	before := table.n.Load()
	first := c.Do("GET", "/v1/companies?limit=1000", nil).Want(t, 200)
	if read := table.n.Load() - before; read > 8_000_000 {
		t.Errorf("one page read %d bytes from the table, want the page's budget and little more", read)
	}
	if len(first.Body) >= apitest.ListBudget || first.Header.Get("Link") == "" {
		t.Fatalf("the first page is %d bytes with Link %q; want under %d bytes and a next link", len(first.Body), first.Header.Get("Link"), apitest.ListBudget)
	}

	for _, tc := range []struct {
		query string
		want  func() []string
	}{
		{"limit=1000", func() []string { w := slices.Sorted(slices.Values(ids)); slices.Reverse(w); return w }},
		{"limit=1000&sort=canonicalName&direction=asc", func() []string { w := slices.Clone(ids); slices.Reverse(w); return w }},
	} {
		got, pages := apitest.Walk(t, c, "/v1/companies?"+tc.query, "id")
		if pages < 2 {
			t.Errorf("%s: %d page(s), want the budget to split the list", tc.query, pages)
		}
		if tc.want != nil && !slices.Equal(got, tc.want()) {
			t.Errorf("%s: paging by Link returned %d ids in another order or with repeats, want %d", tc.query, len(got), count)
		}
		sorted := slices.Clone(got)
		slices.Sort(sorted)
		if want := slices.Sorted(slices.Values(ids)); !slices.Equal(slices.Compact(sorted), want) || len(got) != count {
			t.Errorf("%s: paging by Link returned %d records (%d distinct), want each of the %d once", tc.query, len(got), len(slices.Compact(sorted)), count)
		}
	}
}

func TestAFullPageWithMoreRecordsAfterItLinksToTheNextAndTheLastPageDoesNot(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	var ids []string
	for i := range 4 {
		ids = append(ids, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprintf("Company %d", i)})))
	}
	slices.Reverse(ids)

	first := c.Do("GET", "/v1/companies?limit=2", nil).Want(t, 200)
	m := nextLink.FindStringSubmatch(first.Header.Get("Link"))
	if m == nil || first.Header.Get("X-Next-Cursor") == "" {
		t.Fatalf("a full page with records after it has Link %q and X-Next-Cursor %q, want both",
			first.Header.Get("Link"), first.Header.Get("X-Next-Cursor"))
	}
	if got := apitest.IDsOf(t, first.List(t)); !slices.Equal(got, ids[:2]) {
		t.Errorf("first page %v, want %v", got, ids[:2])
	}
	last := c.Do("GET", m[1], nil).Want(t, 200)
	if got := apitest.IDsOf(t, last.List(t)); !slices.Equal(got, ids[2:]) {
		t.Errorf("page after the link %v, want %v", got, ids[2:])
	}
	for _, h := range []string{"Link", "X-Next-Cursor"} {
		if v := last.Header.Get(h); v != "" {
			t.Errorf("the last page, full but with nothing after it, has %s %q", h, v)
		}
	}
	if v := c.Do("GET", "/v1/companies?limit=4", nil).Want(t, 200).Header.Get("Link"); v != "" {
		t.Errorf("a page holding every record has Link %q", v)
	}
}

func TestEveryListEndpointPagesByTheNextLink(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	want := map[string][]string{}
	for i := range 3 {
		want["companies"] = append(want["companies"], apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprintf("C%d", i)})))
		want["workflows"] = append(want["workflows"], apitest.IDOf(t, apitest.CreateWorkflow(t, c, map[string]any{"name": fmt.Sprintf("W%d", i)})))
		want["keys"] = append(want["keys"], e.Key(t, c.Org, "member").ClientID)
	}
	want["keys"] = append([]string{c.ClientID}, want["keys"]...)
	wf := want["workflows"][0]
	for range 3 {
		want["runs"] = append(want["runs"], apitest.IDOf(t, apitest.AwaitRun(t, c, apitest.IDOf(t, apitest.StartRun(t, c, wf, map[string]any{})))))
	}
	for _, tc := range []struct{ path, idField, kind string }{
		{"/v1/companies", "id", "companies"},
		{"/v1/workflows", "id", "workflows"},
		{"/v1/workflow-runs", "id", "runs"},
		{"/v1/workflows/" + wf + "/runs", "id", "runs"},
		{"/v1/keys", "clientId", "keys"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, c)
			for _, dir := range []string{"desc", "asc"} {
				w := slices.Clone(want[tc.kind])
				if dir == "desc" {
					slices.Reverse(w)
				}
				got, pages := apitest.Walk(t, c, tc.path+"?limit=2&direction="+dir, tc.idField)
				if !slices.Equal(got, w) || pages != (len(w)+1)/2 {
					t.Errorf("%s %s by Link: %v in %d pages, want %v in %d", tc.path, dir, got, pages, w, (len(w)+1)/2)
				}
			}
		})
	}
}

func TestCursorPagingFollowsEverySortDirectionAndLt(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	names := []string{"delta", "Alpha", "charlie", "Echo", "bravo", "alpha", "foxtrot"}
	var ids []string
	for _, n := range names {
		ids = append(ids, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": n})))
	}
	for _, q := range []string{
		"", "direction=asc", "sort=createdAt", "sort=canonicalName", "sort=canonicalName&direction=asc",
		"sort=updatedAt", "sort=updatedAt&direction=asc", "lt=" + ids[5], "lt=" + ids[5] + "&direction=asc",
		"lt=" + ids[5] + "&sort=canonicalName&direction=asc", "page=2",
	} {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, c)
			whole := apitest.IDsOf(t, c.Do("GET", "/v1/companies?limit=1000&"+strings.TrimPrefix(q, "page=2"), nil).Want(t, 200).List(t))
			if q == "page=2" {
				whole = whole[2:] // page 2 of pages of 2, and every page after it
			}
			got, _ := apitest.Walk(t, c, "/v1/companies?limit=2&"+q, "id")
			if !slices.Equal(got, whole) {
				t.Errorf("pages of 2 by Link = %v, want the single page's order %v", got, whole)
			}
		})
	}
}

func TestAMalformedOrForeignCursorIs400NamingCursor(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	other := e.Org(t)
	for i := range 3 {
		apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprintf("C%d", i)})
		apitest.CreateCompany(t, other, map[string]any{"canonicalName": fmt.Sprintf("O%d", i)})
	}
	cursor := c.Do("GET", "/v1/companies?limit=1", nil).Want(t, 200).Header.Get("X-Next-Cursor")
	if cursor == "" {
		t.Fatal("no X-Next-Cursor on a first page of 1 of 3")
	}
	forged := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name   string
		client *apitest.Client
		query  string
	}{
		{"garbage", c, "cursor=" + url.QueryEscape("not a cursor!")},
		{"base64 of garbage", c, "cursor=" + forged("{{{")},
		{"empty position", c, "cursor=" + forged(`{"p":"","b":"x"}`)},
		{"a forged binding", c, "cursor=" + forged(`{"p":"cmp_zzz","b":"0000000000000000"}`)},
		{"a huge position", c, "cursor=" + forged(`{"p":"`+strings.Repeat("z", 5000)+`","b":"x"}`)},
		{"another sort", c, "sort=canonicalName&cursor=" + cursor},
		{"another direction", c, "direction=asc&cursor=" + cursor},
		{"another lt", c, "lt=zzz&cursor=" + cursor},
		{"another organization", other, "cursor=" + cursor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.As(t, tc.client).Do("GET", "/v1/companies?"+tc.query, nil)
			apitest.WantError(t, r, 400, "Invalid query parameter: cursor ")
		})
	}
	for _, path := range []string{"/v1/workflows", "/v1/workflow-runs", "/v1/keys"} {
		r := c.Do("GET", path+"?cursor="+cursor, nil)
		apitest.WantError(t, r, 400, "Invalid query parameter: cursor ")
	}
}

func TestUnknownOrRepeatedQueryParametersOnListsAre400NamingTheParameter(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.IDOf(t, apitest.CreateWorkflow(t, c, map[string]any{"name": "W"}))
	for _, path := range []string{"/v1/companies", "/v1/workflows", "/v1/workflow-runs", "/v1/workflows/" + wf + "/runs", "/v1/keys"} {
		apitest.WantError(t, c.Do("GET", path+"?foo=1", nil), 400,
			"Invalid query parameter: foo is not accepted; accepted parameters are limit, page, lt, sort, direction, cursor")
		apitest.WantError(t, c.Do("GET", path+"?limit=1&Limit=2", nil), 400, "Invalid query parameter: Limit is not accepted")
		apitest.WantError(t, c.Do("GET", path+"?limit=1&limit=2", nil), 400, "Invalid query parameter: limit is given 2 times")
		c.Do("GET", path+"?limit=1&page=1&sort=id&direction=asc&lt=zzz&cursor=", nil).Want(t, 200)
	}
}

func TestKeysPageAndSortLikeEveryList(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t) // named "key admin"
	var byAge []string
	names := map[string]string{admin.ClientID: "key admin"}
	byAge = append(byAge, admin.ClientID)
	for _, n := range []string{"Zulu", "alpha", "Mike"} {
		k, err := e.Deps.Keys.CreateKey(t.Context(), admin.Org, n, "member")
		if err != nil {
			t.Fatal(err)
		}
		byAge = append(byAge, k.ClientID)
		names[k.ClientID] = n
	}
	newest := slices.Clone(byAge)
	slices.Reverse(newest)
	byName := []string{byAge[2], byAge[0], byAge[3], byAge[1]} // alpha, key admin, Mike, Zulu
	list := func(q string) []string {
		t.Helper()
		var out []string
		for _, k := range admin.Do("GET", "/v1/keys?"+q, nil).Want(t, 200).List(t) {
			out = append(out, k["clientId"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", newest},
		{"direction=asc", byAge},
		{"sort=createdAt&direction=asc", byAge},
		{"sort=name&direction=asc", byName},
		{"sort=name", []string{byName[3], byName[2], byName[1], byName[0]}},
		{"limit=1", newest[:1]},
		{"limit=2&page=2", newest[2:]},
		{"lt=" + byAge[2], []string{byAge[1], byAge[0]}},
		{"sort=name&direction=asc&limit=2&page=2", byName[2:]},
	} {
		if got := list(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("GET /v1/keys?%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	got, _ := apitest.Walk(t, admin, "/v1/keys?sort=name&direction=asc&limit=3", "clientId")
	if !slices.Equal(got, byName) {
		t.Errorf("keys by name, pages of 3 by Link = %v, want %v", got, byName)
	}
	apitest.WantError(t, admin.Do("GET", "/v1/keys?sort=lastUsedAt", nil), 400, "Invalid query parameter: sort ", "id, createdAt, name")
	apitest.WantError(t, admin.Do("GET", "/v1/keys?page=0", nil), 400, "Invalid query parameter: page ")
}

func TestRevokingAKeyWithAnOverlongIDIs404(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	for _, n := range []int{257, 2048, 5000} {
		apitest.NotFound(t, admin.Do("DELETE", "/v1/keys/ck_"+strings.Repeat("a", n), nil))
	}
}

func TestAKeyStoredBeforeKeysWereSortableByNameJoinsTheNameOrderAtItsNextUse(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	// A key as the previous version stored it: listed by id, not by name.
	legacy := e.Anonymous(t)
	legacy.ClientID, legacy.Secret = ids.New("ck"), "sk_legacy_"+ids.Random(16)
	doc, _ := json.Marshal(apikeys.Key{ClientID: legacy.ClientID, Name: "Legacy", KeyLastFour: "abcd", Role: "member",
		OrganizationID: admin.Org, CreatedAt: clock.Now(), SecretHash: apikeys.HashSecret(legacy.Secret)})
	part := store.OrgPartition(admin.Org, "APIKEY")
	testenv.PutRaw(t, e.Store, map[string]string{store.AttrPK: "APIKEY#" + legacy.ClientID, store.AttrSK: "APIKEY", store.AttrType: "APIKEY",
		store.AttrDoc: string(doc), store.GSI1.PK: part, store.GSI1.SK: legacy.ClientID})
	clientIDs := func(q string) []string {
		var out []string
		for _, k := range admin.Do("GET", "/v1/keys?"+q, nil).Want(t, 200).List(t) {
			out = append(out, k["clientId"].(string))
		}
		return out
	}
	if got := clientIDs(""); !slices.Contains(got, legacy.ClientID) {
		t.Fatalf("the stored key is not listed by id: %v", got)
	}
	legacy.Do("GET", "/v1/companies", nil).Want(t, 200)
	if got, want := clientIDs("sort=name&direction=asc"), []string{admin.ClientID, legacy.ClientID}; !slices.Equal(got, want) {
		t.Errorf("keys by name after the stored key was used = %v, want %v", got, want)
	}
}
