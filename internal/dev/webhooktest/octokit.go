// Package webhooktest provides test helpers for webhook signatures that do not
// share code with package inbound, so that tests compare against an
// independent implementation rather than against themselves.
package webhooktest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// octokitPackage is the npm package used as the reference signer; package.json
// at the repository root pins it.
const octokitPackage = "@octokit/webhooks-methods"

// signScript signs stdin's {secret, body} (both base64) with octokit. Inputs
// travel on stdin rather than in arguments or the environment so that any
// size and any byte survive; base64 keeps the JSON transport byte-exact.
const signScript = `
import { sign } from "@octokit/webhooks-methods";
import { Buffer } from "node:buffer";
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const decode = (b64) => Buffer.from(b64, "base64").toString("utf8");
process.stdout.write(await sign(decode(input.secret), decode(input.body)));
`

// signTimeout bounds one node run; a cold start takes well under a second.
const signTimeout = 30 * time.Second

var signatureShape = regexp.MustCompile(`^sha256=[0-9a-f]{64}$`)

// OctokitSign returns the "sha256=<hex>" signature that GitHub's own
// @octokit/webhooks-methods computes for body, by running it under node from
// the repository root. It fails the test (rather than skipping it) when node
// or the npm package is missing, so a missing `npm ci` cannot silently turn the
// cross-check off.
//
// Octokit signs JavaScript strings, that is their UTF-8 bytes, and refuses an
// empty secret or payload; such inputs fail the test with an explanation.
func OctokitSign(tb testing.TB, secret string, body []byte) string {
	tb.Helper()
	if secret == "" || len(body) == 0 {
		tb.Fatalf("OctokitSign: %s refuses an empty secret or payload; check that case another way", octokitPackage)
	}
	if !utf8.ValidString(secret) || !utf8.Valid(body) {
		tb.Fatalf("OctokitSign: secret and body must be valid UTF-8, because %s signs the UTF-8 bytes of a string", octokitPackage)
	}

	root, err := testinputs.Root() // node_modules lives beside go.mod
	if err != nil {
		tb.Fatalf("OctokitSign: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("OctokitSign: node is not on PATH (%v); install Node.js 20 or later, then run `npm ci` in %s", err, root)
	}
	manifest := filepath.Join(root, "node_modules", filepath.FromSlash(octokitPackage), "package.json")
	if _, err := os.Stat(manifest); err != nil {
		tb.Fatalf("OctokitSign: %s is not installed (%v); run `npm ci` in %s", octokitPackage, err, root)
	}

	input, err := json.Marshal(map[string]string{
		"secret": base64.StdEncoding.EncodeToString([]byte(secret)),
		"body":   base64.StdEncoding.EncodeToString(body),
	})
	if err != nil {
		tb.Fatalf("OctokitSign: encoding input: %v", err)
	}

	ctx, cancel := context.WithTimeout(tb.Context(), signTimeout)
	defer cancel()
	testinputs.Files("package-lock.json")
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-e", signScript)
	cmd.Dir = root // bare-specifier imports resolve from the working directory's node_modules
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("OctokitSign: node failed: %v\n%s\n(if the package is broken, run `npm ci` in %s)", err, strings.TrimSpace(stderr.String()), root)
	}

	sig := strings.TrimSpace(stdout.String())
	if !signatureShape.MatchString(sig) {
		tb.Fatalf("OctokitSign: unexpected output %q from %s (stderr: %s)", sig, octokitPackage, strings.TrimSpace(stderr.String()))
	}
	return sig
}
