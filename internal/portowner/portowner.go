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

// Holds reports whether process pid holds the listening socket on
// 127.0.0.1:port. Linux tells the socket's owner through /proc; elsewhere
// the answer is ErrNoProc.
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

// listeningInode is the inode of the socket listening on 127.0.0.1:port,
// "" when none is.
func listeningInode(port int) (string, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return "", ErrNoProc
	}
	defer f.Close()
	local := fmt.Sprintf("0100007F:%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[1] != local || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		if _, err := strconv.ParseUint(fields[9], 10, 64); err == nil {
			return fields[9], nil
		}
	}
	return "", sc.Err()
}
