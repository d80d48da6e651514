package api_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/routes"
)

func TestEveryRouteOfTheTableHasAHandlerAndNoHandlerIsUnrouted(t *testing.T) {
	t.Parallel()
	handlers := api.New(api.Deps{}).Handlers()
	var missing, extra []string
	inTable := map[string]bool{}
	for _, r := range routes.Table {
		inTable[r.Pattern()] = true
		if handlers[r.Pattern()] == nil {
			missing = append(missing, r.Pattern())
		}
	}
	for p := range handlers {
		if !inTable[p] {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		t.Fatalf("routes without handler: %v; handlers without route: %v", missing, extra)
	}
}

func TestOnlyVersionedRoutesNeedAnAPIKeyAndEveryRouteHasAGroup(t *testing.T) {
	t.Parallel()
	groups := map[string]bool{}
	for _, g := range routes.Groups {
		groups[g] = true
	}
	for _, r := range routes.Table {
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
	for _, r := range routes.Table {
		if seen[r.Pattern()] {
			t.Errorf("%s is routed twice", r.Pattern())
		}
		seen[r.Pattern()] = true
	}
}
