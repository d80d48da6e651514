// Command fasttest runs the edit loop's tests (make test-fast): go test
// -short over the module's packages, but those whose tests serve the
// whole service (their test binary links the registry, package api: a
// change to any feature changes it) unless a file of theirs differs from
// the last commit. Go's test cache skips the packages an edit did not
// change; so an edit to one feature's handler re-runs that feature's tests
// (and those of the features whose tests serve it), not the whole
// service's. make test runs everything.
//
// Usage: fasttest [go test flags...]
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// registry is the package whose link makes a test binary the whole
// service's.
const registry = "github.com/sourcebase/sourcebase/internal/api"

func main() {
	pkgs, err := packages()
	if err == nil {
		var args []string
		args = append(args, "test", "-short")
		args = append(args, os.Args[1:]...)
		args = append(args, pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		err = cmd.Run()
		if x, ok := err.(*exec.ExitError); ok {
			os.Exit(x.ExitCode())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fasttest:", err)
		os.Exit(1)
	}
}

// packages are the import paths to test.
func packages() ([]string, error) {
	// One line a package, and one a test binary (P.test), whose Deps are
	// all it links.
	out, err := output("go", "list", "-test", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .Deps \",\"}}", "./...")
	if err != nil {
		return nil, err
	}
	changed, err := changedDirs()
	if err != nil {
		return nil, err
	}
	var all []string
	whole := map[string]bool{}
	dirs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 || strings.Contains(f[0], " ") || strings.HasSuffix(f[0], "_test") {
			continue // a test variant of a package ("p [p.test]") or an external test package
		}
		deps := strings.Split(f[2], ",")
		if bin, ok := strings.CutSuffix(f[0], ".test"); ok {
			whole[bin] = whole[bin] || slices.Contains(deps, registry)
			continue
		}
		all = append(all, f[0])
		dirs[f[0]] = f[1]
		if f[0] == registry {
			whole[f[0]] = true
		}
	}
	var run []string
	for _, p := range all {
		if whole[p] && !changed[dirs[p]] {
			fmt.Fprintf(os.Stderr, "fasttest: leaving %s to make test (its tests serve the whole service; none of its files changed)\n", p)
			continue
		}
		run = append(run, p)
	}
	return run, nil
}

// changedDirs are the directories holding a file that differs from the
// last commit (changed, added or untracked).
func changedDirs() (map[string]bool, error) {
	root, err := output("git", "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	root = strings.TrimSpace(root)
	out, err := output("git", "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if len(line) < 4 {
			continue
		}
		file := line[3:]
		if i := strings.Index(file, " -> "); i >= 0 {
			file = file[i+4:]
		}
		dirs[path.Join(root, path.Dir(strings.Trim(file, `"`)))] = true
	}
	return dirs, nil
}

func output(name string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(b), nil
}
