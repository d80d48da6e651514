package apitest

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Meter asks DynamoDB for the capacity every call consumes
// (ReturnConsumedCapacity TOTAL, set by a middleware of the client, so no
// store code changes) and adds up calls, read and write units. Build the
// client with Option; Reset reads and zeroes the counts.
type Meter struct {
	mu           sync.Mutex
	calls        int
	reads, write float64
}

// Usage is what a Meter counted.
type Usage struct {
	Calls        int
	Reads, Write float64
}

// Option adds the meter to a client's options.
func (m *Meter) Option(o *dynamodb.Options) {
	o.APIOptions = append(append([]func(*middleware.Stack) error(nil), o.APIOptions...), func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ConsumedCapacityMeter", m.handle), middleware.After)
	})
}

// Reset returns the counts so far and zeroes them.
func (m *Meter) Reset() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := Usage{m.calls, m.reads, m.write}
	m.calls, m.reads, m.write = 0, 0, 0
	return u
}

func (m *Meter) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	const total = types.ReturnConsumedCapacityTotal
	write := true
	switch p := in.Parameters.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity, write = total, false
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity, write = total, false
	case *dynamodb.ScanInput:
		p.ReturnConsumedCapacity, write = total, false
	case *dynamodb.BatchGetItemInput:
		p.ReturnConsumedCapacity, write = total, false
	case *dynamodb.TransactGetItemsInput:
		p.ReturnConsumedCapacity, write = total, false
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity = total
	default:
		return next.HandleInitialize(ctx, in) // table administration
	}
	out, md, err := next.HandleInitialize(ctx, in)
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
	switch r := out.Result.(type) {
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
	m.mu.Lock()
	m.calls++
	if write {
		m.write += units
	} else {
		m.reads += units
	}
	m.mu.Unlock()
	return out, md, err
}
