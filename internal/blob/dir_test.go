package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// server is a Dir over a fresh directory with its Handler served.
type server struct {
	dir *blob.Dir
	srv *httptest.Server
	// served receives once per request, after the handler returned.
	served chan struct{}

	mu      sync.Mutex
	uploads []upload // OnUpload's calls
}

type upload struct {
	key  string
	size int64
}

func newServer(t *testing.T) *server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	d, err := blob.NewDir(filepath.Join(t.TempDir(), "files"), "http://"+srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := &server{dir: d, srv: srv, served: make(chan struct{}, 100)}
	d.OnUpload = func(key string, size int64) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.uploads = append(s.uploads, upload{key, size})
	}
	h := d.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		s.served <- struct{}{}
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return s
}

func (s *server) onUploads() []upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]upload(nil), s.uploads...)
}

// waitServed waits for the handler to have returned from a request.
func (s *server) waitServed(t *testing.T) {
	t.Helper()
	select {
	case <-s.served:
	case <-time.After(testenv.Scaled(10 * time.Second)):
		t.Fatal("the handler did not return")
	}
}

// files lists the regular files under the Dir's root.
func (s *server) files(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(s.dir.Root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			rel, _ := filepath.Rel(s.dir.Root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func do(t *testing.T, method, u string, body io.Reader, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: read the answer: %v", method, err)
	}
	return res, b
}

// wantError checks an error answer: status, JSON body with code, a message
// containing msg.
func wantError(t *testing.T, res *http.Response, body []byte, status int, code, msg string) {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", res.StatusCode, status, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if e.Error.Code != code || !strings.Contains(e.Error.Message, msg) {
		t.Errorf("error %+v, want code %q and a message containing %q", e.Error, code, msg)
	}
	if got := res.Header.Get("X-Error-Code"); got != code {
		t.Errorf("X-Error-Code %q, want %q", got, code)
	}
}

func readAll(t *testing.T, st blob.Store, key string, offset int64) string {
	t.Helper()
	rc, err := st.Open(context.Background(), key, offset)
	if err != nil {
		t.Fatalf("Open(%q, %d): %v", key, offset, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q from %d: %v", key, offset, err)
	}
	return string(b)
}

func TestUploadThenDownload(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	const key = "imports/org_1/job_1/upload"
	const content = "symbol,name\nAAPL,Apple Inc.\nMSFT,Microsoft\n"

	put, err := s.dir.UploadURL(ctx, key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(put, s.srv.URL+blob.PathPrefix+key+"?") {
		t.Errorf("upload URL %s, want it under %s", put, s.srv.URL+blob.PathPrefix+key)
	}
	res, body := do(t, http.MethodPut, put, strings.NewReader(content))
	if res.StatusCode != http.StatusOK || len(body) != 0 {
		t.Fatalf("PUT: %d %q, want 200 with an empty body", res.StatusCode, body)
	}
	if sum := md5.Sum([]byte(content)); res.Header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
		t.Errorf("ETag %q, want the quoted MD5 %x", res.Header.Get("ETag"), sum)
	}
	if got, want := s.onUploads(), []upload{{key, int64(len(content))}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("OnUpload calls %v, want %v", got, want)
	}

	info, err := s.dir.Stat(ctx, key)
	if err != nil || info.Size != int64(len(content)) {
		t.Fatalf("Stat: %+v, %v; want size %d", info, err, len(content))
	}
	for _, off := range []int64{0, 12, int64(len(content))} {
		if got := readAll(t, s.dir, key, off); got != content[off:] {
			t.Errorf("Open at %d read %q, want %q", off, got, content[off:])
		}
	}
	if _, err := s.dir.Open(ctx, key, int64(len(content))+1); err == nil {
		t.Error("Open beyond the end: no error")
	}
	if _, err := s.dir.Open(ctx, key, -1); err == nil {
		t.Error("Open at -1: no error")
	}

	get, err := s.dir.DownloadURL(ctx, key, time.Hour, "tickers é.csv", "text/csv; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	res, body = do(t, http.MethodGet, get, nil)
	if res.StatusCode != http.StatusOK || string(body) != content {
		t.Fatalf("GET: %d %q, want 200 %q", res.StatusCode, body, content)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	disp, params, err := mime.ParseMediaType(res.Header.Get("Content-Disposition"))
	if err != nil || disp != "attachment" || params["filename"] != "tickers é.csv" {
		t.Errorf("Content-Disposition %q: %s %v %v, want an attachment named %q", res.Header.Get("Content-Disposition"), disp, params, err, "tickers é.csv")
	}

	res, body = do(t, http.MethodGet, get, nil, "Range", "bytes=12-")
	if res.StatusCode != http.StatusPartialContent || string(body) != content[12:] {
		t.Errorf("GET bytes=12-: %d %q, want 206 %q", res.StatusCode, body, content[12:])
	}
	res, body = do(t, http.MethodGet, get, nil, "Range", "bytes=0-5")
	if res.StatusCode != http.StatusPartialContent || string(body) != content[:6] {
		t.Errorf("GET bytes=0-5: %d %q, want 206 %q", res.StatusCode, body, content[:6])
	}
	res, body = do(t, http.MethodHead, get, nil)
	if res.StatusCode != http.StatusOK || res.ContentLength != int64(len(content)) || len(body) != 0 {
		t.Errorf("HEAD: %d, length %d, body %q", res.StatusCode, res.ContentLength, body)
	}

	// A download without a filename or type.
	plain, err := s.dir.DownloadURL(ctx, key, time.Hour, "", "")
	if err != nil {
		t.Fatal(err)
	}
	res, _ = do(t, http.MethodGet, plain, nil)
	if res.Header.Get("Content-Type") != blob.DefaultContentType || res.Header.Get("Content-Disposition") != "attachment" {
		t.Errorf("plain download headers: %v", res.Header)
	}

	// A second upload is refused (TestAnUploadURLTakesOneFileAndAReaderKeepsItsVersion).
	res, _ = do(t, http.MethodPut, put, strings.NewReader("v2"))
	if res.StatusCode != http.StatusConflict {
		t.Fatalf("second PUT: %d, want 409", res.StatusCode)
	}
	if got := readAll(t, s.dir, key, 0); got != content {
		t.Errorf("after a second upload read %q", got)
	}
	if n := len(s.onUploads()); n != 1 {
		t.Errorf("OnUpload called %d times after a refused second upload", n)
	}
}

func TestURLRefused(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	const key = "exports/org_1/job_1/data.csv"
	if _, err := s.dir.Write(ctx, key, strings.NewReader("a,b\n")); err != nil {
		t.Fatal(err)
	}
	put, err := s.dir.UploadURL(ctx, key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	get, err := s.dir.DownloadURL(ctx, key, time.Hour, "data.csv", "text/csv")
	if err != nil {
		t.Fatal(err)
	}
	other, err := blob.NewDir(t.TempDir(), s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.DownloadURL(ctx, key, time.Hour, "data.csv", "text/csv")
	if err != nil {
		t.Fatal(err)
	}

	// An expired URL: made an hour and a minute ago, valid for an hour.
	past := *s.dir
	past.Now = func() time.Time { return time.Now().Add(-time.Hour - time.Minute) }
	expired, err := past.DownloadURL(ctx, key, time.Hour, "data.csv", "text/csv")
	if err != nil {
		t.Fatal(err)
	}

	edit := func(u string, f func(q url.Values)) string {
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		q := p.Query()
		f(q)
		p.RawQuery = q.Encode()
		return p.String()
	}
	sig := func(u string) string {
		p, _ := url.Parse(u)
		return p.Query().Get("sig")
	}
	flip := func(s string) string {
		b := []byte(s)
		if b[0] == '0' {
			b[0] = '1'
		} else {
			b[0] = '0'
		}
		return string(b)
	}

	for _, tc := range []struct {
		name, method, url, msg string
	}{
		{"expired", http.MethodGet, expired, "expired"},
		{"tampered signature", http.MethodGet, edit(get, func(q url.Values) { q.Set("sig", flip(q.Get("sig"))) }), "signature is not valid"},
		{"signature not hex", http.MethodGet, edit(get, func(q url.Values) { q.Set("sig", "zz") }), "signature is not valid"},
		{"no signature", http.MethodGet, edit(get, func(q url.Values) { q.Del("sig") }), "no signature"},
		{"extended expiry", http.MethodGet, edit(expired, func(q url.Values) { q.Set("expires", "99999999999") }), "signature is not valid"},
		{"changed filename", http.MethodGet, edit(get, func(q url.Values) { q.Set("filename", "evil.html") }), "signature is not valid"},
		{"changed type", http.MethodGet, edit(get, func(q url.Values) { q.Set("type", "text/html") }), "signature is not valid"},
		{"added parameter", http.MethodGet, edit(get, func(q url.Values) { q.Set("x", "1") }), "signature is not valid"},
		{"other key", http.MethodGet, s.srv.URL + blob.PathPrefix + "exports/org_2/job_1/data.csv?" + strings.SplitN(get, "?", 2)[1], "signature is not valid"},
		{"other secret", http.MethodGet, foreign, "signature is not valid"},
		{"put URL used for GET", http.MethodGet, put, "for uploading"},
		{"put URL used for HEAD", http.MethodHead, put, ""},
		{"get URL used for PUT", http.MethodPut, get, "for downloading"},
		{"get URL's signature on the put URL", http.MethodPut, edit(put, func(q url.Values) { q.Set("sig", sig(get)) }), "signature is not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == http.MethodPut {
				body = strings.NewReader("overwritten")
			}
			res, b := do(t, tc.method, tc.url, body)
			if tc.method == http.MethodHead {
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("status %d, want 403", res.StatusCode)
				}
				return
			}
			wantError(t, res, b, http.StatusForbidden, "forbidden", tc.msg)
			if strings.Contains(string(b), sig(get)) || strings.Contains(string(b), sig(put)) {
				t.Errorf("the error body shows a signature: %s", b)
			}
		})
	}
	if got := readAll(t, s.dir, key, 0); got != "a,b\n" {
		t.Errorf("after refused requests the file holds %q", got)
	}
	if n := len(s.onUploads()); n != 0 {
		t.Errorf("OnUpload called %d times", n)
	}

	res, b := do(t, http.MethodDelete, get, nil)
	wantError(t, res, b, http.StatusMethodNotAllowed, "method_not_allowed", "DELETE")
	if allow := res.Header.Get("Allow"); allow != "GET, HEAD, PUT" {
		t.Errorf("Allow %q", allow)
	}
	res, b = do(t, http.MethodPost, put, strings.NewReader("x"))
	wantError(t, res, b, http.StatusMethodNotAllowed, "method_not_allowed", "POST")

	res, b = do(t, http.MethodGet, s.srv.URL+blob.PathPrefix+"a//b?sig=00", nil)
	wantError(t, res, b, http.StatusBadRequest, "invalid_path", "empty segment")
	res, b = do(t, http.MethodGet, s.srv.URL+"/elsewhere/"+key, nil)
	wantError(t, res, b, http.StatusNotFound, "not_found", "")

	// A valid URL of a missing file.
	if err := s.dir.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	res, b = do(t, http.MethodGet, get, nil)
	wantError(t, res, b, http.StatusNotFound, "not_found", "no file")
}

func TestMaxUpload(t *testing.T) {
	s := newServer(t)
	s.dir.MaxUpload = 1000
	ctx := context.Background()
	const key = "imports/org_1/job_2/upload"
	put, err := s.dir.UploadURL(ctx, key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	// Exactly the limit is accepted.
	res, _ := do(t, http.MethodPut, put, bytes.NewReader(make([]byte, 1000)))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT of 1000 bytes: %d", res.StatusCode)
	}
	s.waitServed(t)

	// Over it, with the length announced or not (chunked), is refused and
	// leaves the earlier file as it was.
	for _, body := range []io.Reader{
		bytes.NewReader(make([]byte, 1001)),
		io.MultiReader(strings.NewReader(strings.Repeat("x", 3000))),
	} {
		res, b := do(t, http.MethodPut, put, body)
		wantError(t, res, b, http.StatusRequestEntityTooLarge, "payload_too_large", "1000 bytes")
		s.waitServed(t)
	}
	if info, err := s.dir.Stat(ctx, key); err != nil || info.Size != 1000 {
		t.Errorf("Stat after refused uploads: %+v, %v; want the earlier 1000 bytes", info, err)
	}
	if got := s.onUploads(); len(got) != 1 {
		t.Errorf("OnUpload calls %v, want one", got)
	}

	// Without an earlier file, nothing at all is left.
	if err := s.dir.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	res, b := do(t, http.MethodPut, put, io.MultiReader(strings.NewReader(strings.Repeat("y", 5000))))
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "payload_too_large", "")
	s.waitServed(t)
	if files := s.files(t); len(files) != 0 {
		t.Errorf("files left behind: %v", files)
	}
	if _, err := s.dir.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat: %v, want ErrNotFound", err)
	}
}

// failingReader gives n bytes, then fails.
type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("client crashed")
	}
	k := min(len(p), f.n)
	clear(p[:k])
	f.n -= k
	return k, nil
}

func TestInterruptedUploadLeavesNothing(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	const key = "imports/org_1/job_3/upload"
	put, err := s.dir.UploadURL(ctx, key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPut, put, &failingReader{n: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("PUT of a failing body: %d, want the request to fail", res.StatusCode)
	}
	s.waitServed(t)
	if files := s.files(t); len(files) != 0 {
		t.Errorf("files left behind: %v", files)
	}
	if n := len(s.onUploads()); n != 0 {
		t.Errorf("OnUpload called %d times", n)
	}
}

// genReader generates size bytes, byte i being genByte(i), and hashes
// them, without holding them.
type genReader struct {
	off, size int64
	h         hash.Hash
}

func genByte(i int64) byte { return byte(i*7 + i>>9 + i>>17) }

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), g.size-g.off))
	for i := range n {
		p[i] = genByte(g.off + int64(i))
	}
	g.off += int64(n)
	g.h.Write(p[:n])
	return n, nil
}

func TestLargeStreamedUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("60 MB upload")
	}
	s := newServer(t)
	ctx := context.Background()
	const key = "imports/org_1/job_4/upload"
	const size = 60 << 20
	put, err := s.dir.UploadURL(ctx, key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	gen := &genReader{size: size, h: sha256.New()}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, body := do(t, http.MethodPut, put, gen)
	runtime.ReadMemStats(&after)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", res.StatusCode, body)
	}
	// Client and server together allocate far less than the file: it was
	// streamed, never held whole.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("the upload allocated %d MB", alloc>>20)
	}
	if got := s.onUploads(); len(got) != 1 || got[0] != (upload{key, size}) {
		t.Errorf("OnUpload calls %v, want one with %d bytes", got, size)
	}
	if info, err := s.dir.Stat(ctx, key); err != nil || info.Size != size {
		t.Fatalf("Stat: %+v, %v", info, err)
	}

	rc, err := s.dir.Open(ctx, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, rc)
	rc.Close()
	if err != nil || n != size || !bytes.Equal(h.Sum(nil), gen.h.Sum(nil)) {
		t.Fatalf("read back %d bytes (%v), hash equal: %v", n, err, bytes.Equal(h.Sum(nil), gen.h.Sum(nil)))
	}
	const off = size - 1000
	tail := readAll(t, s.dir, key, off)
	for i := range len(tail) {
		if tail[i] != genByte(off+int64(i)) {
			t.Fatalf("byte %d: %d, want %d", off+int64(i), tail[i], genByte(off+int64(i)))
		}
	}
	if len(tail) != 1000 {
		t.Errorf("read %d bytes from %d, want 1000", len(tail), off)
	}
}

func TestWriteOpenStatDelete(t *testing.T) {
	d, err := blob.NewDir(t.TempDir(), "http://localhost:8080")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const key = "exports/org_1/job_5/data.ndjson"

	if _, err := d.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), key) {
		t.Errorf("Stat of a missing key: %v, want ErrNotFound naming the key", err)
	}
	if _, err := d.Open(ctx, key, 0); !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), key) {
		t.Errorf("Open of a missing key: %v, want ErrNotFound naming the key", err)
	}
	if err := d.Delete(ctx, key); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}

	n, err := d.Write(ctx, key, strings.NewReader("{\"a\":1}\n"))
	if err != nil || n != 8 {
		t.Fatalf("Write: %d, %v", n, err)
	}
	n, err = d.Write(ctx, key, strings.NewReader("{\"b\":2}\n{\"c\":3}\n"))
	if err != nil || n != 16 {
		t.Fatalf("second Write: %d, %v", n, err)
	}
	if got := readAll(t, d, key, 8); got != "{\"c\":3}\n" {
		t.Errorf("Open at 8: %q", got)
	}
	// A directory of keys is no key.
	if _, err := d.Stat(ctx, "exports/org_1"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat of a directory: %v, want ErrNotFound", err)
	}
	if _, err := d.Open(ctx, key+"/below", 0); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Open below a file: %v, want ErrNotFound", err)
	}
	if err := d.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat after Delete: %v", err)
	}

	// A Write whose context ends, or whose reader fails, keeps nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Write(cctx, key, strings.NewReader("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a canceled context: %v", err)
	}
	if _, err := d.Write(ctx, key, &failingReader{n: 100}); err == nil || !strings.Contains(err.Error(), key) {
		t.Errorf("Write from a failing reader: %v, want an error naming the key", err)
	}
	var left []string
	filepath.WalkDir(d.Root, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			left = append(left, path)
		}
		return err
	})
	if len(left) != 0 {
		t.Errorf("failed writes left %v", left)
	}
}

// TestConcurrentWriters checks that readers only ever see whole files
// while writers replace the same key.
func TestConcurrentWriters(t *testing.T) {
	d, err := blob.NewDir(t.TempDir(), "http://localhost:8080")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const key = "exports/org_1/job_6/data.csv"
	const size = 256 << 10
	if _, err := d.Write(ctx, key, bytes.NewReader(bytes.Repeat([]byte{'a'}, size))); err != nil {
		t.Fatal(err)
	}
	var writers, readers sync.WaitGroup
	var stop atomic.Bool
	for w := range 4 {
		writers.Go(func() {
			for i := range 5 {
				c := byte('b' + w*5 + i)
				if _, err := d.Write(ctx, key, bytes.NewReader(bytes.Repeat([]byte{c}, size))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for range 2 {
		readers.Go(func() {
			for !stop.Load() {
				rc, err := d.Open(ctx, key, 0)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || len(got) != size || bytes.Count(got, got[:1]) != size {
					t.Errorf("read %d bytes (%v), not one writer's whole file", len(got), err)
					return
				}
			}
		})
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
}

func TestBadKeys(t *testing.T) {
	for _, key := range []string{
		"imports/org_1/01J9ZQ/upload",
		"exports/org-1/job.2/data.csv",
		"a",
		strings.Repeat("k", blob.MaxKeyLen),
	} {
		if err := blob.ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q): %v", key, err)
		}
	}
	s := newServer(t)
	ctx := context.Background()
	for _, tc := range []struct{ key, why string }{
		{"", "empty"},
		{strings.Repeat("k", blob.MaxKeyLen+1), "longer than 512"},
		{"/imports/a", "starts with /"},
		{"imports/../etc/passwd", `".."`},
		{"imports/a..b", `".."`},
		{"imports//a", "empty segment"},
		{"imports/a/", "empty segment"},
		{"imports/.blob-123", "starts with '.'"},
		{"imports/a b", "character ' '"},
		{"imports/a?b", "character '?'"},
		{"imports/a\\b", "character '\\\\'"},
		{"imports/é", "character"},
		{"imports/a%2Fb", "character '%'"},
	} {
		err := blob.ValidateKey(tc.key)
		if !errors.Is(err, blob.ErrInvalidKey) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ValidateKey(%q): %v, want ErrInvalidKey saying %s", tc.key, err, tc.why)
		}
		for name, err := range map[string]error{
			"Write":  second(s.dir.Write(ctx, tc.key, strings.NewReader("x"))),
			"Open":   second(s.dir.Open(ctx, tc.key, 0)),
			"Stat":   second(s.dir.Stat(ctx, tc.key)),
			"Delete": s.dir.Delete(ctx, tc.key),
			"Upload": second(s.dir.UploadURL(ctx, tc.key, time.Hour)),
			"Down":   second(s.dir.DownloadURL(ctx, tc.key, time.Hour, "f.csv", "text/csv")),
		} {
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("%s(%q): %v, want ErrInvalidKey", name, tc.key, err)
			}
		}
	}
	if files := s.files(t); len(files) != 0 {
		t.Errorf("bad keys left files: %v", files)
	}
}

func second[T any](_ T, err error) error { return err }

func TestURLArguments(t *testing.T) {
	d, err := blob.NewDir(t.TempDir(), "http://localhost:8080/")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const key = "exports/org_1/job_7/data.csv"
	u, err := d.UploadURL(ctx, key, time.Minute)
	if err != nil || !strings.HasPrefix(u, "http://localhost:8080/files/"+key+"?") {
		t.Errorf("UploadURL: %s, %v", u, err)
	}
	for _, ttl := range []time.Duration{0, -time.Second, blob.MaxURLTTL + time.Second} {
		if _, err := d.UploadURL(ctx, key, ttl); err == nil {
			t.Errorf("UploadURL with ttl %v: no error", ttl)
		}
	}
	for _, tc := range []struct{ filename, ctype string }{
		{"a/b.csv", "text/csv"},
		{"a\r\nSet-Cookie: x.csv", "text/csv"},
		{"a.csv", "text/csv\r\nX: y"},
		{"a.csv", "not a type"},
		{strings.Repeat("f", 256), "text/csv"},
	} {
		if _, err := d.DownloadURL(ctx, key, time.Minute, tc.filename, tc.ctype); err == nil {
			t.Errorf("DownloadURL(%q, %q): no error", tc.filename, tc.ctype)
		}
	}
	if _, err := (&blob.Dir{Root: t.TempDir(), BaseURL: "http://x"}).UploadURL(ctx, key, time.Minute); err == nil {
		t.Error("UploadURL of a Dir without a Secret: no error")
	}
	for _, base := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		if _, err := blob.NewDir(t.TempDir(), base); err == nil {
			t.Errorf("NewDir with base URL %q: no error", base)
		}
	}
}

// An upload URL takes one file (issue 45): a second PUT is a 409 and keeps
// the first; a file written at the key since fails OpenVersion of the first.
func TestAnUploadURLTakesOneFileAndAReaderKeepsItsVersion(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	const key = "imports/org_1/job_2/upload"
	put, err := s.dir.UploadURL(ctx, key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if res, body := do(t, http.MethodPut, put, strings.NewReader("a,b\n1,2\n")); res.StatusCode != http.StatusOK {
		t.Fatalf("first PUT: %d %s", res.StatusCode, body)
	}
	res, body := do(t, http.MethodPut, put, strings.NewReader("x,y\n9,9\n"))
	wantError(t, res, body, http.StatusConflict, "conflict", "this URL took its file already: an upload URL takes one file (create a new import for another)")
	if got := readAll(t, s.dir, key, 0); got != "a,b\n1,2\n" {
		t.Errorf("the key holds %q after a second PUT, want the first file", got)
	}
	if len(s.onUploads()) != 1 {
		t.Errorf("OnUpload calls %v, want the first upload's only", s.onUploads())
	}
	info, err := s.dir.Stat(ctx, key)
	if err != nil || info.Version == "" {
		t.Fatalf("Stat: %+v, %v", info, err)
	}
	rc, err := s.dir.OpenVersion(ctx, key, 4, info.Version)
	if err != nil {
		t.Fatalf("OpenVersion of the stored version: %v", err)
	}
	rc.Close()
	if _, err := s.dir.Write(ctx, key, strings.NewReader("other")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.dir.OpenVersion(ctx, key, 0, info.Version); !errors.Is(err, blob.ErrReplaced) {
		t.Errorf("OpenVersion of a replaced file: %v, want ErrReplaced", err)
	}
}
