package portowner

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Listener is a listening TCP socket of a process.
type Listener struct {
	Addr    netip.AddrPort // the address it is bound to (unmapped: ::ffff:127.0.0.1 is 127.0.0.1)
	PID     int            // the process holding it
	Command string         // that process's command name (/proc/<pid>/comm)
}

// Loopback reports whether only this machine can connect to the socket:
// it is bound to a loopback address (127.0.0.0/8 or ::1), not to every
// address (0.0.0.0, ::) nor to an interface's.
func (l Listener) Loopback() bool { return l.Addr.Addr().IsLoopback() }

func (l Listener) String() string {
	return fmt.Sprintf("%s (pid %d, %s)", l.Addr, l.PID, l.Command)
}

// Listeners lists the listening TCP sockets, IPv4 and IPv6, held by
// process pid and every process descended from it, from /proc (the
// sockets a process's descriptors name, matched against the kernel's TCP
// tables of its network namespace). A socket shared by several processes
// is listed once, for the first in process id order. Where there is no
// /proc the error is ErrNoProc.
func Listeners(pid int) ([]Listener, error) {
	pids, err := tree(pid)
	if err != nil {
		return nil, err
	}
	holder := map[string]int{} // socket inode → pid
	tables := map[string]int{} // network namespace → a pid in it
	for _, p := range pids {
		fdDir := fmt.Sprintf("/proc/%d/fd", p)
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // exited, or not ours to read
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
				inode = strings.TrimSuffix(inode, "]")
				if _, seen := holder[inode]; !seen {
					holder[inode] = p
				}
			}
		}
		ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", p))
		if _, seen := tables[ns]; !seen {
			tables[ns] = p
		}
	}
	var out []Listener
	for _, p := range tables {
		for _, table := range []string{"tcp", "tcp6"} {
			f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", p, table))
			if err != nil {
				continue // the process exited, or no IPv6
			}
			err = eachListening(f, func(addr netip.AddrPort, inode string) {
				if h, ok := holder[inode]; ok {
					out = append(out, Listener{Addr: addr, PID: h, Command: command(h)})
				}
			})
			f.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PID != out[j].PID {
			return out[i].PID < out[j].PID
		}
		return out[i].Addr.String() < out[j].Addr.String()
	})
	return out, nil
}

// tree is pid and the ids of every process descended from it, from each
// process's parent in /proc/<pid>/stat.
func tree(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, ErrNoProc
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return nil, fmt.Errorf("portowner: no process %d", pid)
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	sort.Ints(out)
	return out, nil
}

func command(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// eachListening calls fn with the address and socket inode of each
// listening socket of a /proc/net/tcp or tcp6 table.
func eachListening(f *os.File, fn func(netip.AddrPort, string)) error {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		addr, err := parseProcAddr(fields[1])
		if err != nil {
			return fmt.Errorf("portowner: %s: %w", f.Name(), err)
		}
		fn(addr, fields[9])
	}
	return sc.Err()
}

// parseProcAddr reads an address of the kernel's TCP tables: hex, each
// 32-bit word in host (little-endian) order, then the port: 0100007F:1F90
// is 127.0.0.1:8080 on a little-endian machine. An IPv4-mapped IPv6 address is returned as IPv4.
func parseProcAddr(s string) (netip.AddrPort, error) {
	host, portHex, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(portHex, 16, 16)
	if !ok || err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	b, err := hex.DecodeString(host)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	for w := 0; w < len(b); w += 4 { // each word's bytes in network order
		binary.BigEndian.PutUint32(b[w:], binary.NativeEndian.Uint32(b[w:]))
	}
	ip, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}
