package layers_test

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/layers"
)

const module = "github.com/sourcebase/sourcebase/"

// imports are the module's packages and what each imports (not its
// tests), by import path.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	testinputs.Tree()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list the module: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var own []string
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		graph[strings.TrimPrefix(f[0], module)] = own
	}
	return graph
}

// rank is the layer of each internal package (paths below internal/).
func rank(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i, l := range layers.Layers {
		for _, p := range l.Packages {
			if _, dup := out[p]; dup {
				t.Errorf("package %s is in two layers", p)
			}
			out[p] = i
		}
	}
	return out
}

func TestEveryImportPointsToTheSameLayerOrALowerOne(t *testing.T) {
	graph, ranks := imports(t), rank(t)
	var pkgs []string
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		from, ok := strings.CutPrefix(p, "internal/")
		if !ok {
			// cmd/, functions/, client/, docs/: above every layer, but
			// nothing of internal/ may import them.
			continue
		}
		r, placed := ranks[from]
		if !placed {
			t.Errorf("package internal/%s has no layer: place it in layers.Layers", from)
			continue
		}
		for _, imp := range graph[p] {
			to, ok := strings.CutPrefix(imp, "internal/")
			if !ok {
				if !strings.HasPrefix(imp, "docs") {
					t.Errorf("internal/%s imports %s, which sits above every layer", from, imp)
				}
				continue
			}
			if ri, placed := ranks[to]; placed && ri > r {
				t.Errorf("internal/%s (%s) imports internal/%s (%s): an import that points up",
					from, layers.Layers[r].Name, to, layers.Layers[ri].Name)
			}
		}
	}
	for p := range ranks {
		if _, ok := graph["internal/"+p]; !ok {
			t.Errorf("layers.Layers names internal/%s, which is no package", p)
		}
	}
}

// The HTTP mechanism depends on no domain package, however indirectly.
func TestTheHTTPMechanismDependsOnNoDomainPackage(t *testing.T) {
	testinputs.Tree()
	out, err := exec.Command("go", "list", "-deps", "../httpapi").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ranks := rank(t)
	http := ranks["httpapi"]
	for _, dep := range strings.Fields(string(out)) {
		if p, ok := strings.CutPrefix(dep, module+"internal/"); ok && ranks[p] >= http && p != "httpapi" {
			t.Errorf("internal/httpapi depends on internal/%s (%s)", p, layers.Layers[ranks[p]].Name)
		}
	}
}

// Function names import nothing, so that any layer can name a function.
func TestFunctionNamesImportNothing(t *testing.T) {
	if imps := imports(t)["internal/fn"]; len(imps) != 0 {
		t.Errorf("internal/fn imports %v", imps)
	}
}

// TestAFeaturesTestsLinkNoOtherFeatureThanThoseTheyServe holds the HTTP
// tests of each feature (internal/api/<feature>) to their slice: their
// test binary links neither the registry (internal/api) nor the MCP
// bridge, so that Go's test cache keeps their result while another
// feature changes (make test-fast).
func TestAFeaturesTestsLinkNoOtherFeatureThanThoseTheyServe(t *testing.T) {
	dirs, err := filepath.Glob("../api/*/main_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no feature package has HTTP tests")
	}
	const module = "github.com/sourcebase/sourcebase/internal/"
	for _, f := range dirs {
		dir := filepath.Dir(f)
		out, err := exec.Command("go", "list", "-test", "-deps", "./"+dir).Output()
		if err != nil {
			t.Fatalf("go list -test -deps %s: %v", dir, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == module+"api" || p == module+"api/mcpapi" {
				t.Errorf("the tests of %s link %s: they would run again whenever any feature changes", filepath.Base(dir), p)
			}
		}
	}
}
