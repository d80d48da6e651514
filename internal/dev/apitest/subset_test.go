package apitest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestSubsetNamesReadsOneTestALineAndRefusesWhatIsNoTestsName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	names, err := apitest.SubsetNames(write("ok.txt", "# a comment\n\nTestOne\n  TestTwo  \n# TestNot\n"))
	if err != nil || !slices.Equal(names, []string{"TestOne", "TestTwo"}) {
		t.Errorf("names %q, %v; want TestOne and TestTwo", names, err)
	}
	for _, bad := range []string{"TestOne/sub", "TestOne TestTwo"} {
		if _, err := apitest.SubsetNames(write("bad.txt", "TestZero\n"+bad+"\n")); err == nil || !strings.Contains(err.Error(), "bad.txt:2:") {
			t.Errorf("a line %q: %v; want an error naming line 2", bad, err)
		}
	}
	if _, err := apitest.SubsetNames(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("a missing file read without an error")
	}
}
