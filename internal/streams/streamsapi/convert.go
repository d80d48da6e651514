package streamsapi

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/sourcebase/sourcebase/internal/streams"
)

// FromStreams converts records read through the DynamoDB Streams API. The
// binary values share their bytes with rs.
func FromStreams(rs []streamtypes.Record) []streams.Record {
	out := make([]streams.Record, 0, len(rs))
	for _, r := range rs {
		rec := streams.Record{
			ID:    aws.ToString(r.EventID),
			Name:  string(r.EventName),
			ByTTL: r.UserIdentity != nil && aws.ToString(r.UserIdentity.Type) == streams.TTLIdentityType && aws.ToString(r.UserIdentity.PrincipalId) == streams.TTLIdentityPrincipal,
		}
		if c := r.Dynamodb; c != nil {
			rec.Sequence = aws.ToString(c.SequenceNumber)
			if c.ApproximateCreationDateTime != nil {
				rec.At = c.ApproximateCreationDateTime.UTC()
			}
			rec.Keys, rec.Old, rec.New = streamItem(c.Keys), streamItem(c.OldImage), streamItem(c.NewImage)
		}
		out = append(out, rec)
	}
	return out
}

// streamItem converts the attributes of an item image; an empty image is nil.
func streamItem(m map[string]streamtypes.AttributeValue) map[string]types.AttributeValue {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for name, v := range m {
		out[name] = streamValue(v)
	}
	return out
}

// streamValue converts one attribute value. The two SDK packages declare
// the same union; a member the SDK did not know (a type added to the API
// later) stays an UnknownUnionMember with the same tag and bytes.
func streamValue(v streamtypes.AttributeValue) types.AttributeValue {
	switch v := v.(type) {
	case *streamtypes.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *streamtypes.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *streamtypes.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: v.Value}
	case *streamtypes.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *streamtypes.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *streamtypes.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: v.Value}
	case *streamtypes.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: v.Value}
	case *streamtypes.AttributeValueMemberBS:
		return &types.AttributeValueMemberBS{Value: v.Value}
	case *streamtypes.AttributeValueMemberL:
		out := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			out[i] = streamValue(e)
		}
		return &types.AttributeValueMemberL{Value: out}
	case *streamtypes.AttributeValueMemberM:
		out := make(map[string]types.AttributeValue, len(v.Value))
		for k, e := range v.Value {
			out[k] = streamValue(e)
		}
		return &types.AttributeValueMemberM{Value: out}
	case *streamtypes.UnknownUnionMember:
		return &types.UnknownUnionMember{Tag: v.Tag, Value: v.Value}
	}
	return nil
}
