package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// TestMakeBuildBuildsEveryBootstrapTheStackCanDeploy: `make build` puts
// every bootstrap of routes.Builds where CheckAssets looks for it: the
// functions by ./functions/..., each build with its own tags by name.
func TestMakeBuildBuildsEveryBootstrapTheStackCanDeploy(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out, err := exec.Command("make", "-n", "-C", "..", "build", "BIN=/bin-under-test").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	recipe := string(out)
	if !strings.Contains(recipe, "-tags "+strings.Join(lambdaenv.Tags, ",")+" -trimpath -ldflags='-s -w'") || !strings.Contains(recipe, "./functions/...") ||
		!strings.Contains(recipe, "/bin-under-test/lambda/$n/bootstrap") {
		t.Errorf("make build does not build every function into <bin>/lambda/<name>/bootstrap:\n%s", recipe)
	}
	for _, b := range routes.Builds() {
		if b.Pages && !strings.Contains(recipe, "for n in "+b.Asset+"; do") && !strings.Contains(recipe, " "+b.Asset+"; do rm -rf") {
			t.Errorf("make build does not copy the documentation pages beside %s (routes.Function.Pages):\n%s", b.Asset, recipe)
		}
		if len(b.Tags) == 0 {
			continue
		}
		want := "-tags " + strings.Join(append(slices.Clone(lambdaenv.Tags), b.Tags...), ",") + " -trimpath -ldflags='-s -w' -o /bin-under-test/lambda/" + b.Asset + "/bootstrap " + b.Package
		if !strings.Contains(recipe, want) {
			t.Errorf("make build does not build %s: want a go build with %q in:\n%s", b.Asset, want, recipe)
		}
	}
}
