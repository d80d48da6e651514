// Command cmd checks the logs the HTTP suites kept in a directory
// (logcheck.EnvDir), all together: every line of every file passes
// logcheck.Scan, and together they hold at least -min lines, so that a
// clean result means something. make test runs it after the suites.
//
//	go run ./internal/dev/logcheck/cmd -min 10000 bin/testlogs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sourcebase/sourcebase/internal/dev/logcheck"
)

func main() {
	min := flag.Int("min", 10_000, "the fewest lines the logs must hold together")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: cmd [-min N] DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *min); err != nil {
		fmt.Fprintln(os.Stderr, "logcheck:", err)
		os.Exit(1)
	}
}

func run(dir string, min int) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return err
	}
	var total logcheck.Result
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		r, err := logcheck.Scan(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		total = total.Add(r)
	}
	if total.Lines < min {
		return fmt.Errorf("the HTTP suites' logs in %s hold %d lines (%d requests) in %d files, fewer than %d", dir, total.Lines, total.Requests, len(files), min)
	}
	fmt.Printf("logcheck: %d lines (%d requests) of %d test binaries' logs: every line JSON, no secret, every request line with its id and route\n",
		total.Lines, total.Requests, len(files))
	return nil
}
