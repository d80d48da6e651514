// Package generate makes every committed file that code generates — the
// OpenAPI document and the Go client made from it, the generated pages and
// parts of pages of docs/, the OpenSearch golden files, the SAM template —
// in memory, from the code and the hand-written parts of the repository,
// without writing in it. `make generate` (cmd/generate) writes what it makes;
// a test of this package lists every committed file that differs, in one
// failure naming the one command that fixes them all (Fix).
//
// docs/performance.md is not among them: it is a measurement of a running
// service (make bench), not a function of the code.
package generate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch/golden"
)

// Fix is the one command that regenerates every artifact.
const Fix = "make generate"

// Paths of the artifacts, from the repository root.
const (
	OpenAPIPath = "docs/openapi.json"
	// ContractPath is the strict document (api.StrictOpenAPI) the HTTP
	// tests hold every answer to (package apitest embeds it).
	ContractPath = "internal/dev/apitest/contract.json"
	ClientPath   = "client/client.gen.go"
	MCPDocPath   = "docs/mcp.md"
	SearchPath   = "docs/search.md"
)

// A File is a generated file: its path from the repository root (slash
// separated) and its content.
type File struct {
	Path string
	Data []byte
}

// Files are what Generate makes.
type Files struct {
	// Files in the order they were made (a file's inputs before it).
	Files []File
	// Owned are patterns (path.Match, from the repository root) of files
	// only generators make: one that matches and is not among Files is left
	// over (from a removed case or resource) and stale.
	Owned []string
}

// A step makes some of the files, from the repository at root (read only),
// the files the steps before it made (by path) and a scratch directory.
type step struct {
	what string
	make func(ctx context.Context, root, tmp string, made map[string][]byte) ([]File, []string, error)
}

// steps are every generator, in dependency order: the client after the
// OpenAPI document it is made of, the MCP tool table after the document its
// tools are described from. A new committed generated file is one more
// step here, and nowhere else: make generate and the staleness test both
// take it from this list.
var steps = []step{
	{"the OpenAPI document, and the strict one the HTTP tests check answers against", openAPI},
	{"docs/mcp.md's tool table", mcpDoc},
	{"docs/search.md's field tables", searchDoc},
	{"docs/resources.md", resourcesDoc},
	{"docs/errors.md's table of error codes", errorCodesDoc},
	{"docs/events.md's table of event types", eventsDoc},
	{"the OpenSearch golden files", openSearchGolden},
	{"the Go client (oapi-codegen)", goClient},
	{"the deployment model infra/ reads (internal/deploymodel/model.json)", deployModel},
	{"the SAM template (infra/sam)", samTemplate},
}

// Steps says what each generator makes, in order ("docs/errors.md's
// table of error codes"): what the README, docs/README.md and the
// Makefile's help list.
func Steps() []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.what
	}
	return out
}

// Generate makes every generated file of the repository at root. It writes
// nothing there: the tools it runs (oapi-codegen, infra/sam) write in a
// temporary directory, removed before it returns. A step that fails does
// not stop the others (but those that need its files): the error joins
// every failure, and the files are those of the steps that did not fail.
func Generate(ctx context.Context, root string) (*Files, error) {
	tmp, err := os.MkdirTemp("", "sourcebase-generate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := &Files{}
	made := map[string][]byte{}
	var errs []error
	for i, s := range steps {
		dir := filepath.Join(tmp, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		files, owned, err := s.make(ctx, root, dir, made)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.what, err))
			continue
		}
		for _, f := range files {
			if _, dup := made[f.Path]; dup {
				return nil, fmt.Errorf("%s: %s is made by two generators", s.what, f.Path)
			}
			made[f.Path] = f.Data
			out.Files = append(out.Files, f)
		}
		out.Owned = append(out.Owned, owned...)
	}
	return out, errors.Join(errs...)
}

// A Stale file differs from what the code generates.
type Stale struct {
	Path string
	// Why: "differs", "missing" (generated, not committed) or "left over"
	// (matches an owned pattern, no longer generated).
	Why string
}

// Stale lists the files under root that differ from f: generated files
// that differ or are missing, and left-over files.
func (f *Files) Stale(root string) ([]Stale, error) {
	var stale []Stale
	for _, g := range f.Files {
		have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(g.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			stale = append(stale, Stale{g.Path, "missing"})
		case err != nil:
			return nil, err
		case !bytes.Equal(have, g.Data):
			stale = append(stale, Stale{g.Path, "differs"})
		}
	}
	left, err := f.leftOver(root)
	if err != nil {
		return nil, err
	}
	for _, p := range left {
		stale = append(stale, Stale{p, "left over"})
	}
	return stale, nil
}

// leftOver lists the files under root that match an owned pattern and are
// not generated.
func (f *Files) leftOver(root string) ([]string, error) {
	var left []string
	for _, pattern := range f.Owned {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			if err != nil {
				return nil, err
			}
			rel = filepath.ToSlash(rel)
			if !slices.ContainsFunc(f.Files, func(g File) bool { return g.Path == rel }) && !slices.Contains(left, rel) {
				left = append(left, rel)
			}
		}
	}
	slices.Sort(left)
	return left, nil
}

// Report is the message of a staleness failure: every stale file, and the
// one command that regenerates them all.
func Report(stale []Stale) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d committed file(s) differ from what the code generates; `%s` regenerates them all:\n", len(stale), Fix)
	for _, s := range stale {
		fmt.Fprintf(&b, "  %s (%s)\n", s.Path, s.Why)
	}
	return b.String()
}

// Write writes under root every file of f that differs from the one there,
// and removes left-over files; it returns what it changed, one line each
// ("wrote path", "removed path"). A second Write of the same files changes
// nothing.
func (f *Files) Write(root string) ([]string, error) {
	stale, err := f.Stale(root)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, s := range stale {
		full := filepath.Join(root, filepath.FromSlash(s.Path))
		if s.Why == "left over" {
			if err := os.Remove(full); err != nil {
				return changed, err
			}
			changed = append(changed, "removed "+s.Path)
			continue
		}
		i := slices.IndexFunc(f.Files, func(g File) bool { return g.Path == s.Path })
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return changed, err
		}
		if err := os.WriteFile(full, f.Files[i].Data, 0o644); err != nil {
			return changed, err
		}
		changed = append(changed, "wrote "+s.Path)
	}
	return changed, nil
}

func openAPI(context.Context, string, string, map[string][]byte) ([]File, []string, error) {
	doc, err := api.OpenAPI()
	if err != nil {
		return nil, nil, err
	}
	strict, err := api.StrictOpenAPI()
	if err != nil {
		return nil, nil, err
	}
	return []File{{OpenAPIPath, doc}, {ContractPath, strict}}, nil, nil
}

func mcpDoc(_ context.Context, root, _ string, made map[string][]byte) ([]File, []string, error) {
	doc, ok := made[OpenAPIPath]
	if !ok {
		return nil, nil, errors.New("no OpenAPI document to describe the tools from")
	}
	page, err := os.ReadFile(filepath.Join(root, MCPDocPath))
	if err != nil {
		return nil, nil, err
	}
	b, err := MCPDoc(page, doc)
	if err != nil {
		return nil, nil, err
	}
	return []File{{MCPDocPath, b}}, nil, nil
}

func searchDoc(_ context.Context, root, _ string, _ map[string][]byte) ([]File, []string, error) {
	page, err := os.ReadFile(filepath.Join(root, SearchPath))
	if err != nil {
		return nil, nil, err
	}
	b, err := SearchDoc(page)
	if err != nil {
		return nil, nil, err
	}
	return []File{{SearchPath, b}}, nil, nil
}

// ErrorsPath is the errors page, whose table of codes is apperr.Markdown.
const ErrorsPath = "docs/errors.md"

func errorCodesDoc(_ context.Context, root, _ string, _ map[string][]byte) ([]File, []string, error) {
	page, err := os.ReadFile(filepath.Join(root, ErrorsPath))
	if err != nil {
		return nil, nil, err
	}
	b, err := splice(ErrorsPath, page, "<!-- codes -->\n", "<!-- /codes -->", apperr.Markdown())
	if err != nil {
		return nil, nil, err
	}
	return []File{{ErrorsPath, b}}, nil, nil
}

// EventsPath is the events page, whose table of event types is the event
// catalog's (kinds.Events).
const EventsPath = "docs/events.md"

func eventsDoc(_ context.Context, root, _ string, _ map[string][]byte) ([]File, []string, error) {
	page, err := os.ReadFile(filepath.Join(root, EventsPath))
	if err != nil {
		return nil, nil, err
	}
	b, err := splice(EventsPath, page, "<!-- event-types -->\n", "<!-- /event-types -->", kinds.Events().Markdown())
	if err != nil {
		return nil, nil, err
	}
	return []File{{EventsPath, b}}, nil, nil
}

func resourcesDoc(context.Context, string, string, map[string][]byte) ([]File, []string, error) {
	return []File{{resources.DocPath, []byte(resources.Markdown(api.DocRoutes, listspec.DocList))}}, nil, nil
}

func openSearchGolden(_ context.Context, root, _ string, _ map[string][]byte) ([]File, []string, error) {
	stream, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(golden.StreamEvent)))
	if err != nil {
		return nil, nil, err
	}
	byName, err := golden.Files(searchable(), stream)
	if err != nil {
		return nil, nil, err
	}
	var files []File
	for name, b := range byName {
		files = append(files, File{path.Join(golden.Dir, name), b})
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	var owned []string
	for _, p := range golden.Patterns {
		owned = append(owned, path.Join(golden.Dir, p))
	}
	return files, owned, nil
}

// goClient runs oapi-codegen (pinned in go.mod as a tool) on the OpenAPI
// document made before, with the committed configuration, as
// `go generate ./client` does on the committed document.
func goClient(ctx context.Context, root, tmp string, made map[string][]byte) ([]File, []string, error) {
	doc, ok := made[OpenAPIPath]
	if !ok {
		return nil, nil, errors.New("no OpenAPI document to make the client of")
	}
	in, out := filepath.Join(tmp, "openapi.json"), filepath.Join(tmp, "client.gen.go")
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		return nil, nil, err
	}
	if err := run(ctx, filepath.Join(root, "client"), "go", "tool", "oapi-codegen", "-config", "oapi-codegen.yaml", "-o", out, in); err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, nil, err
	}
	return []File{{ClientPath, b}}, nil, nil
}

// samTemplate runs the SAM template generator of the infra module (its own
// Go module, which this one cannot import) with -dir, on the deployment
// model made before (-model: the committed one may be stale), and takes
// every file it writes there.
func samTemplate(ctx context.Context, root, tmp string, made map[string][]byte) ([]File, []string, error) {
	model, ok := made[deploymodel.Path]
	if !ok {
		return nil, nil, errors.New("no deployment model to make the template of")
	}
	modelFile, out := filepath.Join(tmp, "model.json"), filepath.Join(tmp, "out")
	if err := os.WriteFile(modelFile, model, 0o644); err != nil {
		return nil, nil, err
	}
	if err := run(ctx, filepath.Join(root, "infra"), "go", "run", "./sam", "-write", "-dir", out, "-model", modelFile); err != nil {
		return nil, nil, err
	}
	var files []File
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(out, p)
		files = append(files, File{filepath.ToSlash(rel), b})
		return err
	})
	if err == nil && len(files) == 0 {
		err = errors.New("go run ./sam -write wrote nothing")
	}
	return files, nil, err
}

// run runs a command in dir, its output in the error when it fails.
func run(ctx context.Context, dir, name string, args ...string) error {
	testinputs.Tree()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s (in %s): %w\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// Markers of the generated parts of hand-written pages.
const (
	toolsOpen, toolsClose   = "<!-- tools -->\n", "<!-- /tools -->"
	fieldsOpen, fieldsClose = "<!-- fields -->\n", "<!-- /fields -->"
	bodyOpen, bodyClose     = "<!-- body -->\n", "<!-- /body -->"
)

// MCPDoc is docs/mcp.md (page, as committed) with its tool table, between
// <!-- tools --> and <!-- /tools -->, made from the tools the MCP server
// lists for the OpenAPI document doc.
func MCPDoc(page, doc []byte) ([]byte, error) {
	tools, err := mcpserver.ToolList(doc, api.MCP())
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("| Tool | Calls | What it does | Arguments |\n|---|---|---|---|\n")
	for _, tool := range tools {
		var args []string
		if s, ok := tool.InputSchema.(map[string]any); ok {
			props, _ := s["properties"].(map[string]any)
			for name := range props {
				args = append(args, "`"+name+"`")
			}
			slices.Sort(args)
		}
		b.WriteString("| `" + tool.Name + "` | " + tool.Title + " | " + strings.ReplaceAll(tool.Description, "|", `\|`) + " | " + strings.Join(args, ", ") + " |\n")
	}
	return splice(MCPDocPath, page, toolsOpen, toolsClose, b.String())
}

// SearchDoc is docs/search.md (page, as committed) with the table of the
// search body's members (search.Members) between <!-- body --> and
// <!-- /body -->, and the field tables of every searchable declaration
// between <!-- fields --> and <!-- /fields -->.
func SearchDoc(page []byte) ([]byte, error) {
	page, err := splice(SearchPath, page, bodyOpen, bodyClose, search.BodyMarkdown())
	if err != nil {
		return nil, err
	}
	return splice(SearchPath, page, fieldsOpen, fieldsClose, strings.TrimPrefix(search.Markdown(searchable()), "\n"))
}

// searchable are the search schemas of the searchable declarations.
func searchable() []*search.Schema {
	var schemas []*search.Schema
	for _, d := range kinds.Searchable() {
		schemas = append(schemas, search.SchemaOf(d))
	}
	return schemas
}

// splice replaces what is between the markers open and end of page with
// body.
func splice(name string, page []byte, open, end, body string) ([]byte, error) {
	i, j := bytes.Index(page, []byte(open)), bytes.Index(page, []byte(end))
	if i < 0 || j < i+len(open) {
		return nil, fmt.Errorf("%s has no %q ... %q block", name, strings.TrimSpace(open), end)
	}
	out := slices.Concat(page[:i+len(open)], []byte(body), page[j:])
	return out, nil
}
