package lambdaenv

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// platformLog reads the emulator's output: its own lines (the platform's:
// "27 Nov 2026 10:05:22,004 [INFO] (rapid) INIT REPORT(durationMs: 2.4)",
// and START, END, REPORT per invocation) are parsed, and passed on only
// when they are warnings or errors; the runtime's own output, which the
// emulator copies to its stdout, is passed on as it is.
type platformLog struct {
	out io.Writer // nil: discard

	mu      sync.Mutex
	partial []byte
	last    []string        // the last lines, for an emulator that exits at start
	inits   []time.Duration // INIT REPORT durations, in order
	failed  string          // since begin: the runtime's failure ("Runtime exited with error: exit status 1")
	kind    string          // since begin: its type ("Runtime.ExitError")
	changed chan struct{}   // closed at the next line
	raced   bool            // the emulator panicked on its race with a runtime that exits at once
}

// exitRace is the emulator's panic when a runtime exits before the
// emulator has recorded that it started it (shutdown.go's
// handleProcessExit): a runtime that exits at start, on a busy machine.
const exitRace = "Unable to find an exitedChannel for"

var (
	platformLine = regexp.MustCompile(`^\d{2} \w{3} \d{4} [\d:,]+ \[(\w+)\] \(rapid\) (.*)$`)
	initReport   = regexp.MustCompile(`^INIT REPORT\(durationMs: ([\d.]+)\)`)
	doneFailed   = regexp.MustCompile(`^(?:Invoke|Init) DONE failed: (\S+)`)
	failedError  = regexp.MustCompile(`^(?:Invoke|Init) failed.* error=(.*?)(?: InvokeID=.*)?$`)
)

func (l *platformLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		n := bytes.IndexByte(l.partial, '\n')
		if n < 0 {
			return len(p), nil
		}
		l.line(string(l.partial[:n]))
		l.partial = l.partial[n+1:]
	}
}

func (l *platformLog) line(s string) {
	if len(l.last) == 20 {
		l.last = l.last[1:]
	}
	l.last = append(l.last, s)
	if strings.Contains(s, exitRace) {
		l.raced = true
	}
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	if strings.HasPrefix(s, "START RequestId: ") || strings.HasPrefix(s, "END RequestId: ") || strings.HasPrefix(s, "REPORT RequestId: ") {
		return
	}
	m := platformLine.FindStringSubmatch(s)
	if m == nil {
		if l.out != nil {
			io.WriteString(l.out, s+"\n")
		}
		return
	}
	level, msg := m[1], m[2]
	if r := initReport.FindStringSubmatch(msg); r != nil {
		ms, _ := strconv.ParseFloat(r[1], 64)
		l.inits = append(l.inits, time.Duration(ms*float64(time.Millisecond)))
	}
	if r := failedError.FindStringSubmatch(msg); r != nil {
		l.failed = r[1]
	}
	if r := doneFailed.FindStringSubmatch(msg); r != nil {
		l.kind = r[1]
	}
	if l.out != nil && (level == "WARNING" || level == "ERROR") {
		io.WriteString(l.out, "aws-lambda-rie: "+msg+"\n")
	}
}

// begin forgets the failure of an earlier invocation.
func (l *platformLog) begin() {
	l.mu.Lock()
	l.failed, l.kind = "", ""
	l.mu.Unlock()
}

// failure is the runtime's failure since begin, as the emulator logged
// it; its lines may come a moment after its answer, so it waits for them
// briefly.
func (l *platformLog) failure() (kind, message string) {
	deadline := time.After(2 * time.Second)
wait:
	for {
		l.mu.Lock()
		if l.failed != "" && l.kind != "" {
			l.mu.Unlock()
			break
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			break wait
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	kind, message = l.kind, l.failed
	if strings.HasPrefix(message, "Runtime exited") {
		kind = "Runtime.ExitError" // as Lambda reports a runtime that exits, in init or in an invocation
	}
	return kind, message
}

// racedExit reports whether the emulator panicked on a runtime that
// exited before the emulator recorded its start.
func (l *platformLog) racedExit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raced
}

// tail is the emulator's last lines.
func (l *platformLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.last, "\n")
}
