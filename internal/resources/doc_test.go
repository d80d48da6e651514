package resources

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/resource"
)

var update = flag.Bool("update", false, "rewrite docs/resources.md from the declarations")

func TestDocsResourcesMdIsWhatTheDeclarationsGenerate(t *testing.T) {
	path := filepath.Join("..", "..", DocPath)
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v; generate it with: make generate", DocPath, err)
	}
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		line := 0
		for line < len(gl) && line < len(wl) && gl[line] == wl[line] {
			line++
		}
		at := func(ls []string) string {
			if line < len(ls) {
				return ls[line]
			}
			return "(end of file)"
		}
		t.Fatalf("%s differs from what the declarations generate, first at line %d:\n committed: %s\n generated: %s\n"+
			"regenerate it with: make generate", DocPath, line+1, at(gl), at(wl))
	}
}

func TestDocsDescribeEveryDeclaredResourceFieldAndFilter(t *testing.T) {
	doc := Markdown()
	for _, d := range All() {
		if !strings.Contains(doc, "## "+strings.ToUpper(d.Name[:1])+d.Name[1:]+"\n") {
			t.Errorf("no section for %s", d.Name)
		}
		for _, f := range d.AllFields() {
			if !strings.Contains(doc, "| `"+f.Name+"` |") {
				t.Errorf("%s: field %s is not documented", d.Name, f.Name)
			}
		}
		for _, f := range d.Filters() {
			if !strings.Contains(doc, "`?"+f+"=`") {
				t.Errorf("%s: filter %s is not documented", d.Name, f)
			}
		}
	}
}

func TestTheReadmeListsEveryDeclaredResource(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range All() {
		if !strings.Contains(string(readme), "| `/v1/"+d.Name+"`") {
			t.Errorf("README.md's Resources table has no row for /v1/%s", d.Name)
		}
	}
}

// A resource is declared once (declare), and All keeps the order of the
// declarations: the files in name order, so each group's resources
// together, in the order of Groups.
func TestEveryResourceIsDeclaredOnceInGroupOrder(t *testing.T) {
	var groups []string
	for _, d := range All() {
		if n := len(groups); n == 0 || groups[n-1] != d.Group {
			groups = append(groups, d.Group)
		}
	}
	if strings.Join(groups, ",") != strings.Join(Groups, ",") {
		t.Errorf("the declarations' groups in order: %v, want %v", groups, Groups)
	}
	if All()[0] != Industries || All()[len(All())-1] != Scores {
		t.Errorf("All starts with %s and ends with %s", All()[0].Name, All()[len(All())-1].Name)
	}
	defer func() {
		if recover() == nil {
			t.Error("declaring deals twice did not panic")
		}
	}()
	declare(&resource.Def{Name: "deals", Type: "OTHER", IDPrefix: "oth"})
}

// Lists hold companies and every resource declared OnLists; the MCP tools
// and search follow their declarations' flags.
func TestListsHoldCompaniesAndTheResourcesDeclaredOnLists(t *testing.T) {
	f, _ := Lists.Field("resourceType")
	if got, want := strings.Join(f.Values, ","), "company,deal,person,fund,document"; got != want {
		t.Errorf("a list's resourceType: %s, want %s", got, want)
	}
	if !strings.Contains(Lists.Doc, "companies, deals, people, funds or documents") {
		t.Errorf("lists' doc: %s", Lists.Doc)
	}
}
