package s3blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/blob/s3blob"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

const bucket = "sourcebase-bulk-test"

// requests counts the S3 requests by kind ("UploadPart", "PUT", ...).
type requests struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *requests) count(kind string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[kind]
}

func (r *requests) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n = map[string]int{}
}

// RoundTrip counts req and sends it with the default transport.
func (r *requests) RoundTrip(req *http.Request) (*http.Response, error) {
	kind := req.Method
	if req.URL.Query().Has("partNumber") {
		kind = "UploadPart"
	}
	r.mu.Lock()
	r.n[kind]++
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// gen generates size bytes, byte i being genByte(i), hashing them as it
// goes, without holding them.
type gen struct {
	off, size int64
	h         hash.Hash
	failAt    int64 // when > 0, fail on reaching this offset
}

func genByte(i int64) byte { return byte(i*13 + i>>10) }

func (g *gen) Read(p []byte) (int, error) {
	if g.failAt > 0 && g.off >= g.failAt {
		return 0, errors.New("source failed")
	}
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

func readAll(t *testing.T, st blob.Store, key string, offset int64) []byte {
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
	return b
}

func TestS3Store(t *testing.T) {
	endpoint := testenv.Moto(t)
	reqs := &requests{n: map[string]int{}}
	client := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:   &http.Client{Transport: reqs},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(2*time.Minute))
	defer cancel()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create the bucket: %v", err)
	}
	st := s3blob.New(client, bucket)
	httpc := &http.Client{Timeout: testenv.Scaled(30 * time.Second)}

	t.Run("a reader keeps the version it started with", func(t *testing.T) {
		const key = "imports/org_1/job_9/upload"
		if _, err := st.Write(ctx, key, strings.NewReader("a,b\n1,2\n")); err != nil {
			t.Fatal(err)
		}
		info, err := st.Stat(ctx, key)
		if err != nil || info.Version == "" {
			t.Fatalf("Stat: %+v, %v; want a version (the ETag)", info, err)
		}
		rc, err := st.OpenVersion(ctx, key, 4, info.Version)
		if err != nil {
			t.Fatalf("OpenVersion of the stored version: %v", err)
		}
		if b, _ := io.ReadAll(rc); string(b) != "1,2\n" {
			t.Errorf("read %q", b)
		}
		rc.Close()
		if _, err := st.Write(ctx, key, strings.NewReader("x,y\n9,9\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := st.OpenVersion(ctx, key, 0, info.Version); !errors.Is(err, blob.ErrReplaced) {
			t.Errorf("OpenVersion of a replaced object: %v, want ErrReplaced", err)
		}
	})

	t.Run("streamed multipart write", func(t *testing.T) {
		const key = "exports/org_1/job_1/data.csv"
		const size = 12 << 20
		g := &gen{size: size, h: sha256.New()}
		reqs.reset()
		n, err := st.Write(ctx, key, g)
		if err != nil || n != size {
			t.Fatalf("Write: %d, %v; want %d", n, err, size)
		}
		if parts := reqs.count("UploadPart"); parts != 2 {
			t.Errorf("the write sent %d parts, want 2 (a multipart upload of 8 + 4 MiB)", parts)
		}
		info, err := st.Stat(ctx, key)
		if err != nil || info.Size != size {
			t.Fatalf("Stat: %+v, %v; want size %d", info, err, size)
		}
		got := sha256.Sum256(readAll(t, st, key, 0))
		if !bytes.Equal(got[:], g.h.Sum(nil)) {
			t.Error("the object read back differs from what was written")
		}
		const off = size - 5000
		tail := readAll(t, st, key, off)
		if len(tail) != 5000 {
			t.Fatalf("read %d bytes from %d, want 5000", len(tail), off)
		}
		for i, b := range tail {
			if b != genByte(off+int64(i)) {
				t.Fatalf("byte %d: %d, want %d", off+int64(i), b, genByte(off+int64(i)))
			}
		}
		if end := readAll(t, st, key, size); len(end) != 0 {
			t.Errorf("Open at the size read %d bytes", len(end))
		}
		if _, err := st.Open(ctx, key, size+1); err == nil || errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Open beyond the size: %v, want an error other than ErrNotFound", err)
		}
	})

	t.Run("small write replaces", func(t *testing.T) {
		const key = "exports/org_1/job_2/data.ndjson"
		for _, content := range []string{"{\"a\":1}\n{\"b\":2}\n", "{\"c\":3}\n", ""} {
			reqs.reset()
			n, err := st.Write(ctx, key, strings.NewReader(content))
			if err != nil || n != int64(len(content)) {
				t.Fatalf("Write(%q): %d, %v", content, n, err)
			}
			if parts := reqs.count("UploadPart"); parts != 0 {
				t.Errorf("a small write sent %d parts, want one PutObject", parts)
			}
			if got := readAll(t, st, key, 0); string(got) != content {
				t.Errorf("read %q, want %q", got, content)
			}
		}
	})

	t.Run("failed write keeps nothing", func(t *testing.T) {
		const key = "exports/org_1/job_3/data.csv"
		_, err := st.Write(ctx, key, &gen{size: 20 << 20, failAt: 9 << 20, h: sha256.New()})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Fatalf("Write from a failing reader: %v, want an error naming the key", err)
		}
		if _, err := st.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat after a failed write: %v, want ErrNotFound", err)
		}
		out, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Uploads) != 0 {
			t.Errorf("%d multipart uploads left, want the failed one aborted", len(out.Uploads))
		}
	})

	t.Run("presigned upload", func(t *testing.T) {
		const key = "imports/org_1/job_4/upload"
		const content = "symbol,name\nAAPL,Apple Inc.\n"
		u, err := st.UploadURL(ctx, key, 15*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, strings.NewReader(content))
		if err != nil {
			t.Fatal(err)
		}
		res, err := httpc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("PUT to the presigned URL: %d %s", res.StatusCode, body)
		}
		if info, err := st.Stat(ctx, key); err != nil || info.Size != int64(len(content)) {
			t.Errorf("Stat: %+v, %v", info, err)
		}
		if got := readAll(t, st, key, 12); string(got) != content[12:] {
			t.Errorf("Open at 12: %q, want %q", got, content[12:])
		}
	})

	t.Run("presigned download", func(t *testing.T) {
		const key = "exports/org_1/job_5/data.csv"
		const content = "a,b\n1,2\n"
		if _, err := st.Write(ctx, key, strings.NewReader(content)); err != nil {
			t.Fatal(err)
		}
		u, err := st.DownloadURL(ctx, key, 15*time.Minute, "companies 2024.csv", "text/csv")
		if err != nil {
			t.Fatal(err)
		}
		res, err := httpc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(body) != content {
			t.Fatalf("GET of the presigned URL: %d %q, want 200 %q", res.StatusCode, body, content)
		}
		// The URL asks S3 to answer with the headers, signed (only Host is
		// a signed header: a browser sends nothing else).
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		q := p.Query()
		if q.Get("X-Amz-Expires") != "900" || q.Get("X-Amz-SignedHeaders") != "host" {
			t.Errorf("presigned query %v, want X-Amz-Expires=900 and only host signed", q)
		}
		wantAttachment := func(what, cd string) {
			t.Helper()
			disp, params, err := mime.ParseMediaType(cd)
			if err != nil || disp != "attachment" || params["filename"] != "companies 2024.csv" {
				t.Errorf("%s %q, want an attachment named %q", what, cd, "companies 2024.csv")
			}
		}
		wantAttachment("response-content-disposition", q.Get("response-content-disposition"))
		if ct := q.Get("response-content-type"); ct != "text/csv" {
			t.Errorf("response-content-type %q, want text/csv", ct)
		}
		// S3 answers with them; moto (5.2) ignores response-content-*
		// parameters, so the answer's headers are checked where present.
		if cd := res.Header.Get("Content-Disposition"); cd != "" {
			wantAttachment("Content-Disposition", cd)
			if ct := res.Header.Get("Content-Type"); ct != "text/csv" {
				t.Errorf("Content-Type %q, want text/csv", ct)
			}
		} else {
			t.Log("the S3 emulator ignored response-content-disposition; checked the presigned URL only")
		}
		if _, err := st.DownloadURL(ctx, key, time.Minute, "a/b.csv", ""); err == nil {
			t.Error("DownloadURL with a slash in the filename: no error")
		}
		if _, err := st.UploadURL(ctx, key, blob.MaxURLTTL+time.Second); err == nil {
			t.Error("UploadURL valid for more than 7 days: no error")
		}
	})

	t.Run("missing key", func(t *testing.T) {
		const key = "exports/org_1/job_6/absent.csv"
		if _, err := st.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), key) {
			t.Errorf("Stat: %v, want ErrNotFound naming the key", err)
		}
		for _, off := range []int64{0, 10} {
			if _, err := st.Open(ctx, key, off); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Open at %d: %v, want ErrNotFound", off, err)
			}
		}
		if err := st.Delete(ctx, key); err != nil {
			t.Errorf("Delete of a missing key: %v", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		const key = "exports/org_1/job_7/data.csv"
		if _, err := st.Write(ctx, key, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat after Delete: %v, want ErrNotFound", err)
		}
	})

	t.Run("list", func(t *testing.T) {
		ctx := context.Background()
		for key, size := range map[string]int{"imports/org_s3list/job_1/upload": 3, "imports/org_s3list/job_2/upload": 5, "imports/org_s3list2/job_3/upload": 1} {
			if _, err := st.Write(ctx, key, strings.NewReader(strings.Repeat("x", size))); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s3blob.Listing(st).List(ctx, "imports/org_s3list/")
		if err != nil || len(got) != 2 || got[0] != (blob.Object{Key: "imports/org_s3list/job_1/upload", Size: 3}) ||
			got[1] != (blob.Object{Key: "imports/org_s3list/job_2/upload", Size: 5}) {
			t.Errorf("List: %v %v", got, err)
		}
		if got, err := s3blob.Listing(st).List(ctx, "imports/org_s3none/"); err != nil || len(got) != 0 {
			t.Errorf("List of an empty folder: %v %v", got, err)
		}
		if _, err := s3blob.Listing(st).List(ctx, "imports/org_s3list"); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List of a prefix that is no folder: %v", err)
		}
	})

	t.Run("bad keys", func(t *testing.T) {
		for _, key := range []string{"", "/a", "a/../b", "a//b", "a b"} {
			reqs.reset()
			for name, err := range map[string]error{
				"Write":  second(st.Write(ctx, key, strings.NewReader("x"))),
				"Open":   second(st.Open(ctx, key, 0)),
				"Stat":   second(st.Stat(ctx, key)),
				"Delete": st.Delete(ctx, key),
				"Upload": second(st.UploadURL(ctx, key, time.Minute)),
				"Down":   second(st.DownloadURL(ctx, key, time.Minute, "f.csv", "text/csv")),
			} {
				if !errors.Is(err, blob.ErrInvalidKey) {
					t.Errorf("%s(%q): %v, want ErrInvalidKey", name, key, err)
				}
			}
			for _, m := range []string{"GET", "PUT", "HEAD", "DELETE", "POST"} {
				if n := reqs.count(m); n != 0 {
					t.Errorf("key %q: %d %s requests sent", key, n, m)
				}
			}
		}
	})
}

func second[T any](_ T, err error) error { return err }
