package api_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/apitest/wholeservice"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// lambdaTests are the tests the Lambda mode runs (apitest.LambdaSubset):
// of this package and of every feature's (internal/api/…).
const lambdaTests = "testdata/lambdas.txt"

func TestMain(m *testing.M) {
	apitest.Serve(wholeservice.Service)
	apitest.LambdaSubset(lambdaTests)
	// Under make test, hundreds of tests keep a server busy for minutes. The
	// edit loop's shorter run (-short) shares the run's server: a second
	// JVM's start and compilation cost more CPU than the wait behind the
	// other packages' calls.
	flag.Parse()
	if !testing.Short() {
		testenv.OwnServer()
	}
	apitest.KeepLog()
	testenv.Main(m)
}

// overTheItemLimit is a workflow body under the 1 MiB body limit and within
// every field's limit, but over DynamoDB's 400 KB item limit as stored:
// eight steps whose parameters are 120 KB of random text each, which the
// store's deflating (of a doc over a KB boundary) shrinks by a fifth at
// most. (A company can no longer reach the limit through the API: its one
// free-form object and its texts deflate to far less.)
func overTheItemLimit() map[string]any {
	// Printable ASCII that JSON encoders send as is.
	const printable = " !#$%'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~"
	var steps []any
	for i := range 8 {
		b := make([]byte, 120<<10)
		for j := range b {
			b[j] = printable[rand.IntN(len(printable))]
		}
		steps = append(steps, map[string]any{"id": fmt.Sprint("s", i), "type": "set", "with": map[string]any{"v": string(b)}})
	}
	return map[string]any{"name": "Huge", "steps": steps}
}

// TestTheLambdaModesListNamesTestsOfThisPackageOnce holds the Lambda mode's
// list to the tests it names: a renamed or deleted test would otherwise
// leave the list quietly.
func TestTheLambdaModesListNamesTestsOfThisPackageOnce(t *testing.T) {
	names, err := apitest.SubsetNames(lambdaTests)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	features, err := filepath.Glob("*/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, features...)
	tests := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !tests[n] {
			t.Errorf("%s names %s, which is no test of this package or a feature's", lambdaTests, n)
		}
		if seen[n] {
			t.Errorf("%s names %s twice", lambdaTests, n)
		}
		seen[n] = true
	}
	if len(names) < 20 {
		t.Errorf("%s names %d tests; the Lambda mode would check too little of the service", lambdaTests, len(names))
	}
}
