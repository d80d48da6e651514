package embedded

import "time"

// IdleFor makes org's index of resource look last refreshed d earlier, as
// an index no search has used for that long.
func (e *Embedded) IdleFor(org, resource string, d time.Duration) {
	e.mu.Lock()
	x := e.indexes[org+"\x00"+resource].Value.(*orgIndex)
	e.mu.Unlock()
	x.mu.Lock()
	x.synced = x.synced.Add(-d)
	x.mu.Unlock()
}
