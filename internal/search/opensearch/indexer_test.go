package opensearch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/store"
)

func searchable() []*search.Schema {
	var out []*search.Schema
	for _, d := range kinds.Searchable() {
		out = append(out, search.SchemaOf(d))
	}
	return out
}

func sampleEvent(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	b, err := os.ReadFile("../../../events/indexer-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestTheSampleStreamEventBecomesTheGoldenBulkBody(t *testing.T) {
	ev := sampleEvent(t)
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	body, actions := opensearch.Bulk("sourcebase", searchable(), ev)
	slog.SetDefault(prev)
	goldenFile(t, "bulk-indexer-stream.ndjson", bytes.TrimSuffix(body, []byte("\n")))
	var got []string
	for _, a := range actions {
		op := "index"
		if a.Delete {
			op = "delete"
		}
		got = append(got, fmt.Sprintf("%s %s %s %s", a.SequenceNumber, op, a.Index, a.ID))
	}
	want := []string{
		"4000000000000000000001017 index sourcebase-workspaces org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:wsp_01JD8X0A1B2C3D4E5F6G7H8J9K",
		"4000000000000000000003017 index sourcebase-companies org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:cmp_01JD8WZZ9Y8X7W6V5T4S3R2Q1P",
		"4000000000000000000005017 index sourcebase-workspaces org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:wsp_01JD8X0A1B2C3D4E5F6G7H8J9K",
		"4000000000000000000006017 delete sourcebase-documents org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:doc_01JD8Y1M2N3P4Q5R6S7T8V9W0X",
		"4000000000000000000010017 index sourcebase-activities org_02OTHER:act_01JD8Z2222222222222222222",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("actions:\n%s\nwant (change-feed entries, uniqueness items, API keys, tags and the unparsable doc skipped):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(logs.String(), "act_01JD8Z1111111111111111111") {
		t.Errorf("the record whose doc does not parse was not logged: %s", logs.String())
	}
	// Every line is JSON; every indexed document carries its organization.
	lines := strings.Split(string(body), "\n")
	for i, l := range lines[:len(lines)-1] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %s", i+1, l)
		}
		if _, isIndex := m["index"]; isIndex {
			var doc map[string]any
			json.Unmarshal([]byte(lines[i+1]), &doc)
			if doc[opensearch.OrgField] == nil || doc["id"] == nil {
				t.Errorf("document after line %d has no %s or id: %s", i+1, opensearch.OrgField, lines[i+1])
			}
		}
	}
}

// bulkFake answers index creation with acknowledged and _bulk with the
// given items, recording the requests.
type bulkFake struct {
	mu           sync.Mutex
	creates      []string
	createBodies [][]byte
	bulks        []recorded
	status       int
	response     string
}

func (f *bulkFake) start(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPut:
			f.creates = append(f.creates, r.URL.Path)
			f.createBodies = append(f.createBodies, body)
			fmt.Fprintf(w, `{"acknowledged":true,"shards_acknowledged":true,"index":%q}`, strings.TrimPrefix(r.URL.Path, "/"))
		case r.Method == http.MethodPost && r.URL.Path == "/_bulk":
			f.bulks = append(f.bulks, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
			w.WriteHeader(f.status)
			io.WriteString(w, f.response)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTheIndexerCreatesTheIndexesOnceSendsOneSignedBulkAndReportsTheFailedItems(t *testing.T) {
	t.Parallel()
	f := &bulkFake{status: 200, response: `{"took":30,"errors":true,"items":[
		{"index":{"_index":"sourcebase-workspaces","_id":"org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:wsp_01JD8X0A1B2C3D4E5F6G7H8J9K","_version":1,"result":"created","status":201}},
		{"index":{"_index":"sourcebase-companies","_id":"org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:cmp_01JD8WZZ9Y8X7W6V5T4S3R2Q1P","status":429,"error":{"type":"es_rejected_execution_exception","reason":"rejected execution"}}},
		{"index":{"_index":"sourcebase-workspaces","_id":"org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:wsp_01JD8X0A1B2C3D4E5F6G7H8J9K","_version":2,"result":"updated","status":200}},
		{"delete":{"_index":"sourcebase-documents","_id":"org_01JD8W4Q6Z3M5N7P9R1T3V5X7Z:doc_01JD8Y1M2N3P4Q5R6S7T8V9W0X","result":"not_found","status":404}},
		{"index":{"_index":"sourcebase-activities","_id":"org_02OTHER:act_01JD8Z2222222222222222222","status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse"}}}]}`}
	cfg := testConfig(f.start(t), opensearch.ServiceServerless)
	cfg.IndexPrefix = "sourcebase"
	c, err := opensearch.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ix := opensearch.NewIndexer(c, searchable(), nil)
	ev := sampleEvent(t)
	for range 2 {
		res, err := ix.Handle(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		var failed []string
		for _, fl := range res.BatchItemFailures {
			failed = append(failed, fl.ItemIdentifier)
		}
		if strings.Join(failed, ",") != "4000000000000000000003017,4000000000000000000010017" {
			t.Errorf("batch item failures %v, want the company's and the activity's sequence numbers (a delete of a missing document is done)", failed)
		}
	}
	if len(f.creates) != len(searchable()) || len(f.bulks) != 2 {
		t.Fatalf("%d index creations and %d bulks, want %d creations (once per process) and 2 bulks", len(f.creates), len(f.bulks), len(searchable()))
	}
	want, err := os.ReadFile("testdata/bulk-indexer-stream.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(f.bulks[0].Body)) != strings.TrimSpace(string(want)) {
		t.Errorf("bulk body differs from testdata/bulk-indexer-stream.ndjson:\n%s", f.bulks[0].Body)
	}
	checkSigned(t, f.bulks[0], "aoss")
}

func TestTheIndexerRetriesTheWholeBatchWhenTheBulkIsRefusedAndSendsNothingForABatchWithoutRecords(t *testing.T) {
	t.Parallel()
	f := &bulkFake{status: 403, response: `{"status":403,"error":"Forbidden"}`}
	c, err := opensearch.NewClient(testConfig(f.start(t), opensearch.ServiceServerless))
	if err != nil {
		t.Fatal(err)
	}
	ix := opensearch.NewIndexer(c, searchable(), nil)
	if _, err := ix.Handle(context.Background(), sampleEvent(t)); err == nil {
		t.Error("a refused bulk was not an error")
	}
	before := len(f.bulks)
	ev := sampleEvent(t)
	ev.Records = ev.Records[1:2] // a change-feed entry only
	res, err := ix.Handle(context.Background(), ev)
	if err != nil || len(res.BatchItemFailures) != 0 || len(f.bulks) != before {
		t.Errorf("a batch without records: %+v, %v, %d bulks sent", res, err, len(f.bulks)-before)
	}
}

func TestARecordStoredDeflatedIsIndexedAsItsText(t *testing.T) {
	text := sampleEvent(t)
	want, _ := opensearch.Bulk("sourcebase", searchable(), text)
	ev := sampleEvent(t)
	n := 0
	for i, r := range ev.Records {
		img := r.Change.NewImage
		doc, ok := img[store.AttrDoc]
		if !ok || doc.DataType() != events.DataTypeString || !json.Valid([]byte(doc.String())) {
			continue
		}
		img[store.AttrDoc] = events.NewBinaryAttribute(store.DeflateDoc([]byte(doc.String())))
		ev.Records[i].Change.NewImage = img
		n++
	}
	if n == 0 {
		t.Fatal("the sample event has no record to deflate")
	}
	got, _ := opensearch.Bulk("sourcebase", searchable(), ev)
	if !bytes.Equal(got, want) {
		t.Errorf("with %d docs deflated the bulk body is\n%s\nwant\n%s", n, got, want)
	}
}
