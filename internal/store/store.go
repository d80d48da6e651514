// Package store is the single-table DynamoDB access layer: typed key
// builders (keys.go holds the table's whole key design), the item codec,
// conditional writes, version-checked updates and paged queries. Every
// organization-owned item's partition key starts with the organization id,
// so a lookup can never cross organizations.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// Store is the table and the client that reaches it.
type Store struct {
	DB    *dynamodb.Client
	Table string
	// PageReads, when positive, is what a page of a list may read in
	// place of MaxPageReads (tests lower it to exercise the bound).
	PageReads int
}

// New returns a Store over the named table.
func New(db *dynamodb.Client, table string) *Store { return &Store{DB: db, Table: table} }

// Ping checks that the table is reachable.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table)})
	return err
}

// Item is one stored record: its keys, the record itself (stored as JSON so
// that it round-trips exactly, nulls and free-form objects included), and
// the index attributes that give it alternate access paths.
type Item struct {
	PK, SK  string
	Type    string
	Doc     any
	Version int64
	Indexes map[string]string // attribute name -> value, e.g. gsi1pk
	Numbers map[string]int64  // numeric attributes outside the record (counters)
	Strings map[string]string // string attributes outside the record, read back by GetItem
	// Shape, when set, stamps the doc as the record exactly as clients see
	// it in that shape (AttrShape; see encoded.go).
	Shape string
}

func (it Item) encode() (map[string]types.AttributeValue, error) {
	doc, err := jsonbody.Marshal(it.Doc)
	if err != nil {
		return nil, fmt.Errorf("encode %s item: %w", it.Type, err)
	}
	av := map[string]types.AttributeValue{
		AttrPK:      &types.AttributeValueMemberS{Value: it.PK},
		AttrSK:      &types.AttributeValueMemberS{Value: it.SK},
		AttrType:    &types.AttributeValueMemberS{Value: it.Type},
		AttrVersion: &types.AttributeValueMemberN{Value: strconv.FormatInt(it.Version, 10)},
	}
	if it.Shape != "" {
		av[AttrShape] = &types.AttributeValueMemberS{Value: shapeStamp(it.Shape, doc)}
	}
	for _, m := range []map[string]string{it.Indexes, it.Strings} {
		for k, v := range m {
			if v != "" { // empty key values are not allowed; absence keeps the index sparse
				av[k] = &types.AttributeValueMemberS{Value: v}
			}
		}
	}
	for k, v := range it.Numbers {
		av[k] = &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	av[AttrDoc] = docValue(doc, itemSize(av))
	return av, nil
}

// decode unmarshals an item's record into out and returns its version. A
// record that cannot be decoded is an *UndecodableError.
func decode(av map[string]types.AttributeValue, out any) (int64, error) {
	version := itemVersion(av)
	doc, ok, err := docText(av)
	if !ok {
		return version, undecodable(av, version, "it has no doc attribute")
	}
	if err != nil {
		return version, undecodable(av, version, err.Error())
	}
	// Numbers keep their exact text in free-form fields (json.Number), so a
	// 64-bit id a client stored comes back unchanged.
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return version, undecodable(av, version, decodeProblem(err))
	}
	setVersion(out, version)
	return version, nil
}

// itemVersion is an item's version, 0 when it has none.
func itemVersion(av map[string]types.AttributeValue) int64 {
	n, ok := av[AttrVersion].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	version, _ := strconv.ParseInt(n.Value, 10, 64)
	return version
}

// UndecodableError is a stored item whose record cannot be decoded (such
// as JSON nested deeper than the decoder allows, or a damaged item). Its
// message names the item's key and the problem, never the record's content.
type UndecodableError struct {
	PK, SK  string
	Problem string // what is wrong, in words that quote nothing of the record
	Version int64
	raw     map[string]types.AttributeValue
}

func (e *UndecodableError) Error() string {
	return fmt.Sprintf("the stored item %s %s cannot be decoded: %s", e.PK, e.SK, e.Problem)
}

func undecodable(av map[string]types.AttributeValue, version int64, problem string) *UndecodableError {
	str := func(k string) string {
		v, _ := av[k].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	return &UndecodableError{PK: str(AttrPK), SK: str(AttrSK), Problem: problem, Version: version, raw: av}
}

// decodeProblem describes a decoding error without quoting the record:
// the JSON decoder's messages can include a character or a number of it.
func decodeProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && strings.Contains(syn.Error(), "max depth"):
		return "its JSON is nested deeper than the decoder allows"
	case errors.As(err, &syn):
		return fmt.Sprintf("its JSON is invalid at byte %d", syn.Offset)
	case errors.As(err, &typ):
		kind, _, _ := strings.Cut(typ.Value, " ")
		return fmt.Sprintf("its field %q holds a JSON %s, which does not fit the record", typ.Field, kind)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "its JSON ends early"
	default:
		return "its JSON does not fit the record"
	}
}

// reported holds the keys of undecodable items already logged.
var reported sync.Map

// reportUndecodable logs an undecodable item once per process, by its key.
func reportUndecodable(e *UndecodableError) {
	if _, seen := reported.LoadOrStore(e.PK+"\x00"+e.SK, true); !seen {
		slog.Error("a stored item cannot be decoded; lists skip it or show a placeholder", "pk", e.PK, "sk", e.SK, "problem", e.Problem)
	}
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
	it, err := s.GetItem(ctx, pk, sk, out)
	return it.Version, err
}

// GetItem is Get returning the item's attributes outside the record too.
func (s *Store) GetItem(ctx context.Context, pk, sk string, out any) (Item, error) {
	av, err := s.getItem(ctx, pk, sk)
	if err != nil {
		return Item{}, err
	}
	return decodeItem(av, out)
}

// getItem reads one item's attributes (strongly consistent);
// apperr.ErrNotFound when absent.
func (s *Store) getItem(ctx context.Context, pk, sk string) (map[string]types.AttributeValue, error) {
	res, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.Table),
		Key:            key(pk, sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("get item: %w", err)
	}
	if res.Item == nil {
		return nil, apperr.ErrNotFound
	}
	return res.Item, nil
}

// decodeItem decodes the record into out and collects the other attributes.
func decodeItem(av map[string]types.AttributeValue, out any) (Item, error) {
	version, err := decode(av, out)
	if err != nil {
		return Item{}, err
	}
	it := Item{Doc: out, Version: version, Strings: map[string]string{}, Numbers: map[string]int64{}}
	for k, v := range av {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			switch k {
			case AttrPK:
				it.PK = v.Value
			case AttrSK:
				it.SK = v.Value
			case AttrType:
				it.Type = v.Value
			case AttrDoc, AttrShape:
			default:
				it.Strings[k] = v.Value
			}
		case *types.AttributeValueMemberN:
			if k != AttrVersion {
				it.Numbers[k], _ = strconv.ParseInt(v.Value, 10, 64)
			}
		}
	}
	return it, nil
}

// CounterOp adds delta to the numeric attribute attr of an existing item.
// A positive delta must keep attr below the item's limitAttr; when it would
// not (or the item is absent) the operation's condition fails.
func (s *Store) CounterOp(pk, sk, attr string, delta int64, limitAttr string) Op {
	names := map[string]string{"#c": attr}
	values := map[string]types.AttributeValue{
		":d":    &types.AttributeValueMemberN{Value: strconv.FormatInt(delta, 10)},
		":zero": &types.AttributeValueMemberN{Value: "0"},
	}
	cond := "attribute_exists(pk)"
	if delta > 0 && limitAttr != "" {
		names["#l"] = limitAttr
		cond += " AND (attribute_not_exists(#c) OR #c < #l)"
	}
	return Op{w: types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.Table),
		Key:                       key(pk, sk),
		UpdateExpression:          aws.String("SET #c = if_not_exists(#c, :zero) + :d"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}}
}

// SetStrings sets string attributes outside the record of an existing item,
// without touching the record or its version (such as a last-used time).
func (s *Store) SetStrings(ctx context.Context, pk, sk string, attrs map[string]string) error {
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	var sets []string
	i := 0
	for k, v := range attrs {
		n, val := fmt.Sprintf("#a%d", i), fmt.Sprintf(":a%d", i)
		names[n], values[val] = k, &types.AttributeValueMemberS{Value: v}
		sets = append(sets, n+" = "+val)
		i++
	}
	_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.Table),
		Key:                       key(pk, sk),
		UpdateExpression:          aws.String("SET " + strings.Join(sets, ", ")),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	return writeErr(err, apperr.ErrNotFound)
}

// Op is one write operation of a transaction: built by the store's op
// constructors (CreateOp, ReplaceOp, DeleteOp, CounterOp, ...), run by
// Transact or passed as the extra operations of a Collection write. It is
// opaque, so that the SDK's types stay inside the store.
type Op struct {
	w types.TransactWriteItem
	// ahead is set on the change feed entry of a write that is not a
	// delete: the time the entry carries. Beside one other write, such an
	// entry is written ahead of it rather than in a transaction (see
	// Transact).
	ahead time.Time
	// plain is set on a put written as it is: not stamped with the actor
	// and the time (withActors) nor tagged with a write token (put). A
	// change feed entry is plain: nothing reads those from it, and every
	// search reads its entries again for FeedWindow.
	plain bool
}

// writes are the SDK operations of ops.
func writes(ops []Op) []types.TransactWriteItem {
	out := make([]types.TransactWriteItem, len(ops))
	for i, op := range ops {
		out[i] = op.w
	}
	return out
}

// Create writes a new item; apperr.ErrConflict when the key exists.
func (s *Store) Create(ctx context.Context, it Item) error {
	op, err := s.CreateOp(it)
	if err != nil {
		return err
	}
	if deferred(ctx, []Op{op}) {
		return nil
	}
	return writeErr(s.put(ctx, op.w.Put), apperr.Conflict("a record with this id already exists"))
}

// put writes a conditional put, tagged with a token of its own. When the
// condition fails because the item already carries this put's token, the
// put succeeded before: an attempt whose answer was lost (a timeout) and
// that the SDK sent again. It is then reported as done; any other writer's
// item has another token and stays a failed condition.
func (s *Store) put(ctx context.Context, p *types.Put) error {
	token := ids.Random(16)
	item := withActor(ctx, p.Item)
	item[AttrWriteToken] = &types.AttributeValueMemberS{Value: token}
	_, err := s.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: p.TableName, Item: item,
		ConditionExpression: p.ConditionExpression, ExpressionAttributeNames: p.ExpressionAttributeNames,
		ExpressionAttributeValues:           p.ExpressionAttributeValues,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if t, ok := ccf.Item[AttrWriteToken].(*types.AttributeValueMemberS); ok && t.Value == token {
			return nil
		}
	}
	return err
}

// CreateOp is Create as one operation of a transaction.
func (s *Store) CreateOp(it Item) (Op, error) {
	if it.Version == 0 {
		it.Version = 1
	}
	return s.putOp(it, "attribute_not_exists(pk)", nil, nil)
}

// ReplaceOp replaces an item whose stored version is it.Version-1; it fails
// the transaction when another writer got there first.
func (s *Store) ReplaceOp(it Item) (Op, error) {
	return s.putOp(it, "#v = :v", map[string]string{"#v": AttrVersion},
		map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(it.Version-1, 10)}})
}

// OverwriteOp replaces an existing item whatever its version: for items
// derived from another record whose own version check serializes writers.
func (s *Store) OverwriteOp(it Item) (Op, error) {
	return s.putOp(it, "attribute_exists(pk)", nil, nil)
}

// PutOp writes an item whether or not it exists: for settings items that
// carry no version (an organization's rate limits).
func (s *Store) PutOp(it Item) (Op, error) { return s.putOp(it, "", nil, nil) }

func (s *Store) putOp(it Item, cond string, names map[string]string, values map[string]types.AttributeValue) (Op, error) {
	av, err := it.encode()
	if err != nil {
		return Op{}, err
	}
	var condition *string
	if cond != "" {
		condition = aws.String(cond)
	}
	return Op{w: types.TransactWriteItem{Put: &types.Put{
		TableName:                 aws.String(s.Table),
		Item:                      av,
		ConditionExpression:       condition,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}}, nil
}

// DeleteOp deletes an existing item; the transaction fails when it is absent.
func (s *Store) DeleteOp(pk, sk string) Op {
	return Op{w: types.TransactWriteItem{Delete: &types.Delete{
		TableName:           aws.String(s.Table),
		Key:                 key(pk, sk),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}}}
}

// ExistsOp writes nothing: it is a condition of its transaction that the
// item exists when the transaction commits.
func (s *Store) ExistsOp(pk, sk string) Op {
	return Op{w: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:           aws.String(s.Table),
		Key:                 key(pk, sk),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}}}
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
//
// One exception halves the cost of the most common write, a record and
// its change feed entry: the entry is written first, on its own, and the
// record after it as a plain write (two single-item writes cost half a
// transaction of both; see writeAhead).
func (s *Store) Transact(ctx context.Context, onConditionFailed error, ops ...Op) error {
	if deferred(ctx, ops) {
		return nil
	}
	if len(ops) == 1 {
		return s.single(ctx, onConditionFailed, ops[0].w)
	}
	if entry, write, ok := aheadOf(ops); ok {
		return s.writeAhead(ctx, onConditionFailed, entry, write)
	}
	_, err := s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: withActors(ctx, ops)})
	if onConditionFailed == nil {
		onConditionFailed = apperr.ErrConflict
	}
	return writeErr(err, onConditionFailed)
}

// aheadOf reports whether ops are one write and the feed entry of a write
// that is not a delete, and returns them.
func aheadOf(ops []Op) (entry, write Op, ok bool) {
	if len(ops) != 2 {
		return Op{}, Op{}, false
	}
	entry, write = ops[0], ops[1]
	if entry.ahead.IsZero() {
		entry, write = write, entry
	}
	ok = !entry.ahead.IsZero() && write.ahead.IsZero() && write.w.ConditionCheck == nil
	return entry, write, ok
}

// writeAhead writes a change feed entry, then the write it announces.
// Atomicity is not needed for the feed's readers (see feed.go): one may
// see the entry before the record, and reads the record again until it
// comes; an entry whose write then fails (a lost race, a failed call)
// names a version that never comes, and the reader keeps the record as
// stored. What the reader does need is that the record is visible within
// FeedWindow of the entry's time, as a transaction's would be: both calls
// share one deadline, MaxCallTimeout after that time.
func (s *Store) writeAhead(ctx context.Context, onConditionFailed error, entry, write Op) error {
	ctx, cancel := context.WithDeadline(ctx, entry.ahead.Add(MaxCallTimeout))
	defer cancel()
	p := entry.w.Put
	if _, err := s.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item}); err != nil {
		return writeErr(err, apperr.ConcurrentWrite("the change feed entry of this write could not be written; try again"))
	}
	return s.single(ctx, onConditionFailed, write.w)
}

// single runs one transaction operation as a plain write: half the cost.
func (s *Store) single(ctx context.Context, onConditionFailed error, op types.TransactWriteItem) error {
	if onConditionFailed == nil {
		onConditionFailed = apperr.ErrConflict
	}
	var err error
	switch {
	case op.Put != nil:
		err = s.put(ctx, op.Put)
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
	var held *types.TransactionConflictException // a plain write to an item a transaction holds
	if errors.As(err, &held) {
		return apperr.ConcurrentWrite("the record is being changed by another request; try again")
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
				return apperr.ConcurrentWrite("the record is being changed by another request; try again")
			}
		}
	}
	if isTooLarge(err) {
		return apperr.RecordTooLarge("the record exceeds the 400 KB item size limit of the table")
	}
	return fmt.Errorf("write item: %w", err)
}

func isTooLarge(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Item size has exceeded") || strings.Contains(msg, "Item size to update has exceeded")
}
