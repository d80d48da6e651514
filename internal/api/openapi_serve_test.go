package api_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 46, item 6: the document is served gzip-compressed when the
// request accepts it, with an ETag, and 304 to an If-None-Match naming it.
func TestTheOpenAPIDocumentIsServedCompressedWithAnETag(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	committed, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(headers ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.URL+"/v1/openapi.json", nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}

	res, body := get("Accept-Encoding", "br, gzip;q=0.8")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("with gzip accepted: %d, Content-Encoding %q, Vary %q", res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, committed) {
		t.Errorf("the gzip answer does not inflate to docs/openapi.json (%v)", err)
	}
	if len(body)*4 > len(plain) {
		t.Errorf("compressed to %d of %d bytes", len(body), len(plain))
	}
	etag := res.Header.Get("ETag")
	if len(etag) < 10 || etag[0] != '"' {
		t.Fatalf("ETag %q", etag)
	}

	for _, refused := range []string{"", "identity", "gzip;q=0", "br"} {
		res, body := get("Accept-Encoding", refused)
		if res.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, committed) || res.Header.Get("ETag") != etag {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes, ETag %q", refused, res.Header.Get("Content-Encoding"), len(body), res.Header.Get("ETag"))
		}
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		res, body := get("If-None-Match", inm, "Accept-Encoding", "gzip")
		if res.StatusCode != http.StatusNotModified || len(body) != 0 || res.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d with %d bytes, ETag %q", inm, res.StatusCode, len(body), res.Header.Get("ETag"))
		}
	}
	if res, _ := get("If-None-Match", `"stale"`); res.StatusCode != 200 {
		t.Errorf("If-None-Match of another version: %d", res.StatusCode)
	}
}
