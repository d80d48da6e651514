package lambdaenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// Tags are the build tags of every Lambda bootstrap (the Makefile's
// LAMBDA_TAGS): no RPC mode in aws-lambda-go (the provided.al2023 runtime
// speaks the Runtime API), no HTTP/2 in net/http (every endpoint a
// function calls — DynamoDB, Step Functions, SQS, S3, EventBridge,
// OpenSearch, webhook receivers — speaks HTTP/1.1, and the bundled HTTP/2
// is a third of a megabyte in every binary).
var Tags = []string{"lambda.norpc", "nethttpomithttp2"}

// BuildFlags are the go build flags of a Lambda bootstrap (the Makefile's
// build target uses the same).
var BuildFlags = []string{"-tags", strings.Join(Tags, ","), "-trimpath", "-ldflags=-s -w"}

// Build compiles the main package pkg (a path such as ./functions/keys,
// relative to dir) into out as a bootstrap for this machine's Linux
// architecture, with the flags of the deployed build.
func Build(dir, pkg, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	testinputs.Tree()
	args := append(append([]string{"build"}, BuildFlags...), "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// EnvEmulator names an aws-lambda-rie executable to use instead of the
// Go tool of the module.
const EnvEmulator = "AWS_LAMBDA_RIE"

// EmulatorTool is the emulator's Go tool, pinned in go.mod's tool block.
const EmulatorTool = "aws-lambda-rie"

var emulator struct {
	once sync.Once
	path string
	err  error
}

// Emulator is the path of Amazon's Lambda Runtime Interface Emulator:
// $AWS_LAMBDA_RIE, or the module's Go tool (`go tool -n aws-lambda-rie`
// builds it once, at the version go.mod pins, into Go's build cache), run
// from the working directory, which must be inside the module.
func Emulator() (string, error) {
	emulator.once.Do(func() {
		if p := os.Getenv(EnvEmulator); p != "" {
			emulator.path = p
			return
		}
		out, err := exec.Command("go", "tool", "-n", EmulatorTool).Output()
		if err != nil {
			msg := err.Error()
			if ee, ok := err.(*exec.ExitError); ok {
				msg = strings.TrimSpace(string(ee.Stderr))
			}
			emulator.err = fmt.Errorf("%w: go tool -n %s (run from inside the module, or set %s): %s", ErrNoEmulator, EmulatorTool, EnvEmulator, msg)
			return
		}
		emulator.path = strings.TrimSpace(string(out))
	})
	return emulator.path, emulator.err
}
