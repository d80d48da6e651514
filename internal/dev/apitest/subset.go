package apitest

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// LambdaSubset makes the Lambda mode run only the tests named in file
// (one a line; blank lines and lines starting with # are left out) unless
// the command line chose tests with -run. Call it from TestMain before
// m.Run. In process it does nothing: the whole suite runs.
//
// The Lambda mode is make test's second run of an HTTP suite through the
// real bootstraps; the list holds the tests of what that path can change,
// so the suite is not run twice over (see internal/api/testdata/lambdas.txt).
func LambdaSubset(file string) {
	if !Lambdas() {
		return
	}
	flag.Parse()
	if run := flag.Lookup("test.run"); run == nil || run.Value.String() != "" {
		return
	}
	if !filepath.IsAbs(file) && file == LambdaList {
		if root, err := testinputs.Root(); err == nil {
			file = filepath.Join(root, file)
		}
	}
	names, err := SubsetNames(file)
	if err == nil && len(names) == 0 {
		err = fmt.Errorf("%s names no test", file)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "apitest: the Lambda mode's tests: %v\n", err)
		os.Exit(2)
	}
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	if err := flag.Set("test.run", "^("+strings.Join(names, "|")+")$"); err != nil {
		fmt.Fprintf(os.Stderr, "apitest: the Lambda mode's tests: %v\n", err)
		os.Exit(2)
	}
}

// LambdaList is the Lambda mode's list of the HTTP suites' tests
// (internal/api/testdata/lambdas.txt), by its path from the module's root:
// one list for the whole service's tests and every feature's.
const LambdaList = "internal/api/testdata/lambdas.txt"

// SubsetNames reads the test names of a LambdaSubset file.
func SubsetNames(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if strings.ContainsAny(s, " \t/") {
			return nil, fmt.Errorf("%s:%d: %q is not a test's name", file, line, s)
		}
		names = append(names, s)
	}
	return names, sc.Err()
}

// Main is a feature test package's TestMain: its Envs serve s, the Lambda
// mode runs the tests LambdaList names, and testenv.Main runs the tests.
func Main(m *testing.M, s Service) {
	Serve(s)
	LambdaSubset(LambdaList)
	KeepLog()
	testenv.Main(m)
}
