package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/sourcebase/sourcebase/internal/apperr"
)

// MaxBatch is the most ids GetMany reads in one call.
const MaxBatch = 100

// GetMany reads the records of org with the given ids (at most MaxBatch,
// strongly consistent, in one BatchGetItem plus retries of the keys
// DynamoDB leaves unprocessed). It returns the records found, in the order
// of ids, each once; ids that name no record are left out, as are records
// that cannot be decoded (logged once).
func (c *Collection[T]) GetMany(ctx context.Context, org string, ids []string) ([]T, error) {
	found := map[string]T{}
	err := c.store.batchGet(ctx, "GetMany", org, c.spec.Type, ids, func(av map[string]types.AttributeValue) error {
		var v T
		if _, err := decodeItem(av, &v); err != nil {
			var ue *UndecodableError
			if errors.As(err, &ue) {
				reportUndecodable(ue)
				return nil
			}
			return err
		}
		c.view(&v)
		found[c.spec.ID(&v)] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inOrder(ids, found), nil
}

// GetRecords reads org's records of type typ with the given ids as stored
// (at most MaxBatch ids; strongly consistent; one BatchGetItem plus
// retries of unprocessed keys): for a reader that found the ids elsewhere
// (a search index) and must answer with the current records. The records
// found come in the order of ids, each once; ids that name no record
// (deleted since) or items without a doc are left out.
func (s *Store) GetRecords(ctx context.Context, org, typ string, ids []string) ([]RawRecord, error) {
	found := map[string]RawRecord{}
	err := s.batchGet(ctx, "GetRecords", org, typ, ids, func(av map[string]types.AttributeValue) error {
		if r, ok := rawRecord(av); ok {
			found[r.ID] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inOrder(ids, found), nil
}

// batchGet reads org's records of typ with the given ids (at most
// MaxBatch, strongly consistent), passing each to take: one BatchGetItem,
// plus retries of the keys DynamoDB leaves unprocessed.
func (s *Store) batchGet(ctx context.Context, op, org, typ string, ids []string, take func(map[string]types.AttributeValue) error) error {
	if len(ids) > MaxBatch {
		return fmt.Errorf("store: %s of %d ids; at most %d", op, len(ids), MaxBatch)
	}
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || len(id) > MaxIDLength || seen[id] {
			continue
		}
		seen[id] = true
		k := RecordKey(org, typ, id)
		keys = append(keys, key(k.PK, k.SK))
	}
	return s.batchGetKeys(ctx, typ, keys, take)
}

// maxUnprocessedRounds bounds the BatchGetItem calls of one batch read
// that DynamoDB answers with keys left unprocessed.
const maxUnprocessedRounds = 10

// batchGetKeys reads the items of keys (at most MaxBatch, strongly
// consistent), passing each found to take: one BatchGetItem, plus retries
// of the keys DynamoDB leaves unprocessed. what names the items in errors.
func (s *Store) batchGetKeys(ctx context.Context, what string, keys []map[string]types.AttributeValue, take func(map[string]types.AttributeValue) error) error {
	for attempt := 0; len(keys) > 0; attempt++ {
		if attempt > 0 {
			if err := pauseBeforeAttempt(ctx, attempt); err != nil {
				return err
			}
		}
		if attempt == maxUnprocessedRounds {
			// DynamoDB leaves keys unprocessed when the table or a
			// partition is over its throughput: the table cannot serve the
			// read now (503 with Retry-After), as a throttled call.
			err := fmt.Errorf("store: DynamoDB left %d keys of a batch read of %s unprocessed %d times", len(keys), what, maxUnprocessedRounds)
			return apperr.Unavailable(err, "storage unavailable: %v", err)
		}
		res, err := s.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			s.Table: {Keys: keys, ConsistentRead: aws.Bool(true)},
		}})
		if err != nil {
			return classify(ctx, fmt.Errorf("batch get %s: %w", what, err))
		}
		for _, av := range res.Responses[s.Table] {
			if err := take(av); err != nil {
				return err
			}
		}
		keys = res.UnprocessedKeys[s.Table].Keys
	}
	return nil
}

// inOrder are the found values in the order of ids, each once.
func inOrder[V any](ids []string, found map[string]V) []V {
	out := make([]V, 0, len(found))
	for _, id := range ids {
		if v, ok := found[id]; ok {
			out = append(out, v)
			delete(found, id)
		}
	}
	return out
}

// pageOfKeys runs a page query of a keys-only index and reads the items
// its entries name (strongly consistent batch reads), passing each to
// take; it returns the sort keys (ids) of the page's entries in order and
// their positions.
func (s *Store) pageOfKeys(ctx context.Context, pq pageQuery, what string, take func(map[string]types.AttributeValue)) (ids, pos []string, more bool, err error) {
	if pq.match != nil || pq.order != nil {
		return nil, nil, false, fmt.Errorf("store: a list of the keys-only index %s is neither filtered nor ordered in memory", pq.index.Name)
	}
	var keys []map[string]types.AttributeValue
	pos, more, err = s.page(ctx, pq, func(av map[string]types.AttributeValue) bool {
		sk, _ := av[AttrSK].(*types.AttributeValueMemberS)
		if sk == nil {
			return false
		}
		keys = append(keys, map[string]types.AttributeValue{AttrPK: av[AttrPK], AttrSK: sk})
		ids = append(ids, sk.Value)
		return true
	})
	if err != nil {
		return nil, nil, false, err
	}
	for chunk := range slices.Chunk(keys, MaxBatch) {
		if err := s.batchGetKeys(ctx, what, chunk, func(av map[string]types.AttributeValue) error { take(av); return nil }); err != nil {
			return nil, nil, false, err
		}
	}
	return ids, pos, more, nil
}
