package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ReadRange reads the items of partition pk whose sort keys are from lo to
// hi (both included; lo "" for no lower bound) in sort key order, and calls
// each with every item's stored record until each returns false. It is one
// Query, paged by DynamoDB (1 MB a call), read strongly consistently; it
// returns how many calls it made. For a metric series: MetricPartition and
// MetricDateRange.
func (s *Store) ReadRange(ctx context.Context, pk, lo, hi string, each func(doc json.RawMessage) (bool, error)) (calls int, err error) {
	values := map[string]types.AttributeValue{
		":pk": &types.AttributeValueMemberS{Value: pk},
		":hi": &types.AttributeValueMemberS{Value: hi},
	}
	cond := "pk = :pk AND sk <= :hi"
	if lo != "" {
		values[":lo"] = &types.AttributeValueMemberS{Value: lo}
		cond = "pk = :pk AND sk BETWEEN :lo AND :hi"
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeValues: values,
		ExpressionAttributeNames:  map[string]string{"#doc": AttrDoc},
		ProjectionExpression:      aws.String("#doc"),
		ConsistentRead:            aws.Bool(true),
	}
	for p := dynamodb.NewQueryPaginator(s.DB, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		calls++
		if err != nil {
			return calls, classify(ctx, fmt.Errorf("query %s: %w", pk, err))
		}
		for _, av := range page.Items {
			doc, ok, err := docText(av)
			if !ok {
				return calls, undecodable(av, 0, "it has no doc attribute")
			}
			if err != nil {
				return calls, undecodable(av, 0, err.Error())
			}
			more, err := each(json.RawMessage(doc))
			if err != nil || !more {
				return calls, err
			}
		}
	}
	return calls, nil
}

// DeletePartition deletes every item of partition pk (the items a removed
// record leaves behind, such as its enrichment candidates): their keys read
// with one paged Query, deleted in transactions of at most MaxBatch. An
// item deleted meanwhile by another writer is no error.
func (s *Store) DeletePartition(ctx context.Context, pk string) error {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ProjectionExpression:      aws.String("pk, sk"),
		ConsistentRead:            aws.Bool(true),
	}
	var ops []types.TransactWriteItem
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		_, err := s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
		ops = ops[:0]
		return classify(ctx, err)
	}
	for p := dynamodb.NewQueryPaginator(s.DB, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return classify(ctx, fmt.Errorf("read the partition to delete: %w", err))
		}
		for _, av := range page.Items {
			ops = append(ops, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.Table), Key: map[string]types.AttributeValue{AttrPK: av[AttrPK], AttrSK: av[AttrSK]}}})
			if len(ops) == MaxBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}
