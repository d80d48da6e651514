// Command sam generates the SAM template (template/template.yaml) and sam
// local's environment file (template/env.local.json) from the service's
// deployment model (internal/deploymodel/model.json, generated from the Go
// declarations by make generate), checks that the committed files are what
// the code generates, and runs `sam local start-api` against DynamoDB
// Local. Run it from infra/ (or anywhere under the repository):
//
//	go run ./sam -write   write the generated files
//	go run ./sam -check   exit 1 when the committed files differ
//	go run ./sam -write -dir D
//	                      write them under D instead of the repository
//	                      root (make generate's staleness test does, in a
//	                      temporary directory)
//	go run ./sam -write -model F
//	                      from the model file F instead of the committed
//	                      one (make generate's, made before the template)
//	go run ./sam -local   DynamoDB Local on :8000 with the table and a demo
//	                      key, then sam local start-api --config-env local
//	                      (make sam-local; needs the SAM CLI and Docker)
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// The generated files, relative to the repository root.
const (
	TemplatePath = "template/template.yaml"
	LocalEnvPath = "template/env.local.json"
)

func main() {
	write := flag.Bool("write", false, "write "+TemplatePath+" and "+LocalEnvPath)
	check := flag.Bool("check", false, "exit 1 when "+TemplatePath+" or "+LocalEnvPath+" differ from what the code generates")
	local := flag.Bool("local", false, "run sam local start-api --config-env local against DynamoDB Local (needs sam and docker)")
	dir := flag.String("dir", "", "with -write or -check: the directory the files are written under or compared with, instead of the repository root")
	model := flag.String("model", "", "the deployment model file to generate from, instead of the committed one (internal/deploymodel/model.json, embedded)")
	flag.Parse()
	if err := run(*write, *check, *local, *dir, *model); err != nil {
		fmt.Fprintln(os.Stderr, "sam:", err)
		os.Exit(1)
	}
}

func run(write, check, local bool, dir, modelFile string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	m, err := deploymodel.Load()
	if modelFile != "" {
		var b []byte
		if b, err = os.ReadFile(modelFile); err == nil {
			m, err = deploymodel.Parse(b)
		}
	}
	if err != nil {
		return err
	}
	out := root
	if dir != "" {
		out = dir
	}
	switch {
	case local:
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runLocal(ctx, root, m, os.Stdout)
	case write:
		files, err := generated(SpecOf(m))
		if err != nil {
			return err
		}
		for path, data := range files {
			full := filepath.Join(out, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, data, 0o644); err != nil {
				return err
			}
			fmt.Println("wrote", filepath.Join(dir, path))
		}
		return nil
	case check:
		stale, err := staleFiles(out, SpecOf(m))
		if err != nil {
			return err
		}
		if len(stale) > 0 {
			return fmt.Errorf("%s differ from what the code generates: run make sam-template", strings.Join(stale, ", "))
		}
		fmt.Println("up to date:", TemplatePath, LocalEnvPath)
		return nil
	}
	flag.Usage()
	return errors.New("give -write, -check or -local")
}

// generated returns the generated files of s by path.
func generated(s Spec) (map[string][]byte, error) {
	tmpl, err := Generate(s)
	if err != nil {
		return nil, err
	}
	env, err := LocalEnv(s)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{TemplatePath: tmpl, LocalEnvPath: env}, nil
}

// staleFiles lists the generated files under root that differ from what s
// generates.
func staleFiles(root string, s Spec) ([]string, error) {
	files, err := generated(s)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, path := range []string{TemplatePath, LocalEnvPath} {
		have, err := os.ReadFile(filepath.Join(root, path))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if !bytes.Equal(have, files[path]) {
			stale = append(stale, path)
		}
	}
	return stale, nil
}

// repoRoot is the nearest directory, from the working directory up,
// holding the root module's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/sourcebase/sourcebase\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the sourcebase repository (no go.mod of module github.com/sourcebase/sourcebase above the working directory)")
		}
		dir = parent
	}
}
