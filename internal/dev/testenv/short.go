package testenv

import "testing"

// Long skips t under go test -short (make test-fast, the edit loop): for
// a test that takes seconds of its own (a property test over many random
// cases, a load or fault-injection test, a build of bootstraps, a browser)
// where a faster test of the same code runs in -short too. why says what
// it is; make test runs it.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("long (%s): make test runs it, make test-fast does not", why)
	}
}
