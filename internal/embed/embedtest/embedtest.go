// Package embedtest gives tests the local embedding model that make model
// builds (embed.DefaultLocalModelFile), loaded once per test binary.
package embedtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sourcebase/sourcebase/internal/embed"
)

// Local is the repository's local embedding model,
// <root>/bin/embed/wink-sg-100d.vec, shared by every test of the binary
// (embed.LoadLocal). A missing model fails the test, saying to run make
// model (make test builds it): a test of semantic search is not skipped.
func Local(t testing.TB) *embed.Local {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	l, err := embed.LoadLocal(filepath.Join(root, filepath.FromSlash(embed.DefaultLocalModelFile)))
	if err != nil {
		t.Fatalf("%v; make test and make run build it too", err)
	}
	return l
}

// Root is the repository's root: the nearest directory, from the working
// directory up, holding the go.mod of module github.com/sourcebase/sourcebase
// (not node_modules' or infra's).
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	const first = "module github.com/sourcebase/sourcebase\n"
	for dir := wd; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && len(b) >= len(first) && string(b[:len(first)]) == first {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("embedtest: no go.mod of module github.com/sourcebase/sourcebase in %s or above it", wd)
		}
	}
}
