package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attrCount is a rate counter's count.
const attrCount = "n"

// Reserve adds n to the counter at k when the sum stays at most max, in
// one conditional UpdateItem (so concurrent reservers, on any number of
// instances, never take more than max together). It returns the count
// after the add, or ok false and the count as it stands when the add would
// pass max. The counter expires (AttrExpires) at expires. A negative n
// gives back requests reserved and not served (with a max that leaves
// room, it always passes).
func (s *Store) Reserve(ctx context.Context, k Key, n, max int64, expires time.Time) (count int64, ok bool, err error) {
	out, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.Table),
		Key:                      key(k.PK, k.SK),
		UpdateExpression:         aws.String("ADD #n :n SET #e = if_not_exists(#e, :e), #t = if_not_exists(#t, :t)"),
		ConditionExpression:      aws.String("attribute_not_exists(#n) OR #n <= :room"),
		ExpressionAttributeNames: map[string]string{"#n": attrCount, "#e": AttrExpires, "#t": AttrType},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":    &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)},
			":room": &types.AttributeValueMemberN{Value: strconv.FormatInt(max-n, 10)},
			":e":    &types.AttributeValueMemberN{Value: strconv.FormatInt(expires.Unix(), 10)},
			":t":    &types.AttributeValueMemberS{Value: TypeRate},
		},
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return numberAttr(ccf.Item, attrCount), false, nil
	}
	if err != nil {
		return 0, false, writeErr(err, nil)
	}
	return numberAttr(out.Attributes, attrCount), true, nil
}

func numberAttr(item map[string]types.AttributeValue, name string) int64 {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}
