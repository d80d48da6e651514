package awsenv_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/routes"
)

// The functions load their AWS configuration with awsenv: none links the
// SDK's config package (shared files, SSO, STS, about 1.6 MB of a
// bootstrap), and each links awsenv (so the test cannot pass by a
// function not loading any configuration at all).
func TestNoFunctionLinksTheSDKsConfigChain(t *testing.T) {
	t.Parallel()
	for _, f := range routes.Functions {
		deps, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", "../../functions/"+f.Name).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", f.Name, err)
		}
		if strings.Contains(string(deps), "github.com/aws/aws-sdk-go-v2/config\n") {
			t.Errorf("function %s links github.com/aws/aws-sdk-go-v2/config", f.Name)
		}
		if !strings.Contains(string(deps), "github.com/sourcebase/sourcebase/internal/awsenv\n") {
			t.Errorf("function %s does not load its configuration with awsenv", f.Name)
		}
	}
}
