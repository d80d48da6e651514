package store

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Expiring items (idempotency records, webhook delivery markers) carry
// AttrExpires, the table's TTL attribute, in epoch seconds. DynamoDB deletes
// such items some time (up to days) after they expire and DynamoDB Local
// never does, so an expired item counts as absent: GetLive does not return
// it and CreateExpiringOp overwrites it.

// enableTTL turns on the table's TTL over AttrExpires. TTL only reclaims
// space (readers already ignore expired items), so a failure is logged,
// never fatal.
func enableTTL(ctx context.Context, db *dynamodb.Client, name string) error {
	_, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(AttrExpires),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil && !strings.Contains(err.Error(), "already enabled") {
		slog.WarnContext(ctx, "could not enable the table's time to live; expired items stay until deleted", "table", name, "err", err)
	}
	return nil
}

// ensureTTL enables TTL on an existing table where it is off.
func ensureTTL(ctx context.Context, db *dynamodb.Client, name string) error {
	res, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err == nil && res.TimeToLiveDescription != nil {
		switch res.TimeToLiveDescription.TimeToLiveStatus {
		case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
			return nil
		}
	}
	return enableTTL(ctx, db, name)
}

// expiresAt is the epoch-seconds value of t, rounded up so an item never
// expires early.
func expiresAt(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// expired reports whether an item with these numeric attributes has expired at now.
func expired(numbers map[string]int64, now time.Time) bool {
	exp, ok := numbers[AttrExpires]
	return ok && exp > 0 && exp <= now.Unix()
}

// CreateExpiringOp creates it, to expire at expires, unless a live item
// holds its key: an expired item there is overwritten. As an operation of
// a transaction its condition fails when a live item exists.
func (s *Store) CreateExpiringOp(it Item, expires time.Time) (Op, error) {
	if it.Version == 0 {
		it.Version = 1
	}
	it.Numbers = withExpiry(it.Numbers, expires)
	return s.putOp(it, "attribute_not_exists(pk) OR #x <= :now", map[string]string{"#x": AttrExpires},
		map[string]types.AttributeValue{":now": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Unix(), 10)}})
}

// ReplaceExpiringOp replaces an item whose stored version is it.Version-1,
// to expire at expires.
func (s *Store) ReplaceExpiringOp(it Item, expires time.Time) (Op, error) {
	it.Numbers = withExpiry(it.Numbers, expires)
	return s.ReplaceOp(it)
}

func withExpiry(numbers map[string]int64, expires time.Time) map[string]int64 {
	out := map[string]int64{AttrExpires: expiresAt(expires)}
	for k, v := range numbers {
		if k != AttrExpires {
			out[k] = v
		}
	}
	return out
}

// GetLive reads one item (strongly consistent) into out, like GetItem, but
// an expired item is apperr.ErrNotFound.
func (s *Store) GetLive(ctx context.Context, pk, sk string, out any) (Item, error) {
	it, err := s.GetItem(ctx, pk, sk, out)
	if err != nil {
		return it, err
	}
	if expired(it.Numbers, time.Now()) {
		return Item{}, apperr.ErrNotFound
	}
	return it, nil
}

// DeleteVersionOp deletes an item only while its stored version is version.
func (s *Store) DeleteVersionOp(pk, sk string, version int64) Op {
	return Op{w: types.TransactWriteItem{Delete: &types.Delete{
		TableName:                 aws.String(s.Table),
		Key:                       key(pk, sk),
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": AttrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(version, 10)}},
	}}}
}
