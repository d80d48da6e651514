package testenv

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// functionsPkg is the import path prefix of the Lambda functions' mains.
const functionsPkg = "github.com/sourcebase/sourcebase/functions/"

// FunctionDeps is what each Lambda function links, as it is built (with
// lambdaenv.Tags, and tags): the import paths of every package it
// depends on, by function name. Design tests use it to keep heavy
// dependencies out of the functions that do not need them.
func FunctionDeps(tb testing.TB, tags ...string) map[string]map[string]bool {
	tb.Helper()
	testinputs.Tree()
	out, err := exec.Command("go", "list", "-tags", strings.Join(append(slices.Clone(lambdaenv.Tags), tags...), ","), "-f", `{{.ImportPath}} {{join .Deps " "}}`, functionsPkg+"...").Output()
	if err != nil {
		tb.Fatalf("go list the functions: %v", err)
	}
	deps := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		name, ok := strings.CutPrefix(fields[0], functionsPkg)
		if !ok {
			continue
		}
		set := map[string]bool{}
		for _, d := range fields[1:] {
			set[d] = true
		}
		deps[name] = set
	}
	return deps
}
