package jobsapi_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 45, item 4: an import's upload URL takes one file; a second PUT
// (before the import ran, or after it completed) is a 409 and changes
// nothing of the import.
func TestAnImportsUploadURLTakesOneFile(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	created := c.Do("POST", "/v1/imports", map[string]any{"resource": "companies", "format": "csv"}).Want(t, 201).Object(t)
	url := created["uploadUrl"].(string)
	apitest.Upload(t, url, strings.NewReader("canonicalName\nFirst\nSecond\n"))
	put := func() int {
		req, err := http.NewRequest("PUT", url, bytes.NewReader([]byte("canonicalName\nOther\n")))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if status := put(); status != http.StatusConflict {
		t.Errorf("a second PUT answered %d, want 409", status)
	}
	j := apitest.WaitJob(t, c, "/v1/imports/"+apitest.IDOf(t, created))
	if j["status"] != "completed" || apitest.Num(j["total"]) != 2 || apitest.Num(j["created"]) != 2 {
		t.Fatalf("import ended %s", apitest.JSONOf(j))
	}
	if status := put(); status != http.StatusConflict {
		t.Errorf("a PUT after the import completed answered %d, want 409", status)
	}
	if got := c.Do("GET", "/v1/companies?filter[canonicalName][eq]=Other", nil).Want(t, 200).List(t); len(got) != 0 {
		t.Errorf("the second file was read: %s", apitest.JSONOf(got))
	}
}
