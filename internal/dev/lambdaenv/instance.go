// Package lambdaenv runs real Lambda bootstraps on this machine, each
// execution environment one process of Amazon's Lambda Runtime Interface
// Emulator (aws-lambda-rie: the emulator inside AWS's base images and
// under `sam local`, pinned as a Go tool in go.mod) with the bootstrap as
// its runtime, so the binaries that deploy are the binaries tested, under
// the Runtime API that Amazon wrote.
//
// The emulator runs one invocation at a time, re-initializes a runtime
// that crashed or timed out, enforces the function timeout and the 6 MB
// response limit, and reports each init's duration (INIT REPORT). What it
// does not do, this package does: several environments of one function
// for concurrent invocations (Function), the choice of free ports,
// telling a function error from a response (the emulator answers both
// with 200 and drops Lambda's X-Amz-Function-Error header: an error is
// known by its body, see decode), and the CPU the runtime used.
package lambdaenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/portowner"
)

// Options describe a function.
type Options struct {
	// Name is the function name (AWS_LAMBDA_FUNCTION_NAME).
	Name string
	// Bootstrap is the path of the executable.
	Bootstrap string
	// Env is the function's environment ("KEY=value"); the process gets
	// only this and what Lambda itself sets, nothing of ours.
	Env []string
	// Timeout of one invocation (default 30s), rounded up to whole
	// seconds as Lambda's: the deadline the handler sees, after which the
	// emulator stops the runtime and starts a new one for the next
	// invocation.
	Timeout time.Duration
	// MemoryMB is the function's memory size (default 128), as the
	// function sees it (AWS_LAMBDA_FUNCTION_MEMORY_SIZE). The emulator
	// does not enforce it; Instance.MaxMemory is what the runtime used.
	MemoryMB int
	// Log receives the function's stdout and stderr and the emulator's
	// warnings and errors; nil discards them.
	Log io.Writer
}

// Result is the outcome of one invocation.
type Result struct {
	// Payload is the function's response, when it succeeded.
	Payload []byte
	// Error is the function's error, when it failed (handler error,
	// panic, crash, timeout).
	Error *FunctionError
}

// FunctionError is an invocation's error, as Lambda reports it.
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// Instance is one execution environment: one emulator process, its
// runtime (the bootstrap, which the emulator starts on the first
// invocation and again after a crash or a timeout), handling one
// invocation at a time.
type Instance struct {
	opt     Options
	timeout time.Duration // opt.Timeout in whole seconds
	url     string        // the emulator's invocation endpoint
	runtime string        // the Runtime API's address (AWS_LAMBDA_RUNTIME_API)
	client  *http.Client
	cmd     *exec.Cmd
	log     *platformLog
	started time.Time

	exited chan struct{} // closed when the emulator has exited
	exit   error

	mu        sync.Mutex
	coldStart time.Duration
	invokeMu  sync.Mutex // one invocation at a time
}

// invokePath is the emulator's invocation endpoint (Lambda's Invoke API).
const invokePath = "/2015-03-31/functions/function/invocations"

// Start launches an emulator for the function and waits until it takes
// invocations. The runtime itself starts with the first invocation, as
// Lambda starts an environment on demand.
func Start(opt Options) (*Instance, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = 30 * time.Second
	}
	if opt.MemoryMB <= 0 {
		opt.MemoryMB = 128
	}
	if opt.Name == "" {
		opt.Name = filepath.Base(filepath.Dir(opt.Bootstrap))
	}
	emulator, err := Emulator()
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ { // a free port taken before the emulator binds it
		i, err := start(emulator, opt)
		if err == nil {
			return i, nil
		}
		last = err
	}
	return nil, last
}

func start(emulator string, opt Options) (*Instance, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, fmt.Errorf("lambdaenv: %w", err)
	}
	invokeAddr, runtimeAddr := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	seconds := int((opt.Timeout + time.Second - 1) / time.Second)
	i := &Instance{
		opt:     opt,
		timeout: time.Duration(seconds) * time.Second,
		url:     "http://" + invokeAddr + invokePath,
		runtime: runtimeAddr,
		client:  &http.Client{Transport: &http.Transport{MaxIdleConns: 1, IdleConnTimeout: time.Minute}},
		log:     &platformLog{out: opt.Log},
		exited:  make(chan struct{}),
	}
	dir := filepath.Dir(opt.Bootstrap)
	cmd := exec.Command(emulator, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", runtimeAddr, opt.Bootstrap)
	cmd.Dir = dir
	// The emulator hands its own environment to the runtime.
	cmd.Env = append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
	}, opt.Env...)
	cmd.Env = append(cmd.Env,
		"AWS_LAMBDA_FUNCTION_NAME="+opt.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(seconds),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(opt.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+opt.Name,
		"LAMBDA_TASK_ROOT="+dir,
		"_HANDLER=bootstrap",
	)
	cmd.Stdout, cmd.Stderr = i.log, i.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	i.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lambdaenv: start %s: %w", emulator, err)
	}
	i.cmd = cmd
	go func() {
		i.exit = cmd.Wait()
		close(i.exited)
	}()
	// Wait for both of the emulator's endpoints: the invocation endpoint
	// and the Runtime API. The emulator opens the Runtime API's listener
	// in a goroutine of its own, not before its invocation endpoint, so
	// on a busy machine a runtime started by the first invocation could
	// otherwise dial it before it listens, and exit (Runtime.ExitError).
	// Each listens within milliseconds.
	for n, addr := range []string{invokeAddr, runtimeAddr} {
		if err := i.awaitListening(addr); err != nil {
			return nil, err
		}
		// What answered may be another process that took the port first
		// (the emulator then fails to bind it and exits): start again on
		// other ports.
		if ours, err := portowner.Holds(cmd.Process.Pid, ports[n]); err == nil && !ours {
			i.Stop()
			return nil, fmt.Errorf("lambdaenv: another process listens on %s, chosen for the emulator of %s", addr, opt.Name)
		}
	}
	return i, nil
}

// awaitListening waits until the emulator accepts connections on addr.
func (i *Instance) awaitListening(addr string) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-i.exited:
			return fmt.Errorf("lambdaenv: the emulator exited at start (%v): %s", i.exit, i.log.tail())
		case <-time.After(wait):
		}
		if time.Since(i.started) > 30*time.Second {
			i.Stop()
			return fmt.Errorf("lambdaenv: the emulator did not listen on %s within 30s", addr)
		}
	}
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// RuntimeAPI is the host and port of the Runtime API that the emulator
// serves to the runtime, as Lambda gives it in AWS_LAMBDA_RUNTIME_API.
func (i *Instance) RuntimeAPI() string { return i.runtime }

// ColdStart is the time from the emulator's start to the first response;
// zero until then. InitDuration is the emulator's own measure of the
// runtime's init.
func (i *Instance) ColdStart() time.Duration {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.coldStart
}

// InitDuration is the first init's duration as the emulator reports it
// (INIT REPORT durationMs: from the runtime's start to its first request
// for an invocation); zero until then.
func (i *Instance) InitDuration() time.Duration {
	i.log.mu.Lock()
	defer i.log.mu.Unlock()
	if len(i.log.inits) == 0 {
		return 0
	}
	return i.log.inits[0]
}

// runtimes are the process ids of the emulator's children: the runtime
// (one at a time).
func (i *Instance) runtimes() []int {
	if i.cmd == nil || i.cmd.Process == nil {
		return nil
	}
	dir := fmt.Sprintf("/proc/%d/task", i.cmd.Process.Pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var pids []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// CPU is the CPU time the runtime now running has used so far, from the
// scheduler's per-thread accounting (/proc/<pid>/task/*/schedstat): the
// function's CPU, not the emulator's (in Lambda the Runtime API is not the
// function's either). 0 where /proc does not have it.
func (i *Instance) CPU() time.Duration {
	var sum time.Duration
	for _, pid := range i.runtimes() {
		dir := fmt.Sprintf("/proc/%d/task", pid)
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
			if err != nil {
				continue // a thread that has just exited
			}
			first, _, _ := strings.Cut(string(b), " ")
			ns, _ := strconv.ParseInt(first, 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// MaxMemory is the peak resident memory of the runtime now running
// (VmHWM): what Lambda reports as Max Memory Used. 0 before the first
// invocation or where /proc does not have it.
func (i *Instance) MaxMemory() int64 {
	var peak int64
	for _, pid := range i.runtimes() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				peak = max(peak, kb<<10)
			}
		}
	}
	return peak
}

// Alive reports whether the emulator is still running.
func (i *Instance) Alive() bool {
	select {
	case <-i.exited:
		return false
	default:
		return true
	}
}

// Invoke sends payload to the function and waits for its answer. A
// function error (handler error, crash, timeout) is a Result with Error;
// err is for failures of the emulator itself or of ctx.
func (i *Instance) Invoke(ctx context.Context, payload []byte) (Result, error) {
	i.invokeMu.Lock()
	defer i.invokeMu.Unlock()
	if !i.Alive() {
		return Result{}, fmt.Errorf("lambdaenv: the emulator of %s has exited (%v): %s", i.opt.Name, i.exit, i.log.tail())
	}
	// The emulator ends an invocation at the timeout; this bound is for
	// an emulator that does not answer at all.
	bound := i.timeout + 10*time.Second
	ictx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	req, err := http.NewRequestWithContext(ictx, http.MethodPost, i.url, bytes.NewReader(payload))
	if err != nil {
		return Result{}, err
	}
	i.log.begin()
	resp, err := i.client.Do(req)
	if err != nil {
		crashed := ctx.Err() == nil && i.crashedOnExitRace(err)
		i.Stop() // Lambda has no way to take an invocation back either
		if crashed {
			return Result{}, fmt.Errorf("lambdaenv: %s: %w", i.opt.Name, ErrEmulatorCrashed)
		}
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, fmt.Errorf("lambdaenv: %s: no answer from the emulator within %s: %w", i.opt.Name, bound, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		i.Stop()
		return Result{}, fmt.Errorf("lambdaenv: %s: read the emulator's answer: %w", i.opt.Name, err)
	}
	i.mu.Lock()
	if i.coldStart == 0 {
		i.coldStart = time.Since(i.started)
	}
	i.mu.Unlock()
	return i.decode(resp.StatusCode, body)
}

// ErrEmulatorCrashed is Invoke's error when the emulator itself crashed
// on its own race (see exitRace) with a runtime that exited during its
// init, before the emulator had recorded starting it. The invocation's
// event was not delivered (the emulator sends it after the init), so it
// can be sent again to a new instance; Function.Invoke does.
var ErrEmulatorCrashed = errors.New("the emulator crashed on a runtime that exited at start, before it had the event")

// crashedOnExitRace reports whether an invocation failed because the
// emulator panicked on a runtime's early exit: the panic is logged as the
// emulator dies, which closes the invocation's connection, so it waits
// for the exit briefly.
func (i *Instance) crashedOnExitRace(err error) bool {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
		return false // not a connection closed under the invocation
	}
	select {
	case <-i.exited:
	case <-time.After(2 * time.Second):
		return false
	}
	return i.log.racedExit()
}

// timedOut is the emulator's answer to an invocation that ran past the
// timeout ("Task timed out after 3.00 seconds").
const timedOut = "Task timed out after "

// decode turns the emulator's answer into a result. It answers 200 both
// with a response and with the error a runtime reported (Lambda says
// which in X-Amz-Function-Error, the emulator does not): an error is a
// JSON object with errorType and errorMessage and nothing else but a
// stackTrace or cause, as the runtimes send them; no function of this
// service answers such an object. A crash is 502 with the error, or
// without a body when the runtime failed to start (its cause is in the
// emulator's log).
func (i *Instance) decode(status int, body []byte) (Result, error) {
	switch status {
	case http.StatusOK:
		if bytes.HasPrefix(body, []byte(timedOut)) {
			return Result{Error: &FunctionError{Type: "Sandbox.Timedout", Message: string(body)}}, nil
		}
		if e := functionError(body); e != nil {
			return Result{Error: e}, nil
		}
		return Result{Payload: body}, nil
	case http.StatusBadGateway:
		if e := functionError(body); e != nil {
			return Result{Error: e}, nil
		}
		typ, msg := i.log.failure()
		if typ == "" {
			typ, msg = "Runtime.Unknown", "the emulator answered 502 without a reason"
		}
		return Result{Error: &FunctionError{Type: typ, Message: msg}}, nil
	}
	return Result{}, fmt.Errorf("lambdaenv: %s: the emulator answered %d: %s", i.opt.Name, status, bytes.TrimSpace(body))
}

// functionError is body as a runtime's error report, or nil.
func functionError(body []byte) *FunctionError {
	if len(body) == 0 || body[0] != '{' {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil
	}
	for k := range fields {
		switch k {
		case "errorType", "errorMessage", "stackTrace", "cause":
		default:
			return nil
		}
	}
	var e FunctionError
	if json.Unmarshal(body, &e) != nil || e.Type == "" || fields["errorMessage"] == nil {
		return nil
	}
	return &e
}

// Stop ends the emulator and its runtime.
func (i *Instance) Stop() {
	if i.cmd == nil {
		return
	}
	// The emulator starts the runtime in a process group of its own:
	// end it first, or it would outlive the emulator.
	for _, pid := range i.runtimes() {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if i.Alive() {
		i.cmd.Process.Kill()
	}
	<-i.exited
	i.client.CloseIdleConnections()
}

// ErrNoEmulator is returned when aws-lambda-rie cannot be found.
var ErrNoEmulator = errors.New("lambdaenv: Amazon's Lambda Runtime Interface Emulator (aws-lambda-rie) is not available")
