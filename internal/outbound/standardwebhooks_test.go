package outbound_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/outbound"
)

// referencePackage is the Standard Webhooks reference implementation; the
// repository's package.json pins it and `npm ci` installs it.
const referencePackage = "standardwebhooks"

// TestReferenceImplementationVerifiesOurSignatures has the reference
// implementation (npm's standardwebhooks) verify messages signed by Headers,
// and compares its own signatures with Sign's. It fails rather than skips if
// the npm package is missing, so a forgotten `npm ci` cannot switch the check
// off; only a machine without node skips it.
func TestReferenceImplementationVerifiesOurSignatures(t *testing.T) {
	t.Parallel()
	generated, oldSecret, newSecret, stranger := outbound.NewSecret(), outbound.NewSecret(), outbound.NewSecret(), outbound.NewSecret()
	now := time.Now() // the reference checks timestamps against its own clock

	// The reference parses verified bodies as JSON, so every body is JSON
	// (or empty, which it accepts as is).
	tests := []struct {
		name         string
		signWith     []string
		verifyWith   string
		msgID        string
		body         string
		delivered    string // the body the verifier gets, if not body
		wantVerified bool
	}{
		{"the specification's secret", []string{specSecret}, specSecret, specMsgID, specBody, "", true},
		{"a generated secret", []string{generated}, generated, "msg_2b9nQkzH6xM0", `{"type":"run.completed","data":{"id":"run_1"}}`, "", true},
		{"JSON with spaces, tabs and line breaks", []string{generated}, generated, "msg_ws", "{\n\t\"a\" : 1 ,\r\n  \"b\": [ 1, 2 ]\n}\n", "", true},
		{"JSON with non-ASCII text", []string{generated}, generated, "msg_utf8", `{"name":"Zoë Ångström","city":"東京","emoji":"🚀"}`, "", true},
		{"JSON with escapes", []string{generated}, generated, "msg_esc", `{"q":"\"quoted\"\\back\u00e9\n"}`, "", true},
		{"a large body", []string{generated}, generated, "msg_large", "[" + strings.Repeat(`{"k":"value with ü"},`, 5000) + "{}]", "", true},
		{"an empty body", []string{generated}, generated, "msg_empty", "", "", true},
		{"rotation, verifier knows only the new secret", []string{oldSecret, newSecret}, newSecret, "msg_rotate", `{"rotating":true}`, "", true},
		{"rotation, verifier knows only the old secret", []string{oldSecret, newSecret}, oldSecret, "msg_rotate", `{"rotating":true}`, "", true},
		{"rotation, verifier knows neither secret", []string{oldSecret, newSecret}, stranger, "msg_rotate", `{"rotating":true}`, "", false},
		{"another secret", []string{generated}, stranger, "msg_other", `{"a":1}`, "", false},
		{"a body changed after signing", []string{generated}, generated, "msg_tampered", `{"amount":100}`, `{"amount":900}`, false},
	}

	type refCase struct {
		Secret    string            `json:"secret"`
		Headers   map[string]string `json:"headers"`
		Body      string            `json:"body"`
		ID        string            `json:"id"`
		Timestamp int64             `json:"timestamp"`
	}
	cases := make([]refCase, len(tests))
	for i, tc := range tests {
		h, err := outbound.Headers(tc.signWith, tc.msgID, now, []byte(tc.body))
		if err != nil {
			t.Fatalf("%s: Headers() error: %v", tc.name, err)
		}
		headers := map[string]string{}
		for name := range h {
			headers[name] = h.Get(name)
		}
		cases[i] = refCase{
			Secret:    tc.verifyWith,
			Headers:   headers,
			Body:      base64.StdEncoding.EncodeToString([]byte(cmp.Or(tc.delivered, tc.body))),
			ID:        tc.msgID,
			Timestamp: now.Unix(),
		}
	}

	results := runReference(t, cases)
	if len(results) != len(tests) {
		t.Fatalf("the reference returned %d results for %d cases", len(results), len(tests))
	}
	for i, tc := range tests {
		got := results[i]
		if got.Verified != tc.wantVerified {
			t.Errorf("%s: the reference's verify() accepted = %v, want %v (its error: %q)", tc.name, got.Verified, tc.wantVerified, got.Error)
		}
		// A refusal must be for the signature, not for the timestamp or body.
		if !tc.wantVerified && got.Error != "No matching signature found" {
			t.Errorf("%s: the reference refused with %q, want a signature mismatch", tc.name, got.Error)
		}
		// Both sign what the verifier received, with the verifier's secret.
		ours, err := outbound.Sign(tc.verifyWith, tc.msgID, now, []byte(cmp.Or(tc.delivered, tc.body)))
		if err != nil {
			t.Fatalf("%s: Sign() error: %v", tc.name, err)
		}
		if got.Signature != ours {
			t.Errorf("%s: Sign() = %s, the reference's sign() = %s", tc.name, ours, got.Signature)
		}
	}
}

type referenceResult struct {
	Verified  bool   `json:"verified"`
	Error     string `json:"error"`
	Signature string `json:"signature"`
}

// runReference runs testdata/verify.mjs under node over cases.
func runReference(t *testing.T, cases any) []referenceResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not on PATH (%v); install Node.js 20 or later to cross-check against the reference implementation", err)
	}
	root, err := testinputs.Root() // node_modules lives beside go.mod
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", referencePackage, "package.json")); err != nil {
		t.Fatalf("%s is not installed (%v); run `npm ci` in %s", referencePackage, err, root)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "verify.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	input, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	testinputs.Files("package-lock.json", "internal/outbound/testdata/verify.mjs")
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = root // node_modules at the repository root
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s\n(if %s is broken, run `npm ci` in %s)", script, err, strings.TrimSpace(stderr.String()), referencePackage, root)
	}
	var results []referenceResult
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("node %s printed %q, not the expected JSON: %v (stderr: %s)", script, stdout.String(), err, stderr.String())
	}
	return results
}
