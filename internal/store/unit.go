package store

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// MaxTransactItems is the most items one DynamoDB transaction writes.
const MaxTransactItems = 100

// maxTransactBytes is the most one DynamoDB transaction's items may hold
// in all (4 MB).
const maxTransactBytes = 4 << 20

// Unit collects the writes of several operations (an atomic batch) to
// commit them in one transaction: while a context carries it (WithUnit),
// the store's writes (Transact, Create, a Collection's writes) add their
// operations to it instead of sending them, and Commit sends them all or
// none. Reads still read the table: what the unit holds is not visible
// until it commits, so its operations see the table as it was before it.
// A unit is one sequence of operations: not for concurrent use.
type Unit struct {
	ops []Op
	// ends[i] is the number of ops once operation i had added its own.
	ends []int
}

type unitKey struct{}

// WithUnit returns ctx whose writes are collected by u.
func WithUnit(ctx context.Context, u *Unit) context.Context {
	return context.WithValue(ctx, unitKey{}, u)
}

// InUnit reports whether ctx's writes are collected by a unit.
func InUnit(ctx context.Context) bool { return unitOf(ctx) != nil }

// unitOf is the unit ctx's writes are collected by, nil when they are sent.
func unitOf(ctx context.Context) *Unit {
	u, _ := ctx.Value(unitKey{}).(*Unit)
	return u
}

// deferred adds ops to the unit of ctx and reports whether there is one (the
// writes are then done, as far as their caller is concerned).
func deferred(ctx context.Context, ops []Op) bool {
	u := unitOf(ctx)
	if u == nil {
		return false
	}
	u.ops = append(u.ops, withActorOps(ctx, ops)...)
	return true
}

// withActorOps are ops with ctx's actor stamped on their puts now, as
// sending them would.
func withActorOps(ctx context.Context, ops []Op) []Op {
	ws := withActors(ctx, ops)
	out := make([]Op, len(ws))
	for i, w := range ws {
		out[i] = Op{w: w, ahead: ops[i].ahead, plain: ops[i].plain}
	}
	return out
}

// End marks the end of one operation's writes: a failed commit names the
// operation whose write failed by this count.
func (u *Unit) End() { u.ends = append(u.ends, len(u.ops)) }

// Discard forgets the writes since the last End: an operation that failed
// before it completed.
func (u *Unit) Discard() {
	n := 0
	if len(u.ends) > 0 {
		n = u.ends[len(u.ends)-1]
	}
	u.ops = u.ops[:n]
}

// Writes is the number of item writes the unit holds.
func (u *Unit) Writes() int { return len(u.ops) }

// operation is the index of the operation that added op i.
func (u *Unit) operation(i int) int {
	for op, end := range u.ends {
		if i < end {
			return op
		}
	}
	return len(u.ends)
}

// UnitError is a commit that failed: Operation is the index of the
// operation whose write failed (-1 when no one operation is at fault),
// Err why.
type UnitError struct {
	Operation int
	Err       error
}

func (e *UnitError) Error() string { return e.Err.Error() }
func (e *UnitError) Unwrap() error { return e.Err }

// Commit writes the unit's operations in one transaction. It refuses
// (400, naming the limit) a unit of more than MaxTransactItems writes or
// of more than 4 MB, or one that writes an item twice (naming both
// operations); when a condition fails, the error names the operation and
// says which condition.
func (s *Store) Commit(ctx context.Context, u *Unit) error {
	if len(u.ops) == 0 {
		return nil
	}
	if len(u.ops) > MaxTransactItems {
		return &UnitError{-1, apperr.Invalid("atomic", "the operations make %d item writes; one DynamoDB transaction holds at most %d "+
			"(a record with unique fields or a search index writes 2 or 3 items): send fewer operations, or send them without atomic",
			len(u.ops), MaxTransactItems)}
	}
	size := 0
	seen := map[string]int{}
	for i, op := range u.ops {
		k := opKey(op)
		if j, ok := seen[k]; ok {
			return &UnitError{u.operation(i), apperr.Invalid("atomic", "operations %d and %d write the same item (one record, or one unique value); "+
				"an atomic batch writes each at most once", u.operation(j), u.operation(i))}
		}
		seen[k] = i
		size += opSize(op)
	}
	if size > maxTransactBytes {
		return &UnitError{-1, apperr.Invalid("atomic", "the operations write %d bytes; one DynamoDB transaction holds at most 4 MB: "+
			"send fewer operations, or send them without atomic", size)}
	}
	_, err := s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes(u.ops)})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for i, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed":
				return &UnitError{u.operation(i), conditionFailed(u.ops[i])}
			case "TransactionConflict":
				return &UnitError{u.operation(i), apperr.ConcurrentWrite("a record of the batch is being changed by another request; try again")}
			}
		}
	}
	return &UnitError{-1, writeErr(err, apperr.ErrConflict)}
}

// conditionFailed says which condition of op failed: a unique value
// taken, a record changed since it was read, one created or deleted meanwhile.
func conditionFailed(op Op) error {
	pk := ""
	if av, ok := opKeyAttrs(op)[AttrPK].(*types.AttributeValueMemberS); ok {
		pk = av.Value
	}
	switch {
	case strings.Contains(pk, "#UNIQUE#"):
		return apperr.Conflict("a unique value it sets is already used by another record")
	case op.w.Put != nil && op.w.Put.ConditionExpression != nil && strings.HasPrefix(*op.w.Put.ConditionExpression, "attribute_not_exists"):
		return apperr.Conflict("a record with this id already exists")
	case op.w.Delete != nil:
		return apperr.Conflict("the record was deleted or changed by another request since it was read")
	default:
		return apperr.Conflict("the record was changed by another request since it was read; read it again and retry")
	}
}

// opKeyAttrs is the key of the item op writes.
func opKeyAttrs(op Op) map[string]types.AttributeValue {
	switch {
	case op.w.Put != nil:
		return map[string]types.AttributeValue{AttrPK: op.w.Put.Item[AttrPK], AttrSK: op.w.Put.Item[AttrSK]}
	case op.w.Delete != nil:
		return op.w.Delete.Key
	case op.w.Update != nil:
		return op.w.Update.Key
	case op.w.ConditionCheck != nil:
		return op.w.ConditionCheck.Key
	}
	return nil
}

// opKey names the item op writes, for finding two writes of one item.
func opKey(op Op) string {
	k := opKeyAttrs(op)
	s := func(name string) string {
		if v, ok := k[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	return s(AttrPK) + "\x00" + s(AttrSK)
}

// opSize estimates the bytes op writes, as DynamoDB counts them: the
// names and values of its item's attributes.
func opSize(op Op) int {
	if op.w.Put == nil {
		return 100
	}
	n := 0
	for k, v := range op.w.Put.Item {
		n += len(k) + attrSize(v)
	}
	return n
}

func attrSize(v types.AttributeValue) int {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return len(x.Value)
	case *types.AttributeValueMemberB:
		return len(x.Value)
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range x.Value {
			n += len(k) + attrSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += attrSize(e) + 1
		}
		return n
	}
	return 1
}
