package api_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestTheRouteTableHoldsTheHandWrittenRoutesAndThoseOfEveryDeclaredResource(t *testing.T) {
	t.Parallel()
	declared := map[string]bool{}
	for _, r := range api.Routes() {
		if r.Resource != "" {
			declared[r.Resource+" "+r.Method+" "+r.Path] = true
		}
	}
	for _, d := range resources.All() {
		for _, want := range []string{"POST /v1/" + d.Name, "GET /v1/" + d.Name, "GET /v1/" + d.Name + "/{id}",
			"PUT /v1/" + d.Name + "/{id}", "DELETE /v1/" + d.Name + "/{id}"} {
			if !declared[d.Name+" "+want] {
				t.Errorf("%s: no route %s", d.Name, want)
			}
		}
	}
	if len(api.Routes()) < 5*len(resources.All())+20 {
		t.Errorf("only %d routes", len(api.Routes()))
	}
}

func TestOnlyVersionedRoutesButTheOpenAPIDocumentNeedAnAPIKeyAndEveryRouteHasAGroup(t *testing.T) {
	t.Parallel()
	groups := map[string]bool{}
	for _, g := range routes.Groups {
		groups[g] = true
	}
	for _, r := range api.Routes() {
		if !groups[r.Group] {
			t.Errorf("%s: unknown group %q", r.Pattern(), r.Group)
		}
		if want := strings.HasPrefix(r.Path, "/v1/") && r.Path != routes.OpenAPIPath; r.Authenticated() != want {
			t.Errorf("%s: Authenticated() = %v", r.Pattern(), r.Authenticated())
		}
		if (r.Group == fn.Webhook) != strings.HasPrefix(r.Path, "/webhooks/") {
			t.Errorf("%s: webhook paths belong to the webhook group, and only they", r.Pattern())
		}
	}
}

func TestEveryDeclaredFunctionHasItsMainPackageAndEveryMainPackageIsDeclared(t *testing.T) {
	t.Parallel()
	declared := map[string]bool{}
	for _, f := range routes.Functions {
		declared[f.Name] = true
		if _, err := os.Stat("../../functions/" + f.Name + "/main.go"); err != nil {
			t.Errorf("function %s has no functions/%s/main.go: %v", f.Name, f.Name, err)
		}
		if n := len(routes.Of(api.Routes(), f.Name)); (n > 0) != (f.Reach == routes.ByAPI || f.Reach == routes.ByURL) {
			t.Errorf("function %s is reached %s but has %d routes", f.Name, f.Reach, n)
		}
	}
	fallbacks := 0
	for _, f := range routes.Functions {
		if f.Fallback {
			fallbacks++
			if f.Reach != routes.ByAPI {
				t.Errorf("the fallback %s is not reached by the HTTP API", f.Name)
			}
		}
	}
	if fallbacks != 1 {
		t.Errorf("%d functions serve the HTTP API's $default route, want exactly 1", fallbacks)
	}
	dirs, err := os.ReadDir("../../functions")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue // functions/*_test.go: the bootstraps' tests
		}
		if !declared[d.Name()] {
			t.Errorf("functions/%s is not declared in routes.Functions", d.Name())
		}
	}
}

func TestTableAccessFollowsTheRoutes(t *testing.T) {
	t.Parallel()
	rs := api.Routes()
	for _, f := range routes.Functions {
		access := f.Access(rs)
		if f.Reach == routes.ByStream {
			if len(access) != 0 {
				t.Errorf("%s reads the table's stream, not the table, but has %v", f.Name, access)
			}
			continue
		}
		if !slices.Contains(access, store.Read) {
			t.Errorf("%s cannot read the table: %v", f.Name, access)
		}
		for _, r := range routes.Of(rs, f.Name) {
			if r.Method != "GET" && !r.ReadOnly && !slices.Contains(access, store.Write) {
				t.Errorf("%s serves %s but cannot write: %v", f.Name, r.Pattern(), access)
			}
		}
		if slices.Contains(access, store.Manage) {
			t.Errorf("%s may create tables: only the operator CLI does", f.Name)
		}
	}
	keys, _ := routes.FunctionNamed(fn.Keys)
	if !slices.Contains(keys.Access(rs), store.Describe) {
		t.Errorf("the keys function serves the health check but cannot describe the table")
	}
	if got, _ := routes.FunctionNamed(fn.Search); !slices.Equal(got.Access(rs), []store.Access{store.Read, store.Count}) {
		t.Errorf("the search function needs only to read the table and count requests, has %v", got.Access(rs))
	}
	companies, _ := routes.FunctionNamed(fn.Companies)
	if slices.Contains(companies.Access(rs), store.Describe) {
		t.Errorf("the companies function may describe the table without needing to")
	}
}

func TestNoTwoRoutesShareAPattern(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range api.Routes() {
		if seen[r.Pattern()] {
			t.Errorf("%s is routed twice", r.Pattern())
		}
		seen[r.Pattern()] = true
	}
}
