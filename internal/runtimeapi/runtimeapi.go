// Package runtimeapi runs a real Lambda bootstrap on this machine: it
// serves the Lambda Runtime API (the routes a custom runtime polls for
// invocations and answers on) to a child process, the way the Lambda
// service does, so the binaries that deploy are the binaries tested.
//
// The npm emulator @vercel/fun was tried first and cannot do the job: it
// sends Lambda-Runtime-Deadline-Ms as a duration (5000) rather than an
// epoch time, so every Go handler starts with an expired deadline, and it
// ignores the function timeout. Amazon's emulator does not install here.
package runtimeapi

import (
	"bytes"
	"context"
	"encoding/json"
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
	// Timeout of one invocation (default 30s): the deadline the handler
	// sees, after which the instance is stopped as Lambda does.
	Timeout time.Duration
	// MemoryMB is reported to the function (default 128).
	MemoryMB int
	// Log receives the function's stdout and stderr; nil discards them.
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

// Instance is one execution environment: one bootstrap process and its
// Runtime API, handling one invocation at a time.
type Instance struct {
	opt     Options
	arn     string
	cmd     *exec.Cmd
	srv     *http.Server
	started time.Time

	next   chan *invocation // invocations waiting for the runtime's next call
	exited chan struct{}    // closed when the process has exited
	exit   error

	mu        sync.Mutex
	current   *invocation // handed to the runtime, not yet answered
	initErr   *FunctionError
	coldStart time.Duration
	seq       int
	invokeMu  sync.Mutex // one invocation at a time
}

type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	done     chan Result
}

// Start launches the bootstrap with a Runtime API of its own. The process
// initializes on its own; the first Invoke waits for it.
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("runtimeapi: listen: %w", err)
	}
	i := &Instance{
		opt:    opt,
		arn:    "arn:aws:lambda:" + envValue(opt.Env, "AWS_REGION", "us-east-1") + ":000000000000:function:" + opt.Name,
		next:   make(chan *invocation),
		exited: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", i.serveNext)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", i.serveResponse)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", i.serveError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", i.serveInitError)
	i.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go i.srv.Serve(ln)

	cmd := exec.Command(opt.Bootstrap)
	cmd.Dir = filepath.Dir(opt.Bootstrap)
	cmd.Env = append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
	}, opt.Env...)
	cmd.Env = append(cmd.Env,
		"AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(),
		"AWS_LAMBDA_FUNCTION_NAME="+opt.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(opt.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+opt.Name,
		"LAMBDA_TASK_ROOT="+cmd.Dir,
		"_HANDLER=bootstrap",
	)
	if opt.Log != nil {
		cmd.Stdout, cmd.Stderr = opt.Log, opt.Log
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	i.started = time.Now()
	if err := cmd.Start(); err != nil {
		i.srv.Close()
		return nil, fmt.Errorf("runtimeapi: start %s: %w", opt.Bootstrap, err)
	}
	i.cmd = cmd
	go func() {
		i.exit = cmd.Wait()
		close(i.exited)
		i.mu.Lock()
		cur := i.current
		i.current = nil
		i.mu.Unlock()
		if cur != nil {
			cur.done <- Result{Error: &FunctionError{Type: "Runtime.ExitError", Message: fmt.Sprintf("the runtime exited during the invocation: %v", i.exit)}}
		}
		i.srv.Close()
	}()
	return i, nil
}

func envValue(env []string, key, def string) string {
	for j := len(env) - 1; j >= 0; j-- {
		if k, v, ok := bytes.Cut([]byte(env[j]), []byte("=")); ok && string(k) == key {
			return string(v)
		}
	}
	return def
}

// ColdStart is the time from the process's start to its first response;
// zero until then.
func (i *Instance) ColdStart() time.Duration {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.coldStart
}

// CPU is the CPU time the process has used so far, from the scheduler's
// per-thread accounting (/proc/<pid>/task/*/schedstat, nanoseconds): 0
// where /proc does not have it or once the process has exited.
func (i *Instance) CPU() time.Duration {
	if i.cmd == nil || i.cmd.Process == nil {
		return 0
	}
	dir := fmt.Sprintf("/proc/%d/task", i.cmd.Process.Pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // a thread that has just exited
		}
		first, _, _ := strings.Cut(string(b), " ")
		ns, _ := strconv.ParseInt(first, 10, 64)
		sum += time.Duration(ns)
	}
	return sum
}

// Alive reports whether the process is still running.
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
	res, _, err := i.invoke(ctx, payload)
	return res, err
}

// invoke is Invoke, also reporting whether the runtime took the
// invocation (a warm runtime that exited while idle never does).
func (i *Instance) invoke(ctx context.Context, payload []byte) (_ Result, taken bool, _ error) {
	i.invokeMu.Lock()
	defer i.invokeMu.Unlock()
	i.mu.Lock()
	i.seq++
	inv := &invocation{
		id:       fmt.Sprintf("%08d-0000-4000-8000-%012d", os.Getpid()%100000000, i.seq),
		payload:  payload,
		deadline: time.Now().Add(i.opt.Timeout),
		done:     make(chan Result, 1),
	}
	initErr := i.initErr
	i.mu.Unlock()
	if initErr != nil {
		return Result{Error: initErr}, false, nil
	}
	timer := time.NewTimer(i.opt.Timeout)
	defer timer.Stop()
	select { // hand it to the runtime's pending next call
	case i.next <- inv:
	case <-i.exited:
		if initErr := i.initError(); initErr != nil {
			return Result{Error: initErr}, false, nil
		}
		return Result{Error: &FunctionError{Type: "Runtime.ExitError", Message: fmt.Sprintf("the runtime exited before it asked for an invocation: %v", i.exit)}}, false, nil
	case <-timer.C:
		i.Stop()
		return Result{Error: &FunctionError{Type: "Sandbox.Timedout", Message: fmt.Sprintf("the function did not ask for an invocation within %s", i.opt.Timeout)}}, false, nil
	case <-ctx.Done():
		return Result{}, false, ctx.Err()
	}
	select {
	case res := <-inv.done:
		return res, true, nil
	case <-timer.C:
		i.Stop()
		return Result{Error: &FunctionError{Type: "Sandbox.Timedout", Message: fmt.Sprintf("Task timed out after %s", i.opt.Timeout)}}, true, nil
	case <-ctx.Done():
		i.Stop() // Lambda has no way to take an invocation back either
		return Result{}, true, ctx.Err()
	}
}

func (i *Instance) initError() *FunctionError {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.initErr
}

// Stop ends the process and its Runtime API.
func (i *Instance) Stop() {
	if i.Alive() {
		i.cmd.Process.Kill()
	}
	<-i.exited
}

func (i *Instance) serveNext(w http.ResponseWriter, r *http.Request) {
	var inv *invocation
	select {
	case inv = <-i.next:
	case <-r.Context().Done():
		return
	}
	i.mu.Lock()
	i.current = inv
	i.mu.Unlock()
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", i.arn)
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
	h.Set("Content-Type", "application/json")
	w.Write(inv.payload)
}

// finish delivers the answer to invocation id, if it is the current one.
func (i *Instance) finish(w http.ResponseWriter, id string, res Result) {
	i.mu.Lock()
	cur := i.current
	if cur == nil || cur.id != id {
		i.mu.Unlock()
		http.Error(w, `{"errorMessage":"no such invocation","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
		return
	}
	i.current = nil
	if i.coldStart == 0 {
		i.coldStart = time.Since(i.started)
	}
	i.mu.Unlock()
	cur.done <- res
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

// maxPayload is Lambda's synchronous response limit.
const maxPayload = 6 << 20

func (i *Instance) serveResponse(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxPayload {
		i.finish(w, r.PathValue("id"), Result{Error: &FunctionError{Type: "Function.ResponseSizeTooLarge", Message: "Response payload size exceeded maximum allowed payload size (6291556 bytes)."}})
		return
	}
	i.finish(w, r.PathValue("id"), Result{Payload: body})
}

func (i *Instance) serveError(w http.ResponseWriter, r *http.Request) {
	i.finish(w, r.PathValue("id"), Result{Error: readError(r)})
}

func (i *Instance) serveInitError(w http.ResponseWriter, r *http.Request) {
	e := readError(r)
	i.mu.Lock()
	i.initErr = e
	i.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

func readError(r *http.Request) *FunctionError {
	var e FunctionError
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(body, &e) != nil || e.Message == "" {
		e.Message = string(body)
	}
	if e.Type == "" {
		e.Type = r.Header.Get("Lambda-Runtime-Function-Error-Type")
	}
	if e.Type == "" {
		e.Type = "Unhandled"
	}
	return &e
}
