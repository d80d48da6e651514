package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// pageQuery is one paged read of a partition, of the table or of an index.
type pageQuery struct {
	index       Index // zero: the table itself
	pk          string
	limit       int
	offset      int
	desc        bool
	before      string // id cursor
	prefix      string // sort key prefix (begins_with)
	idIsSortKey bool   // the sort key is the id, so the cursor is a key condition
}

// page runs the query: it skips offset items reading keys only, then reads
// items until limit are collected or the partition ends. Reading by id is
// a key condition, so the cursor costs nothing extra; on a sort index the
// cursor becomes a filter on the id.
func (s *Store) page(ctx context.Context, q pageQuery, each func(Item) error) error {
	pkAttr, skAttr := AttrPK, AttrSK
	if q.index.Name != "" {
		pkAttr, skAttr = q.index.PK, q.index.SK
	}
	names := map[string]string{"#pk": pkAttr}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: q.pk}}
	cond := "#pk = :pk"
	var filter *string
	switch {
	case q.prefix != "":
		names["#sk"] = skAttr
		values[":prefix"] = &types.AttributeValueMemberS{Value: q.prefix}
		cond += " AND begins_with(#sk, :prefix)"
	case q.before != "" && q.idIsSortKey:
		names["#sk"] = skAttr
		values[":lt"] = &types.AttributeValueMemberS{Value: q.before}
		cond += " AND #sk < :lt"
	case q.before != "":
		names["#id"] = AttrSK
		values[":lt"] = &types.AttributeValueMemberS{Value: q.before}
		filter = aws.String("#id < :lt")
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String(cond),
		FilterExpression:          filter,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(!q.desc),
	}
	if q.index.Name != "" {
		in.IndexName = aws.String(q.index.Name)
	} else {
		in.ConsistentRead = aws.Bool(true)
	}

	// Skip the offset reading keys only: the page's items are never decoded.
	for skip := q.offset; skip > 0; {
		skipIn := *in
		skipIn.Limit = aws.Int32(int32(min(skip, 1000)))
		skipNames := map[string]string{"#kpk": AttrPK, "#ksk": AttrSK}
		for k, v := range names {
			skipNames[k] = v
		}
		skipIn.ExpressionAttributeNames = skipNames
		skipIn.ProjectionExpression = aws.String("#kpk, #ksk")
		if q.index.Name != "" {
			skipNames["#ipk"], skipNames["#isk"] = q.index.PK, q.index.SK
			skipIn.ProjectionExpression = aws.String("#kpk, #ksk, #ipk, #isk")
		}
		res, err := s.DB.Query(ctx, &skipIn)
		if err != nil {
			return fmt.Errorf("query %s: %w", q.pk, err)
		}
		skip -= len(res.Items)
		if res.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}

	for n := 0; n < q.limit; {
		in.Limit = aws.Int32(int32(q.limit - n))
		res, err := s.DB.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("query %s: %w", q.pk, err)
		}
		for _, av := range res.Items {
			if err := each(Item{raw: av}); err != nil {
				return err
			}
		}
		n += len(res.Items)
		if res.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
	return nil
}
