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
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/localdev/localdevtest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/openapi"
)

// The smoke test sets the environment, so it is not parallel. It runs what
// `make run` runs (run, with the ports of PORT and DYNAMODB_PORT: 0, free
// ones) and lists every socket this process and its children (DynamoDB
// Local's JVM) listen on once it serves: each must be on loopback.
func TestDevServerServesTheAPIOnlyOnLoopbackAndStopsItsDynamoDBLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	localdevtest.IsolateEnv(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, banner, done := startServer(t, ctx)

	clientID := localdevtest.BannerField(t, banner, `client id:\s+(\S+)`)
	secret := localdevtest.BannerField(t, banner, `secret:\s+(\S+)`)
	ddbURL := localdevtest.BannerField(t, banner, `DynamoDB:\s+(\S+)`)
	ddb, err := url.Parse(ddbURL)
	if err != nil || ddb.Hostname() != "127.0.0.1" {
		t.Fatalf("DynamoDB endpoint %q is not on loopback", ddbURL)
	}
	if ddb.Port() == "8000" || ddb.Port() == "0" {
		t.Errorf("DYNAMODB_PORT=0 gave port %s, want a free port picked at start", ddb.Port())
	}
	if !strings.Contains(banner, base) {
		t.Errorf("the banner does not show the URL %s:\n%s", base, banner)
	}
	// The line the README's and docs' shell examples ask to paste.
	if export := "export CLIENT_ID=" + clientID + " API_KEY=" + secret + " BASE_URL=" + base + "\n"; !strings.Contains(banner, export) {
		t.Errorf("the banner does not hold %q:\n%s", export, banner)
	}
	if u, _ := url.Parse(base); u == nil || u.Port() == "8080" || u.Port() == "0" {
		t.Errorf("PORT=0 served on %s, want a free port", base)
	}

	call := func(method, path, body string, auth bool) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth {
			req.Header.Set("X-Service-Client-Id", clientID)
			req.Header.Set("X-Service-Api-Key", secret)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}

	if code, body := call("GET", "/healthz", "", false); code != 200 || !strings.Contains(string(body), `"ok"`) {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
	if code, _ := call("GET", "/v1/companies", "", false); code != 401 {
		t.Errorf("GET /v1/companies without credentials: %d, want 401", code)
	}
	code, body := call("POST", "/v1/companies", `{"canonicalName":"Acme Robotics","website":"https://acme.example","companyType":"operating"}`, true)
	if code != 201 {
		t.Fatalf("POST /v1/companies: %d %s", code, body)
	}
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &created); err != nil || created.Data.ID == "" {
		t.Fatalf("POST /v1/companies: %s", body)
	}
	code, body = call("GET", "/v1/companies", "", true)
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			CanonicalName string `json:"canonicalName"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.Data) != 1 ||
		list.Data[0].ID != created.Data.ID || list.Data[0].CanonicalName != "Acme Robotics" {
		t.Errorf("GET /v1/companies: %d %s, want the created company", code, body)
	}

	// Every listener of make run, the API's (with the files' URLs) and
	// DynamoDB Local's, binds loopback only.
	listening := map[string]bool{}
	for _, l := range localdevtest.OnlyLoopbackListeners(t, os.Getpid()) {
		listening[strconv.Itoa(int(l.Addr.Port()))] = true
	}
	for name, port := range map[string]string{"the API": strings.TrimPrefix(base, "http://127.0.0.1:"), "DynamoDB Local": ddb.Port()} {
		if !listening[port] {
			t.Errorf("no listener of %s (port %s) among the process's", name, port)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after the context ended, want nil", err)
		}
	case <-time.After(testenv.Scaled(30 * time.Second)):
		t.Fatal("run did not return within 30s of the context ending")
	}
	for name, addr := range map[string]string{"DynamoDB Local": ddb.Host, "API": strings.TrimPrefix(base, "http://")} {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("the %s port %s still accepts connections after run returned", name, addr)
		}
	}
}

// startServer runs the dev server until ctx ends and returns its URL, the
// banner it printed and the channel run's result arrives on.
func startServer(t *testing.T, ctx context.Context) (base, banner string, done <-chan error) {
	t.Helper()
	var out bytes.Buffer
	ready := make(chan string, 1)
	result := make(chan error, 1)
	go func() { result <- run(ctx, &out, ready) }()
	select {
	case base = <-ready:
	case err := <-result:
		t.Fatalf("run returned before serving: %v\n%s", err, out.String())
	case <-time.After(testenv.Scaled(90 * time.Second)):
		t.Fatal("the dev server was not ready within 90s")
	}
	// run wrote the banner before announcing readiness and writes no more.
	return base, out.String(), result
}

// The reference page, opened in a real headless browser: Debian's chromium
// driven by playwright-core (both installed by make deps).
func TestTheDocsPageShowsTheReferenceInARealBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local and a browser")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v): run make deps", err)
	}
	if _, err := os.Stat("../../node_modules/playwright-core"); err != nil {
		t.Fatalf("playwright-core is not installed (%v): run make deps", err)
	}
	localdevtest.IsolateEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, _, _ := startServer(t, ctx)

	browse, cancelBrowse := context.WithTimeout(ctx, testenv.Scaled(2*time.Minute))
	defer cancelBrowse()
	deepLink := "tag/deals/operation/" + openapi.OperationID("GET", "/v1/deals/{id}")
	testinputs.Files("package-lock.json", "cmd/devserver/testdata/docs-page.mjs")
	cmd := exec.CommandContext(browse, "node", "testdata/docs-page.mjs", base, chromium, t.TempDir(), deepLink)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the browser run failed: %v\n%s", err, stderr.String())
	}
	var seen struct {
		Title     string
		Text      string
		Menu      string
		OffOrigin []string
		Errors    []string
		Deep      struct {
			Found       bool
			Top, Height float64
		}
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("browser output: %v\n%.500s", err, out)
	}
	if len(seen.OffOrigin) > 0 {
		t.Errorf("the page asked for something outside the service: %v", seen.OffOrigin)
	}
	if len(seen.Errors) > 0 {
		t.Errorf("the page had script errors: %v", seen.Errors)
	}
	if seen.Title != "Sourcebase API reference" {
		t.Errorf("title %q", seen.Title)
	}
	// The side menu lists the topics' sections, then their titles, in
	// order: what a user looks for, not the functions serving it.
	topics, err := kinds.Topics()
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, tp := range topics {
		i := strings.Index(seen.Menu[at:], tp.Title)
		if i < 0 {
			t.Errorf("the menu does not list %q after what precedes it:\n%.3000s", tp.Title, seen.Menu)
			break
		}
		at += i
	}
	for _, tp := range topics {
		if !strings.Contains(seen.Menu, strings.ToUpper(tp.Section)) && !strings.Contains(seen.Menu, tp.Section) {
			t.Errorf("the menu has no section %q", tp.Section)
		}
	}
	// A deep link opens the page at its operation.
	if !seen.Deep.Found || seen.Deep.Top < -2 || seen.Deep.Top > seen.Deep.Height/2 {
		t.Errorf("the deep link #%s: found %v, its operation %v px from the top of a %v px window", deepLink, seen.Deep.Found, seen.Deep.Top, seen.Deep.Height)
	}
	text := seen.Text
	for _, want := range []string{"Sourcebase API", "1.0.0", "x-service-client-id", "x-service-api-key", "canonicalName",
		"X-Next-Cursor", "operator", "capturedOn", "webhookHmacSha256"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct{ Summary string } `json:"paths"`
	}
	if err := json.Unmarshal(doc, &spec); err != nil {
		t.Fatal(err)
	}
	for _, rt := range api.Routes() {
		op := spec.Paths[rt.Path][strings.ToLower(rt.Method)]
		if !strings.Contains(text, op.Summary) || !strings.Contains(text, rt.Path) {
			t.Errorf("the page does not show %s %s (%q)", rt.Method, rt.Path, op.Summary)
		}
	}
}

// The MCP Inspector's CLI (pinned in package-lock.json), as a user would run
// it against make run: it lists the tools and calls one with the demo key,
// and gets nothing without it.
func TestTheMCPInspectorCLIListsAndCallsTheToolsWithTheDemoKey(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	inspector := "../../node_modules/.bin/mcp-inspector"
	if _, err := os.Stat(inspector); err != nil {
		t.Fatalf("the MCP Inspector is not installed (%v): run make deps", err)
	}
	localdevtest.IsolateEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, banner, _ := startServer(t, ctx)
	clientID := localdevtest.BannerField(t, banner, `client id:\s+(\S+)`)
	secret := localdevtest.BannerField(t, banner, `secret:\s+(\S+)`)
	inspect := func(withKey bool, args ...string) (stdout, stderr string, err error) {
		t.Helper()
		cmdCtx, stop := context.WithTimeout(ctx, testenv.Scaled(time.Minute))
		defer stop()
		all := []string{"--cli", base + "/mcp", "--transport", "http"}
		if withKey {
			all = append(all, "--header", "x-service-client-id: "+clientID, "--header", "x-service-api-key: "+secret)
		}
		var o, e bytes.Buffer
		testinputs.Files("package-lock.json")
		cmd := exec.CommandContext(cmdCtx, inspector, append(all, args...)...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}
	run := func(withKey bool, args ...string) (string, error) {
		t.Helper()
		stdout, stderr, err := inspect(withKey, args...)
		return stdout + stderr, err
	}
	out, err := run(true, "--method", "tools/list")
	if err != nil || !strings.Contains(out, `"name": "search_companies"`) || !strings.Contains(out, `"name": "start_workflow_run"`) {
		t.Fatalf("tools/list: %v\n%.2000s", err, out)
	}
	// Every tool's schemas are portable: the Inspector's schema check
	// finds nothing (without --strict it prints "Schema portability: n
	// errors, m warnings across k tools"; with it, each finding with its
	// path and suggestion, and the JSON envelope's schemaFindings).
	if strings.Contains(out, "Schema portability") {
		t.Errorf("tools/list: the Inspector finds the tool schemas unportable:\n%s", out[strings.Index(out, "Schema portability"):])
	}
	stdout, stderr, err := inspect(true, "--method", "tools/list", "--strict", "--format", "json")
	var listed struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
		SchemaFindings []struct {
			ToolName string `json:"toolName"`
			Findings []struct {
				Rule, Severity, Schema, Path, Issue, Suggestion string
			} `json:"findings"`
		} `json:"schemaFindings"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed.Result.Tools) == 0 {
		t.Fatalf("tools/list --strict --format json: %v\n%.2000s\n%.2000s", err, stdout, stderr)
	}
	for _, tool := range listed.SchemaFindings {
		for _, f := range tool.Findings {
			t.Errorf("tool %s: %s %s at %s.%s: %s\n  suggestion: %s", tool.ToolName, f.Severity, f.Rule, f.Schema, f.Path, f.Issue, f.Suggestion)
		}
	}
	if strings.Contains(stderr, "Warning: tool") || strings.Contains(stderr, "Error: tool") {
		t.Errorf("tools/list --strict reports findings:\n%s", stderr)
	}
	out, err = run(true, "--method", "tools/call", "--tool-name", "search_companies", "--tool-arg", `body={"text":"acme"}`)
	if err != nil || !strings.Contains(out, `"structuredContent"`) || !strings.Contains(out, `"totalCount": 0`) {
		t.Fatalf("tools/call search_companies: %v\n%.2000s", err, out)
	}
	if out, err := run(false, "--method", "tools/list"); err == nil || strings.Contains(out, "search_companies") {
		t.Errorf("tools/list without the key: %v\n%.500s", err, out)
	}
}
