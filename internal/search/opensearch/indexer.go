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
	"github.com/sourcebase/sourcebase/internal/search/vectors"
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
// The Indexer adds each record's vector (VectorField) when it has a keeper.
func Bulk(prefix string, schemas []*search.Schema, ev events.DynamoDBEvent) ([]byte, []Action) {
	items := plan(prefix, schemas, ev)
	actions := make([]Action, len(items))
	for i, it := range items {
		actions[i] = it.Action
	}
	return encode(items), actions
}

// item is one bulk action and, for an index action, its document.
type item struct {
	Action
	s       *search.Schema
	org, id string
	fields  map[string]json.RawMessage // the document (nil: delete)
	text    string                     // its search.SemanticText
}

// plan reads ev's record items into bulk actions (see Bulk).
func plan(prefix string, schemas []*search.Schema, ev events.DynamoDBEvent) []item {
	byType := map[string]*search.Schema{}
	for _, s := range schemas {
		byType[s.Type] = s
	}
	var items []item
	for _, rec := range ev.Records {
		org, s, id, ok := recordItem(byType, rec.Change.Keys)
		if !ok {
			continue
		}
		it := item{Action: Action{SequenceNumber: rec.Change.SequenceNumber, Index: IndexName(prefix, s.Resource), ID: DocID(org, id)}, s: s, org: org, id: id}
		switch rec.EventName {
		case string(events.DynamoDBOperationTypeRemove):
			it.Delete = true
		case string(events.DynamoDBOperationTypeInsert), string(events.DynamoDBOperationTypeModify):
			var err error
			if it.fields, it.text, err = document(org, s, rec.Change.NewImage); err != nil {
				slog.Warn("a stored record cannot be indexed for search", "resource", s.Resource, "org", org, "id", id, "sequenceNumber", it.SequenceNumber, "err", err.Error())
				continue
			}
		default:
			continue
		}
		items = append(items, it)
	}
	return items
}

// encode is the _bulk body of items.
func encode(items []item) []byte {
	var buf bytes.Buffer
	for _, it := range items {
		meta, _ := json.Marshal(map[string]any{map[bool]string{true: "delete", false: "index"}[it.Delete]: map[string]string{"_index": it.Index, "_id": it.ID}})
		buf.Write(meta)
		buf.WriteByte('\n')
		if !it.Delete {
			doc, _ := json.Marshal(it.fields)
			buf.Write(doc)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
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

// document is the doc attribute of an item image with OrgField set, and
// its text to embed (search.SemanticText of s).
func document(org string, s *search.Schema, image map[string]events.DynamoDBAttributeValue) (map[string]json.RawMessage, string, error) {
	raw, ok := stringAttr(image, store.AttrDoc)
	if v, bin := image[store.AttrDoc]; bin && v.DataType() == events.DataTypeBinary {
		text, err := store.InflateDoc(v.Binary())
		if err != nil {
			return nil, "", fmt.Errorf("its %s: %w", store.AttrDoc, err)
		}
		raw, ok = text, true
	}
	if !ok {
		return nil, "", fmt.Errorf("the item has no %s string", store.AttrDoc)
	}
	var fields map[string]json.RawMessage
	var rec map[string]any
	if json.Unmarshal([]byte(raw), &fields) != nil || fields == nil || json.Unmarshal([]byte(raw), &rec) != nil {
		return nil, "", fmt.Errorf("its %s is not a JSON object", store.AttrDoc)
	}
	// The record's own fields of these names (none is searchable) are
	// the index's, not the record's.
	delete(fields, VectorField)
	delete(fields, PendingField)
	fields[OrgField], _ = json.Marshal(org)
	return fields, search.SemanticText(s, rec), nil
}

// Indexer keeps the indexes up to date from the table's stream
// (NEW_AND_OLD_IMAGES): the indexer function's handler.
type Indexer struct {
	c       *Client
	schemas []*search.Schema
	keeper  *vectors.Keeper // nil: no vectors (EMBEDDINGS=off, or Serverless)

	mu      sync.Mutex
	ensured bool // the indexes exist (checked once per process)
}

// NewIndexer returns the indexer of the given searchable schemas, putting
// each record's embedding (made or read by keeper; nil: none) in its
// document where Semantic allows it.
func NewIndexer(c *Client, schemas []*search.Schema, keeper *vectors.Keeper) *Indexer {
	return &Indexer{c: c, schemas: schemas, keeper: semanticKeeper(c.service, keeper)}
}

// Handle indexes one batch of stream records in one _bulk request,
// creating missing indexes first. With a keeper, each indexed record's
// text is embedded first (or its kept vector read, vectors.Keeper.Ensure)
// and put in VectorField; a record whose text could not be embedded is
// indexed without it and with PendingField (found by keyword at once) and
// reported as failed, so that Lambda retries it. The records whose bulk
// item failed are reported as batch item failures too (the event source
// mapping needs ReportBatchItemFailures), so that Lambda retries from the
// first of them; an error (OpenSearch unreachable, a refused request)
// retries the whole batch.
func (ix *Indexer) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	items := plan(ix.c.prefix, ix.schemas, ev)
	if len(items) == 0 {
		return resp, nil
	}
	if err := ix.ensure(ctx); err != nil {
		return resp, err
	}
	pending := ix.embed(ctx, items)
	res, err := ix.c.api.Bulk(ctx, opensearchapi.BulkReq{Body: bytes.NewReader(encode(items))})
	if err != nil {
		return resp, fmt.Errorf("opensearch: bulk of %d actions: %w", len(items), err)
	}
	if len(res.Items) != len(items) {
		return resp, fmt.Errorf("opensearch: bulk of %d actions answered %d items", len(items), len(res.Items))
	}
	for i, a := range items {
		failed := pending[i]
		for op, item := range res.Items[i] {
			if item.Status < 300 || (op == "delete" && item.Status == http.StatusNotFound) {
				continue // a delete of a document never indexed is done
			}
			reason := ""
			if item.Error != nil {
				reason = item.Error.Type + ": " + item.Error.Reason
			}
			slog.Warn("a bulk action failed", "op", op, "index", a.Index, "id", a.ID, "status", item.Status, "error", reason, "sequenceNumber", a.SequenceNumber)
			failed = true
		}
		if failed {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: a.SequenceNumber})
		}
	}
	return resp, nil
}

// embed puts each indexed record's vector in its document, by
// organization and type (one vectors.Keeper.Ensure each), and answers
// which items are pending (indexed with PendingField, to be retried).
// When a batch holds one record twice, only its last text is embedded: an
// earlier action of another text gets no vector (the later one replaces
// it in the same bulk).
func (ix *Indexer) embed(ctx context.Context, items []item) map[int]bool {
	if ix.keeper == nil {
		return nil
	}
	type group struct{ org, typ string }
	texts := map[group]map[string]string{}
	for _, it := range items {
		if it.Delete || it.text == "" {
			continue
		}
		g := group{it.org, it.s.Type}
		if texts[g] == nil {
			texts[g] = map[string]string{}
		}
		texts[g][it.id] = it.text // the last one wins
	}
	type result struct {
		vecs    map[string]vectors.Vec
		pending map[string]bool
	}
	got := make(map[group]result, len(texts))
	for g, byID := range texts {
		docs := make([]vectors.Doc, 0, len(byID))
		for id, text := range byID {
			docs = append(docs, vectors.Doc{ID: id, Text: text})
		}
		vecs, pending := ix.keeper.Ensure(ctx, g.org, g.typ, docs)
		r := result{vecs: vecs, pending: make(map[string]bool, len(pending))}
		for _, id := range pending {
			r.pending[id] = true
		}
		got[g] = r
	}
	out := map[int]bool{}
	for i, it := range items {
		if it.Delete || it.text == "" {
			continue
		}
		g := group{it.org, it.s.Type}
		r := got[g]
		if v, ok := r.vecs[it.id]; ok && v.Hash == ix.keeper.Hash(it.text) {
			it.fields[VectorField], _ = json.Marshal(v.Values)
			continue
		}
		if r.pending[it.id] && texts[g][it.id] == it.text {
			it.fields[PendingField] = json.RawMessage("true")
			out[i] = true
		}
	}
	if len(out) > 0 {
		slog.Warn("records indexed without their embedding (found by keyword meanwhile); reported as failed so that the stream retries them", "model", ix.keeper.Model(), "records", len(out))
	}
	return out
}

func (ix *Indexer) ensure(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ensured {
		return nil
	}
	dims := 0
	if ix.keeper != nil {
		dims = ix.keeper.Provider.Dimensions()
	}
	if err := ix.c.EnsureIndexes(ctx, ix.schemas, dims); err != nil {
		return err
	}
	ix.ensured = true
	return nil
}
