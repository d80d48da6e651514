package store

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// A Fetch is one record read beside others in one strongly consistent
// BatchGetItem (FetchAll): a caller that needs records of several
// collections at once (a run and its workflow) pays one call for them.
// Collection.Fetch makes one.
type Fetch interface {
	isDone() bool
	readKey() Key
	readStore() *Store
	take(av map[string]types.AttributeValue)
	fail(err error)
}

// Pending is a record of a Collection to be read by FetchAll; Result is
// then what Collection.Get would have answered.
type Pending[T any] struct {
	c    *Collection[T]
	key  Key
	done bool
	v    *T
	err  error
}

// Fetch is a read of org's record id, for FetchAll.
func (c *Collection[T]) Fetch(org, id string) *Pending[T] {
	p := &Pending[T]{c: c, key: RecordKey(org, c.spec.Type, id)}
	if id == "" || len(id) > MaxIDLength {
		p.done, p.err = true, apperr.ErrNotFound
	}
	return p
}

// Result is the record read (as Collection.Get answers it), or why not:
// apperr.ErrNotFound when there is none, the call's error when it failed.
func (p *Pending[T]) Result() (*T, error) {
	if !p.done {
		return nil, errors.New("store: the record was not read (Pending.Result before FetchAll)")
	}
	return p.v, p.err
}

func (p *Pending[T]) isDone() bool      { return p.done }
func (p *Pending[T]) readKey() Key      { return p.key }
func (p *Pending[T]) readStore() *Store { return p.c.store }
func (p *Pending[T]) fail(err error)    { p.done, p.err = true, err }
func (p *Pending[T]) take(av map[string]types.AttributeValue) {
	v := new(T)
	_, err := decodeItem(av, v)
	if err == nil {
		p.c.view(v)
	}
	p.done = true
	p.v, p.err = p.c.orPlaceholder(v, err)
	if p.err != nil {
		p.v = nil
	}
}

// FetchAll reads the records of reads (at most MaxBatch, of one store) in
// one strongly consistent BatchGetItem, plus retries of the keys DynamoDB
// leaves unprocessed. A record not found is its read's apperr.ErrNotFound;
// the call's error is that of every read left unread, and FetchAll's.
func FetchAll(ctx context.Context, reads ...Fetch) error {
	byKey := map[string][]Fetch{}
	var keys []map[string]types.AttributeValue
	var st *Store
	for _, r := range reads {
		if r.isDone() {
			continue
		}
		k := r.readKey()
		id := k.PK + "\x00" + k.SK
		if byKey[id] == nil {
			keys = append(keys, key(k.PK, k.SK))
		}
		byKey[id] = append(byKey[id], r)
		st = r.readStore()
	}
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > MaxBatch {
		return errors.New("store: FetchAll of more than MaxBatch records")
	}
	var what []string
	for _, r := range reads {
		what = append(what, r.readKey().SK)
	}
	err := st.batchGetKeys(ctx, strings.Join(what, ", "), keys, func(av map[string]types.AttributeValue) error {
		pk, _ := av[AttrPK].(*types.AttributeValueMemberS)
		sk, _ := av[AttrSK].(*types.AttributeValueMemberS)
		if pk == nil || sk == nil {
			return nil
		}
		id := pk.Value + "\x00" + sk.Value
		for _, r := range byKey[id] {
			r.take(av)
		}
		delete(byKey, id)
		return nil
	})
	if err == nil {
		err = apperr.ErrNotFound // what was not in the answer
	}
	for _, rs := range byKey {
		for _, r := range rs {
			r.fail(err)
		}
	}
	if errors.Is(err, apperr.ErrNotFound) {
		return nil
	}
	return err
}
