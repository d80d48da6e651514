package streams

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// Lambda adapts h to a Lambda function of the table's stream whose event
// source mapping reports batch item failures (FunctionResponseTypes
// ReportBatchItemFailures; with BisectBatchOnError set). Each batch is
// handed to h; when h stops at done < len(records), the response names
// records[done]'s sequence number, and Lambda retries the batch from that
// record on: the records before it are not handed again, none after it is
// skipped.
//
// A record that does not convert (see FromLambda) is reported the same
// way, once h has handled the records before it. The function never
// returns an error, which would make Lambda retry the whole batch and
// ignore the response. It logs each failure with the record's id and
// sequence number, never the record's contents.
func Lambda(h Handler) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var resp events.DynamoDBEventResponse
		records, convErr := FromLambda(ev)
		done, err := 0, error(nil)
		if len(records) > 0 {
			done, err = h(ctx, records)
			done = max(0, min(done, len(records)))
		}
		switch {
		case done < len(records):
			if err == nil {
				err = ErrStopped
			}
			r := records[done]
			slog.ErrorContext(ctx, "streams: handler failed; Lambda retries the batch from the record",
				"record", r.ID, "sequence", r.Sequence, "handled", done, "of", len(ev.Records), "error", err)
			resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Sequence}}
		case convErr != nil:
			r := ev.Records[len(records)]
			slog.ErrorContext(ctx, "streams: record does not convert; Lambda retries the batch from it",
				"record", r.EventID, "sequence", r.Change.SequenceNumber, "handled", done, "of", len(ev.Records), "error", convErr)
			resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}
		}
		return resp, nil
	}
}

// ErrStopped stands for the error of a Handler that returned done <
// len(records) without one.
var ErrStopped = errors.New("handler returned before the last record without an error")
