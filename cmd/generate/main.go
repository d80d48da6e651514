// Command generate regenerates every committed file that code generates
// (internal/generate): docs/openapi.json, then client/client.gen.go from it,
// docs/resources.md, the generated parts of docs/mcp.md and docs/search.md,
// the OpenSearch golden files, the deployment model infra/ reads
// (internal/deploymodel/model.json) and the SAM template with sam local's
// environment. It writes only the files that differ, so a second run
// changes nothing; nothing is written when a generator fails.
//
//	make generate                 (go run ./cmd/generate)
//	go run ./cmd/generate -check  exit 1, listing them, when files are stale
//
// docs/performance.md is not regenerated: make bench measures it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sourcebase/sourcebase/internal/generate"
)

func main() {
	check := flag.Bool("check", false, "write nothing; exit 1 listing the committed files that differ from what the code generates")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *check); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, check bool) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	files, err := generate.Generate(ctx, root)
	if err != nil {
		return fmt.Errorf("nothing written: %w", err)
	}
	if check {
		stale, err := files.Stale(root)
		if err != nil {
			return err
		}
		if len(stale) > 0 {
			return errors.New(strings.TrimSuffix(generate.Report(stale), "\n"))
		}
		fmt.Printf("%d generated files up to date\n", len(files.Files))
		return nil
	}
	changed, err := files.Write(root)
	for _, c := range changed {
		fmt.Println(c)
	}
	if err != nil {
		return err
	}
	fmt.Printf("%d generated files, %d changed\n", len(files.Files), len(changed))
	return nil
}

// repoRoot is the nearest directory, from the working directory up, holding
// the module's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isRootModule(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the sourcebase repository (no go.mod of module github.com/sourcebase/sourcebase above the working directory)")
		}
		dir = parent
	}
}

func isRootModule(gomod []byte) bool {
	const first = "module github.com/sourcebase/sourcebase\n"
	return len(gomod) >= len(first) && string(gomod[:len(first)]) == first
}
