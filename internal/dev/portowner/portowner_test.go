package portowner

import (
	"net"
	"os"
	"os/exec"
	"testing"
)

func TestHoldsTellsTheProcessThatHoldsAPortsListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if _, err := listeningInode(port); err == ErrNoProc {
		t.Skip("no /proc: ports are checked by connecting only")
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	// A server listening on every address (Go's ":0" is [::], dual-stack,
	// as Java's servers bind), and on every IPv4 address.
	var wild []int
	for _, addr := range []string{":0", "0.0.0.0:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		wild = append(wild, l.Addr().(*net.TCPAddr).Port)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()

	for _, c := range []struct {
		pid, port int
		want      bool
	}{
		{os.Getpid(), wild[0], true},        // ours, on every address
		{os.Getpid(), wild[1], true},        // ours, on every IPv4 address
		{other.Process.Pid, wild[0], false}, // not the other's
		{os.Getpid(), port, true},           // ours
		{other.Process.Pid, port, false},    // another process's port
		{os.Getpid(), free, false},          // nobody's (closed)
		{1 << 30, port, false},              // no such process
	} {
		got, err := Holds(c.pid, c.port)
		if err != nil || got != c.want {
			t.Errorf("Holds(%d, %d) = %v, %v; want %v", c.pid, c.port, got, err, c.want)
		}
	}
}
