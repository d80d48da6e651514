package api_test

import (
	"encoding/json"
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

// lambdaTests are the tests the Lambda mode runs (apitest.LambdaSubset).
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
	testenv.Main(m)
}

// as returns a client with c's credentials that reports to t, so a
// parallel subtest can use a key made by its parent.
func as(t *testing.T, e *apitest.Env, c *apitest.Client) *apitest.Client {
	t.Helper()
	b := e.Anonymous(t)
	b.Org, b.ClientID, b.Secret = c.Org, c.ClientID, c.Secret
	return b
}

// wantError fails unless r has status, its X-Error-Code (apitest.ErrorCode)
// and an {"error": ...} body whose message contains every one of parts.
func wantError(t *testing.T, r *apitest.Response, status int, parts ...string) string {
	t.Helper()
	r.Want(t, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if err := apitest.ErrorCode(r.Status, r.Header); err != nil {
		t.Error(err)
	}
	msg := r.Error(t)
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not contain %q", msg, p)
		}
	}
	return msg
}

// wantExactBody fails unless the body is exactly want (one trailing
// newline allowed).
func wantExactBody(t *testing.T, r *apitest.Response, want string) {
	t.Helper()
	if got := strings.TrimSuffix(string(r.Body), "\n"); got != want {
		t.Errorf("body %q, want exactly %q", got, want)
	}
}

// createCompany posts body and returns the created record.
func createCompany(t *testing.T, c *apitest.Client, body any) map[string]any {
	t.Helper()
	return c.Do("POST", "/v1/companies", body).Want(t, 201).Object(t)
}

// idOf returns the id of a record.
func idOf(t *testing.T, rec map[string]any) string {
	t.Helper()
	id, ok := rec["id"].(string)
	if !ok || id == "" {
		t.Fatalf("record has no id: %v", rec)
	}
	return id
}

// idsOf returns the ids of the records, in order.
func idsOf(t *testing.T, recs []map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, idOf(t, r))
	}
	return out
}

// clone deep-copies a decoded JSON object.
func clone(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonOf renders v for failure messages.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
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
			t.Errorf("%s names %s, which is no test of this package", lambdaTests, n)
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
