package localsfn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	_ "embed"

	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

//go:embed interpreter.cjs
var interpreterScript string

// ErrNotInstalled says the npm package is missing.
var ErrNotInstalled = errors.New("aws-local-stepfunctions is not installed: run `npm ci` in the repository root (make does this)")

// findProject returns the directory holding node_modules/aws-local-stepfunctions:
// dir if given, else the first one found walking up from the working directory.
func findProject(dir string) (string, error) {
	if dir != "" {
		dir, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "aws-local-stepfunctions")); err != nil {
			return "", ErrNotInstalled
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "node_modules", "aws-local-stepfunctions")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", ErrNotInstalled
		}
	}
}

// message is one line of the protocol with the interpreter (see interpreter.cjs).
type message struct {
	Op         string          `json:"op"`
	ID         string          `json:"id,omitempty"`
	Definition string          `json:"definition,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Context    any             `json:"context,omitempty"`
	SkipWaits  bool            `json:"skipWaits,omitempty"`
	Call       int64           `json:"call,omitempty"`
	State      string          `json:"state,omitempty"`
	Resource   string          `json:"resource,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"` // {"name","cause"} to node; a string from it
	Status     string          `json:"status,omitempty"`
	Cause      string          `json:"cause,omitempty"`
}

// interpreter is one node process running executions concurrently.
type interpreter struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex
	exited chan struct{}
	exit   error
}

// startInterpreter launches node with the embedded script; onMessage gets
// every message it sends, onExit is called once when it exits.
func startInterpreter(project string, log io.Writer, onMessage func(message), onExit func(*interpreter, error)) (*interpreter, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("localsfn: node not found on PATH (Node 20 or later runs aws-local-stepfunctions)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	testinputs.Files("package-lock.json") // the interpreter's npm package
	cmd := exec.Command(node, "-e", interpreterScript)
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "LOCALSFN_PROJECT_DIR="+project, "AWS_EC2_METADATA_DISABLED=true")
	cmd.ExtraFiles = []*os.File{w} // fd 3
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("localsfn: start node: %w", err)
	}
	w.Close()
	it := &interpreter{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	ready := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		first := true
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if m.Op == "ready" && first {
				first = false
				close(ready)
				continue
			}
			onMessage(m)
		}
	}()
	go func() {
		<-readDone
		it.exit = cmd.Wait()
		close(it.exited)
		onExit(it, it.exit)
	}()
	select {
	case <-ready:
		return it, nil
	case <-it.exited:
		return nil, fmt.Errorf("localsfn: the interpreter exited during start: %v", it.exit)
	}
}

func (it *interpreter) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	it.wmu.Lock()
	defer it.wmu.Unlock()
	_, err = it.stdin.Write(append(b, '\n'))
	return err
}

func (it *interpreter) alive() bool {
	select {
	case <-it.exited:
		return false
	default:
		return true
	}
}

func (it *interpreter) stop(ctx context.Context) {
	it.stdin.Close() // the script exits when its input ends
	select {
	case <-it.exited:
	case <-ctx.Done():
		it.cmd.Process.Kill()
		<-it.exited
	}
}
