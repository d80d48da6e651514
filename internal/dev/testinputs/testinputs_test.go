package testinputs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRootIsTheModulesDirectory(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("Root() = %s, which holds no go.mod: %v", root, err)
	}
	wd, _ := os.Getwd()
	if rel, err := filepath.Rel(root, wd); err != nil || rel != filepath.Join("internal", "dev", "testinputs") {
		t.Fatalf("Root() = %s, not three levels above the package's directory %s", root, wd)
	}
}

// The whole mechanism, through go test itself: a module whose test reads a
// file only through a program it starts answers from the cache while the
// file is unchanged, and runs again once it is edited.
func TestGoTestRunsATestAgainWhenAFileOnlyItsProgramReadsChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary three times")
	}
	dir := t.TempDir()
	src, err := os.ReadFile("testinputs.go")
	if err != nil {
		t.Fatal(err)
	}
	answer := filepath.Join(dir, "data", "answer.txt")
	files := map[string]string{
		"go.mod":                   "module example.com/inputs\n\ngo 1.26\n",
		"testinputs/testinputs.go": string(src),
		"data/answer.txt":          "42\n",
		".git/HEAD":                "ref: refs/heads/main\n",
		"bin/.keep":                "",
		"reads_test.go": `package inputs

import (
	"os/exec"
	"testing"

	"example.com/inputs/testinputs"
)

func TestTheProgramReadsTheAnswer(t *testing.T) {
	testinputs.Tree()
	out, err := exec.Command("cat", "data/answer.txt").Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("cat: %v", err)
	}
}
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goTest := func() string {
		t.Helper()
		cmd := exec.Command("go", "test", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := goTest(); strings.Contains(out, "(cached)") {
		t.Fatalf("the first run answered from the cache:\n%s", out)
	}
	if out := goTest(); !strings.Contains(out, "(cached)") {
		t.Fatalf("the second run, nothing changed, ran again:\n%s", out)
	}
	// What builds and git write beside the sources is not an input.
	for _, made := range []string{"bin/bootstrap", ".git/index.lock"} {
		path := filepath.Join(dir, filepath.FromSlash(made))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("built"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out := goTest(); !strings.Contains(out, "(cached)") {
		t.Fatalf("after writes to bin/ and .git/ only, the run ran again:\n%s", out)
	}
	// A new size, and a time of its own: the edit cannot hide behind the
	// file system's time resolution.
	if err := os.WriteFile(answer, []byte("43 and more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(answer, time.Now().Add(-time.Minute), time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if out := goTest(); strings.Contains(out, "(cached)") {
		t.Fatalf("after an edit to data/answer.txt, which only the test's program reads, the run answered from the cache:\n%s", out)
	}
}

// Outside a test binary the functions do nothing; inside one they must
// know it, or Tree and Files would record nothing (the whole mechanism's
// test is left out of -short).
func TestATestBinaryIsToldApartByItsFlags(t *testing.T) {
	if !inTest() {
		t.Fatal("inTest() is false inside a test binary: go test's flags are no longer registered as test.v")
	}
}
