package runtimeapi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildFlags are the go build flags of a Lambda bootstrap (the Makefile's
// build target uses the same).
var BuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// Build compiles the main package pkg (a path such as ./functions/keys,
// relative to dir) into out as a bootstrap for this machine's Linux
// architecture, with the flags of the deployed build.
func Build(dir, pkg, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	args := append(append([]string{"build"}, BuildFlags...), "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}
