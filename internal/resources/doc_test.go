package resources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/resource"
)

// noRoutes documents the declarations alone: docs/resources.md itself,
// with the registry's routes, is checked by package generate's staleness
// test.
func noRoutes(*resource.Def) []resource.DocRoute { return nil }

func TestDocsDescribeEveryDeclaredResourceFieldAndFilter(t *testing.T) {
	doc := Markdown(noRoutes, nil)
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

// The README does not repeat the resources: it links to the generated
// docs/resources.md, whose index has a row for every declared resource
// (package generate's staleness test holds the page to the declarations).
func TestTheReadmeLinksToTheGeneratedTableOfEveryDeclaredResource(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if !strings.Contains(read("README.md"), "(docs/resources.md)") {
		t.Error("README.md does not link to docs/resources.md")
	}
	page := read(filepath.Join("docs", "resources.md"))
	for _, d := range All() {
		if !strings.Contains(page, "| `/v1/"+d.Name+"`") {
			t.Errorf("docs/resources.md's index has no row for /v1/%s", d.Name)
		}
	}
}

// A resource is declared once (declare), and All keeps the order of the
// declarations: the files in name order, so each group's resources
// together, in the order of Functions.
func TestEveryResourceIsDeclaredOnceInFunctionOrder(t *testing.T) {
	var groups []string
	for _, d := range All() {
		if n := len(groups); n == 0 || groups[n-1] != d.Function {
			groups = append(groups, d.Function)
		}
	}
	if strings.Join(groups, ",") != strings.Join(Functions, ",") {
		t.Errorf("the declarations' functions in order: %v, want %v", groups, Functions)
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

// The kinds of record that hold metric series are those declared with
// Series: companies, deals and people (the spec's), in that order.
func TestTheSeriesKindsAreTheDeclaredOnes(t *testing.T) {
	if got := strings.Join(SeriesKinds(), ","); got != "companies,deals,people" {
		t.Errorf("SeriesKinds: %s", got)
	}
	if doc := Markdown(noRoutes, nil); !strings.Contains(doc, "a point's `resource` is `deals:<id>`") {
		t.Error("docs/resources.md does not say deals hold series")
	}
}
