package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goFile is one parsed Go file of the module, by its path from the root.
type goFile struct {
	path string
	file *ast.File
}

// moduleFiles parses every Go file under internal/, cmd/ and functions/.
func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	var out []goFile
	fset := token.NewFileSet()
	for _, dir := range []string{"../../internal", "../../cmd", "../../functions"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			out = append(out, goFile{path: strings.TrimPrefix(filepath.ToSlash(path), "../../"), file: f})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatal("found no Go files")
	}
	return out
}

func under(path string, dirs ...string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(path, d+"/") })
}

func TestOnlyTheStoreAndTheTestEnvironmentUseTheSDKsDynamoDBTypes(t *testing.T) {
	const sdkTypes = "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	for _, f := range moduleFiles(t) {
		// The measurements that compare the service with the bare SDK
		// operation (the benchmarks' baselines, the performance report and
		// its capacity meter) call the SDK directly, on purpose.
		measures := strings.HasSuffix(f.path, "bench_test.go") || under(f.path, "internal/perfreport") || f.path == "internal/dev/apitest/meter.go"
		// The stream's reader converts the stream's values (Lambda's,
		// the Streams API's) into the store's (store.Image). DynamoDB
		// Local's launcher is below the store: its tests make a bare table.
		// The deployment model's derivation reads the table's definition
		// (store.TableDefinition) and its tests build the definitions it
		// refuses. The partition simulator is a DynamoDB proxy: its tests
		// make the calls it meters.
		if under(f.path, "internal/store", "internal/dev/testenv", "internal/streams", "internal/dev/dynamolocal", "internal/deploymodel/derive", "internal/dev/partitionsim") || measures {
			continue
		}
		for _, imp := range f.file.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == sdkTypes {
				t.Errorf("%s imports %s: pass store.Op and let the store build SDK values", f.path, sdkTypes)
			}
		}
	}
}

// keyLiteral is a string that looks like a piece of a table key, such as
// "ORG#", "#UNIQUE#" or "TRIGGER#", or is one of the sort keys and item
// types of keys.go.
var keyLiteral = regexp.MustCompile(`[A-Z]{3,}#|#[A-Z]{3,}|^"(ORG|APIKEY|TRIGGER|DELIVERY|IDEMPOTENCY|UNIQUE)"$`)

func TestNoCodeOutsideTheStoreSpellsAKeyShape(t *testing.T) {
	for _, f := range moduleFiles(t) {
		if under(f.path, "internal/store") || strings.HasSuffix(f.path, "_test.go") {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING && keyLiteral.MatchString(n.Value) {
					t.Errorf("%s spells a key shape, %s: build keys with the builders of internal/store/keys.go", f.path, n.Value)
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "store" && n.Sel.Name == "OrgPartition" {
					t.Errorf("%s builds a key from store.OrgPartition: add a named builder to internal/store/keys.go", f.path)
				}
			}
			return true
		})
	}
}

// "Trigger" names one thing only: a workflow's webhook trigger as clients
// see it (workflows.WebhookTrigger) and where its slug leads
// (workflows.TriggerRoute); what verifies a delivery is inbound.Verifier and
// what started a run is runs.StartedBy*.
func TestTheWordTriggerNamesOnlyAWorkflowsWebhookTrigger(t *testing.T) {
	allowed := []string{"WebhookTrigger", "TriggerRoute", "TriggerRouteKey", "TypeTriggerRoute"}
	for _, f := range moduleFiles(t) {
		if strings.HasSuffix(f.path, "_test.go") {
			continue
		}
		for _, d := range f.file.Decls {
			var names []*ast.Ident
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names = append(names, d.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names = append(names, s.Name)
					case *ast.ValueSpec:
						names = append(names, s.Names...)
					}
				}
			}
			for _, n := range names {
				if n.IsExported() && strings.Contains(n.Name, "Trigger") && !slices.Contains(allowed, n.Name) {
					t.Errorf("%s declares %s: give it a name that says which trigger-related thing it is", f.path, n.Name)
				}
			}
		}
	}
}
