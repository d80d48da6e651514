package api_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

var ogenBuild = flag.Bool("ogen-build", false, "also compile the client ogen generates (about 15 MB of Go: minutes; make bench)")

// TestOgenGeneratesAClientOfTheWholeDocument runs ogen v1.25.0 (pinned as
// a tool in go.mod) on docs/openapi.json without any option that skips
// what it does not implement: every operation must be one it generates.
// With -ogen-build (make bench), the client is compiled too, in a module
// of its own (go mod tidy fetches its runtime packages from the proxy).
func TestOgenGeneratesAClientOfTheWholeDocument(t *testing.T) {
	testenv.Long(t, "runs the ogen generator")
	t.Parallel()
	testinputs.Files("go.mod", "docs/openapi.json")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc, err := filepath.Abs(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	gen := exec.Command("go", "tool", "ogen", "--target", dir, "--package", "sourcebase", "--clean", doc)
	gen.Dir = root
	out, err := gen.CombinedOutput()
	if err != nil {
		t.Fatalf("ogen docs/openapi.json: %v\n%s", err, tail(out))
	}
	if strings.Contains(string(out), "not implemented") {
		t.Errorf("ogen skipped what it does not implement:\n%s", tail(out))
	}
	if _, err := os.Stat(filepath.Join(dir, "oas_client_gen.go")); err != nil {
		t.Fatalf("ogen made no client: %v", err)
	}
	if !*ogenBuild {
		return
	}
	// A module of its own, as a client's project would be, with ogen's
	// runtime packages at the versions go mod tidy picks.
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/sourcebaseclient\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s of the client ogen generated: %v\n%s", strings.Join(args, " "), err, tail(out))
		}
	}
}

// tail is the last lines of a tool's output.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
