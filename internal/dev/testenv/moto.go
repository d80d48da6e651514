package testenv

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/portowner"
)

// Moto starts AWS's API emulator moto (moto_server, in the machine image:
// SQS, EventBridge, S3, CloudFormation, ...) for the test on a free loopback
// port and returns its endpoint; the test is skipped, saying how to install
// it, where moto is not installed. The process ends with the test; its
// log's tail is shown when the test failed.
//
// A free port is free only until another process binds it: moto is ready
// when its API answers 200 and the listener is its process's
// (portowner.Holds; another moto on the port answers 200 too), and a moto
// that exits at start (its port taken) is started again on another port,
// up to three times.
func Moto(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("moto_server"); err != nil {
		tb.Skip("moto_server is not installed (pip install 'moto[server]')")
	}
	site := tb.TempDir()
	if err := os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte(motoBinaryInJSON), 0o644); err != nil {
		tb.Fatal(err)
	}
	const attempts = 3
	for attempt := 1; ; attempt++ {
		endpoint, err := startMoto(tb, site)
		if err == nil {
			return endpoint
		}
		if !errors.Is(err, errMotoExited) || attempt == attempts {
			tb.Fatal(err)
		}
		tb.Logf("moto_server, attempt %d: %v; starting it on another port", attempt, err)
	}
}

var errMotoExited = errors.New("moto_server exited at start")

// startMoto starts one moto_server on a free port and waits for its API.
func startMoto(tb testing.TB, site string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	logPath := filepath.Join(tb.TempDir(), "moto.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer logf.Close()
	cmd := exec.Command("moto_server", "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true",
		"PYTHONPATH="+strings.Join(slices.DeleteFunc([]string{site, os.Getenv("PYTHONPATH")}, func(s string) bool { return s == "" }), string(os.PathListSeparator)))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start moto_server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Kill()
		err := <-exited
		exited <- err
	}
	tb.Cleanup(func() {
		stop()
		if tb.Failed() {
			tb.Logf("moto_server's log ends with:\n%s", Tail(logPath, 60))
		}
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	wait := Scaled(30 * time.Second)
	deadline := time.Now().Add(wait)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if res, err := client.Get(endpoint + "/moto-api/"); err == nil {
			res.Body.Close()
			ours, err := portowner.Holds(cmd.Process.Pid, port)
			if res.StatusCode == http.StatusOK && (ours || err != nil) {
				return endpoint, nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return "", fmt.Errorf("%w (%v) on port %d:\n%s", errMotoExited, err, port, Tail(logPath, 30))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("moto_server did not answer on %s within %s:\n%s", endpoint, wait, Tail(logPath, 30))
		}
	}
}

// Tail is the last n lines of a file (a process's log), "" when it cannot
// be read.
func Tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// motoBinaryInJSON is a sitecustomize module for moto_server's process:
// moto (5.2.1) hands a table's stream records to Lambda through
// json.dumps, which refuses the bytes of a binary attribute (such as a
// deflated doc, store.docValue), failing the write that made the record.
// AWS writes a binary attribute of a stream record as base64 text, and so
// does moto's process with this module.
const motoBinaryInJSON = `import base64, json

_dumps = json.dumps


def _binary_as_base64(o):
    if isinstance(o, (bytes, bytearray)):
        return base64.b64encode(o).decode("ascii")
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj, *args, **kwargs):
    if "default" not in kwargs and "cls" not in kwargs:
        kwargs["default"] = _binary_as_base64
    return _dumps(obj, *args, **kwargs)


json.dumps = dumps
`
