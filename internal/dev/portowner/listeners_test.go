package portowner

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A child process of the test: it listens on $PORTOWNER_TEST_LISTEN
// ("network address"), prints the address and waits to be killed.
func TestMain(m *testing.M) {
	if network, addr, ok := strings.Cut(os.Getenv("PORTOWNER_TEST_LISTEN"), " "); ok {
		ln, err := net.Listen(network, addr)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(ln.Addr())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestListenersListsEveryListeningSocketOfAProcessAndItsDescendants(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc")
	}
	listen := func(network, addr string) netip.AddrPort {
		t.Helper()
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln.Addr().(*net.TCPAddr).AddrPort()
	}
	loop4 := listen("tcp4", "127.0.0.1:0")
	var loop6 netip.AddrPort
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil { // where the machine has IPv6
		defer ln.Close()
		loop6 = ln.Addr().(*net.TCPAddr).AddrPort()
	}
	any4 := listen("tcp4", "0.0.0.0:0")
	anyDual := listen("tcp", ":0") // [::], every IPv4 and IPv6 address
	// A grandchild: a shell that starts the test binary, which listens on
	// every IPv4 address.
	sh := exec.Command("sh", "-c", `"$0" -test.run='^$'; :`, os.Args[0])
	sh.Env = append(os.Environ(), "PORTOWNER_TEST_LISTEN=tcp4 0.0.0.0:0")
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kids, _ := tree(sh.Process.Pid)
		for _, k := range kids {
			if p, err := os.FindProcess(k); err == nil && k != sh.Process.Pid {
				p.Kill()
			}
		}
		sh.Process.Kill()
		sh.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error:") {
		t.Fatalf("the child did not listen: %q %v", line, err)
	}
	child, err := netip.ParseAddrPort(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}

	got, err := Listeners(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	byPort := map[uint16]Listener{}
	for _, l := range got {
		byPort[l.Addr.Port()] = l
	}
	for _, c := range []struct {
		addr     netip.AddrPort
		want     string // the address the socket is bound to
		loopback bool
		ours     bool // held by this process, not the grandchild
	}{
		{loop4, "127.0.0.1", true, true},
		{loop6, "::1", true, true},
		{any4, "0.0.0.0", false, true},
		{anyDual, "::", false, true},
		{child, "0.0.0.0", false, false},
	} {
		if !c.addr.IsValid() {
			continue
		}
		l, ok := byPort[c.addr.Port()]
		if !ok {
			t.Errorf("no listener on port %d in %v", c.addr.Port(), got)
			continue
		}
		if l.Addr.Addr().String() != c.want || l.Loopback() != c.loopback {
			t.Errorf("port %d: %v, loopback %v; want bound to %s, loopback %v", c.addr.Port(), l, l.Loopback(), c.want, c.loopback)
		}
		if (l.PID == os.Getpid()) != c.ours {
			t.Errorf("port %d: held by %v, want it held by this process: %v", c.addr.Port(), l, c.ours)
		}
	}
	// The grandchild's process is not the shell between.
	if l := byPort[child.Port()]; l.PID == sh.Process.Pid || l.Command == "sh" {
		t.Errorf("the grandchild's listener is reported as the shell's: %v", l)
	}
	// Another process's tree does not hold this process's sockets.
	if theirs, err := Listeners(sh.Process.Pid); err != nil || len(theirs) != 1 || theirs[0].Addr.Port() != child.Port() {
		t.Errorf("Listeners(the shell) = %v, %v; want only the grandchild's listener", theirs, err)
	}
}

func TestParseProcAddrReadsTheKernelsTables(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000000000000:1F40": "[::]:8000",
		"00000000000000000000000001000000:0016": "[::1]:22",
		"0000000000000000FFFF00000100007F:BC23": "127.0.0.1:48163", // IPv4-mapped
	} {
		got, err := parseProcAddr(in)
		if err != nil || got.String() != want {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007F:", "7F:0050", "zz00007F:0050"} {
		if got, err := parseProcAddr(bad); err == nil {
			t.Errorf("parseProcAddr(%q) = %v, want an error", bad, got)
		}
	}
}
