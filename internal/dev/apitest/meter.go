package apitest

import (
	"context"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Meter asks DynamoDB for the capacity every call consumes
// (ReturnConsumedCapacity TOTAL, set by a middleware of the client, so no
// store code changes) and adds up calls, read and write units. Build the
// client with Option; Reset reads and zeroes the counts.
type Meter struct {
	mu    sync.Mutex
	usage Usage
}

// Usage is what a Meter counted.
type Usage struct {
	Calls        int
	Reads, Write float64
	// Shared is the part of the above that serves every request of a key
	// rather than the request that happened to make it: the API key,
	// rate-limit and shard-count caches' fills (GetItem of an APIKEY#
	// item or an organization's LIMITS or SHARDS), the rate limit's
	// leases (UpdateItem of a RATE# counter) and the usage totals' flushes
	// (UpdateItem of an organization's USAGE item), which fall on
	// whichever request finds a cache stale, a lease used up or a flush
	// due.
	Shared Part
	// Run is the part made while executing workflow runs (a store.Actor
	// via a workflowRun): what a run's steps and state cost beside the
	// request that started it.
	Run Part
	// Written are the keys the calls wrote, in the order written: each
	// item's table key, and the index keys of the items put whole (what
	// store.ClassOf classifies).
	Written []Written
}

// Written is a key a call wrote: a partition key value and the sort key
// written under it, of the table or of an index.
type Written struct{ PK, SK string }

// written are the keys a successful write call wrote (ConditionChecks
// write nothing).
func written(params any) []Written {
	str := func(av types.AttributeValue) string {
		if s, ok := av.(*types.AttributeValueMemberS); ok {
			return s.Value
		}
		return ""
	}
	var out []Written
	key := func(k map[string]types.AttributeValue) {
		out = append(out, Written{str(k[store.AttrPK]), str(k[store.AttrSK])})
	}
	item := func(it map[string]types.AttributeValue) {
		key(it)
		for _, ix := range store.Indexes {
			if pk := str(it[ix.PK]); pk != "" {
				out = append(out, Written{pk, str(it[ix.SK])})
			}
		}
	}
	switch p := params.(type) {
	case *dynamodb.PutItemInput:
		item(p.Item)
	case *dynamodb.UpdateItemInput:
		key(p.Key)
	case *dynamodb.DeleteItemInput:
		key(p.Key)
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range p.RequestItems {
			for _, r := range reqs {
				if r.PutRequest != nil {
					item(r.PutRequest.Item)
				} else if r.DeleteRequest != nil {
					key(r.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, ti := range p.TransactItems {
			switch {
			case ti.Put != nil:
				item(ti.Put.Item)
			case ti.Update != nil:
				key(ti.Update.Key)
			case ti.Delete != nil:
				key(ti.Delete.Key)
			}
		}
	}
	return out
}

// Part is a part of a Usage.
type Part struct {
	Calls        int
	Reads, Write float64
}

func (p *Part) add(write bool, units float64) {
	p.Calls++
	if write {
		p.Write += units
	} else {
		p.Reads += units
	}
}

// shared reports whether a call is one of Usage.Shared's.
func shared(params any) bool {
	pk := func(key map[string]types.AttributeValue) (string, string) {
		p, _ := key[store.AttrPK].(*types.AttributeValueMemberS)
		s, _ := key[store.AttrSK].(*types.AttributeValueMemberS)
		if p == nil || s == nil {
			return "", ""
		}
		return p.Value, s.Value
	}
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		pk, sk := pk(p.Key)
		// An organization's own item is read with its key (its status:
		// suspended or not), cached as long.
		return strings.HasPrefix(pk, store.TypeAPIKey+"#") || sk == store.TypeLimits || sk == store.TypeShards || sk == store.TypeOrg
	case *dynamodb.UpdateItemInput:
		pk, _ := pk(p.Key)
		// The rate limit's leases, and the usage totals an instance
		// flushes every few seconds (package usage).
		return store.ClassOf(pk) == store.ClassCounter
	}
	return false
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
	u := m.usage
	m.usage = Usage{}
	return u
}

func (m *Meter) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	write, ok := store.AskCapacity(in.Parameters)
	if !ok {
		return next.HandleInitialize(ctx, in) // table administration
	}
	out, md, err := next.HandleInitialize(ctx, in)
	units := store.ConsumedUnits(out.Result)
	m.mu.Lock()
	m.usage.Calls++
	if write && err == nil {
		m.usage.Written = append(m.usage.Written, written(in.Parameters)...)
	}
	if write {
		m.usage.Write += units
	} else {
		m.usage.Reads += units
	}
	if shared(in.Parameters) {
		m.usage.Shared.add(write, units)
	}
	if a := store.ActorOf(ctx); a.Via.Type == store.ViaWorkflowRun || a.Type == store.ActorWorkflowRun {
		m.usage.Run.add(write, units)
	}
	m.mu.Unlock()
	return out, md, err
}
