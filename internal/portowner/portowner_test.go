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
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()

	for _, c := range []struct {
		pid, port int
		want      bool
	}{
		{os.Getpid(), port, true},        // ours
		{other.Process.Pid, port, false}, // another process's port
		{os.Getpid(), free, false},       // nobody's (closed)
		{1 << 30, port, false},           // no such process
	} {
		got, err := Holds(c.pid, c.port)
		if err != nil || got != c.want {
			t.Errorf("Holds(%d, %d) = %v, %v; want %v", c.pid, c.port, got, err, c.want)
		}
	}
}
