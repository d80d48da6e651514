package streamsapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/sourcebase/sourcebase/internal/streams"
)

// The adapted function reports the first record the handler did not
// handle, by its sequence number, and nothing when it handled them all.
// Not parallel: it captures the default logger.
func TestLambdaReportsTheFirstUnhandledRecord(t *testing.T) {
	log, logs := logger()
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(log)

	ev := sampleEvent(t)
	seq := func(i int) string { return ev.Records[i].Change.SequenceNumber }
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		done int
		err  error
		want []string // sequence numbers reported
	}{
		{"all handled", 3, nil, nil},
		{"all handled, with an error", 3, boom, nil},
		{"more than all", 7, nil, nil},
		{"stopped mid-batch", 1, boom, []string{seq(1)}},
		{"stopped at the first", 0, boom, []string{seq(0)}},
		{"below zero", -1, boom, []string{seq(0)}},
		{"stopped without an error", 2, nil, []string{seq(2)}},
	} {
		var handed []streams.Record
		h := func(_ context.Context, records []streams.Record) (int, error) {
			handed = records
			return c.done, c.err
		}
		resp, err := streams.Lambda(h)(context.Background(), ev)
		if err != nil {
			t.Errorf("%s: error %v", c.name, err)
		}
		if len(handed) != 3 {
			t.Errorf("%s: handler got %d records", c.name, len(handed))
		}
		if got := failures(resp); !slices.Equal(got, c.want) {
			t.Errorf("%s: failures %v, want %v", c.name, got, c.want)
		}
	}

	// Lambda reads the answer as JSON.
	resp, _ := streams.Lambda(func(context.Context, []streams.Record) (int, error) { return 1, boom })(context.Background(), ev)
	b, _ := json.Marshal(resp)
	if want := `{"batchItemFailures":[{"itemIdentifier":"` + seq(1) + `"}]}`; string(b) != want {
		t.Errorf("answer %s, want %s", b, want)
	}
	// The log names the record, never its contents.
	if text := logs.String(); !strings.Contains(text, seq(1)) || !strings.Contains(text, ev.Records[1].EventID) ||
		strings.Contains(text, "Acme") || strings.Contains(text, "COMPANY#c1") {
		t.Errorf("log:\n%s", text)
	}
}

// A record that does not convert is reported once the records before it
// are handled; the handler never sees it.
func TestLambdaReportsARecordThatDoesNotConvert(t *testing.T) {
	log, _ := logger()
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(log)

	ev := sampleEvent(t)
	ev.Records[1].Change.OldImage["broken"] = events.DynamoDBAttributeValue{}
	for _, c := range []struct {
		name string
		done int
		want string
	}{
		{"the records before it handled", 1, ev.Records[1].Change.SequenceNumber},
		{"the records before it not handled", 0, ev.Records[0].Change.SequenceNumber},
	} {
		var handed []streams.Record
		h := func(_ context.Context, records []streams.Record) (int, error) {
			handed = records
			if c.done < len(records) {
				return c.done, errors.New("boom")
			}
			return c.done, nil
		}
		resp, err := streams.Lambda(h)(context.Background(), ev)
		if err != nil || len(handed) != 1 || handed[0].ID != ev.Records[0].EventID {
			t.Errorf("%s: error %v, handed %d records", c.name, err, len(handed))
		}
		if got := failures(resp); !slices.Equal(got, []string{c.want}) {
			t.Errorf("%s: failures %v, want %s", c.name, got, c.want)
		}
	}

	// Not even the handler is called when the first record is bad.
	ev.Records[0].Change.Keys["broken"] = events.DynamoDBAttributeValue{}
	called := false
	resp, _ := streams.Lambda(func(context.Context, []streams.Record) (int, error) { called = true; return 0, nil })(context.Background(), ev)
	if called || !slices.Equal(failures(resp), []string{ev.Records[0].Change.SequenceNumber}) {
		t.Errorf("handler called %t, failures %v", called, failures(resp))
	}
}

func failures(resp events.DynamoDBEventResponse) []string {
	var out []string
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}
