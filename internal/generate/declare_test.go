package generate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// investors is a plain resource as a newcomer declares it: one file of
// internal/resources, and nothing else.
const investors = `package resources

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// Investors are the firms and people that invest in the firm's funds.
var Investors = declare(&resource.Def{
	Name: "investors", Singular: "investor", Type: "INVESTOR", IDPrefix: "inv", Function: lambdas.CRM,
	Doc: "An investor in the firm's funds.",
	Fields: []resource.Field{
		nameField(true),
		description(),
		externalReference(),
	},
})
`

// A new declared resource needs its declaration only: in a copy of the
// repository, one file declaring "investors" and `make generate` (go run
// ./cmd/generate) give its operations under a topic "investors" of the
// OpenAPI document's records, and its section of docs/resources.md; a
// second run finds every generated file up to date. It copies the
// repository and runs every generator (oapi-codegen and infra/sam
// included): skipped with -short.
func TestANewResourceNeedsItsDeclarationOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository and runs every generator in it")
	}
	testinputs.Tree()
	start := time.Now()
	repo := copyRepository(t, root(t), filepath.Join(t.TempDir(), "repo"))
	if err := os.WriteFile(filepath.Join(repo, "internal", "resources", "investors.go"), []byte(investors), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(8*time.Minute))
	defer cancel()
	generateIn := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "go", append([]string{"run", "./cmd/generate"}, args...)...)
		cmd.Dir = repo
		// -trimpath keys the builds by import path, not by the copy's
		// directory, which changes each run: the packages the declaration
		// does not change come from Go's build cache the next time.
		cmd.Env = append(os.Environ(), "GOFLAGS=-trimpath "+os.Getenv("GOFLAGS"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go run ./cmd/generate %s in the copy with investors declared: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := generateIn()
	t.Logf("copied and generated in %v:\n%s", time.Since(start).Round(time.Second), out)
	for _, want := range []string{"wrote docs/openapi.json", "wrote docs/resources.md", "wrote client/client.gen.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("make generate did not say %q", want)
		}
	}

	type tag struct {
		Name, Description string
		Title             string `json:"x-displayName"`
	}
	type group struct {
		Name string
		Tags []string
	}
	var doc struct {
		Tags   []tag
		Groups []group `json:"x-tagGroups"`
		Paths  map[string]map[string]struct {
			Tags     []string
			Function string `json:"x-function"`
		}
	}
	if err := json.Unmarshal(read(t, repo, "docs/openapi.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(doc.Tags, func(g tag) bool { return g.Name == "investors" }); i < 0 {
		t.Error("the document has no tag investors")
	} else if g := doc.Tags[i]; g.Title != "Investors" || g.Description != "An investor in the firm's funds." {
		t.Errorf("the tag investors: %+v", g)
	}
	if i := slices.IndexFunc(doc.Groups, func(g group) bool { return g.Name == "Records" }); i < 0 || !slices.Contains(doc.Groups[i].Tags, "investors") {
		t.Errorf("investors is not in the section Records: %+v", doc.Groups)
	}
	for _, path := range []string{"/v1/investors", "/v1/investors/{id}", "/v1/investors/query", "/v1/investors/batch"} {
		item, ok := doc.Paths[path]
		if !ok {
			t.Errorf("the document has no %s", path)
		}
		for method, op := range item {
			if !slices.Equal(op.Tags, []string{"investors"}) || op.Function != "crm" {
				t.Errorf("%s %s: tags %v, x-function %q", method, path, op.Tags, op.Function)
			}
		}
	}

	page := string(read(t, repo, "docs/resources.md"))
	for _, want := range []string{"| [Investors](#investors) | `/v1/investors` | `crm` |", "\n## Investors\n", "An investor in the firm's funds."} {
		if !strings.Contains(page, want) {
			t.Errorf("docs/resources.md does not say %q", want)
		}
	}
	if out := generateIn("-check"); !strings.Contains(out, "up to date") {
		t.Errorf("a second run: %s", out)
	}
	t.Logf("in all %v", time.Since(start).Round(time.Second))
}

// copyRepository copies the files of the repository at from that git does
// not ignore (tracked or not, as the working tree has them) to dir, and
// returns dir. Files are copied, not linked: the generators rewrite them.
func copyRepository(t *testing.T, from, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: it lists the repository's files")
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate")
	cmd.Dir = from
	list, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		src := filepath.Join(from, filepath.FromSlash(name))
		info, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed from the working tree, not yet from the index
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(b)
}
