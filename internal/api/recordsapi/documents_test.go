package recordsapi_test

import (
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestDocumentsByIdsAnswerTheCallersDocumentsInTheOrderAskedOnceEach(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c, other := e.Org(t), e.Org(t)
	var ids []string
	for _, n := range []string{"a", "b", "c"} {
		ids = append(ids, apitest.IDOf(t, c.Do("POST", "/v1/documents", map[string]any{"name": n}).Want(t, 201).Object(t)))
	}
	foreign := apitest.IDOf(t, other.Do("POST", "/v1/documents", map[string]any{"name": "theirs"}).Want(t, 201).Object(t))

	path := "/v1/documents/ids=" + strings.Join([]string{ids[2], "doc_unknown", ids[0], foreign, ids[2], ids[1]}, ",")
	got := apitest.IDsOf(t, c.Do("GET", path, nil).Want(t, 200).List(t))
	if want := []string{ids[2], ids[0], ids[1]}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v: the order asked, unknown and foreign ids left out, duplicates once", got, want)
	}
	if got := c.Do("GET", "/v1/documents/ids="+foreign, nil).Want(t, 200).List(t); len(got) != 0 {
		t.Fatalf("another organization's document was returned: %v", got)
	}
	// One id still answers a list.
	if got := c.Do("GET", "/v1/documents/ids="+ids[1], nil).Want(t, 200).List(t); len(got) != 1 {
		t.Fatalf("ids=<one id>: %v", got)
	}
	// The plain read of one document is unchanged.
	c.Do("GET", "/v1/documents/"+ids[0], nil).Want(t, 200).Object(t)
}

func TestDocumentsByIdsRefusesMalformedOrOverlongLists(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	many := make([]string, 101)
	for i := range many {
		many[i] = "doc_" + strings.Repeat("x", 20)
	}
	for _, tc := range []struct{ segment, want string }{
		{"ids=", "empty id"},
		{"ids=a,,b", "empty id at position 2"},
		{"ids=a,", "empty id"},
		{"ids=" + strings.Join(many, ","), "at most 100"},
	} {
		r := c.Do("GET", "/v1/documents/"+tc.segment, nil)
		apitest.WantError(t, r, 400, "Invalid path: ids", tc.want)
	}
	apitest.WantError(t, e.Anonymous(t).Do("GET", "/v1/documents/ids=a,b", nil), 401)
}
