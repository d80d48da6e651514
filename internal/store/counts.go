package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AddCounts adds counts to the numeric attributes of the item at k (one
// UpdateItem ADD, which makes the item when it is absent), stamps it with
// typ and sets its expiry (AttrExpires) to expires: a counter written once
// per batch of what it counts (package usage's daily totals), never per
// request. Names are attribute names of letters alone.
func (s *Store) AddCounts(ctx context.Context, k Key, typ string, counts map[string]float64, expires time.Time) error {
	names := map[string]string{"#type": AttrType, "#ttl": AttrExpires}
	values := map[string]types.AttributeValue{
		":type": &types.AttributeValueMemberS{Value: typ},
		":ttl":  &types.AttributeValueMemberN{Value: strconv.FormatInt(expiresAt(expires), 10)},
	}
	var adds []string
	keys := make([]string, 0, len(counts))
	for name := range counts {
		keys = append(keys, name)
	}
	sort.Strings(keys)
	for i, name := range keys {
		n, v := fmt.Sprintf("#c%d", i), fmt.Sprintf(":c%d", i)
		names[n], values[v] = name, &types.AttributeValueMemberN{Value: strconv.FormatFloat(counts[name], 'f', -1, 64)}
		adds = append(adds, n+" "+v)
	}
	expr := "SET #type = :type, #ttl = :ttl"
	if len(adds) > 0 {
		expr += " ADD " + strings.Join(adds, ", ")
	}
	_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.Table),
		Key:                       key(k.PK, k.SK),
		UpdateExpression:          aws.String(expr),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if err != nil {
		return classify(ctx, fmt.Errorf("add counts to %s %s: %w", k.PK, k.SK, err))
	}
	return nil
}

// ReadCounts reads the numeric attributes of the items of partition pk
// whose sort keys are from lo to hi (both included), by sort key: what
// AddCounts added up (an item past its expiry counts until DynamoDB's TTL
// deletes it).
func (s *Store) ReadCounts(ctx context.Context, pk, lo, hi string) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.Table),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
		ConsistentRead: aws.Bool(true),
	}
	for p := dynamodb.NewQueryPaginator(s.DB, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, classify(ctx, fmt.Errorf("query %s: %w", pk, err))
		}
		for _, av := range page.Items {
			sk := ImageString(av, AttrSK)
			nums := map[string]float64{}
			for name, v := range av {
				if n, ok := v.(*types.AttributeValueMemberN); ok && name != AttrExpires {
					if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
						nums[name] = f
					}
				}
			}
			out[sk] = nums
		}
	}
	return out, nil
}
