package deploy

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// linkable are the root module's packages the infrastructure (the CDK app,
// the SAM template generator, this package) may link: the deployment model,
// plain data generated from the service's declarations, and DynamoDB
// Local's launcher for `make sam-local`, which knows nothing of the
// service. Nothing else of internal/: no handler, domain or storage
// package, so the CDK app neither rebuilds on a handler's edit nor depends
// on what the handlers link (issue 47). The service's table and demo key
// under sam local are made by the operator CLI (cmd/admin), run as a
// program.
var linkable = []string{
	"internal/deploymodel",
	"internal/dev/dynamolocal",
	"internal/dev/portowner", // dynamolocal's
}

func TestTheInfrastructureLinksOnlyTheDeploymentModelOfTheService(t *testing.T) {
	const module = "github.com/sourcebase/sourcebase/"
	out, err := exec.Command("go", "list", "-deps", module+"infra/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps of the infra module: %v\n%s", err, out)
	}
	var linked []string
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, module)
		if !ok || strings.HasPrefix(rel, "infra/") || rel == "infra" {
			continue
		}
		linked = append(linked, rel)
		if !slices.Contains(linkable, rel) {
			t.Errorf("the infra module links %s: read what it needs from the deployment model (internal/deploymodel, made by internal/deploymodel/derive)", p)
		}
	}
	if !slices.Contains(linked, "internal/deploymodel") {
		t.Errorf("the infra module does not link the deployment model: linked %v", linked)
	}
}
