package telemetry

import (
	"context"
	"math"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Meter adds up the DynamoDB calls made with a context and the capacity
// units DynamoDB reports they consumed. Safe for concurrent use (a list
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

// AskCapacity sets ReturnConsumedCapacity TOTAL on the input of a DynamoDB
// data call (params) and reports whether it writes; ok is false for other
// calls (table administration), which report no capacity.
func AskCapacity(params any) (write, ok bool) {
	const total = types.ReturnConsumedCapacityTotal
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.ScanInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.BatchGetItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.TransactGetItemsInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity, write = total, true
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity, write = total, true
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity, write = total, true
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity, write = total, true
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity, write = total, true
	default:
		return false, false
	}
	return write, true
}

// ConsumedUnits is the capacity units a DynamoDB call's result (the
// output of a call AskCapacity asked) reports; 0 for any other value.
func ConsumedUnits(result any) float64 {
	var units float64
	add := func(cs ...types.ConsumedCapacity) {
		for _, c := range cs {
			if c.CapacityUnits != nil {
				units += *c.CapacityUnits
			}
		}
	}
	one := func(c *types.ConsumedCapacity) {
		if c != nil {
			add(*c)
		}
	}
	switch r := result.(type) {
	case *dynamodb.GetItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		add(r.ConsumedCapacity...)
	case *dynamodb.TransactGetItemsOutput:
		add(r.ConsumedCapacity...)
	case *dynamodb.BatchWriteItemOutput:
		add(r.ConsumedCapacity...)
	case *dynamodb.TransactWriteItemsOutput:
		add(r.ConsumedCapacity...)
	}
	return units
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
