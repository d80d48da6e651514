package api_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

func TestTheVerificationExamplesOfDocsEventsRun(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(name, lang string) string {
		_, rest, ok := strings.Cut(string(page), "<!-- "+name+" -->\n```"+lang+"\n")
		code, _, ok2 := strings.Cut(rest, "```\n<!-- /"+name+" -->")
		if !ok || !ok2 {
			t.Fatalf("docs/events.md has no %s block", name)
		}
		return code
	}
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	ep := admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL}).Want(t, 201).Object(t)
	admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Docs Co"}).Want(t, 201)
	apitest.Caught(t, evs)
	req := recv.Wait(t, 1)[0]
	secret := ep["secret"].(string)

	sh := exec.Command("bash", "-c", "set -euo pipefail\n"+block("verify-sh", "sh"))
	sh.Env = append(os.Environ(), "SECRET="+secret, "WEBHOOK_ID="+req.Header.Get("webhook-id"),
		"WEBHOOK_TIMESTAMP="+req.Header.Get("webhook-timestamp"), "WEBHOOK_SIGNATURE="+req.Header.Get("webhook-signature"), "BODY="+string(req.Body))
	if out, err := sh.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "verified" {
		t.Errorf("the shell example: %v: %s", err, out)
	}
	sh.Env[len(sh.Env)-1] = "BODY=" + string(req.Body) + " "
	tampered := exec.Command("bash", "-c", "set -euo pipefail\n"+block("verify-sh", "sh"))
	tampered.Env = sh.Env
	if out, err := tampered.CombinedOutput(); err == nil {
		t.Errorf("the shell example verifies a changed body: %s", out)
	}

	// The Go example is an endpoint: built and run as one of this test's.
	dir := t.TempDir()
	testinputs.Tree()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "verifywebhook"), "../../docs/examples/verifywebhook")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build docs/examples/verifywebhook: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out syncBuffer
	run := exec.Command(filepath.Join(dir, "verifywebhook"))
	run.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret, "ADDR="+addr)
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	apitest.WaitFor(t, "the example endpoint to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	admin.Do("PATCH", "/v1/webhook-endpoints/"+ep["id"].(string), map[string]any{"url": "http://" + addr + "/"}).Want(t, 200)
	cmp := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Go Docs Co"}).Want(t, 201).Object(t)
	apitest.Caught(t, evs)
	apitest.WaitFor(t, "the example endpoint to verify the delivery", func() bool {
		return strings.Contains(out.String(), "company.created "+cmp["id"].(string))
	})
	forged, _ := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader(string(req.Body)+" "))
	for k, v := range req.Header {
		forged.Header[k] = v
	}
	res, err := http.DefaultClient.Do(forged)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the example endpoint answered a changed body %d: %s", res.StatusCode, out.String())
	}
	// Its output arrives through a pipe, after its answer.
	apitest.WaitFor(t, "the example endpoint to print its refusal", func() bool { return strings.Contains(out.String(), "refused") })
}

// syncBuffer is a bytes.Buffer that a process and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
