package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxBatch is the most ids GetMany reads in one call.
const MaxBatch = 100

// GetMany reads the records of org with the given ids (at most MaxBatch,
// strongly consistent, in one BatchGetItem plus retries of the keys
// DynamoDB leaves unprocessed). It returns the records found, in the order
// of ids, each once; ids that name no record are left out, as are records
// that cannot be decoded (logged once).
func (c *Collection[T]) GetMany(ctx context.Context, org string, ids []string) ([]T, error) {
	if len(ids) > MaxBatch {
		return nil, fmt.Errorf("store: GetMany of %d ids; at most %d", len(ids), MaxBatch)
	}
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || len(id) > MaxIDLength || seen[id] {
			continue
		}
		seen[id] = true
		keys = append(keys, key(c.Partition(org), id))
	}
	found := map[string]T{}
	for attempt := 0; len(keys) > 0; attempt++ {
		if attempt > 0 {
			if err := pauseBeforeAttempt(ctx, attempt); err != nil {
				return nil, err
			}
		}
		if attempt == 10 {
			return nil, errors.New("store: DynamoDB left keys of a batch read unprocessed 10 times")
		}
		res, err := c.store.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			c.store.Table: {Keys: keys, ConsistentRead: aws.Bool(true)},
		}})
		if err != nil {
			return nil, fmt.Errorf("batch get %s: %w", c.spec.Type, err)
		}
		for _, av := range res.Responses[c.store.Table] {
			var v T
			if _, err := decodeItem(av, &v); err != nil {
				var ue *UndecodableError
				if errors.As(err, &ue) {
					reportUndecodable(ue)
					continue
				}
				return nil, err
			}
			found[c.spec.ID(&v)] = v
		}
		keys = res.UnprocessedKeys[c.store.Table].Keys
	}
	out := make([]T, 0, len(found))
	for _, id := range ids {
		if v, ok := found[id]; ok {
			out = append(out, v)
			delete(found, id)
		}
	}
	return out, nil
}

// GetRecords reads org's records of type typ with the given ids as stored
// (at most MaxBatch ids; strongly consistent; one BatchGetItem plus
// retries of unprocessed keys): for a reader that found the ids elsewhere
// (a search index) and must answer with the current records. The records
// found come in the order of ids, each once; ids that name no record
// (deleted since) or items without a doc are left out.
func (s *Store) GetRecords(ctx context.Context, org, typ string, ids []string) ([]RawRecord, error) {
	if len(ids) > MaxBatch {
		return nil, fmt.Errorf("store: GetRecords of %d ids; at most %d", len(ids), MaxBatch)
	}
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || len(id) > MaxIDLength || seen[id] {
			continue
		}
		seen[id] = true
		keys = append(keys, key(OrgPartition(org, typ), id))
	}
	found := map[string]RawRecord{}
	for attempt := 0; len(keys) > 0; attempt++ {
		if attempt > 0 {
			if err := pauseBeforeAttempt(ctx, attempt); err != nil {
				return nil, err
			}
		}
		if attempt == 10 {
			return nil, errors.New("store: DynamoDB left keys of a batch read unprocessed 10 times")
		}
		res, err := s.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			s.Table: {Keys: keys, ConsistentRead: aws.Bool(true)},
		}})
		if err != nil {
			return nil, classify(ctx, fmt.Errorf("batch get %s: %w", typ, err))
		}
		for _, av := range res.Responses[s.Table] {
			if r, ok := rawRecord(av); ok {
				found[r.ID] = r
			}
		}
		keys = res.UnprocessedKeys[s.Table].Keys
	}
	out := make([]RawRecord, 0, len(found))
	for _, id := range ids {
		if r, ok := found[id]; ok {
			out = append(out, r)
			delete(found, id)
		}
	}
	return out, nil
}
