package store_test

import (
	"go/ast"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sourcebase/sourcebase/internal/store"
)

// iamActionsOf are the IAM actions that authorize one DynamoDB operation:
// its own name, except for transactions (authorized by their parts) and
// the waiter that describes the table.
func iamActionsOf(op string) []string {
	switch op {
	case "TransactWriteItems":
		return []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
	case "TransactGetItems":
		return []string{"dynamodb:GetItem"}
	case "NewTableExistsWaiter":
		return []string{"dynamodb:DescribeTable"}
	}
	return []string{"dynamodb:" + op}
}

// storeOperations are the DynamoDB operations the store's code calls.
func storeOperations(t *testing.T) []string {
	t.Helper()
	client := reflect.TypeOf(&dynamodb.Client{})
	seen := map[string]bool{}
	for _, f := range moduleFiles(t) {
		if !under(f.path, "internal/store") || strings.HasSuffix(f.path, "_test.go") {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := sel.Sel.Name
			if _, isMethod := client.MethodByName(name); isMethod && name != "Options" {
				seen[name] = true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "dynamodb" && name == "NewTableExistsWaiter" {
				seen[name] = true
			}
			// A paginator calls its operation (NewScanPaginator: Scan).
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "dynamodb" && strings.HasPrefix(name, "New") && strings.HasSuffix(name, "Paginator") {
				seen[strings.TrimSuffix(strings.TrimPrefix(name, "New"), "Paginator")] = true
			}
			return true
		})
	}
	ops := make([]string, 0, len(seen))
	for op := range seen {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

func TestTheIAMActionsOfEachAccessAreExactlyTheOperationsTheStoreCalls(t *testing.T) {
	ops := storeOperations(t)
	if len(ops) == 0 {
		t.Fatal("found no DynamoDB operations in the store")
	}
	granted := store.IAMActions(store.Read, store.Write, store.Describe, store.Manage, store.Tenants, store.Vectors)
	needed := map[string]bool{}
	for _, op := range ops {
		for _, a := range iamActionsOf(op) {
			needed[a] = true
			if !slices.Contains(granted, a) {
				t.Errorf("the store calls %s, which needs %s, but no kind of access grants it", op, a)
			}
		}
	}
	for _, a := range granted {
		if !needed[a] {
			t.Errorf("%s is granted but the store never calls an operation that needs it (calls: %v)", a, ops)
		}
	}
}
