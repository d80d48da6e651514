package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/localdev/localdevtest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/service"
)

// The smoke test sets the environment, so it is not parallel. It runs what
// `make run-lambdas` runs (run, with the ports of PORT, DYNAMODB_PORT and
// SFN_PORT: 0, free ones) and, once the functions have served, lists every
// socket this process and its children (DynamoDB Local's JVM, the
// emulators and their bootstraps, the state machine's interpreter) listen
// on: each must be on loopback.
func TestRunLambdasServesTheAPIThroughTheBootstrapsRunsWorkflowsInTheStateMachineOnlyOnLoopbackAndStopsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every bootstrap and starts DynamoDB Local")
	}
	localdevtest.IsolateEnv(t)
	// The Step Functions on the port SFN_PORT names.
	sfnPort := freePort(t)
	t.Setenv("SFN_PORT", strconv.Itoa(sfnPort))
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, &out, ready, root, binDir) }()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("run returned before serving: %v\n%s", err, out.String())
	case <-time.After(testenv.Scaled(10 * time.Minute)):
		t.Fatalf("not ready within %s", testenv.Scaled(10*time.Minute))
	}
	banner := out.String()
	clientID := localdevtest.BannerField(t, banner, `client id:\s+(\S+)`)
	secret := localdevtest.BannerField(t, banner, `secret:\s+(\S+)`)
	ddb, _ := url.Parse(localdevtest.BannerField(t, banner, `DynamoDB:\s+(\S+)`))
	sfn, _ := url.Parse(localdevtest.BannerField(t, banner, `Step Functions:\s+(\S+)`))
	if sfn == nil || sfn.Host != "127.0.0.1:"+strconv.Itoa(sfnPort) {
		t.Errorf("the Step Functions are at %v, want 127.0.0.1:%d (SFN_PORT)", sfn, sfnPort)
	}
	for _, f := range []string{"companies", "keys", "webhook", "runner", "hooks", "events", "deliver"} {
		if _, err := os.Stat(filepath.Join(binDir, f, "bootstrap")); err != nil {
			t.Errorf("no %s bootstrap: %v", f, err)
		}
	}

	call := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Service-Client-Id", clientID)
		req.Header.Set("X-Service-Api-Key", secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		var m map[string]any
		b, _ := io.ReadAll(res.Body)
		json.Unmarshal(b, &m)
		return res.StatusCode, m
	}
	data := func(m map[string]any) map[string]any { d, _ := m["data"].(map[string]any); return d }

	if code, _ := call("GET", "/healthz", nil); code != 200 {
		t.Errorf("GET /healthz: %d", code)
	}
	if code, m := call("GET", "/v1/nowhere", nil); code != 404 {
		t.Errorf("GET /v1/nowhere: %d %v", code, m)
	}
	code, m := call("POST", "/v1/companies", map[string]any{"canonicalName": "Acme Robotics", "website": "https://acme.example", "companyType": "operating"})
	if code != 201 {
		t.Fatalf("POST /v1/companies: %d %v", code, m)
	}
	// The change history runs in the process (eventfns.StartEvents): the
	// company's creation becomes an event, listed by the hooks bootstrap.
	companyID, _ := data(m)["id"].(string)
	var found map[string]any
	for deadline := time.Now().Add(testenv.Scaled(30 * time.Second)); found == nil && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		code, list := call("GET", "/v1/events?resourceType=company", nil)
		if code != 200 {
			t.Fatalf("GET /v1/events: %d %v", code, list)
		}
		evs, _ := list["data"].([]any)
		for _, e := range evs {
			ev, _ := e.(map[string]any)
			if res, _ := ev["resource"].(map[string]any); res["id"] == companyID {
				found = ev
			}
		}
	}
	if found == nil || found["type"] != "company.created" {
		t.Errorf("no company.created event of %s in the change history: %v", companyID, found)
	}
	code, m = call("POST", "/v1/workflows", map[string]any{"name": "smoke", "steps": []any{map[string]any{"id": "s", "type": "set", "with": map[string]any{"v.$": "$.input.v"}}}})
	if code != 201 {
		t.Fatalf("POST /v1/workflows: %d %v", code, m)
	}
	code, m = call("POST", "/v1/workflows/"+data(m)["id"].(string)+"/runs", map[string]any{"input": map[string]any{"v": 1}})
	if code != 202 {
		t.Fatalf("start a run: %d %v", code, m)
	}
	runID := data(m)["id"].(string)
	var status any
	for deadline := time.Now().Add(testenv.Scaled(time.Minute)); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, m = call("GET", "/v1/workflow-runs/"+runID, nil)
		if status = data(m)["status"]; status == "completed" || status == "failed" {
			break
		}
	}
	if status != "completed" {
		t.Errorf("the run is %v after a minute, want completed (executed by the state machine through the runner): %v", status, m)
	}

	// Every listener of make run-lambdas binds loopback only: the front's
	// (with the files' URLs), DynamoDB Local's, the Step Functions' and the
	// emulators' of the functions started so far (two each: the
	// invocation endpoint and the Runtime API).
	emulator, err := lambdaenv.Emulator()
	if err != nil {
		t.Fatal(err)
	}
	emulator = filepath.Base(emulator)[:min(15, len(filepath.Base(emulator)))] // a process's name, as /proc has it
	listening := map[string]bool{}
	emulators := 0
	for _, l := range localdevtest.OnlyLoopbackListeners(t, os.Getpid()) {
		listening[strconv.Itoa(int(l.Addr.Port()))] = true
		if l.Command == emulator {
			emulators++
		}
	}
	for name, port := range map[string]string{"the front": strings.TrimPrefix(base, "http://127.0.0.1:"), "DynamoDB Local": ddb.Port(), "the Step Functions": sfn.Port()} {
		if !listening[port] {
			t.Errorf("no listener of %s (port %s) among the process's", name, port)
		}
	}
	if emulators < 2*4 { // companies, workflows, the runner, hooks
		t.Errorf("%d listeners of emulators, want two for each of at least 4 functions started", emulators)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after the context ended", err)
		}
	case <-time.After(testenv.Scaled(30 * time.Second)):
		t.Fatalf("run did not return within %s of the context ending", testenv.Scaled(30*time.Second))
	}
	for name, addr := range map[string]string{"DynamoDB Local": ddb.Host, "front": strings.TrimPrefix(base, "http://"), "Step Functions": sfn.Host} {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("the %s port %s still accepts connections after run returned", name, addr)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The front and the Step Functions listen on 127.0.0.1 at the ports PORT
// and SFN_PORT name (8080, and 0: a free port, by default); a taken port
// is an error naming its variable, before the bootstraps are built.
func TestTheFrontAndTheStepFunctionsListenOnLoopbackAtThePortsOfTheirVariables(t *testing.T) {
	var frees []string // two distinct free ports
	var lns []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		frees = append(frees, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	for _, ln := range lns {
		ln.Close()
	}
	free, free2 := frees[0], frees[1]
	for _, c := range []struct {
		port, sfnPort, dbPort string
		front, sfn            string
		db                    int
	}{
		// (PORT's default, 8080, is left out: a make run may hold it.)
		{"0", "", "", "127.0.0.1:0", "127.0.0.1:0", 8000},
		{"0", "0", "0", "127.0.0.1:0", "127.0.0.1:0", 0},
		{free, free2, "9000", "127.0.0.1:" + free, "127.0.0.1:" + free2, 9000},
	} {
		t.Setenv("PORT", c.port)
		t.Setenv("SFN_PORT", c.sfnPort)
		t.Setenv("DYNAMODB_PORT", c.dbPort)
		front, sfn, db, err := listenAddrs()
		if err != nil || front != c.front || sfn != c.sfn || db != c.db {
			t.Errorf("PORT=%q SFN_PORT=%q DYNAMODB_PORT=%q: %q, %q, %d, %v; want %q, %q, %d",
				c.port, c.sfnPort, c.dbPort, front, sfn, db, err, c.front, c.sfn, c.db)
		}
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	for _, name := range []string{"PORT", "SFN_PORT"} {
		t.Setenv("PORT", "0")
		t.Setenv("SFN_PORT", "0")
		t.Setenv(name, port)
		if _, _, _, err := listenAddrs(); err == nil || !strings.Contains(err.Error(), "set "+name+" to use another") {
			t.Errorf("%s=%s, a taken port: %v, want an error naming %s", name, port, err, name)
		}
	}
	t.Setenv("PORT", free)
	t.Setenv("SFN_PORT", free)
	if _, _, _, err := listenAddrs(); err == nil || !strings.Contains(err.Error(), "PORT and SFN_PORT") {
		t.Errorf("PORT=SFN_PORT=%s: %v, want an error naming both", free, err)
	}
	t.Setenv("SFN_PORT", "port")
	if _, _, _, err := listenAddrs(); err == nil || !strings.Contains(err.Error(), "SFN_PORT") {
		t.Errorf("SFN_PORT=port: %v, want an error naming SFN_PORT", err)
	}
}

// The bootstraps get the front's configuration without a delivery queue
// (there is no SQS; the deliveries are made in the process) and never
// allow webhook endpoints on loopback addresses, whatever the front's
// WEBHOOKS_ALLOW_LOOPBACK, which only the process's own deliveries
// follow.
func TestTheBootstrapsNeverAllowLoopbackEndpointsNorGetADeliveryQueue(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Table, cfg.WebhooksAllowLoopback = "t", true
	cfg.DeliverQueueURL, cfg.DeliverDLQURL = "https://sqs.example/q.fifo", "https://sqs.example/d.fifo"
	got := bootstrapConfig(cfg)
	if got.WebhooksAllowLoopback || got.DeliverQueueURL != "" || got.DeliverDLQURL != "" || got.Table != "t" {
		t.Errorf("bootstrapConfig = %+v", got)
	}
	for k := range got.Env() {
		if k == service.EnvWebhooksAllowLoopback || k == service.EnvDeliverQueueURL || k == service.EnvDeliverDLQURL {
			t.Errorf("the bootstraps' environment has %s", k)
		}
	}
	if !cfg.WebhooksAllowLoopback {
		t.Error("bootstrapConfig changed its argument")
	}
	if n := loopbackNote(cfg); !strings.Contains(n, service.EnvWebhooksAllowLoopback+"=true") {
		t.Errorf("loopback note %q", n)
	}
}
