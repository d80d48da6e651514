package telemetry

import (
	"context"
	"math"
	"sync/atomic"
)

// Meter adds up the DynamoDB calls made with a context and the capacity
// units DynamoDB reports they consumed (the store's client adds them). Safe for concurrent use (a list
// reads its shards at once).
type Meter struct {
	calls       atomic.Int64
	read, write atomicFloat
}

// Calls is the number of DynamoDB calls made so far (a call the SDK
// retried is one call).
func (m *Meter) Calls() int64 { return m.calls.Load() }

// ReadUnits is the read capacity units consumed so far.
func (m *Meter) ReadUnits() float64 { return m.read.load() }

// WriteUnits is the write capacity units consumed so far.
func (m *Meter) WriteUnits() float64 { return m.write.load() }

type meterKey struct{}

// WithMeter returns ctx whose DynamoDB calls m counts.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// MeterOf is ctx's meter, nil when none.
func MeterOf(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// Add counts one DynamoDB call that consumed units, of writes or of
// reads (the store's client meters its calls: store.ClientOptions).
func (m *Meter) Add(write bool, units float64) {
	m.calls.Add(1)
	if write {
		m.write.add(units)
	} else {
		m.read.add(units)
	}
}

// atomicFloat is a float64 added to atomically.
type atomicFloat struct{ bits atomic.Uint64 }

func (f *atomicFloat) add(d float64) {
	for {
		old := f.bits.Load()
		if f.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (f *atomicFloat) load() float64 { return math.Float64frombits(f.bits.Load()) }
