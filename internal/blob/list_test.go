package blob_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/blob"
)

// CheckList is the List contract both stores keep: every object under a
// folder prefix, with its size, in key order, none of another folder
// (one whose name the prefix starts), none for an empty folder, and a
// prefix that is no folder refused.
func CheckList(t *testing.T, st blob.Lister) {
	ctx := context.Background()
	for key, body := range map[string]string{
		"imports/org_list1/job_2/upload":            "a,b\n",
		"imports/org_list1/job_1/upload":            "x",
		"imports/org_list1/job_1/errors/000001.csv": "line,error\n",
		"imports/org_list10/job_3/upload":           "other organization",
		"exports/org_list1/job_4/data.ndjson":       "{}\n",
	} {
		if _, err := st.Write(ctx, key, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.List(ctx, "imports/org_list1/")
	if err != nil {
		t.Fatal(err)
	}
	want := []blob.Object{{"imports/org_list1/job_1/errors/000001.csv", 11}, {"imports/org_list1/job_1/upload", 1}, {"imports/org_list1/job_2/upload", 4}}
	if len(got) != len(want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("List[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got, err := st.List(ctx, "imports/org_none/"); err != nil || len(got) != 0 {
		t.Errorf("List of an empty folder: %v %v", got, err)
	}
	for _, bad := range []string{"imports/org_list1", "", "/imports/", "a/../b/"} {
		if _, err := st.List(ctx, bad); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List(%q): %v, want ErrInvalidKey", bad, err)
		}
	}
}

func TestDirList(t *testing.T) {
	t.Parallel()
	d, err := blob.NewDir(t.TempDir(), "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	CheckList(t, blob.ListDir(d))
	// A temporary file of a write under way is no object.
	if err := os.WriteFile(filepath.Join(d.Root, "imports", "org_list1", "job_2", ".tmp-123"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := blob.ListDir(d).List(context.Background(), "imports/org_list1/job_2/"); len(got) != 1 || got[0].Key != "imports/org_list1/job_2/upload" {
		t.Errorf("List with a temporary file beside: %v", got)
	}
}
