package runtimeapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/runtimeapi"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

var probe string // the probe bootstrap, built once

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "probe")
	if err != nil {
		panic(err)
	}
	probe = filepath.Join(dir, "bootstrap")
	if err := runtimeapi.Build(".", "./testdata/probe", probe); err != nil {
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
}

func invoke(t *testing.T, f interface {
	Invoke(context.Context, []byte) (runtimeapi.Result, error)
}, payload string) runtimeapi.Result {
	t.Helper()
	res, err := f.Invoke(context.Background(), []byte(payload))
	if err != nil {
		t.Fatalf("invoke %s: %v", payload, err)
	}
	return res
}

func answer(t *testing.T, res runtimeapi.Result) probed {
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
	inst, err := runtimeapi.Start(runtimeapi.Options{Name: "probe-fn", Bootstrap: probe, Env: []string{"PROBE=yes"}, Timeout: 7 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop()
	first := answer(t, invoke(t, inst, `{}`))
	second := answer(t, invoke(t, inst, `{}`))
	if first.Env != "yes" || first.Name != "probe-fn" || !strings.HasSuffix(first.FunctionARN, ":function:probe-fn") {
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
	if inst.ColdStart() <= 0 {
		t.Errorf("no cold start was measured")
	}
}

func TestHandlerErrorsPanicsCrashesAndTimeoutsComeBackAsFunctionErrors(t *testing.T) {
	t.Parallel()
	timeout := testenv.Scaled(2 * time.Second)
	f := runtimeapi.NewFunction(runtimeapi.Options{Bootstrap: probe, Timeout: timeout})
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
	f := runtimeapi.NewFunction(runtimeapi.Options{Bootstrap: probe})
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
	if n := len(f.ColdStarts()); n != 3 {
		t.Errorf("%d cold starts recorded, want 3", n)
	}
}

func TestAFunctionsCPUIsItsProcessesCPU(t *testing.T) {
	t.Parallel()
	f := runtimeapi.NewFunction(runtimeapi.Options{Bootstrap: probe})
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
	f := runtimeapi.NewFunction(runtimeapi.Options{Bootstrap: script})
	defer f.Close()
	res := invoke(t, f, `{}`)
	if res.Error == nil || res.Error.Type != "Runtime.ExitError" || !strings.Contains(res.Error.Message, "exit status 1") {
		t.Errorf("error %+v, want Runtime.ExitError with the exit status", res.Error)
	}
}
