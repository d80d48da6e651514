package awsenv_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// The functions load their AWS configuration with awsenv: none links the
// SDK's config package (shared files, SSO, STS, about 1.6 MB of a
// bootstrap), and each links awsenv (so the test cannot pass by a
// function not loading any configuration at all).
func TestNoFunctionLinksTheSDKsConfigChain(t *testing.T) {
	t.Parallel()
	deps := testenv.FunctionDeps(t)
	for _, f := range routes.Functions {
		if deps[f.Name]["github.com/aws/aws-sdk-go-v2/config"] {
			t.Errorf("function %s links github.com/aws/aws-sdk-go-v2/config", f.Name)
		}
		if !deps[f.Name]["github.com/sourcebase/sourcebase/internal/awsenv"] {
			t.Errorf("function %s does not load its configuration with awsenv", f.Name)
		}
	}
}
