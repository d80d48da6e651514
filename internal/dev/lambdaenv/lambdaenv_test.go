package lambdaenv_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

var probe string // the probe bootstrap, built once

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "probe")
	if err != nil {
		panic(err)
	}
	probe = filepath.Join(dir, "bootstrap")
	if err := lambdaenv.Build(".", "./testdata/probe", probe); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type probed struct {
	RequestID   string `json:"requestId"`
	FunctionARN string `json:"functionArn"`
	DeadlineIn  int64  `json:"deadlineInMs"`
	Name        string `json:"name"`
	Env         string `json:"env"`
	Pid         int    `json:"pid"`
	MemoryMB    int    `json:"memoryMB"`
	ErrorType   string `json:"errorType"`
}

func invoke(t *testing.T, f interface {
	Invoke(context.Context, []byte) (lambdaenv.Result, error)
}, payload string) lambdaenv.Result {
	t.Helper()
	res, err := f.Invoke(context.Background(), []byte(payload))
	if err != nil {
		t.Fatalf("invoke %s: %v", payload, err)
	}
	return res
}

func answer(t *testing.T, res lambdaenv.Result) probed {
	t.Helper()
	if res.Error != nil {
		t.Fatalf("function error: %v", res.Error)
	}
	var p probed
	if err := json.Unmarshal(res.Payload, &p); err != nil {
		t.Fatalf("response %s: %v", res.Payload, err)
	}
	return p
}

func TestTheHandlerSeesItsEnvironmentARequestIdAndADeadlineOfTheFunctionTimeout(t *testing.T) {
	t.Parallel()
	// 6.2 s is 7 s to Lambda: timeouts are whole seconds.
	inst, err := lambdaenv.Start(lambdaenv.Options{Name: "probe-fn", Bootstrap: probe, Env: []string{"PROBE=yes"}, Timeout: 6200 * time.Millisecond, MemoryMB: 384})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop()
	first := answer(t, invoke(t, inst, `{}`))
	second := answer(t, invoke(t, inst, `{}`))
	if first.Env != "yes" || first.Name != "probe-fn" || !strings.HasSuffix(first.FunctionARN, ":function:probe-fn") || first.MemoryMB != 384 {
		t.Errorf("the function saw %+v", first)
	}
	if early := 7000 - testenv.Scaled(2*time.Second).Milliseconds(); first.DeadlineIn < max(early, 1) || first.DeadlineIn > 7000 {
		t.Errorf("the handler's deadline is %d ms away, want about 7000", first.DeadlineIn)
	}
	if first.RequestID == "" || first.RequestID == second.RequestID {
		t.Errorf("request ids %q and %q", first.RequestID, second.RequestID)
	}
	if first.Pid != second.Pid {
		t.Errorf("a warm instance was not reused: pids %d and %d", first.Pid, second.Pid)
	}
	if inst.ColdStart() <= 0 || inst.InitDuration() <= 0 || inst.InitDuration() >= inst.ColdStart() {
		t.Errorf("cold start %v, the emulator's init %v: want both, the init within the cold start", inst.ColdStart(), inst.InitDuration())
	}
	if m := inst.MaxMemory(); m < 1<<20 || m > 384<<20 {
		t.Errorf("max memory used %d bytes", m)
	}
	if cpu := inst.CPU(); cpu <= 0 {
		t.Errorf("the runtime's CPU is %v", cpu)
	}
}

// The emulator opens its Runtime API in a goroutine of its own: a runtime
// that the first invocation starts must find it listening, also when the
// machine is too busy to have run that goroutine yet.
func TestStartReturnsWithTheRuntimeAPIListening(t *testing.T) {
	t.Parallel()
	for range 3 {
		inst, err := lambdaenv.Start(lambdaenv.Options{Bootstrap: probe})
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", inst.RuntimeAPI())
		inst.Stop()
		if err != nil {
			t.Fatalf("Start returned before the Runtime API at %s listened: %v", inst.RuntimeAPI(), err)
		}
		c.Close()
	}
}

func TestAResponseThatOnlyLooksLikeAnErrorIsAResponse(t *testing.T) {
	t.Parallel()
	f := lambdaenv.NewFunction(lambdaenv.Options{Bootstrap: probe})
	defer f.Close()
	if p := answer(t, invoke(t, f, `{"do":"lookalike"}`)); p.Name != "lookalike" || p.ErrorType != "NotAnError" {
		t.Errorf("answer %+v", p)
	}
}

func TestStopEndsTheRuntimeWithTheEmulator(t *testing.T) {
	t.Parallel()
	inst, err := lambdaenv.Start(lambdaenv.Options{Bootstrap: probe})
	if err != nil {
		t.Fatal(err)
	}
	pid := answer(t, invoke(t, inst, `{}`)).Pid
	inst.Stop()
	if inst.Alive() {
		t.Error("the emulator is alive after Stop")
	}
	deadline := time.Now().Add(testenv.Scaled(5 * time.Second))
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the runtime (pid %d) outlived its emulator", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHandlerErrorsPanicsCrashesAndTimeoutsComeBackAsFunctionErrors(t *testing.T) {
	t.Parallel()
	timeout := testenv.Scaled(2 * time.Second)
	f := lambdaenv.NewFunction(lambdaenv.Options{Bootstrap: probe, Timeout: timeout})
	defer f.Close()
	for _, c := range []struct{ payload, errType, message string }{
		{`{"do":"fail"}`, "errorString", "asked to fail"},
		{`{"do":"panic"}`, "string", "asked to panic"},
		{`{"do":"exit"}`, "Runtime.ExitError", "exit status 3"},
		{`{"do":"sleep","sleep":"` + (5 * timeout).String() + `"}`, "Sandbox.Timedout", "timed out"},
	} {
		res := invoke(t, f, c.payload)
		if res.Error == nil || res.Error.Type != c.errType || !strings.Contains(res.Error.Message, c.message) {
			t.Errorf("%s: error %+v, want %s containing %q", c.payload, res.Error, c.errType, c.message)
		}
		// The function keeps working: a crashed or timed-out instance is replaced.
		answer(t, invoke(t, f, `{}`))
	}
}

func TestConcurrentInvocationsRunInSeparateInstances(t *testing.T) {
	t.Parallel()
	f := lambdaenv.NewFunction(lambdaenv.Options{Bootstrap: probe})
	defer f.Close()
	var wg sync.WaitGroup
	pids := make([]int, 3)
	for j := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pids[j] = answer(t, invoke(t, f, `{"do":"sleep","sleep":"300ms"}`)).Pid
		}()
	}
	wg.Wait()
	if pids[0] == pids[1] || pids[1] == pids[2] || pids[0] == pids[2] {
		t.Errorf("overlapping invocations shared an instance: pids %v", pids)
	}
	if n, inits := len(f.ColdStarts()), f.InitDurations(); n != 3 || len(inits) != 3 || inits[0] <= 0 {
		t.Errorf("%d cold starts recorded and inits %v, want 3 of each", n, inits)
	}
}

func TestAFunctionsCPUIsItsProcessesCPU(t *testing.T) {
	t.Parallel()
	f := lambdaenv.NewFunction(lambdaenv.Options{Bootstrap: probe})
	defer f.Close()
	answer(t, invoke(t, f, `{}`))
	before := f.CPU()
	answer(t, invoke(t, f, `{"do":"sleep","sleep":"200ms"}`))
	slept := f.CPU() - before
	answer(t, invoke(t, f, `{"do":"spin","sleep":"200ms"}`))
	spun := f.CPU() - before - slept
	// Spinning counts, sleeping hardly (loose bounds: a loaded machine
	// deschedules the spinner).
	if before <= 0 || spun < 20*time.Millisecond || slept*4 >= spun {
		t.Errorf("CPU at start %v, over a 200 ms sleep %v, over 200 ms of spinning %v", before, slept, spun)
	}
}

func TestABootstrapThatExitsAtStartIsAnInitError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho missing configuration >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := lambdaenv.NewFunction(lambdaenv.Options{Bootstrap: script})
	defer f.Close()
	res := invoke(t, f, `{}`)
	if res.Error == nil || res.Error.Type != "Runtime.ExitError" || !strings.Contains(res.Error.Message, "exit status 1") {
		t.Errorf("error %+v, want Runtime.ExitError with the exit status", res.Error)
	}
}
