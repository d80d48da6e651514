package apitest

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/sourcebase/sourcebase/internal/dev/logcheck"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/httpapi"
)

// KeepLog keeps every record the test binary's service logs, as the
// service writes them (JSON lines, with the request's ids), in the
// directory logcheck.EnvDir names (one file a test binary, which its next
// run replaces: make test checks them all together) or in a temporary
// file, and checks it when the tests are over (logcheck.Scan): a line
// with a secret fails the run. Call it before testenv.Main (Main does).
func KeepLog() {
	var f *os.File
	var err error
	temp := false
	if dir := os.Getenv(logcheck.EnvDir); dir != "" {
		name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
		if t := os.Getenv(EnvTarget); t != "" {
			name += "-" + t
		}
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.Create(filepath.Join(dir, name+".jsonl"))
		}
	} else {
		f, err = os.CreateTemp("", "sourcebase-test-log-*.jsonl")
		temp = true
	}
	if err != nil {
		panic(fmt.Sprintf("keep the service's log: %v", err))
	}
	testenv.KeepLog(httpapi.LogHandler{Handler: slog.NewJSONHandler(f, nil)}, func() error {
		defer func() {
			f.Close()
			if temp {
				os.Remove(f.Name())
			}
		}()
		if _, err := f.Seek(0, 0); err != nil {
			return err
		}
		_, err := logcheck.Scan(f)
		return err
	})
}
