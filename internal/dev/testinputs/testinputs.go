// Package testinputs tells Go's test cache what the programs a test starts
// read from the module.
//
// go test answers a package from its cache when the test binary is the same
// and so is everything the binary itself read: files it opened or stat'ed
// inside the module, environment variables it looked up. A program the test
// starts reads files the binary never opens: go build of the bootstraps reads
// the module's sources, Node reads a script in testdata and the packages
// package-lock.json pins, Spectral reads docs/openapi.json. An edit to those
// would leave a stale pass in the cache. These functions open them from the
// test binary, so that their names, sizes and modification times join the
// cache's key, and do nothing outside a test binary.
package testinputs

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
)

// inTest tells a test binary, which registers its -test.* flags before any
// test runs, from the programs that share these packages (testing.Testing
// would link the testing package into them).
func inTest() bool { return flag.Lookup("test.v") != nil }

// skipped are the directories Tree leaves out: version control, what npm
// installs (package-lock.json stands for it), and what builds and tests
// write (bin/, cdk.out/, .aws-sam/, tmp/).
var skipped = map[string]bool{".git": true, "node_modules": true, "bin": true, "cdk.out": true, ".aws-sam": true, "tmp": true}

var tree sync.Once

// Tree records every directory of the module that holds the working
// directory (the package's, under go test), a nested module's included, so
// that an added, removed or edited file anywhere in it makes the package
// run again. For tests that build, list or run the module's packages, or
// start a program that reads its sources or documents.
//
// go test keys an opened directory by every entry's name, size and
// modification time, so a directory is opened only when none of its
// entries is one Tree leaves out (the module's root holds .git, whose time
// moves with every git command, and bin/): in such a directory, each other
// file is stat'ed on its own, which catches its edits but not a file
// added beside it.
func Tree() {
	if !inTest() {
		return
	}
	tree.Do(func() {
		if root, err := Root(); err == nil {
			record(root)
		}
	})
}

// record records dir and what is below it, reading each listing through a
// descriptor of its own so that only what record chooses reaches go test's
// log (os.Open logs; a File from os.NewFile does not).
func record(dir string) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), dir)
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return
	}
	whole := !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return skipped[e.Name()] })
	if whole {
		if f, err := os.Open(dir); err == nil {
			f.Close()
		}
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case skipped[e.Name()]:
		case e.IsDir():
			record(path)
		case !whole:
			os.Stat(path)
		}
	}
}

// Files records the files and directories at paths, relative to the
// module's root, for tests whose programs read those and nothing else of
// the module: "package-lock.json" for a program that runs an npm package.
func Files(paths ...string) {
	if !inTest() {
		return
	}
	root, err := Root()
	if err != nil {
		return
	}
	for _, p := range paths {
		if f, err := os.Open(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			f.Close()
		}
	}
}

// Root is the directory of the go.mod nearest above the working directory
// (the module's root, run from inside it).
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("testinputs: no go.mod in " + wd + " or above it")
		}
	}
}
