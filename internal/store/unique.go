package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Unique makes a field's value unique among one organization's records of
// a type (a company's externalId, say). Each value in use has a uniqueness
// item, keyed by organization, type, field and value and holding the id of
// the record that owns it; the item is created, moved and deleted in the
// same transaction as the record, so two records can never both hold a
// value, however many writers race.
type Unique[T any] struct {
	Field string          // the field's name as clients know it
	Key   func(*T) string // the record's value; "" when it has none
}

// UniqueError is the conflict of a write that would give a second record
// a value that must be unique. It wraps apperr.ErrConflict (409).
type UniqueError struct {
	Field   string // the unique field
	Value   string // the value already in use
	Type    string // the record type, lower case ("company")
	OwnerID string // the record that holds the value
}

func (e *UniqueError) Error() string {
	return fmt.Sprintf("%s %q is already used by %s %s", e.Field, e.Value, e.Type, e.OwnerID)
}

func (e *UniqueError) Unwrap() error { return apperr.ErrConflict }

// ErrorCode is the code of its answer: unique_violation.
func (e *UniqueError) ErrorCode() apperr.Code { return apperr.CodeUniqueViolation }

// ErrorParam is the unique field, at fault.
func (e *UniqueError) ErrorParam() string { return e.Field }

// attrOwner is the string attribute of a uniqueness item naming its record.
const attrOwner = "owner"

// uniqueDoc is the record of a uniqueness item, for operators reading the table.
type uniqueDoc struct {
	Field string `json:"field"`
	Value string `json:"value"`
	ID    string `json:"id"`
}

// errUniqueMoved: a uniqueness item is being written by another
// transaction, or changed between the failed write and the read that
// explains it (or was a leftover and has been removed); the write is worth
// another attempt.
var errUniqueMoved = errors.New("store: uniqueness item changed; try again")

// uniqueKey is the key of the uniqueness item of field=value in org. Long
// values are hashed like lookups, which keeps them exact.
func (c *Collection[T]) uniqueKey(org, field, value string) (string, string) {
	k := uniqueItemKey(org, c.spec.Type, field, value)
	return k.PK, k.SK
}

// uniqueValues are v's values of its unique fields, by field; nil for nil.
func (c *Collection[T]) uniqueValues(v *T) map[string]string {
	if v == nil {
		return nil
	}
	out := map[string]string{}
	for _, u := range c.spec.Unique {
		if k := u.Key(v); k != "" {
			out[u.Field] = k
		}
	}
	return out
}

// uniqueClaim is an operation of a transaction that creates a uniqueness item.
type uniqueClaim struct {
	at           int // index of the operation
	field, value string
}

// uniqueOps appends to ops the operations that move record id's uniqueness
// items from the values before to the values after (nil when the record
// is created or deleted), and says which of them claim a value.
func (c *Collection[T]) uniqueOps(ctx context.Context, org, id string, before, after map[string]string, ops []Op) ([]Op, []uniqueClaim, error) {
	var claims []uniqueClaim
	for _, u := range c.spec.Unique {
		b, a := before[u.Field], after[u.Field]
		if b == a {
			continue
		}
		if b != "" {
			// Release the old value's item if this record holds it. A record
			// stored before its field was unique may hold none, and then
			// another record may hold the item: that one stays.
			pk, sk := c.uniqueKey(org, u.Field, b)
			var doc uniqueDoc
			it, err := c.store.GetItem(ctx, pk, sk, &doc)
			switch {
			case err == nil && it.Strings[attrOwner] == id:
				ops = append(ops, c.store.releaseOp(pk, sk, id))
			case err != nil && !errors.Is(err, apperr.ErrNotFound):
				return nil, nil, err
			}
		}
		if a != "" {
			pk, sk := c.uniqueKey(org, u.Field, a)
			op, err := c.store.CreateOp(Item{PK: pk, SK: sk, Type: c.spec.Type + typeUniqueSuffix,
				Doc: uniqueDoc{Field: u.Field, Value: a, ID: id}, Strings: map[string]string{attrOwner: id}})
			if err != nil {
				return nil, nil, err
			}
			claims = append(claims, uniqueClaim{at: len(ops), field: u.Field, value: a})
			ops = append(ops, op)
		}
	}
	return ops, claims, nil
}

// UniqueOwner is the id of the record of org that holds value (as the
// field's Unique.Key gives it) of the unique field, "" when none does:
// read from the value's uniqueness item, strongly consistent, so that it
// sees every write that completed before. A leftover item whose record is
// gone counts as none.
func (c *Collection[T]) UniqueOwner(ctx context.Context, org, field, value string) (string, error) {
	if value == "" {
		return "", nil
	}
	pk, sk := c.uniqueKey(org, field, value)
	var doc uniqueDoc
	it, err := c.store.GetItem(ctx, pk, sk, &doc)
	if errors.Is(err, apperr.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	owner := it.Strings[attrOwner]
	if _, _, err := c.get(ctx, org, owner); err != nil {
		if errors.Is(err, apperr.ErrNotFound) {
			return "", nil
		}
		return "", err
	}
	return owner, nil
}

// releaseOp deletes a uniqueness item held by id; the transaction fails
// when another record holds it.
func (s *Store) releaseOp(pk, sk, id string) Op {
	return Op{w: types.TransactWriteItem{Delete: &types.Delete{
		TableName:                 aws.String(s.Table),
		Key:                       key(pk, sk),
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR #o = :id"),
		ExpressionAttributeNames:  map[string]string{"#o": attrOwner},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: id}},
	}}}
}

// transact runs ops like Store.Transact; when a claim of a unique value
// fails, the error is a *UniqueError naming the owner (or errUniqueMoved).
func (c *Collection[T]) transact(ctx context.Context, org string, ops []Op, claims []uniqueClaim, onConditionFailed error) error {
	if len(claims) == 0 {
		return c.store.Transact(ctx, onConditionFailed, ops...)
	}
	if deferred(ctx, ops) {
		return nil
	}
	_, err := c.store.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: withActors(ctx, ops)})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, cl := range claims {
			if cl.at >= len(tce.CancellationReasons) {
				continue
			}
			switch aws.ToString(tce.CancellationReasons[cl.at].Code) {
			case "ConditionalCheckFailed":
				return c.clash(ctx, org, cl)
			case "TransactionConflict":
				// Another transaction is claiming the value right now: once
				// it is done, this write either succeeds or meets its owner.
				return errUniqueMoved
			}
		}
	}
	if onConditionFailed == nil {
		onConditionFailed = apperr.ErrConflict
	}
	return writeErr(err, onConditionFailed)
}

// clash explains a failed claim: the record holding the value. A leftover
// item whose record no longer exists is removed (errUniqueMoved).
func (c *Collection[T]) clash(ctx context.Context, org string, cl uniqueClaim) error {
	pk, sk := c.uniqueKey(org, cl.field, cl.value)
	var doc uniqueDoc
	it, err := c.store.GetItem(ctx, pk, sk, &doc)
	if errors.Is(err, apperr.ErrNotFound) {
		return errUniqueMoved
	}
	if err != nil {
		return err
	}
	owner := it.Strings[attrOwner]
	if _, _, err := c.get(ctx, org, owner); errors.Is(err, apperr.ErrNotFound) {
		if err := c.store.Transact(ctx, errUniqueMoved, c.store.releaseOp(pk, sk, owner)); err != nil && !errors.Is(err, errUniqueMoved) {
			return err
		}
		return errUniqueMoved
	}
	return &UniqueError{Field: cl.field, Value: cl.value, Type: strings.ToLower(c.spec.Type), OwnerID: owner}
}

// errTryAgain ends a write whose attempts all met moving uniqueness items.
var errTryAgain = apperr.ConcurrentWrite("the record is being changed by another request; try again")

// uniqueAttempts bounds the attempts of a write that meets moving
// uniqueness items; pauseBeforeAttempt spaces them out.
const uniqueAttempts = 5

// pauseBeforeAttempt waits a short, growing, jittered time before attempt
// n (from 2), so that writers racing for one value do not collide again.
func pauseBeforeAttempt(ctx context.Context, n int) error {
	if n < 2 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(n-1) * time.Duration(5+rand.IntN(20)) * time.Millisecond):
		return nil
	}
}

// Store is the store the collection writes to.
func (c *Collection[T]) Store() *Store { return c.store }

// GetVersion reads one record of org and its version; apperr.ErrNotFound when absent.
func (c *Collection[T]) GetVersion(ctx context.Context, org, id string) (*T, int64, error) {
	return c.get(ctx, org, id)
}

// ReplaceOp is the transaction operation that replaces the record read at
// version with v. The transaction fails when another writer changed the
// record meanwhile. v's unique values must be those it was read with (use
// UpdateTx to change them).
func (c *Collection[T]) ReplaceOp(org string, v *T, version int64) (Op, error) {
	return c.store.ReplaceOp(c.Item(org, v, version+1))
}
