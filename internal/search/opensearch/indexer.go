package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Action is one bulk action made from a stream record.
type Action struct {
	SequenceNumber string // the stream record's, reported when the action fails
	Delete         bool   // delete, else index
	Index, ID      string // the index and document id
}

// Bulk is the _bulk body (NDJSON) of the stream records of ev that concern
// a searchable record, and its actions in order. A record item is one
// whose key store.ParseRecordKey reads, of one of the schemas' types:
// uniqueness items, change-feed entries and other items are skipped. INSERT and MODIFY index the item's
// doc with OrgField added; REMOVE deletes. A doc that is not a JSON object
// is skipped and logged (its old document stays until the next write).
func Bulk(prefix string, schemas []*search.Schema, ev events.DynamoDBEvent) ([]byte, []Action) {
	byType := map[string]*search.Schema{}
	for _, s := range schemas {
		byType[s.Type] = s
	}
	var buf bytes.Buffer
	var actions []Action
	for _, rec := range ev.Records {
		org, s, id, ok := recordItem(byType, rec.Change.Keys)
		if !ok {
			continue
		}
		a := Action{SequenceNumber: rec.Change.SequenceNumber, Index: IndexName(prefix, s.Resource), ID: DocID(org, id)}
		var doc []byte
		switch rec.EventName {
		case string(events.DynamoDBOperationTypeRemove):
			a.Delete = true
		case string(events.DynamoDBOperationTypeInsert), string(events.DynamoDBOperationTypeModify):
			var err error
			if doc, err = document(org, rec.Change.NewImage); err != nil {
				slog.Warn("a stored record cannot be indexed for search", "resource", s.Resource, "org", org, "id", id, "sequenceNumber", a.SequenceNumber, "err", err.Error())
				continue
			}
		default:
			continue
		}
		meta, _ := json.Marshal(map[string]any{map[bool]string{true: "delete", false: "index"}[a.Delete]: map[string]string{"_index": a.Index, "_id": a.ID}})
		buf.Write(meta)
		buf.WriteByte('\n')
		if doc != nil {
			buf.Write(doc)
			buf.WriteByte('\n')
		}
		actions = append(actions, a)
	}
	return buf.Bytes(), actions
}

// recordItem reads a record item's keys: its organization, schema and id.
func recordItem(byType map[string]*search.Schema, keys map[string]events.DynamoDBAttributeValue) (org string, s *search.Schema, id string, ok bool) {
	pk, okPK := stringAttr(keys, store.AttrPK)
	sk, okSK := stringAttr(keys, store.AttrSK)
	if !okPK || !okSK {
		return "", nil, "", false
	}
	org, typ, id, ok := store.ParseRecordKey(pk, sk)
	if !ok || byType[typ] == nil {
		return "", nil, "", false
	}
	return org, byType[typ], id, true
}

func stringAttr(m map[string]events.DynamoDBAttributeValue, name string) (string, bool) {
	v, ok := m[name]
	if !ok || v.DataType() != events.DataTypeString {
		return "", false
	}
	return v.String(), true
}

// document is the doc attribute of an item image with OrgField set.
func document(org string, image map[string]events.DynamoDBAttributeValue) ([]byte, error) {
	raw, ok := stringAttr(image, store.AttrDoc)
	if v, bin := image[store.AttrDoc]; bin && v.DataType() == events.DataTypeBinary {
		text, err := store.InflateDoc(v.Binary())
		if err != nil {
			return nil, fmt.Errorf("its %s: %w", store.AttrDoc, err)
		}
		raw, ok = text, true
	}
	if !ok {
		return nil, fmt.Errorf("the item has no %s string", store.AttrDoc)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("its %s is not a JSON object", store.AttrDoc)
	}
	fields[OrgField], _ = json.Marshal(org)
	return json.Marshal(fields)
}

// Indexer keeps the indexes up to date from the table's stream
// (NEW_AND_OLD_IMAGES): the indexer function's handler.
type Indexer struct {
	c       *Client
	schemas []*search.Schema

	mu      sync.Mutex
	ensured bool // the indexes exist (checked once per process)
}

// NewIndexer returns the indexer of the given searchable schemas.
func NewIndexer(c *Client, schemas []*search.Schema) *Indexer {
	return &Indexer{c: c, schemas: schemas}
}

// Handle indexes one batch of stream records in one _bulk request,
// creating missing indexes first. The records whose bulk item failed are
// reported as batch item failures (the event source mapping needs
// ReportBatchItemFailures), so that Lambda retries from the first of
// them; an error (OpenSearch unreachable, a refused request) retries the
// whole batch.
func (ix *Indexer) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	body, actions := Bulk(ix.c.prefix, ix.schemas, ev)
	if len(actions) == 0 {
		return resp, nil
	}
	if err := ix.ensure(ctx); err != nil {
		return resp, err
	}
	res, err := ix.c.api.Bulk(ctx, opensearchapi.BulkReq{Body: bytes.NewReader(body)})
	if err != nil {
		return resp, fmt.Errorf("opensearch: bulk of %d actions: %w", len(actions), err)
	}
	if len(res.Items) != len(actions) {
		return resp, fmt.Errorf("opensearch: bulk of %d actions answered %d items", len(actions), len(res.Items))
	}
	for i, a := range actions {
		for op, item := range res.Items[i] {
			if item.Status < 300 || (op == "delete" && item.Status == http.StatusNotFound) {
				continue // a delete of a document never indexed is done
			}
			reason := ""
			if item.Error != nil {
				reason = item.Error.Type + ": " + item.Error.Reason
			}
			slog.Warn("a bulk action failed", "op", op, "index", a.Index, "id", a.ID, "status", item.Status, "error", reason, "sequenceNumber", a.SequenceNumber)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: a.SequenceNumber})
		}
	}
	return resp, nil
}

func (ix *Indexer) ensure(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ensured {
		return nil
	}
	if err := ix.c.EnsureIndexes(ctx, ix.schemas); err != nil {
		return err
	}
	ix.ensured = true
	return nil
}
