// Package usage keeps what each organization uses of the service, per UTC
// day: its requests and the read and write units they cost (what a
// provider bills), for the operator's list-orgs (package admin).
//
// A Recorder adds up in memory what its process serves and writes the
// totals to the table at most every FlushEvery: one UpdateItem ADD per
// organization and day (store.UsageKey, in the organization's own
// partition, never a key shared by organizations), so that recording
// costs no write per request. What an instance added since its last flush
// is lost when it is stopped before the next one (a Lambda instance
// reclaimed while idle, a crash): at most FlushEvery of its requests.
// The daily items expire after Retention.
package usage

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/store"
)

// FlushEvery is the most often a Recorder writes its totals.
const FlushEvery = 10 * time.Second

// Retention is how long a day's usage is kept (the table's TTL).
const Retention = 400 * 24 * time.Hour

// The attributes of a day's usage item.
const (
	attrRequests   = "requests"
	attrReadUnits  = "readUnits"
	attrWriteUnits = "writeUnits"
)

// Units is what requests used: how many, and the DynamoDB read and write
// capacity units they consumed.
type Units struct {
	Requests   int64   `json:"requests"`
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
}

// Plus is u and o added up.
func (u Units) Plus(o Units) Units {
	return Units{Requests: u.Requests + o.Requests, ReadUnits: u.ReadUnits + o.ReadUnits, WriteUnits: u.WriteUnits + o.WriteUnits}
}

func (u Units) zero() bool { return u == Units{} }

// orgDay is one organization's day (UTC, truncated to the day).
type orgDay struct {
	org string
	day time.Time
}

// Recorder adds up usage per organization and UTC day and flushes it to
// the table. It is safe for concurrent use.
type Recorder struct {
	st    *store.Store
	now   func() time.Time
	every time.Duration

	mu       sync.Mutex
	pending  map[orgDay]Units
	last     time.Time // when the last flush began
	flushing bool
}

// NewRecorder returns a Recorder writing to st's table.
func NewRecorder(st *store.Store) *Recorder {
	return &Recorder{st: st, now: time.Now, every: FlushEvery, pending: map[orgDay]Units{}}
}

// Add counts u for org on today's UTC date and, when the last flush began
// FlushEvery ago or more, flushes everything pending in the calling
// goroutine, under ctx (one flush at a time: an Add during a flush only
// adds). A flush that fails keeps what it could not write for the next
// one, and is logged.
func (r *Recorder) Add(ctx context.Context, org string, u Units) {
	if org == "" || u.zero() {
		return
	}
	now := r.now()
	k := orgDay{org, now.UTC().Truncate(24 * time.Hour)}
	r.mu.Lock()
	r.pending[k] = r.pending[k].Plus(u)
	if r.last.IsZero() {
		// The first Add starts the window: a process that serves one
		// request and stops writes it at its Flush (or loses it).
		r.last = now
	}
	due := !r.flushing && now.Sub(r.last) >= r.every
	r.mu.Unlock()
	if due {
		if err := r.flush(ctx, false); err != nil {
			slog.WarnContext(ctx, "usage totals not written; kept for the next flush", "err", err)
		}
	}
}

// Flush writes everything pending now, whenever the last flush was: for
// a process that stops, and for tests. It waits for a flush under way.
func (r *Recorder) Flush(ctx context.Context) error { return r.flush(ctx, true) }

func (r *Recorder) flush(ctx context.Context, wait bool) error {
	r.mu.Lock()
	for r.flushing {
		if !wait {
			r.mu.Unlock()
			return nil
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		r.mu.Lock()
	}
	batch := r.pending
	r.pending = map[orgDay]Units{}
	r.flushing, r.last = true, r.now()
	r.mu.Unlock()

	var firstErr error
	failed := map[orgDay]Units{}
	for k, u := range batch {
		err := r.st.AddCounts(ctx, store.UsageKey(k.org, k.day), store.TypeUsage, map[string]float64{
			attrRequests: float64(u.Requests), attrReadUnits: u.ReadUnits, attrWriteUnits: u.WriteUnits,
		}, k.day.Add(Retention))
		if err != nil {
			failed[k] = u
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	r.mu.Lock()
	for k, u := range failed {
		r.pending[k] = r.pending[k].Plus(u)
	}
	r.flushing = false
	r.mu.Unlock()
	return firstErr
}

// Read is org's usage from the UTC date of from to that of to, both
// included, as flushed so far.
func Read(ctx context.Context, st *store.Store, org string, from, to time.Time) (Units, error) {
	days, err := st.ReadCounts(ctx, store.UsagePartition(org), store.UsageSortKey(from), store.UsageSortKey(to))
	if err != nil {
		return Units{}, err
	}
	var total Units
	for _, nums := range days {
		total = total.Plus(Units{Requests: int64(nums[attrRequests]), ReadUnits: nums[attrReadUnits], WriteUnits: nums[attrWriteUnits]})
	}
	return total, nil
}
