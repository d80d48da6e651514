package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type thing struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Ext   string  `json:"ext"`
	Note  *string `json:"note"`
	Count int     `json:"count"`
}

func things(s *store.Store) *store.Collection[thing] {
	return store.NewCollection(s, store.Spec[thing]{
		Type:    "THING",
		ID:      func(t *thing) string { return t.ID },
		IDOrder: []string{"createdAt"},
		Sorts:   []store.Sort[thing]{{Field: "name", Index: store.GSI1, Key: func(t *thing) string { return strings.ToLower(t.Name) }}},
		Lookups: []store.Lookup[thing]{{Name: "ext", Index: store.GSI2, Key: func(t *thing) string { return t.Ext }}},
	})
}

func seed(t *testing.T, c *store.Collection[thing], org string, names ...string) []thing {
	t.Helper()
	var out []thing
	for _, n := range names {
		v := thing{ID: ids.New("thg"), Name: n}
		if err := c.Create(context.Background(), org, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func idsOf(ts []thing) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestCreateGetUpdateDeleteRoundTripsAndConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := things(testenv.Store(t))
	note := "x"
	v := thing{ID: ids.New("thg"), Name: "A", Note: &note}
	if err := c.Create(ctx, "o1", &v); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, "o1", &v); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("second create: %v, want conflict", err)
	}
	if _, err := c.Get(ctx, "o2", v.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("other org get: %v, want not found", err)
	}
	got, err := c.Update(ctx, "o1", v.ID, func(t *thing) error { t.Note = nil; t.Count++; return nil })
	if err != nil || got.Note != nil || got.Count != 1 {
		t.Fatalf("update: %+v %v", got, err)
	}
	if _, err := c.Update(ctx, "o2", v.ID, func(*thing) error { return nil }); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("other org update: %v", err)
	}
	if err := c.Delete(ctx, "o2", v.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("other org delete: %v", err)
	}
	if err := c.Delete(ctx, "o1", v.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "o1", v.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestConcurrentUpdatesAreAllApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := things(testenv.Store(t))
	v := seed(t, c, "o", "n")[0]
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Update(ctx, "o", v.ID, func(t *thing) error { t.Count++; return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, _ := c.Get(ctx, "o", v.ID)
	if got.Count != 4 {
		t.Fatalf("count = %d, want 4", got.Count)
	}
}

func TestListOrdersPagesAndFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := things(testenv.Store(t))
	all := seed(t, c, "o", "b", "A", "c", "a b", "d")
	seed(t, c, "other", "zzz")

	cases := []struct {
		name string
		q    store.Query
		want string
	}{
		{"id desc", store.Query{Limit: 10, Desc: true}, "d a b c A b"},
		{"id asc", store.Query{Limit: 10}, "b A c a b d"},
		{"createdAt is id order", store.Query{Limit: 10, Sort: "createdAt"}, "b A c a b d"},
		{"offset", store.Query{Limit: 2, Offset: 2, Desc: true}, "c A"},
		{"offset past end", store.Query{Limit: 2, Offset: 6, Desc: true}, ""},
		{"cursor", store.Query{Limit: 2, Desc: true, Before: all[2].ID}, "A b"},
		{"name asc", store.Query{Limit: 10, Sort: "name"}, "A a b b c d"},
		{"name desc offset", store.Query{Limit: 2, Offset: 1, Sort: "name", Desc: true}, "c b"},
		{"name with cursor", store.Query{Limit: 10, Sort: "name", Before: all[3].ID}, "A b c"},
	}
	for _, tc := range cases {
		got, err := c.List(ctx, "o", tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s := strings.Join(idsOf(got.Items), " "); s != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, s, tc.want)
		}
	}
	if _, err := c.List(ctx, "o", store.Query{Limit: 1, Sort: "nope"}); err == nil {
		t.Error("unknown sort accepted")
	}
	found, err := c.FindBySortKey(ctx, "o", "name", "a", 10)
	if err != nil || fmt.Sprint(idsOf(found)) != "[A]" {
		t.Errorf("FindBySortKey = %v %v", idsOf(found), err)
	}
}

func TestLookupFindsExactValuesOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := things(testenv.Store(t))
	v := thing{ID: ids.New("thg"), Name: "x", Ext: "E1"}
	if err := c.Create(ctx, "o", &v); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		org, val string
		n        int
	}{{"o", "E1", 1}, {"o", "E", 0}, {"p", "E1", 0}} {
		got, err := c.FindBy(ctx, tc.org, "ext", tc.val, 5)
		if err != nil || len(got) != tc.n {
			t.Errorf("FindBy(%s,%s) = %d %v, want %d", tc.org, tc.val, len(got), err, tc.n)
		}
	}
	if _, err := c.Update(ctx, "o", v.ID, func(t *thing) error { t.Ext = ""; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.FindBy(ctx, "o", "ext", "E1", 5); len(got) != 0 {
		t.Errorf("cleared lookup still finds %d", len(got))
	}
}

// lostAnswer forwards the first PutItem to the table, then loses its
// answer (a timeout as the client sees it), so the SDK sends it again.
type lostAnswer struct {
	mu   sync.Mutex
	lost bool
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "read: i/o timeout (answer lost by the test)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (l *lostAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && !l.lost && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem") {
		l.lost = true
		res.Body.Close()
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}
	}
	return res, err
}

func TestACreateWhoseAnswerWasLostIsNotAConflictWhenTheSDKRetriesIt(t *testing.T) {
	t.Parallel()
	transport := &lostAnswer{}
	st := testenv.StoreWith(t, transport)
	ctx := context.Background()
	it := store.Item{PK: "P", SK: "S", Type: "T", Doc: map[string]any{"id": "x1"}}
	if err := st.Create(ctx, it); err != nil {
		t.Fatalf("a create whose first answer was lost: %v, want success", err)
	}
	if !transport.lost {
		t.Fatal("the test lost no answer")
	}
	// Another writer's create of the same key is still a conflict.
	if err := st.Create(ctx, it); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("a second create of the same key: %v, want a conflict", err)
	}
}
