package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/lambdas"
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
// declarations: the files in name order, then the declarations of each
// file. A resource declared in a file of its own, served by any function
// of Functions, is in order too: the test asks nothing of its place.
func TestEveryResourceIsDeclaredOnceInOrder(t *testing.T) {
	want := []*resource.Def{Industries, Sectors, Subsectors, Tags, Deals, People, Teams, Workspaces, Activities, Funds,
		Documents, Lists, Frameworks, Screenings, Scores}
	var got []*resource.Def
	for _, d := range All() {
		if slices.Contains(want, d) {
			got = append(got, d)
		}
		if !slices.Contains(Functions, d.Function) {
			t.Errorf("%s is served by %s, which is not one of Functions", d.Name, d.Function)
		}
		if _, err := os.Stat(filepath.Join("..", "..", d.File)); err != nil || !strings.HasPrefix(d.File, "internal/resources/") {
			t.Errorf("%s: its File %q is not the file that declares it (%v)", d.Name, d.File, err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("All lists the declarations out of order: %v", names(got))
	}
	if Sectors.File != "internal/resources/catalog.go" || Deals.File != "internal/resources/crm.go" {
		t.Errorf("sectors are declared in %s, deals in %s", Sectors.File, Deals.File)
	}
}

// declare refuses, naming the files, a second declaration of a name, and
// a declaration without a function that serves routes.
func TestADeclarationThatDeclareRefusesNamesItsFile(t *testing.T) {
	before := len(All())
	refusal := func(d *resource.Def) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		declare(d)
		return ""
	}
	twice := refusal(&resource.Def{Name: "deals", Singular: "deal", Type: "OTHER", IDPrefix: "oth", Function: lambdas.CRM})
	for _, want := range []string{"internal/resources/doc_test.go", "internal/resources/crm.go", "Name, Type or IDPrefix"} {
		if !strings.Contains(twice, want) {
			t.Errorf("declaring deals twice: %q does not say %q", twice, want)
		}
	}
	noFunction := refusal(&resource.Def{Name: "investors", Singular: "investor", Type: "INVESTOR", IDPrefix: "inv", Function: "investors"})
	for _, want := range []string{"internal/resources/doc_test.go", `Function "investors"`, "internal/routes/functions.go", lambdas.CRM} {
		if !strings.Contains(noFunction, want) {
			t.Errorf("a declaration served by no function: %q does not say %q", noFunction, want)
		}
	}
	if len(All()) != before {
		t.Errorf("a refused declaration was kept: %d declarations", len(All()))
	}
}

func names(defs []*resource.Def) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
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
