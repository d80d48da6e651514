// Package store is the single-table DynamoDB access layer: typed key
// builders, the item codec, conditional writes, version-checked updates and
// paged queries. Every organization-owned item's partition key starts with
// the organization id, so a lookup can never cross organizations.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Store is the table and the client that reaches it.
type Store struct {
	DB    *dynamodb.Client
	Table string
}

// New returns a Store over the named table.
func New(db *dynamodb.Client, table string) *Store { return &Store{DB: db, Table: table} }

// Ping checks that the table is reachable.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table)})
	return err
}

// OrgPartition is the partition of one item type within one organization.
func OrgPartition(org, typ string) string { return "ORG#" + org + "#" + typ }

// Item is one stored record: its keys, the record itself (stored as JSON so
// that it round-trips exactly, nulls and free-form objects included), and
// the index attributes that give it alternate access paths.
type Item struct {
	PK, SK  string
	Type    string
	Doc     any
	Version int64
	Indexes map[string]string // attribute name -> value, e.g. gsi1pk

	raw map[string]types.AttributeValue // as read, for decoding
}

func (it Item) encode() (map[string]types.AttributeValue, error) {
	doc, err := json.Marshal(it.Doc)
	if err != nil {
		return nil, fmt.Errorf("encode %s item: %w", it.Type, err)
	}
	av := map[string]types.AttributeValue{
		AttrPK:      &types.AttributeValueMemberS{Value: it.PK},
		AttrSK:      &types.AttributeValueMemberS{Value: it.SK},
		AttrType:    &types.AttributeValueMemberS{Value: it.Type},
		AttrDoc:     &types.AttributeValueMemberS{Value: string(doc)},
		AttrVersion: &types.AttributeValueMemberN{Value: strconv.FormatInt(it.Version, 10)},
	}
	for k, v := range it.Indexes {
		if v != "" { // empty key values are not allowed; absence keeps the index sparse
			av[k] = &types.AttributeValueMemberS{Value: v}
		}
	}
	return av, nil
}

// decode unmarshals an item's record into out and returns its version.
func decode(av map[string]types.AttributeValue, out any) (int64, error) {
	doc, ok := av[AttrDoc].(*types.AttributeValueMemberS)
	if !ok {
		return 0, errors.New("stored item has no doc attribute")
	}
	if err := json.Unmarshal([]byte(doc.Value), out); err != nil {
		return 0, fmt.Errorf("decode stored item: %w", err)
	}
	var version int64
	if n, ok := av[AttrVersion].(*types.AttributeValueMemberN); ok {
		version, _ = strconv.ParseInt(n.Value, 10, 64)
	}
	return version, nil
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: pk},
		AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

// Get reads one item (strongly consistent) into out and returns its version;
// apperr.ErrNotFound when absent.
func (s *Store) Get(ctx context.Context, pk, sk string, out any) (int64, error) {
	res, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.Table),
		Key:            key(pk, sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, fmt.Errorf("get item: %w", err)
	}
	if res.Item == nil {
		return 0, apperr.ErrNotFound
	}
	return decode(res.Item, out)
}

// Create writes a new item; apperr.ErrConflict when the key exists.
func (s *Store) Create(ctx context.Context, it Item) error {
	op, err := s.CreateOp(it)
	if err != nil {
		return err
	}
	_, err = s.DB.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           op.Put.TableName,
		Item:                op.Put.Item,
		ConditionExpression: op.Put.ConditionExpression,
	})
	return writeErr(err, apperr.Conflict("a record with this id already exists"))
}

// CreateOp is Create as one operation of a transaction.
func (s *Store) CreateOp(it Item) (types.TransactWriteItem, error) {
	if it.Version == 0 {
		it.Version = 1
	}
	av, err := it.encode()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName:           aws.String(s.Table),
		Item:                av,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}, nil
}

// ReplaceOp replaces an item whose stored version is it.Version-1; it fails
// the transaction when another writer got there first.
func (s *Store) ReplaceOp(it Item) (types.TransactWriteItem, error) {
	av, err := it.encode()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                 aws.String(s.Table),
		Item:                      av,
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": AttrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(it.Version-1, 10)}},
	}}, nil
}

// DeleteOp deletes an existing item; the transaction fails when it is absent.
func (s *Store) DeleteOp(pk, sk string) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{
		TableName:           aws.String(s.Table),
		Key:                 key(pk, sk),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}}
}

// Delete removes an existing item; apperr.ErrNotFound when absent.
func (s *Store) Delete(ctx context.Context, pk, sk string) error {
	_, err := s.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:           aws.String(s.Table),
		Key:                 key(pk, sk),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	return writeErr(err, apperr.ErrNotFound)
}

// Transact runs write operations atomically. When a condition fails it
// returns onConditionFailed (nil means apperr.ErrConflict).
func (s *Store) Transact(ctx context.Context, onConditionFailed error, ops ...types.TransactWriteItem) error {
	if len(ops) == 1 {
		return s.single(ctx, onConditionFailed, ops[0])
	}
	_, err := s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
	if onConditionFailed == nil {
		onConditionFailed = apperr.ErrConflict
	}
	return writeErr(err, onConditionFailed)
}

// single runs one transaction operation as a plain write: half the cost.
func (s *Store) single(ctx context.Context, onConditionFailed error, op types.TransactWriteItem) error {
	if onConditionFailed == nil {
		onConditionFailed = apperr.ErrConflict
	}
	var err error
	switch {
	case op.Put != nil:
		_, err = s.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: op.Put.TableName, Item: op.Put.Item,
			ConditionExpression: op.Put.ConditionExpression, ExpressionAttributeNames: op.Put.ExpressionAttributeNames,
			ExpressionAttributeValues: op.Put.ExpressionAttributeValues})
	case op.Delete != nil:
		_, err = s.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: op.Delete.TableName, Key: op.Delete.Key,
			ConditionExpression: op.Delete.ConditionExpression, ExpressionAttributeNames: op.Delete.ExpressionAttributeNames,
			ExpressionAttributeValues: op.Delete.ExpressionAttributeValues})
	case op.Update != nil:
		_, err = s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: op.Update.TableName, Key: op.Update.Key,
			UpdateExpression: op.Update.UpdateExpression, ConditionExpression: op.Update.ConditionExpression,
			ExpressionAttributeNames: op.Update.ExpressionAttributeNames, ExpressionAttributeValues: op.Update.ExpressionAttributeValues})
	case op.ConditionCheck != nil:
		return errors.New("store: a lone condition check is not a write")
	}
	return writeErr(err, onConditionFailed)
}

// writeErr maps DynamoDB write failures to the shared error kinds.
func writeErr(err, onConditionFailed error) error {
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return onConditionFailed
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" {
				return onConditionFailed
			}
		}
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "TransactionConflict" {
				return apperr.Conflict("the record is being changed by another request; try again")
			}
		}
	}
	if isTooLarge(err) {
		return apperr.TooLarge("the record exceeds the 400 KB item size limit of the table")
	}
	return fmt.Errorf("write item: %w", err)
}

func isTooLarge(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Item size has exceeded") || strings.Contains(msg, "Item size to update has exceeded")
}
