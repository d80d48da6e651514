// Package localsfn is a local stand-in for AWS Step Functions as the
// service uses it: an HTTP server speaking the Step Functions API (AWS JSON
// 1.0: StartExecution and DescribeExecution, with AWS's name rules and
// idempotency) whose executions run in aws-local-stepfunctions, an Amazon
// States Language interpreter on Node. Each Task state calls Options.Tasks
// with the state's Resource; Lambda routes a task to a real bootstrap run
// under internal/dev/lambdaenv.
//
// Point a client at it with AWS_ENDPOINT_URL_SFN=<Server.URL> (any region
// and dummy credentials) or use Server.Client.
package localsfn

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// TaskFunc runs one Task state: resource is the state's Resource (after
// Parameters, input is the task's input as JSON). Its output is the task's
// result (JSON; empty is null). An error is the task's failure: a
// *TaskError names the error that Retry and Catch match on (ErrorEquals);
// any other error is States.TaskFailed with the error's text as cause.
type TaskFunc func(ctx context.Context, resource string, input []byte) ([]byte, error)

// TaskError is a task failure with the error name Step Functions matches
// Retry and Catch rules against, and its cause.
type TaskError struct {
	Name  string
	Cause string
}

func (e *TaskError) Error() string { return e.Name + ": " + e.Cause }

// Execution statuses, as DescribeExecution reports them.
const (
	Running   = "RUNNING"
	Succeeded = "SUCCEEDED"
	Failed    = "FAILED"
	TimedOut  = "TIMED_OUT"
)

// Execution is one execution's state.
type Execution struct {
	ARN             string
	StateMachineARN string
	Name            string
	Status          string // Running, Succeeded, Failed, TimedOut
	Input           string
	Output          string // when Succeeded
	Error, Cause    string // when Failed or TimedOut
	Start, Stop     time.Time
}

// Options configure a Server.
type Options struct {
	// Addr to listen on; "" is 127.0.0.1 on a free port.
	Addr string
	// StateMachines maps each state machine ARN to its ASL definition
	// (more can be added with AddStateMachine).
	StateMachines map[string]string
	// Tasks runs Task states; nil fails every task with States.TaskFailed.
	Tasks TaskFunc
	// SkipWaits makes Retry intervals and Wait states take no time
	// (aws-local-stepfunctions' overrides), for tests.
	SkipWaits bool
	// Dir is the directory holding node_modules/aws-local-stepfunctions;
	// "" searches upward from the working directory.
	Dir string
	// Log receives the interpreter's diagnostics; nil discards them.
	Log io.Writer
}

// Server is a running stand-in. Its zero value is not usable; call Start.
type Server struct {
	// URL is the endpoint (http://127.0.0.1:<port>) for AWS_ENDPOINT_URL_SFN.
	URL string

	opt     Options
	project string
	srv     *http.Server
	ctx     context.Context // canceled by Close: the tasks' context
	cancel  context.CancelFunc

	mu        sync.Mutex
	machines  map[string]string
	execs     map[string]*execution // by execution ARN
	interp    *interpreter
	tasks     map[int64]context.CancelFunc
	closed    bool
	taskGroup sync.WaitGroup
}

type execution struct {
	Execution
	done chan struct{}
}

// Start listens and starts the interpreter process.
func Start(opt Options) (*Server, error) {
	project, err := findProject(opt.Dir)
	if err != nil {
		return nil, err
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	addr := opt.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("localsfn: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		URL:      "http://" + ln.Addr().String(),
		opt:      opt,
		project:  project,
		ctx:      ctx,
		cancel:   cancel,
		machines: map[string]string{},
		execs:    map[string]*execution{},
		tasks:    map[int64]context.CancelFunc{},
	}
	for arn, def := range opt.StateMachines {
		if err := s.AddStateMachine(arn, def); err != nil {
			ln.Close()
			cancel()
			return nil, err
		}
	}
	s.mu.Lock()
	_, err = s.interpreterLocked()
	s.mu.Unlock()
	if err != nil {
		ln.Close()
		cancel()
		return nil, err
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// AddStateMachine registers (or replaces) the definition of the state
// machine arn.
func (s *Server) AddStateMachine(arn, definition string) error {
	if _, ok := parseStateMachineARN(arn); !ok {
		return fmt.Errorf("localsfn: %q is not a state machine ARN", arn)
	}
	if !json.Valid([]byte(definition)) {
		return fmt.Errorf("localsfn: the definition of %s is not JSON", arn)
	}
	s.mu.Lock()
	s.machines[arn] = definition
	s.mu.Unlock()
	return nil
}

// StateMachineARN is the ARN of a state machine named name in the local
// region and account (us-east-1, 000000000000).
func StateMachineARN(name string) string {
	return "arn:aws:states:us-east-1:000000000000:stateMachine:" + name
}

// ExecutionARN is the ARN of the execution named name of the state
// machine stateMachineARN ("" when that is not a state machine ARN).
func ExecutionARN(stateMachineARN, name string) string {
	sm, ok := parseStateMachineARN(stateMachineARN)
	if !ok {
		return ""
	}
	return sm.executionARN(name)
}

// Client returns a Step Functions client of this server, with dummy credentials.
func (s *Server) Client() *sfn.Client {
	return sfn.New(sfn.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("localsfn", "localsfn", ""),
	})
}

// Describe returns the execution arn.
func (s *Server) Describe(arn string) (Execution, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.execs[arn]
	if !ok {
		return Execution{}, false
	}
	return e.Execution, true
}

// Executions returns every execution started so far, oldest first.
func (s *Server) Executions() []Execution {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Execution, 0, len(s.execs))
	for _, e := range s.execs {
		out = append(out, e.Execution)
	}
	sortExecutions(out)
	return out
}

// Wait waits for the execution arn to end and returns it.
func (s *Server) Wait(ctx context.Context, arn string) (Execution, error) {
	s.mu.Lock()
	e, ok := s.execs[arn]
	s.mu.Unlock()
	if !ok {
		return Execution{}, fmt.Errorf("localsfn: no execution %s", arn)
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return Execution{}, ctx.Err()
	}
	got, _ := s.Describe(arn)
	return got, nil
}

// Close stops the HTTP server, cancels running tasks and stops the
// interpreter; executions still running are left RUNNING.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	it := s.interp
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
	s.cancel()
	s.taskGroup.Wait()
	if it != nil {
		it.stop(ctx)
	}
}

// interpreterLocked returns the running interpreter, starting one if
// there is none or it died.
func (s *Server) interpreterLocked() (*interpreter, error) {
	if s.interp != nil && s.interp.alive() {
		return s.interp, nil
	}
	it, err := startInterpreter(s.project, s.opt.Log, s.onMessage, s.onExit)
	if err != nil {
		return nil, err
	}
	s.interp = it
	return it, nil
}

// onExit fails the executions the dead interpreter was running.
func (s *Server) onExit(it *interpreter, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.interp != it {
		return
	}
	s.interp = nil
	for _, e := range s.execs {
		if e.Status == Running {
			s.endLocked(e, Failed, "", "States.Runtime", fmt.Sprintf("the interpreter exited: %v", err))
		}
	}
}

func (s *Server) onMessage(m message) {
	switch m.Op {
	case "task":
		s.runTask(m)
	case "done":
		var errName string
		_ = json.Unmarshal(m.Error, &errName)
		s.mu.Lock()
		if e, ok := s.execs[m.ID]; ok && e.Status == Running {
			out := ""
			if m.Status == Succeeded {
				out = string(m.Output)
				if out == "" {
					out = "null"
				}
			}
			s.endLocked(e, m.Status, out, errName, m.Cause)
		}
		s.mu.Unlock()
	}
}

func (s *Server) endLocked(e *execution, status, output, errName, cause string) {
	e.Status, e.Output, e.Error, e.Cause, e.Stop = status, output, errName, cause, time.Now()
	close(e.done)
}

type taskErrorJSON struct {
	Name  string `json:"name"`
	Cause string `json:"cause"`
}

func (s *Server) runTask(m message) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	it := s.interp
	s.taskGroup.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.taskGroup.Done()
		reply := message{Op: "result", Call: m.Call}
		var out []byte
		var err error
		if s.opt.Tasks == nil {
			err = &TaskError{Name: "States.TaskFailed", Cause: "localsfn: no task handler for " + m.Resource}
		} else {
			out, err = s.opt.Tasks(s.ctx, m.Resource, m.Input)
		}
		if err == nil && len(bytes.TrimSpace(out)) > 0 && !json.Valid(out) {
			err = &TaskError{Name: "States.Runtime", Cause: "the task's output is not JSON: " + truncate(string(out), 200)}
		}
		if err != nil {
			var te *TaskError
			if !errors.As(err, &te) {
				te = &TaskError{Name: "States.TaskFailed", Cause: err.Error()}
			}
			reply.Error, _ = json.Marshal(taskErrorJSON{Name: te.Name, Cause: te.Cause})
		} else if len(bytes.TrimSpace(out)) == 0 {
			reply.Output = json.RawMessage("null")
		} else {
			reply.Output = out
		}
		if it != nil {
			_ = it.send(reply)
		}
	}()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ServeHTTP serves the Step Functions API (AWS JSON 1.0).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusBadRequest, "UnknownOperationException", "POST is the only method of the AWS JSON protocol")
		return
	}
	action, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
	if !ok {
		writeError(w, http.StatusBadRequest, "UnknownOperationException", "missing or foreign X-Amz-Target")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	switch action {
	case "StartExecution":
		s.startExecution(w, body)
	case "DescribeExecution":
		s.describeExecution(w, body)
	default:
		writeError(w, http.StatusBadRequest, "UnknownOperationException", "localsfn does not implement "+action)
	}
}

type startRequest struct {
	StateMachineArn string  `json:"stateMachineArn"`
	Name            *string `json:"name"`
	Input           *string `json:"input"`
	TraceHeader     string  `json:"traceHeader"`
}

// maxInput is Step Functions' limit on an execution's input.
const maxInput = 256 * 1024

func (s *Server) startExecution(w http.ResponseWriter, body []byte) {
	var req startRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	sm, ok := parseStateMachineARN(req.StateMachineArn)
	if !ok {
		writeError(w, http.StatusBadRequest, "InvalidArn", "Invalid Arn: '"+req.StateMachineArn+"'")
		return
	}
	name := randomName()
	if req.Name != nil {
		name = *req.Name
		if msg := CheckName(name); msg != "" {
			writeError(w, http.StatusBadRequest, "InvalidName", msg)
			return
		}
	}
	input := "{}"
	if req.Input != nil {
		input = *req.Input
	}
	if len(input) > maxInput {
		writeError(w, http.StatusBadRequest, "InvalidExecutionInput", fmt.Sprintf("The input is %d bytes, above the limit of %d", len(input), maxInput))
		return
	}
	if !json.Valid([]byte(input)) {
		writeError(w, http.StatusBadRequest, "InvalidExecutionInput", "Invalid State Machine Execution Input: 'the input is not valid JSON'")
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	def, ok := s.machines[req.StateMachineArn]
	if !ok || s.closed {
		writeError(w, http.StatusBadRequest, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+req.StateMachineArn+"'")
		return
	}
	arn := sm.executionARN(name)
	if e, ok := s.execs[arn]; ok {
		// AWS: idempotent while the execution runs with the same input;
		// otherwise the name is taken.
		if e.Status == Running && e.Input == input {
			writeJSON(w, startResponse(e))
			return
		}
		writeError(w, http.StatusBadRequest, "ExecutionAlreadyExists", "Execution Already Exists: '"+arn+"'")
		return
	}
	it, err := s.interpreterLocked()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "ServiceUnavailable", err.Error())
		return
	}
	e := &execution{Execution: Execution{
		ARN: arn, StateMachineARN: req.StateMachineArn, Name: name, Status: Running, Input: input, Start: time.Now(),
	}, done: make(chan struct{})}
	context := map[string]any{
		"Execution":    map[string]any{"Id": arn, "Name": name, "RoleArn": "arn:aws:iam::" + sm.account + ":role/localsfn"},
		"StateMachine": map[string]any{"Id": req.StateMachineArn, "Name": sm.name},
	}
	if err := it.send(message{Op: "start", ID: arn, Definition: def, Input: json.RawMessage(input), Context: context, SkipWaits: s.opt.SkipWaits}); err != nil {
		writeError(w, http.StatusInternalServerError, "ServiceUnavailable", err.Error())
		return
	}
	s.execs[arn] = e
	writeJSON(w, startResponse(e))
}

func startResponse(e *execution) map[string]any {
	return map[string]any{"executionArn": e.ARN, "startDate": epoch(e.Start)}
}

func (s *Server) describeExecution(w http.ResponseWriter, body []byte) {
	var req struct {
		ExecutionArn string `json:"executionArn"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	if !strings.HasPrefix(req.ExecutionArn, "arn:") || !strings.Contains(req.ExecutionArn, ":states:") {
		writeError(w, http.StatusBadRequest, "InvalidArn", "Invalid Arn: '"+req.ExecutionArn+"'")
		return
	}
	e, ok := s.Describe(req.ExecutionArn)
	if !ok {
		writeError(w, http.StatusBadRequest, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+req.ExecutionArn+"'")
		return
	}
	out := map[string]any{
		"executionArn":    e.ARN,
		"stateMachineArn": e.StateMachineARN,
		"name":            e.Name,
		"status":          e.Status,
		"startDate":       epoch(e.Start),
		"input":           e.Input,
		"inputDetails":    map[string]any{"included": true},
	}
	if e.Status != Running {
		out["stopDate"] = epoch(e.Stop)
	}
	if e.Status == Succeeded {
		out["output"] = e.Output
		out["outputDetails"] = map[string]any{"included": true}
	}
	if e.Error != "" {
		out["error"] = e.Error
	}
	if e.Cause != "" {
		out["cause"] = e.Cause
	}
	writeJSON(w, out)
}

func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// CheckName returns why name cannot be an execution name ("" if it can),
// by Step Functions' rules: 1 to 80 characters, none of them whitespace,
// brackets < > { } [ ], wildcards ? *, the characters " # % \ ^ | ~ ` $ & , ; : /,
// or control characters.
func CheckName(name string) string {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > 80 {
		return fmt.Sprintf("Invalid Name: '%s' (an execution name has 1 to 80 characters, not %d)", name, n)
	}
	for _, r := range name {
		if r == utf8.RuneError || unicode.IsSpace(r) || strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) ||
			r <= 0x1f || (r >= 0x7f && r <= 0x9f) {
			return fmt.Sprintf("Invalid Name: '%s' (%q is not allowed in an execution name)", name, r)
		}
	}
	return ""
}

type machineARN struct{ partition, region, account, name string }

func (m machineARN) executionARN(name string) string {
	return "arn:" + m.partition + ":states:" + m.region + ":" + m.account + ":execution:" + m.name + ":" + name
}

// parseStateMachineARN splits arn:<partition>:states:<region>:<account>:stateMachine:<name>.
func parseStateMachineARN(arn string) (machineARN, bool) {
	p := strings.Split(arn, ":")
	if len(p) != 7 || p[0] != "arn" || p[1] == "" || p[2] != "states" || p[3] == "" || p[4] == "" || p[5] != "stateMachine" || p[6] == "" {
		return machineARN{}, false
	}
	return machineARN{partition: p[1], region: p[3], account: p[4], name: p[6]}, true
}

func sortExecutions(es []Execution) {
	sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
}

func randomName() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
