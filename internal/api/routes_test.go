package api_test

import (
	"os"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
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

func TestOnlyVersionedRoutesNeedAnAPIKeyAndEveryRouteHasAGroup(t *testing.T) {
	t.Parallel()
	groups := map[string]bool{}
	for _, g := range routes.Groups {
		groups[g] = true
	}
	for _, r := range api.Routes() {
		if !groups[r.Group] {
			t.Errorf("%s: unknown group %q", r.Pattern(), r.Group)
		}
		if want := strings.HasPrefix(r.Path, "/v1/"); r.Authenticated() != want {
			t.Errorf("%s: Authenticated() = %v", r.Pattern(), r.Authenticated())
		}
		if (r.Group == routes.Webhook) != strings.HasPrefix(r.Path, "/webhooks/") {
			t.Errorf("%s: webhook paths belong to the webhook group, and only they", r.Pattern())
		}
	}
}

func TestEveryResourceGroupHasALambdaFunction(t *testing.T) {
	t.Parallel()
	for _, g := range routes.Groups {
		if _, err := os.Stat("../../functions/" + g + "/main.go"); err != nil {
			t.Errorf("group %s has no functions/%s/main.go: %v", g, g, err)
		}
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
