package api_test

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// The example requests of docs/ and of the README are executed here,
// against the running service, so that none can go stale. The convention,
// for every page:
//
//   - a ```http block is a request: "METHOD /path", then "Name: value"
//     header lines, then a blank line and the JSON body. The key's two
//     credential headers are added. It is followed by a ```json block
//     whose info string is the expected status and, optionally, a name:
//     "```json 201 company". The answer must contain that JSON ("<any>"
//     matches any value, "abc<any>" any string starting with abc; objects
//     may hold more keys), and a named answer's data is kept: later
//     blocks use {{company.id}}, {{company.trigger.secret}}, and its
//     ETag and X-Next-Cursor as {{company_etag}}, {{company_cursor}}.
//   - a ```sh run block is a shell script, run with bash (set -euo
//     pipefail) with BASE_URL, CLIENT_ID and API_KEY set (and, when it
//     names them, OTHER_CLIENT_ID and OTHER_API_KEY: a key of a second
//     organization), ROWS set to -docs-rows (an example of many rows
//     reads ${ROWS:-<its number>}: make test runs it smaller, make bench
//     as written) and {{...}} replaced; it must exit 0.
//   - a ```go file=<path> block must be that file of the repository,
//     byte for byte (the file itself is built and run by a test).
//
// Other blocks (```json, ```sh without run) are not requests; a ```sh
// block that calls curl must be a run block, and a page's requests run in
// order, in an organization of their own.

// docsRows is ROWS in the shell examples: how many rows an example of
// many rows writes (docs/bulk.md's round trip of 10,000, which make bench
// runs as written; make test's thousand go through the same batches,
// pages and jobs).
var docsRows = flag.Int("docs-rows", 1000, "`rows` of the docs' shell examples of many rows (ROWS)")

var (
	fence      = regexp.MustCompile("(?ms)^```([a-z]+)([^\n]*)\n(.*?)^```\\s*$")
	mustache   = regexp.MustCompile(`\{\{([A-Za-z0-9_.\[\]]+)\}\}`)
	docsToSkip = map[string]bool{"decisions.md": true, "resources.md": true}
)

type mdBlock struct{ lang, info, body string }

func mdBlocks(t *testing.T, path string) []mdBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []mdBlock
	for _, m := range fence.FindAllStringSubmatch(string(b), -1) {
		out = append(out, mdBlock{lang: m[1], info: strings.TrimSpace(m[2]), body: m[3]})
	}
	return out
}

func TestEveryExampleRequestOfTheDocsRunsAsDocumented(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../../README.md")
	requests := 0
	for _, page := range pages {
		if docsToSkip[filepath.Base(page)] {
			continue
		}
		blocks := mdBlocks(t, page)
		for _, b := range blocks {
			if b.lang == "http" || (b.lang == "sh" && b.info == "run") {
				requests++
			}
		}
		t.Run(strings.TrimPrefix(page, "../../"), func(t *testing.T) {
			t.Parallel()
			runDocPage(t, e, blocks)
		})
	}
	if requests < 20 {
		t.Errorf("docs/ has %d example requests; the convention must have changed", requests)
	}
}

func runDocPage(t *testing.T, e *apitest.Env, blocks []mdBlock) {
	c := e.Org(t)
	var other *apitest.Client
	named := map[string]any{}
	fill := func(s string) string {
		return mustache.ReplaceAllStringFunc(s, func(m string) string {
			path := mustache.FindStringSubmatch(m)[1]
			v, ok := lookup(named, path)
			if !ok {
				t.Fatalf("%s: no earlier answer holds %s", m, path)
			}
			if s, ok := v.(string); ok {
				return s
			}
			return apitest.JSONOf(v)
		})
	}
	for i := 0; i < len(blocks); i++ {
		b := blocks[i]
		switch {
		case b.lang == "http":
			if i+1 >= len(blocks) || blocks[i+1].lang != "json" {
				t.Fatalf("the request\n%s\nis not followed by a ```json <status> block of its answer", b.body)
			}
			want := blocks[i+1]
			i++
			fields := strings.Fields(want.info)
			if len(fields) == 0 {
				t.Fatalf("the answer of\n%s\nhas no status: ```json <status> [name]", b.body)
			}
			status, err := strconv.Atoi(fields[0])
			if err != nil {
				t.Fatalf("answer status %q: %v", fields[0], err)
			}
			method, path, headers, body := parseDocRequest(t, fill(b.body))
			var sent any
			if body != "" {
				sent = body
			}
			res := c.Do(method, path, sent, headers...)
			if res.Status != status {
				t.Fatalf("%s %s answered %d, the docs say %d: %s", method, path, res.Status, status, res.Body)
			}
			var got, wantJSON any
			if strings.TrimSpace(want.body) != "" {
				if err := json.Unmarshal([]byte(fill(want.body)), &wantJSON); err != nil {
					t.Fatalf("the documented answer of %s %s is not JSON: %v", method, path, err)
				}
				if err := json.Unmarshal(res.Body, &got); err != nil {
					t.Fatalf("%s %s: %v", method, path, err)
				}
				if !apitest.Contains(got, wantJSON) {
					t.Fatalf("%s %s answered\n%s\nwhich does not contain the documented\n%s", method, path, res.Body, apitest.JSONOf(wantJSON))
				}
			}
			if len(fields) > 1 {
				if m, ok := got.(map[string]any); ok {
					named[fields[1]] = m["data"]
				}
				named[fields[1]+"_etag"] = res.Header.Get("ETag")
				named[fields[1]+"_cursor"] = res.Header.Get("X-Next-Cursor")
			}
			if strings.HasPrefix(path, "/v1/workflows/") && strings.HasSuffix(path, "/runs") && method == "POST" {
				// Give the run a moment, so a next block reads it finished.
				if m, ok := got.(map[string]any); ok {
					if d, ok := m["data"].(map[string]any); ok {
						apitest.AwaitRun(t, c, d["id"].(string))
					}
				}
			}
		case b.lang == "sh" && b.info == "run":
			testinputs.Tree() // an example may build or run the module's code
			cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+fill(b.body))
			cmd.Env = append(os.Environ(), "BASE_URL="+e.URL, "CLIENT_ID="+c.ClientID, "API_KEY="+c.Secret,
				"ROWS="+strconv.Itoa(*docsRows))
			if strings.Contains(b.body, "OTHER_") {
				// A second organization's key, for examples that move data
				// between organizations.
				if other == nil {
					other = e.Org(t)
				}
				cmd.Env = append(cmd.Env, "OTHER_CLIENT_ID="+other.ClientID, "OTHER_API_KEY="+other.Secret)
			}
			for _, tool := range []string{"curl", "openssl"} {
				if strings.Contains(b.body, tool) {
					if _, err := exec.LookPath(tool); err != nil {
						t.Skipf("%s is not installed: the shell examples need it", tool)
					}
				}
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the shell example\n%s\nfailed: %v\n%s", b.body, err, out)
			}
		case b.lang == "sh" && strings.Contains(b.body, "curl"):
			t.Fatalf("a ```sh block calling curl must be a ```sh run block, executed by this test:\n%s", b.body)
		case b.lang == "go" && strings.HasPrefix(b.info, "file="):
			file := "../../" + strings.TrimPrefix(b.info, "file=")
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if string(src) != b.body {
				t.Fatalf("the ```go block of %s differs from the file", file)
			}
		case b.lang == "go":
			t.Fatalf("a ```go block must name the file it shows (```go file=<path>), whose code is built and run")
		}
	}
}

// parseDocRequest reads "METHOD /path", header lines, a blank line, a body.
func parseDocRequest(t *testing.T, block string) (method, path string, headers []string, body string) {
	t.Helper()
	head, body, _ := strings.Cut(block, "\n\n")
	lines := strings.Split(strings.TrimSpace(head), "\n")
	parts := strings.Fields(lines[0])
	if len(parts) != 2 || !strings.HasPrefix(parts[1], "/") {
		t.Fatalf("a request block starts with \"METHOD /path\", not %q", lines[0])
	}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("header line %q is not \"Name: value\"", l)
		}
		headers = append(headers, strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return parts[0], parts[1], headers, strings.TrimSpace(body)
}

// lookup finds a dotted path (company.trigger.secret, list[0].id) in named.
func lookup(named map[string]any, path string) (any, bool) {
	var cur any = named
	for _, part := range strings.Split(path, ".") {
		name, index, indexed := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[name]; !ok {
			return nil, false
		}
		if indexed {
			n, err := strconv.Atoi(index)
			list, ok := cur.([]any)
			if err != nil || !ok || n >= len(list) {
				return nil, false
			}
			cur = list[n]
		}
	}
	return cur, cur != nil
}

func TestTheGoSigningExampleOfTheWebhookDocsDeliversARun(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "Signed", "trigger": map[string]any{"scheme": "hmac-sha256"}}).Want(t, 201).Object(t)
	trigger := wf["trigger"].(map[string]any)
	testinputs.Tree()
	cmd := exec.Command("go", "run", "../../docs/examples/signwebhook", `{"name": "Signed in Go"}`)
	cmd.Env = append(os.Environ(), "WEBHOOK_URL="+trigger["url"].(string), "WEBHOOK_SECRET="+trigger["secret"].(string))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "202 ") || !strings.Contains(string(out), `"id":"run_`) {
		t.Errorf("the example printed %s, want 202 and a run", out)
	}
}
