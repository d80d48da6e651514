package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/sourcebase/sourcebase/internal/telemetry"
)

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

// meterID names the middleware that meters a request's calls.
const meterID = "SourcebaseMeter"

// meter adds each data call, once however often the SDK retries it, and
// the units DynamoDB reports it consumed to the context's telemetry.Meter
// (a request's: its log line and usage), asking DynamoDB for them only
// then.
func meter(s *middleware.Stack) error {
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc(meterID, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		m := telemetry.MeterOf(ctx)
		if m == nil {
			return next.HandleInitialize(ctx, in)
		}
		write, ok := AskCapacity(in.Parameters)
		out, md, err := next.HandleInitialize(ctx, in)
		if ok {
			m.Add(write, ConsumedUnits(out.Result))
		}
		return out, md, err
	}), middleware.After)
}
