// Command shared runs a command beside one DynamoDB Local for the test
// binaries it starts to share: it names the server's endpoint in
// SOURCEBASE_TEST_DYNAMODB (dynamolocal.EnvShared), runs the command, and
// exits with the command's status.
//
//	go run ./internal/dev/dynamolocal/shared go test ./...
//	go run ./internal/dev/dynamolocal/shared -keep 15m go test -short ./...
//	go run ./internal/dev/dynamolocal/shared -stop
//
// make test and make test-fast run the root module's tests through it, so
// that a package making a few hundred storage calls does not start a JVM
// of its own (testenv.Endpoint); a package that keeps a server busy for
// minutes still starts its own (testenv.OwnServer).
//
// Without -keep, the server is started for the command and stopped after
// it. With -keep, it outlives the command by that long, in a process of its
// own, and the next run within that time uses it, or the warm server that
// replaced it (below): a JVM's start and the compilation of DynamoDB
// Local's hot code are about 20 s of CPU, a fifth of the edit loop's (make
// test-fast). Each run renews the lease while
// its command runs; -stop ends the server at once. The server's state (its
// process, endpoint and lease) is in bin/dynamodb-local of the module, one
// server per checkout.
//
// A server is used by one run only: DynamoDB Local never drops a database
// (one per access key), nor the stream of a deleted table, and each
// database's background jobs read every stream it ever had, every second,
// under the lock every call takes. A server kept through a dozen runs took
// a third of a core idle and made the next run's internal/api twice as
// slow. So once a run has used the server and none is running, the keeper
// starts a new one, warms it with the calls tests make (its JVM compiles
// them meanwhile), and hands it to the next run in place of the old.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/dynamolocal"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

func main() {
	keep := flag.Duration("keep", 0, "keep the server for this long after the command, for the next run to reuse (0: stop it with the command)")
	stop := flag.Bool("stop", false, "stop a server kept by an earlier run, and exit")
	serve := flag.Bool("serve", false, "internal: be the process that keeps the server")
	state := flag.String("state", "", "the directory of a kept server's state (default: bin/dynamodb-local of the module)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: shared [-keep duration] command [argument ...]\n       shared -stop")
		flag.PrintDefaults()
	}
	flag.Parse()

	dir := *state
	if dir == "" && (*keep > 0 || *stop || *serve) {
		root, err := testinputs.Root()
		if err != nil {
			fmt.Fprintf(os.Stderr, "shared: %v\n", err)
			os.Exit(1)
		}
		dir = filepath.Join(root, "bin", "dynamodb-local")
	}
	switch {
	case *serve:
		os.Exit(keepServer(dir, *keep))
	case *stop:
		if err := stopKept(dir); err != nil {
			fmt.Fprintf(os.Stderr, "shared: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *keep > 0 {
		os.Exit(runKept(dir, *keep, flag.Args()))
	}
	os.Exit(run(flag.Args()))
}

// run starts a server for the command alone.
func run(args []string) int {
	server, err := dynamolocal.Start(context.Background(), dynamolocal.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "shared: start DynamoDB Local: %v\n", err)
		return 1
	}
	defer server.Stop()
	return command(server.Endpoint, args, 0, nil)
}

// command runs args with the endpoint in the environment, calling tick
// every period while it runs (when tick is not nil), and returns its exit
// status.
func command(endpoint string, args []string, period time.Duration, tick func()) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), dynamolocal.EnvShared+"="+endpoint)
	// An interrupt reaches the command from the terminal as it reaches
	// us; we wait for the command to end, then stop the server or leave
	// it to its keeper.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "shared: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-ticks(period):
			tick()
		}
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if code := exit.ExitCode(); code > 0 {
				return code
			}
			return 1 // ended by a signal
		}
		fmt.Fprintf(os.Stderr, "shared: %v\n", err)
		return 1
	}
	return 0
}

// ticks is a channel that receives every period, or never (0).
func ticks(period time.Duration) <-chan time.Time {
	if period <= 0 {
		return nil
	}
	return time.After(period)
}

// every is how often a run renews its lease on a server kept for keep, and
// how often the keeper looks at the lease: often enough that a lease never
// runs out under a command that still runs.
func every(keep time.Duration) time.Duration { return min(10*time.Second, keep/4) }

// kept is a kept server's state file, state.json: written by the keeper
// once its server answers; its modification time is the lease, renewed by
// every run that uses the server.
type kept struct {
	PID      int    `json:"pid"` // the keeper's
	Endpoint string `json:"endpoint"`
}

const stateFile, lockFile, logFile = "state.json", "lock", "keeper.log"

// runsFile is held (a shared flock) by every run while it uses the kept
// server, so that the keeper replaces the server only between runs.
const runsFile = "runs"

// runKept runs the command against the kept server, starting one when none
// answers.
func runKept(dir string, keep time.Duration, args []string) int {
	endpoint, done, err := lease(dir, keep)
	if err != nil {
		fmt.Fprintf(os.Stderr, "shared: %v\n", err)
		return 1
	}
	renew := func() { touch(filepath.Join(dir, stateFile)) }
	code := command(endpoint, args, every(keep), renew)
	renew()
	done()
	return code
}

// lease returns the endpoint of the kept server, renewing its lease, or
// starts a keeper and returns its server's; done ends the run's use of it.
func lease(dir string, keep time.Duration) (endpoint string, done func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	// Under the directory's lock, where the keeper replaces a server: the
	// server read next is this run's until done.
	done, err = flock(filepath.Join(dir, runsFile), syscall.LOCK_SH)
	if err != nil {
		return "", nil, err
	}
	endpoint, err = serverOf(dir, keep)
	if err != nil {
		done()
		return "", nil, err
	}
	return endpoint, done, nil
}

// serverOf returns the kept server's endpoint, renewing its lease, or
// starts a keeper and returns its server's. The caller holds the lock.
func serverOf(dir string, keep time.Duration) (string, error) {
	if k, ok := answering(dir); ok {
		touch(filepath.Join(dir, stateFile))
		return k.Endpoint, nil
	}
	os.Remove(filepath.Join(dir, stateFile))
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	logf, err := os.OpenFile(filepath.Join(dir, logFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return "", err
	}
	defer logf.Close()
	keeper := exec.Command(self, "-serve", "-state", dir, "-keep", keep.String())
	keeper.Stdout, keeper.Stderr = logf, logf
	// Its own session: neither the terminal's interrupt nor the end of
	// make's job reaches it.
	keeper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := keeper.Start(); err != nil {
		return "", fmt.Errorf("start the keeper of DynamoDB Local: %w", err)
	}
	exited := make(chan struct{})
	go func() { keeper.Wait(); close(exited) }()
	deadline := time.After(90 * time.Second)
	for {
		if k, err := read(dir); err == nil && k.PID == keeper.Process.Pid {
			fmt.Fprintf(os.Stderr, "shared: DynamoDB Local at %s stays up for %s after this run, for the next to reuse (make stop-dynamodb stops it)\n", k.Endpoint, keep)
			return k.Endpoint, nil
		}
		select {
		case <-exited:
			return "", fmt.Errorf("the keeper of DynamoDB Local exited: %s", tail(filepath.Join(dir, logFile)))
		case <-deadline:
			keeper.Process.Kill()
			return "", fmt.Errorf("DynamoDB Local's keeper wrote no state within 90 s: %s", tail(filepath.Join(dir, logFile)))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// keepServer is the keeper: it starts the server, writes the state, and
// stops the server once the lease is older than keep, the state file is
// gone (-stop, or a newer keeper), or it is told to stop.
func keepServer(dir string, keep time.Duration) int {
	if keep <= 0 {
		fmt.Fprintln(os.Stderr, "shared: -serve needs -keep")
		return 2
	}
	server, err := dynamolocal.Start(context.Background(), dynamolocal.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "shared: start DynamoDB Local: %v\n", err)
		return 1
	}
	defer func() { server.Stop() }()
	me := kept{PID: os.Getpid(), Endpoint: server.Endpoint}
	if err := write(dir, me); err != nil {
		fmt.Fprintf(os.Stderr, "shared: %v\n", err)
		return 1
	}
	since := leasedAt(dir) // a run has used the server once the lease is renewed after this
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	ticker := time.NewTicker(every(keep))
	defer ticker.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		next     *dynamolocal.Server      // a warm server for the next run
		starting chan *dynamolocal.Server // while the next one starts and warms (nil when it failed)
	)
	defer func() {
		cancel()
		if starting != nil {
			next = <-starting
		}
		if next != nil {
			next.Stop()
		}
	}()
	for {
		select {
		case <-stop:
			release(dir, me)
			return 0
		case <-server.Done():
			release(dir, me)
			fmt.Fprintln(os.Stderr, "shared: DynamoDB Local exited")
			return 1
		case next = <-starting:
			starting = nil
			if next == nil {
				since = leasedAt(dir) // try again after the next run
			}
		case <-ticker.C:
			if expired(dir, me, keep) {
				return 0
			}
			if next == nil && starting == nil && leasedAt(dir).After(since) && !running(dir) {
				ch := make(chan *dynamolocal.Server, 1)
				go func() { ch <- startWarm(ctx, dir) }()
				starting = ch
			}
		}
		if next != nil {
			if t, ok := replace(dir, me, next.Endpoint); ok {
				fmt.Fprintf(os.Stderr, "shared: the next run uses a new DynamoDB Local at %s in place of %s\n", next.Endpoint, server.Endpoint)
				server.Stop()
				server, next, since = next, nil, t
				me.Endpoint = server.Endpoint
			}
		}
	}
}

// startWarm starts a server and warms it, or returns nil.
func startWarm(ctx context.Context, dir string) *dynamolocal.Server {
	s, err := dynamolocal.Start(ctx, dynamolocal.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "shared: start the next DynamoDB Local: %v\n", err)
		return nil
	}
	wait := func() {
		for running(dir) && ctx.Err() == nil {
			time.Sleep(time.Second)
		}
	}
	began := time.Now()
	if err := warm(ctx, s.Endpoint, wait); err != nil {
		fmt.Fprintf(os.Stderr, "shared: %v\n", err)
		s.Stop()
		return nil
	}
	fmt.Fprintf(os.Stderr, "shared: a new DynamoDB Local at %s warmed in %s\n", s.Endpoint, time.Since(began).Round(time.Millisecond))
	return s
}

// replace makes endpoint the kept server in me's place when no run is
// using me's: the state names it, with the lease as it was. It returns the
// lease's time.
func replace(dir string, me kept, endpoint string) (time.Time, bool) {
	unlock, err := lock(dir)
	if err != nil {
		return time.Time{}, false
	}
	defer unlock()
	if k, err := read(dir); err != nil || k != me {
		return time.Time{}, false // being stopped
	}
	idle, err := flock(filepath.Join(dir, runsFile), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		return time.Time{}, false // a run is using it
	}
	defer idle()
	t := leasedAt(dir)
	if err := write(dir, kept{PID: me.PID, Endpoint: endpoint}); err != nil {
		return time.Time{}, false
	}
	os.Chtimes(filepath.Join(dir, stateFile), t, t)
	return t, true
}

// running reports whether a run holds the kept server.
func running(dir string) bool {
	idle, err := flock(filepath.Join(dir, runsFile), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	idle()
	return false
}

// leasedAt is when the lease was last renewed (the zero time when there is
// no state).
func leasedAt(dir string) time.Time {
	fi, err := os.Stat(filepath.Join(dir, stateFile))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// expired reports, under the lock, whether the keeper should stop: its
// state is gone or another's (the directory too: make clean), or the lease
// is older than keep (then it removes the state, so that no run picks the
// server up as it stops).
func expired(dir string, me kept, keep time.Duration) bool {
	if _, err := os.Stat(dir); err != nil {
		return true
	}
	unlock, err := lock(dir)
	if err != nil {
		return false
	}
	defer unlock()
	path := filepath.Join(dir, stateFile)
	k, err := read(dir)
	if err != nil || k != me {
		return true
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > keep {
		os.Remove(path)
		return true
	}
	return false
}

// release removes the state if it is still the keeper's.
func release(dir string, me kept) {
	unlock, err := lock(dir)
	if err != nil {
		return
	}
	defer unlock()
	if k, err := read(dir); err == nil && k == me {
		os.Remove(filepath.Join(dir, stateFile))
	}
}

// stopKept stops the kept server, if any, and waits for its keeper to end.
func stopKept(dir string) error {
	k, err := read(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !isKeeper(k, dir) {
		os.Remove(filepath.Join(dir, stateFile))
		return nil // gone already, its pid perhaps another process's now
	}
	if err := syscall.Kill(k.PID, syscall.SIGTERM); err != nil {
		os.Remove(filepath.Join(dir, stateFile))
		return nil
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !alive(k.PID) {
			return nil
		}
	}
	return fmt.Errorf("the keeper of DynamoDB Local (pid %d) did not stop within 30 s", k.PID)
}

// answering returns the kept server's state when its keeper lives and
// the server answers as DynamoDB.
func answering(dir string) (kept, bool) {
	k, err := read(dir)
	if err != nil || !isKeeper(k, dir) {
		return k, false
	}
	return k, dynamolocal.Answers(k.Endpoint)
}

// isKeeper reports whether k's pid is still the keeper of dir: a keeper
// killed outright leaves its state behind, and its pid may since be
// another process's, which -stop must not signal. Where /proc is missing,
// a live process whose server answers stands for it.
func isKeeper(k kept, dir string) bool {
	if syscall.Kill(k.PID, 0) != nil {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", k.PID))
	if err != nil {
		return dynamolocal.Answers(k.Endpoint)
	}
	return bytes.Contains(cmdline, []byte("\x00-serve\x00-state\x00"+dir+"\x00"))
}

// alive reports whether pid is a process that has not exited: a keeper
// whose run ended is its parent no longer, and until whoever adopted it
// reaps it, an exited keeper is a zombie that signal 0 still finds.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

func read(dir string) (kept, error) {
	var k kept
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return k, err
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return k, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return k, nil
}

// write replaces the state file at once (a reader never sees half of it).
func write(dir string, k kept) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, stateFile+".new")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, stateFile))
}

func touch(path string) {
	now := time.Now()
	os.Chtimes(path, now, now)
}

// lock takes the state directory's lock.
func lock(dir string) (func(), error) {
	return flock(filepath.Join(dir, lockFile), syscall.LOCK_EX)
}

// flock takes a flock of how on path (released by the kernel when its
// holder dies) and returns its release.
func flock(path string, how int) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// tail is the end of the keeper's log, for an error.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return "(its log is empty)"
	}
	return string(b)
}
