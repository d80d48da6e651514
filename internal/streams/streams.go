// Package streams reads the changes of the table's DynamoDB stream (new and
// old images; see store.TableDefinition) and hands them to one processing
// function, whichever way they arrive: in AWS a Lambda function receives
// the stream's batches (Lambda), locally a Poller reads DynamoDB Local's
// Streams API (package streamsapi, apart so that the functions that only
// name a Record do not link the Streams API's client). Both turn the records into the same Record values, in
// stream order per item, and retry from the first record the Handler did
// not finish, so that no change is skipped.
package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Names of a Record: what the change did to the item.
const (
	Insert = "INSERT"
	Modify = "MODIFY"
	Remove = "REMOVE"
)

// The identity DynamoDB gives the deletions of its time to live.
const (
	TTLIdentityType      = "Service"
	TTLIdentityPrincipal = "dynamodb.amazonaws.com"
)

// Record is one change of the table's stream, whichever source read it.
type Record struct {
	ID       string    // the stream record's eventID: unique per change
	Name     string    // Insert, Modify or Remove
	Sequence string    // the SequenceNumber (ordered per item)
	At       time.Time // ApproximateCreationDateTime, in UTC
	// Keys are the item's key attributes; Old is the item before the
	// change (nil on Insert), New the item after it (nil on Remove).
	Keys, Old, New map[string]types.AttributeValue
	// ByTTL says the item was removed by the table's time to live, not by
	// a request.
	ByTTL bool
}

// Handler is the processing code. It gets records in stream order (per
// item) and returns the number of leading records it has fully handled;
// with err != nil, records[done:] are handed to it again later, from
// records[done] on. Returning done < len(records) with a nil error is
// treated the same way: nothing is ever skipped. Since records come again
// after a failure (and a Poller starts from the oldest record the stream
// keeps), a Handler must be idempotent.
//
// A Poller calls its Handler from one goroutine per stream shard, so a
// Handler must be safe for concurrent use.
type Handler func(ctx context.Context, records []Record) (done int, err error)

// FromLambda converts the records of a Lambda stream event, every
// attribute type included (S, N, B, BOOL, NULL, L, M, SS, NS, BS). An
// attribute value that holds no type is an error naming the record and
// the attribute; the records before that record are returned with it.
func FromLambda(ev events.DynamoDBEvent) ([]Record, error) {
	out := make([]Record, 0, len(ev.Records))
	for _, r := range ev.Records {
		rec := Record{
			ID:       r.EventID,
			Name:     r.EventName,
			Sequence: r.Change.SequenceNumber,
			ByTTL:    r.UserIdentity != nil && r.UserIdentity.Type == TTLIdentityType && r.UserIdentity.PrincipalID == TTLIdentityPrincipal,
		}
		if t := r.Change.ApproximateCreationDateTime.Time; !t.IsZero() {
			rec.At = t.UTC()
		}
		var err error
		if rec.Keys, err = lambdaItem(r.Change.Keys); err == nil {
			if rec.Old, err = lambdaItem(r.Change.OldImage); err == nil {
				rec.New, err = lambdaItem(r.Change.NewImage)
			}
		}
		if err != nil {
			return out, fmt.Errorf("streams: record %s (sequence %s): %w", r.EventID, r.Change.SequenceNumber, err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// lambdaItem converts the attributes of an item image; an empty image is nil.
func lambdaItem(m map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for name, v := range m {
		av, err := lambdaValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		out[name] = av
	}
	return out, nil
}

// lambdaValue converts one attribute value. The events package's accessors
// panic on a value of another type, and its zero value claims to be binary
// with nothing in it, so a value without content is checked first.
func lambdaValue(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	if v.IsNull() {
		if v.DataType() == events.DataTypeNull {
			return &types.AttributeValueMemberNULL{Value: true}, nil
		}
		return nil, fmt.Errorf("value has no type")
	}
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		l := v.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			av, err := lambdaValue(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m := v.Map()
		out := make(map[string]types.AttributeValue, len(m))
		for k, e := range m {
			av, err := lambdaValue(e)
			if err != nil {
				return nil, fmt.Errorf("member %q: %w", k, err)
			}
			out[k] = av
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %d", v.DataType())
}
