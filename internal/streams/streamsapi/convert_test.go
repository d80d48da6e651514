package streamsapi

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/streams"
)

// sampleEvent is testdata/dynamodb-event.json: a Lambda event of the
// table's stream as AWS documents it, with every attribute type, an
// insert, a modify and a removal by the time to live.
func sampleEvent(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	b, err := os.ReadFile("testdata/dynamodb-event.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// sampleStreamRecords are the records of sampleEvent as the Streams API
// gives them.
func sampleStreamRecords() []st.Record {
	s := func(v string) st.AttributeValue { return &st.AttributeValueMemberS{Value: v} }
	n := func(v string) st.AttributeValue { return &st.AttributeValueMemberN{Value: v} }
	b := func(v ...byte) st.AttributeValue { return &st.AttributeValueMemberB{Value: v} }
	boolean := func(v bool) st.AttributeValue { return &st.AttributeValueMemberBOOL{Value: v} }
	null := &st.AttributeValueMemberNULL{Value: true}
	ss := func(v ...string) st.AttributeValue { return &st.AttributeValueMemberSS{Value: v} }
	ns := func(v ...string) st.AttributeValue { return &st.AttributeValueMemberNS{Value: v} }
	l := func(v ...st.AttributeValue) st.AttributeValue { return &st.AttributeValueMemberL{Value: v} }
	m := func(v map[string]st.AttributeValue) st.AttributeValue { return &st.AttributeValueMemberM{Value: v} }
	keys := func() map[string]st.AttributeValue {
		return map[string]st.AttributeValue{"pk": s("ORG#o1"), "sk": s("COMPANY#c1")}
	}
	with := func(attrs map[string]st.AttributeValue) map[string]st.AttributeValue {
		item := keys()
		for k, v := range attrs {
			item[k] = v
		}
		return item
	}
	at := func(sec int64) *time.Time { t := time.Unix(sec, 0).UTC(); return &t }
	record := func(id string, name st.OperationType, sec int64, seq string, old, new map[string]st.AttributeValue) st.Record {
		return st.Record{
			EventID:      aws.String(id),
			EventName:    name,
			EventVersion: aws.String("1.1"),
			EventSource:  aws.String("aws:dynamodb"),
			AwsRegion:    aws.String("us-east-1"),
			Dynamodb: &st.StreamRecord{
				ApproximateCreationDateTime: at(sec),
				Keys:                        keys(),
				OldImage:                    old,
				NewImage:                    new,
				SequenceNumber:              aws.String(seq),
				StreamViewType:              st.StreamViewTypeNewAndOldImages,
			},
		}
	}
	insert := record("c4ca4238a0b923820dcc509a6f75849b", st.OperationTypeInsert, 1735732800, "100000000000000000001", nil, with(map[string]st.AttributeValue{
		"name":     s("Acme, \"Inc.\" é"),
		"empty":    s(""),
		"version":  n("3"),
		"ratio":    n("-12.5e-3"),
		"blob":     b(0x00, 0x01, 0x2a, 0x41, 0xff),
		"active":   boolean(true),
		"deleted":  boolean(false),
		"parent":   null,
		"tags":     ss("blue", "green"),
		"scores":   ns("1", "2.5", "-3"),
		"keys":     &st.AttributeValueMemberBS{Value: [][]byte{{0x00, 0x01, 0x2a, 0x41}, {0x41, 0x2a, 0x01, 0x00}}},
		"settings": m(map[string]st.AttributeValue{}),
		"steps": l(
			s("fetch"),
			n("42"),
			null,
			m(map[string]st.AttributeValue{"ok": boolean(true), "at": n("1735732800")}),
			l(b(0xff), ss("x")),
			l(),
			m(map[string]st.AttributeValue{}),
		),
		"doc": m(map[string]st.AttributeValue{
			"title":  s("t"),
			"nested": m(map[string]st.AttributeValue{"deep": ns("7"), "none": null}),
			"empty":  m(map[string]st.AttributeValue{}),
		}),
	}))
	modify := record("c81e728d9d4c2f636f067f89cc14862c", st.OperationTypeModify, 1735732861, "200000000000000000002",
		with(map[string]st.AttributeValue{"version": n("3"), "tags": ss("blue", "green")}),
		with(map[string]st.AttributeValue{"version": n("4"), "tags": ss("red"), "ttl": n("1735736400")}))
	remove := record("eccbc87e4b5ce2fe28308fd9f2a7baf3", st.OperationTypeRemove, 1735736460, "300000000000000000003",
		with(map[string]st.AttributeValue{"version": n("4"), "tags": ss("red"), "ttl": n("1735736400")}), nil)
	remove.UserIdentity = &st.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}
	return []st.Record{insert, modify, remove}
}

func TestFromLambdaMatchesFromStreams(t *testing.T) {
	got, err := streams.FromLambda(sampleEvent(t))
	if err != nil {
		t.Fatal(err)
	}
	want := FromStreams(sampleStreamRecords())
	if len(got) != len(want) {
		t.Fatalf("FromLambda: %d records, FromStreams %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d:\nFromLambda  %+v\n  %s\n  %s\nFromStreams %+v\n  %s\n  %s",
				i, got[i], render(got[i].Old), render(got[i].New), want[i], render(want[i].Old), render(want[i].New))
		}
	}

	// And what they agree on is the event's.
	for i, w := range []struct {
		name, seq string
		at        int64
		old, new  bool
		ttl       bool
	}{
		{streams.Insert, "100000000000000000001", 1735732800, false, true, false},
		{streams.Modify, "200000000000000000002", 1735732861, true, true, false},
		{streams.Remove, "300000000000000000003", 1735736460, true, false, true},
	} {
		r := got[i]
		if r.Name != w.name || r.Sequence != w.seq || !r.At.Equal(time.Unix(w.at, 0)) || r.At.Location() != time.UTC ||
			(r.Old != nil) != w.old || (r.New != nil) != w.new || r.ByTTL != w.ttl || len(r.Keys) != 2 {
			t.Errorf("record %d: %+v, want %+v", i, r, w)
		}
	}
	blob, ok := got[0].New["blob"].(*types.AttributeValueMemberB)
	if !ok || !bytes.Equal(blob.Value, []byte{0x00, 0x01, 0x2a, 0x41, 0xff}) {
		t.Errorf("binary attribute: %#v", got[0].New["blob"])
	}
}

// The images DynamoDB Local's stream gives of an item with every
// attribute type are those of the sample event, once written: FromStreams
// of real records and FromLambda agree.
func TestStreamImagesMatchTheLambdaEvent(t *testing.T) {
	t.Parallel()
	sample, err := streams.FromLambda(sampleEvent(t))
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.Client(t, nil)
	table := testenv.StoreOn(t, db).Table
	var got collector
	p := pollerFor(t, db)
	p.Table, p.Handle = table, got.handle
	p.Log, _ = logger()
	start(t, p)
	putItem(t, db, table, sample[0].New) // the insert
	putItem(t, db, table, sample[1].New) // the modify, replacing the item
	caught(t, p)

	records := got.all()
	if len(records) != 2 {
		t.Fatalf("%d records, want 2", len(records))
	}
	for i, r := range records {
		w := sample[i]
		if r.Name != w.Name || render(r.Keys) != render(w.Keys) || render(r.New) != render(w.New) {
			t.Errorf("record %d: %s keys %s\n got new %s\nwant new %s", i, r.Name, render(r.Keys), render(r.New), render(w.New))
		}
	}
	if records[0].Old != nil || render(records[1].Old) != render(sample[0].New) {
		t.Errorf("old images: %s, %s", render(records[0].Old), render(records[1].Old))
	}
}

// A value without a type (the events package's zero value) is an error
// naming the record and the attribute; the records before it convert.
func TestFromLambdaRejectsValueWithoutType(t *testing.T) {
	ev := sampleEvent(t)
	ev.Records[1].Change.NewImage["broken"] = events.DynamoDBAttributeValue{}
	got, err := streams.FromLambda(ev)
	if err == nil || !strings.Contains(err.Error(), ev.Records[1].EventID) || !strings.Contains(err.Error(), `"broken"`) {
		t.Errorf("error %v: want one naming record %s and attribute broken", err, ev.Records[1].EventID)
	}
	if len(got) != 1 || got[0].ID != ev.Records[0].EventID {
		t.Errorf("records %+v: want the first only", got)
	}
}
