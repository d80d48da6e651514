package partitionsim

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// DynamoDB's throughput limits of one partition, per second
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html):
// every partition key value lives in one partition until DynamoDB splits
// it for heat, which it can only do by sort key ranges and not for a key
// whose writes always land past its last sort key.
const (
	PartitionWriteUnits = 1000
	PartitionReadUnits  = 3000
)

// Key is one partition key value of a table (Index "") or of one of its
// global secondary indexes.
type Key struct {
	Table, Index, PK string
}

func (k Key) String() string {
	s := k.Table
	if k.Index != "" {
		s += "/" + k.Index
	}
	return s + " " + k.PK
}

// KeyStats is what the meter saw of one key.
type KeyStats struct {
	Key Key
	// PeakRead and PeakWrite are the most units the key served in one
	// window (a second unless Options.Window says otherwise); Reads and
	// Writes every unit it served.
	PeakRead, PeakWrite float64
	Reads, Writes       float64
	// Throttled counts the requests refused because of this key.
	Throttled int
	// Partitions is how many partitions the key's items span after
	// splits for heat (1 until it splits).
	Partitions int
	// Appends is the share of the key's writes that landed past every
	// sort key written to it before: 1 for a key whose sort keys only grow.
	Appends float64
}

// keyState is a key's meter: the units of the current window and what
// splits it.
type keyState struct {
	window           int64
	read, write      float64
	stats            KeyStats
	hotSeconds       int
	maxSK            string
	appends, written int
}

// meter holds every key's state.
type meter struct {
	mu    sync.Mutex
	scale float64
	// window is the length of a metering window: a key may take its
	// limit per second times the window's seconds in each.
	window     time.Duration
	splitAfter int // windows of heat before a split
	now        func() time.Time
	keys       map[Key]*keyState
	throttles  int
}

func (m *meter) state(k Key, window int64) *keyState {
	s := m.keys[k]
	if s == nil {
		s = &keyState{window: window, stats: KeyStats{Key: k, Partitions: 1}}
		m.keys[k] = s
	}
	if window != s.window {
		m.roll(s, window)
	}
	return s
}

// roll ends a key's window: a key that used more than half of its
// capacity for splitAfter seconds in a row splits in two, unless its
// writes only append (DynamoDB cannot spread those by sort key).
func (m *meter) roll(s *keyState, window int64) {
	hot := s.read > m.readCap(s)/2 || s.write > m.writeCap(s)/2
	switch {
	case window != s.window+1:
		s.hotSeconds = 0
	case hot:
		s.hotSeconds++
	default:
		s.hotSeconds = 0
	}
	if s.hotSeconds >= m.splitAfter && !s.onlyAppends() && s.stats.Partitions < 1024 {
		s.stats.Partitions *= 2
		s.hotSeconds = 0
	}
	s.window, s.read, s.write = window, 0, 0
}

// onlyAppends reports whether at least 9 in 10 of the key's writes landed
// past its last sort key (after 10 writes; a key with fewer can split).
func (s *keyState) onlyAppends() bool {
	return s.written >= 10 && s.appends*10 >= s.written*9
}

// windowOf is the index of the window holding t.
func (m *meter) windowOf(t time.Time) int64 { return t.UnixNano() / int64(m.window) }

func (m *meter) writeCap(s *keyState) float64 {
	return PartitionWriteUnits / m.scale * m.window.Seconds() * float64(s.stats.Partitions)
}

func (m *meter) readCap(s *keyState) float64 {
	return PartitionReadUnits / m.scale * m.window.Seconds() * float64(s.stats.Partitions)
}

// admit takes the capacity of each group of accesses (a batch's or a
// transaction's items; a plain request is one group) whose every key has
// it left this window, and reports which groups it refused. A group that
// asks more than a key's whole capacity is refused even on an idle key
// (DynamoDB would throttle it too, having no burst to lend on demand).
func (m *meter) admit(groups [][]access) []bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	window := m.windowOf(m.now())
	refused := make([]bool, len(groups))
	for g, accesses := range groups {
		for k, n := range needs(accesses) {
			s := m.state(k, window)
			if s.read+n[0] > m.readCap(s) || s.write+n[1] > m.writeCap(s) {
				s.stats.Throttled++
				refused[g] = true
			}
		}
		if refused[g] {
			m.throttles++
			continue
		}
		m.charge(accesses, 1, window, false)
	}
	return refused
}

// over reports whether accesses need more than their keys have left
// this window.
func (m *meter) over(accesses []access) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	window := m.windowOf(m.now())
	for k, n := range needs(accesses) {
		s := m.state(k, window)
		if s.read+n[0] > m.readCap(s) || s.write+n[1] > m.writeCap(s) {
			return true
		}
	}
	return false
}

// needs sums accesses' read (0) and write (1) units by key.
func needs(accesses []access) map[Key][2]float64 {
	need := map[Key][2]float64{}
	for _, a := range accesses {
		n := need[a.key]
		if a.write {
			n[1] += a.units
		} else {
			n[0] += a.units
		}
		need[a.key] = n
	}
	return need
}

// charge adds (sign 1) or takes back (-1) accesses' units; settled
// charges also count the writes' sort keys (onlyAppends).
func (m *meter) charge(accesses []access, sign float64, window int64, settled bool) {
	for _, a := range accesses {
		s := m.state(a.key, window)
		u := sign * a.units
		if a.write {
			s.write += u
			s.stats.Writes += u
			s.stats.PeakWrite = max(s.stats.PeakWrite, s.write)
		} else {
			s.read += u
			s.stats.Reads += u
			s.stats.PeakRead = max(s.stats.PeakRead, s.read)
		}
		if !settled || !a.write || a.sk == "" {
			continue
		}
		s.written++
		if a.sk > s.maxSK {
			s.appends++
			s.maxSK = a.sk
		}
	}
}

// settle replaces the estimated charge of an admitted request by what it
// turned out to cost.
func (m *meter) settle(estimated, actual []access) {
	m.mu.Lock()
	defer m.mu.Unlock()
	window := m.windowOf(m.now())
	m.charge(estimated, -1, window, false)
	m.charge(actual, 1, window, true)
}

func (m *meter) snapshot() ([]KeyStats, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]KeyStats, 0, len(m.keys))
	for _, s := range m.keys {
		st := s.stats
		if s.written > 0 {
			st.Appends = float64(s.appends) / float64(s.written)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b KeyStats) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	return out, m.throttles
}
