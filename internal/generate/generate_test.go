package generate_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/generate"
)

// root is the repository root (tests run in internal/generate).
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// generated is what the code generates, made once for the package's tests
// (two of its steps run go: oapi-codegen and infra/sam).
var generated = sync.OnceValues(func() (*generate.Files, error) {
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(5*time.Minute))
	defer cancel()
	return generate.Generate(ctx, r)
})

func files(t *testing.T) *generate.Files {
	t.Helper()
	f, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The one staleness test: every committed generated file is what the code
// generates now, and every stale one is listed in one failure with the
// command that regenerates them all.
func TestEveryCommittedGeneratedFileIsWhatTheCodeGenerates(t *testing.T) {
	f, err := generated()
	if err != nil {
		// The files of the generators that did not fail are still checked.
		t.Errorf("a generator fails: %v", err)
	}
	if f == nil {
		return
	}
	stale, err := f.Stale(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Error(generate.Report(stale))
	}
}

func TestEveryKnownArtifactIsGenerated(t *testing.T) {
	var paths []string
	for _, f := range files(t).Files {
		paths = append(paths, f.Path)
		if len(f.Data) == 0 {
			t.Errorf("%s is generated empty", f.Path)
		}
	}
	for _, want := range []string{
		"docs/openapi.json", "client/client.gen.go", "docs/mcp.md", "docs/search.md", "docs/resources.md",
		"template/template.yaml", "template/env.local.json", "internal/deploymodel/model.json",
		"internal/search/opensearch/testdata/query-nested.json",
		"internal/search/opensearch/testdata/mapping-companies.json",
		"internal/search/opensearch/testdata/bulk-indexer-stream.ndjson",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("%s is not generated; generated: %v", want, paths)
		}
	}
	// A measurement, not a function of the code: make bench writes it.
	if slices.Contains(paths, "docs/performance.md") {
		t.Error("docs/performance.md is generated: it is make bench's")
	}
	// The client is made of the document generated before it.
	if slices.Index(paths, "client/client.gen.go") < slices.Index(paths, "docs/openapi.json") {
		t.Error("the client is generated before the OpenAPI document it is made of")
	}
	// The SAM template is made of the deployment model generated before it.
	if slices.Index(paths, "template/template.yaml") < slices.Index(paths, "internal/deploymodel/model.json") {
		t.Error("the SAM template is generated before the deployment model it is made of")
	}
}

// A copy of the generated files with one edited, one missing and one left
// over: the staleness check lists exactly those, with make generate; writing
// fixes them and a second write changes nothing.
func TestStaleFilesOfACopyAreListedAndWriteFixesThemOnce(t *testing.T) {
	f := files(t)
	dir := t.TempDir()
	for _, g := range f.Files {
		p := filepath.Join(dir, filepath.FromSlash(g.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, g.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if stale, err := f.Stale(dir); err != nil || len(stale) > 0 {
		t.Fatalf("a fresh copy: stale %v, %v", stale, err)
	}
	edited := filepath.Join(dir, "docs", "resources.md")
	b, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edited, append(b, "an edit by hand\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "client", "client.gen.go")); err != nil {
		t.Fatal(err)
	}
	leftOver := filepath.Join(dir, "internal", "search", "opensearch", "testdata", "mapping-gone.json")
	if err := os.WriteFile(leftOver, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	stale, err := f.Stale(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []generate.Stale{
		{Path: "client/client.gen.go", Why: "missing"},
		{Path: "docs/resources.md", Why: "differs"},
		{Path: "internal/search/opensearch/testdata/mapping-gone.json", Why: "left over"},
	}
	slices.SortFunc(stale, func(a, b generate.Stale) int { return strings.Compare(a.Path, b.Path) })
	if !slices.Equal(stale, want) {
		t.Fatalf("stale %v, want %v", stale, want)
	}
	report := generate.Report(stale)
	for _, s := range append([]string{"`make generate`"}, "client/client.gen.go", "docs/resources.md", "mapping-gone.json") {
		if !strings.Contains(report, s) {
			t.Errorf("the report does not name %s:\n%s", s, report)
		}
	}

	changed, err := f.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(changed)
	if w := []string{"removed internal/search/opensearch/testdata/mapping-gone.json", "wrote client/client.gen.go", "wrote docs/resources.md"}; !slices.Equal(changed, w) {
		t.Errorf("write changed %v, want %v", changed, w)
	}
	if stale, err := f.Stale(dir); err != nil || len(stale) > 0 {
		t.Errorf("after the write: stale %v, %v", stale, err)
	}
	if again, err := f.Write(dir); err != nil || len(again) > 0 {
		t.Errorf("a second write changed %v, %v", again, err)
	}
}

// The generated part of a page is replaced; the page around it is kept.
func TestAGeneratedBlockKeepsTheHandWrittenPageAroundIt(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root(t), "docs", "search.md"))
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "<!-- fields -->\n", "<!-- /fields -->"
	i, j := strings.Index(string(page), open), strings.Index(string(page), end)
	edited := string(page[:i]) + "A hand-written paragraph.\n\n" + open + "stale tables\n" + string(page[j:]) + "\nA last line.\n"
	got, err := generate.SearchDoc([]byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	want := string(page[:i]) + "A hand-written paragraph.\n\n" + string(page[i:]) + "\nA last line.\n"
	if string(got) != want {
		t.Error("the hand-written text around the field tables was not kept as it is")
	}
	if _, err := generate.SearchDoc([]byte("no markers")); err == nil {
		t.Error("a page without its markers is accepted")
	}
}

// docs/development.md, docs/README.md and the Makefile's help of make
// generate name every page a generator writes part of.
func TestThePagesThatListWhatMakeGenerateWritesNameEveryGeneratedPage(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root(t), name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	lists := map[string]string{"docs/development.md": read("docs/development.md"), "docs/README.md": read("docs/README.md"), "Makefile": read("Makefile")}
	page := regexp.MustCompile(`docs/[a-z-]+\.md`)
	pages := 0
	for _, what := range generate.Steps() {
		for _, p := range page.FindAllString(what, -1) {
			pages++
			for name, text := range lists {
				if !strings.Contains(text, p) {
					t.Errorf("%s does not say that make generate writes %s (%s)", name, p, what)
				}
			}
		}
	}
	if pages < 5 {
		t.Errorf("only %d generated pages found in the steps %v", pages, generate.Steps())
	}
}
