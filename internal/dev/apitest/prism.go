package apitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// Prism's validating proxy (@stoplight/prism-cli, pinned in
// package-lock.json) checks calls against the published OpenAPI document
// independently of kin-openapi (contract.go), as a client's tools would
// read it. One proxy runs per test binary, started on first use over
// api.OpenAPI() with --errors. The clients of an Env.ThroughPrism send
// their calls through it:
//   - a call Prism forwards must come back without violations: an answer
//     the document does not allow is replaced by Prism's 500 listing them,
//     lesser ones come in an sl-violations header; either fails the test;
//   - a request the document does not allow Prism answers itself (422,
//     401, 404 for an unknown path...) without forwarding it. The test may
//     mean it (a body that breaks a rule, a missing key): the request then
//     goes to the service directly, whose answer the test sees, and fails
//     the test only when the service accepts it (2xx): what the service
//     accepts, the document must allow, the policy of the contract check.
//
// Prism decodes and encodes JSON bodies again on their way (a number
// beyond a double's precision, the exact bytes of a signed webhook
// payload), so a test that depends on the bytes sent is not for it. A
// path's commas reach Prism percent-encoded (see prismURI).
//
// Prism forwards to one upstream, and every test has its own service: it
// forwards to a switchboard in this process, which sends each request on
// to the service named by its UpstreamHeader (and drops the header).

// UpstreamHeader names the service a call through Prism is for.
const UpstreamHeader = "X-Apitest-Upstream"

var prismProxy struct {
	once sync.Once
	url  string
	err  error
	log  *tail
}

// ThroughPrism returns e with every client it makes (Org, Key, Anonymous)
// sending its calls through Prism's validating proxy. Under go test -short
// (make test-fast) it returns e: Prism's Node process took a seventh of
// the HTTP suite's CPU in the edit loop, and the contract check
// (contract.go) validates every call against the same document either
// way; make test sends the calls through Prism.
func (e *Env) ThroughPrism(t testing.TB) *Env {
	t.Helper()
	if testing.Short() {
		return e
	}
	prismProxy.once.Do(func() { prismProxy.url, prismProxy.err = startPrism() })
	if prismProxy.err != nil {
		t.Fatalf("apitest: Prism's validating proxy: %v", prismProxy.err)
	}
	cp := *e
	cp.prism = prismProxy.url
	return &cp
}

// startPrism starts the switchboard and Prism in front of it.
func startPrism() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "node_modules", ".bin", "prism")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("Prism is not installed (%v): run make deps (npm ci installs @stoplight/prism-cli from package-lock.json)", err)
	}
	// The published document, as make generate wrote it: what a client's
	// generator reads.
	file := filepath.Join(root, "docs", "openapi.json")
	// Prism runs in a directory of its own.
	dir, err := os.MkdirTemp("", "sourcebase-prism-")
	if err != nil {
		return "", err
	}
	testenv.AtExit(func() { os.RemoveAll(dir) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	board := &http.Server{Handler: switchboard(), ReadHeaderTimeout: time.Minute}
	go board.Serve(ln)
	testenv.AtExit(func() { board.Close() })

	testinputs.Files("package-lock.json", "docs/openapi.json")
	cmd := exec.Command(bin, "proxy", file, "http://"+ln.Addr().String(), "--errors",
		"--host", "127.0.0.1", "--port", "0", "--cors=false", "--multiprocess=false")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	prismProxy.log = &tail{max: 64 << 10}
	cmd.Stderr = prismProxy.log
	// Prism must not outlive the test binary, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start %s: %w", bin, err)
	}
	testenv.AtExit(func() { cmd.Process.Kill(); cmd.Wait() })

	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := prismListening.FindStringSubmatch(line); m != nil {
				select {
				case listening <- m[1]:
				default:
				}
			}
			prismProxy.log.Write([]byte(line + "\n"))
		}
		io.Copy(prismProxy.log, out)
		close(listening)
	}()
	wait := testenv.Scaled(60 * time.Second)
	select {
	case u, ok := <-listening:
		if !ok {
			return "", fmt.Errorf("prism proxy exited during start:\n%s", prismProxy.log)
		}
		return u, nil
	case <-time.After(wait):
		return "", fmt.Errorf("prism proxy did not listen within %v:\n%s", wait, prismProxy.log)
	}
}

var prismListening = regexp.MustCompile(`Prism is listening on (http://[0-9.]+:[0-9]+)`)

// switchboard sends each request on to the service its UpstreamHeader
// names, noting that Prism forwarded it.
func switchboard() http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			u, err := url.Parse(r.In.Header.Get(UpstreamHeader))
			if err != nil || u.Host == "" {
				u = &url.URL{Scheme: "http", Host: "upstream.invalid"}
			}
			r.SetURL(u)
			r.Out.Header.Del(UpstreamHeader)
			r.Out.Header.Del(callHeader)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if call := r.Header.Get(callHeader); call != "" {
			prismForwarded.Store(call, true)
		}
		proxy.ServeHTTP(w, r)
	})
}

// throughPrism sends req through Prism. Prism answers a request the
// document does not allow itself, without forwarding it: that request is
// then sent to the service directly (newRequest makes it again), and the
// service's answer is the call's, as long as the service refuses it too
// (what the service accepts, the document must allow). A forwarded call
// fails t when Prism found its answer in violation of the document.
func (c *Client) throughPrism(req *http.Request, newRequest func() *http.Request) *Response {
	c.t.Helper()
	call := strconv.FormatInt(prismCalls.Add(1), 10)
	u, err := url.Parse(c.prism + prismURI(req.URL))
	if err != nil {
		c.t.Fatalf("new request: %v", err)
	}
	via := req.Clone(req.Context())
	via.URL, via.Host = u, u.Host
	via.Header.Set(UpstreamHeader, c.Base)
	via.Header.Set(callHeader, call)
	res, err := sendOnce(via)
	if err != nil {
		c.t.Fatalf("%s %s through Prism: %v\nPrism's last words:\n%s", req.Method, req.URL.RequestURI(), err, prismProxy.log)
	}
	if _, forwarded := prismForwarded.LoadAndDelete(call); !forwarded {
		direct := c.send(newRequest())
		if direct.Status >= 200 && direct.Status < 300 {
			c.t.Errorf("prism: %s %s: refused %d (%s), but the service accepts it (%d): the OpenAPI document does not allow a request the service accepts",
				req.Method, req.URL.RequestURI(), res.Status, res.Body, direct.Status)
		}
		return direct
	}
	if v := res.Header.Get("sl-violations"); v != "" {
		c.t.Errorf("prism: %s %s: violations of the OpenAPI document: %s", req.Method, req.URL.RequestURI(), v)
	}
	var p struct {
		Type string `json:"type"`
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") &&
		json.Unmarshal(res.Body, &p) == nil && strings.HasPrefix(p.Type, "https://stoplight.io/prism/errors#") {
		c.t.Errorf("prism: %s %s: answered %d %s: %s", req.Method, req.URL.RequestURI(), res.Status, p.Type, res.Body)
	}
	return res
}

// prismURI is u's request URI as Prism is sent it: with the commas of its
// path percent-encoded. Prism matches a path to its template with
// uri-template-lite, which reads a comma in a variable's value as a list
// separator (RFC 6570's reverse), so GET /v1/documents/ids=a,b gives the
// string parameter ids the list ["a", "b"], which its schema then refuses
// ("must be string"), whatever the document declares (an array made
// Prism fail, "value.split is not a function"). Encoded, the comma is
// part of the value: Prism checks "a,b" against the parameter's schema
// and forwards the call, and the service reads the path segment decoded,
// commas and all, as it reads one sent with literal commas.
func prismURI(u *url.URL) string {
	uri := u.RequestURI()
	path, query, hasQuery := strings.Cut(uri, "?")
	path = strings.ReplaceAll(path, ",", "%2C")
	if hasQuery {
		return path + "?" + query
	}
	return path
}

// sendOnce sends req and reads the whole answer.
func sendOnce(req *http.Request) (*Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}, nil
}

// callHeader numbers a call through Prism, so that the switchboard can
// tell which calls Prism forwarded.
const callHeader = "X-Apitest-Prism-Call"

var (
	prismCalls     atomic.Int64
	prismForwarded sync.Map // the callHeader of each call Prism forwarded
)

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = w.b[len(w.b)-w.max:]
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(bytes.ToValidUTF8(w.b, nil))
}
