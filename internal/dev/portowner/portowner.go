// Package portowner tells which process holds a loopback port's listener.
// A free port is only free until someone binds it: a process started on a
// port chosen free (an emulator, a JVM) may find another process bound it
// first, and a connection to the port then reaches that other process.
package portowner

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoProc says the system has no /proc to tell who listens on a port.
var ErrNoProc = errors.New("no /proc/net/tcp")

// Holds reports whether process pid holds the listening socket that a
// connection to 127.0.0.1:port reaches: one bound to 127.0.0.1 itself, or
// else to every address (0.0.0.0, or :: as a Java server binds). Linux
// tells the socket's owner through /proc; elsewhere the answer is
// ErrNoProc.
func Holds(pid, port int) (bool, error) {
	inode, err := listeningInode(port)
	if err != nil || inode == "" {
		return false, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, nil // the process has exited
	}
	want := "socket:[" + inode + "]"
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name())); err == nil && link == want {
			return true, nil
		}
	}
	return false, nil
}

// listeningInode is the inode of the socket listening on port that a
// connection to 127.0.0.1 reaches, "" when none does. In the kernel's
// tables, addresses are hex in host order per 32-bit word: 127.0.0.1 is
// 0100007F, the IPv4-mapped ::ffff:127.0.0.1 0000000000000000FFFF00000100007F.
func listeningInode(port int) (string, error) {
	// In the order a connection to 127.0.0.1 prefers them.
	order := []string{"0100007F", "00000000", "0000000000000000FFFF00000100007F", strings.Repeat("0", 32)}
	found := map[string]string{}
	for i, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			if i == 0 {
				return "", ErrNoProc
			}
			continue // no IPv6
		}
		err = listeners(f, port, found)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	for _, addr := range order {
		if inode, ok := found[addr]; ok {
			return inode, nil
		}
	}
	return "", nil
}

// listeners adds the listening sockets on port in a /proc/net/tcp table to
// found, by local address.
func listeners(f *os.File, port int, found map[string]string) error {
	suffix := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || !strings.HasSuffix(fields[1], suffix) || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		if _, err := strconv.ParseUint(fields[9], 10, 64); err == nil {
			found[strings.TrimSuffix(fields[1], suffix)] = fields[9]
		}
	}
	return sc.Err()
}
