package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/ids"
)

// A log is an append-only series of JSON entries of an organization (the
// change history's events, an endpoint's deliveries): each entry lives in
// the partition ShardPartition(org, typ, <its id's shard>) under a
// time-ordered id (package ids: New or Derived, in a shard: ids.InShard),
// so that a time range is a key condition and a sharded organization's
// log is spread like its records (a read merges the shards), and,
// when it names a thread (the record an event is about), also in the
// GSI1 partition of that thread. Entries carry string attributes that a
// read can filter on, and expire by the table's TTL.

// LogEntry is one entry of a log.
type LogEntry struct {
	Org, Type string
	ID        string          // time-ordered: ids.New or ids.Derived
	Doc       json.RawMessage // the entry as clients see it
	// Thread, when set, also files the entry under it (GSI1), for reads
	// of one thread.
	Thread string
	// Attrs are string attributes a read can filter on (LogQuery.Equal).
	Attrs   map[string]string
	Expires time.Time // zero: never
	Version int64     // 0: 1
}

func (s *Store) logItem(e LogEntry) Item {
	registerSharded(e.Type)
	it := Item{PK: ShardPartition(e.Org, e.Type, ids.Shard(e.ID)), SK: e.ID, Type: e.Type, Doc: e.Doc, Version: max(e.Version, 1), Strings: e.Attrs}
	if e.Thread != "" {
		it.Indexes = map[string]string{GSI1.PK: logThread(e.Org, e.Type, e.Thread), GSI1.SK: e.ID}
	}
	if !e.Expires.IsZero() {
		it.Numbers = map[string]int64{AttrExpires: expiresAt(e.Expires)}
	}
	return it
}

// logThread is "ORG#<org>#<TYPE>#T#<thread>": the GSI1 partition of one
// thread of a log.
func logThread(org, typ, thread string) string {
	return OrgPartition(org, typ) + "#T#" + lookupValue(thread)
}

// AppendLog writes a new entry; an entry with its id already written (the
// same work done again) is left as it is and reported as written: false.
func (s *Store) AppendLog(ctx context.Context, e LogEntry) (bool, error) {
	op, err := s.CreateOp(s.logItem(e))
	if err != nil {
		return false, err
	}
	err = writeErr(s.put(ctx, op.w.Put), errLogExists)
	if errors.Is(err, errLogExists) {
		return false, nil
	}
	return err == nil, classify(ctx, err)
}

var errLogExists = errors.New("the log entry exists")

// ReplaceLog writes an entry over the one of its id whose version is
// e.Version-1: apperr.ErrConflict when another writer changed it first.
func (s *Store) ReplaceLog(ctx context.Context, e LogEntry) error {
	op, err := s.ReplaceOp(s.logItem(e))
	if err != nil {
		return err
	}
	return classify(ctx, s.Transact(ctx, nil, op))
}

// GetLog reads one entry and its version; apperr.ErrNotFound when absent
// or expired.
func (s *Store) GetLog(ctx context.Context, org, typ, id string) (json.RawMessage, int64, error) {
	var doc json.RawMessage
	it, err := s.GetLive(ctx, ShardPartition(org, typ, ids.Shard(id)), id, &doc)
	if err != nil {
		return nil, 0, err
	}
	return doc, it.Version, nil
}

// LogQuery selects entries of a log.
type LogQuery struct {
	Org, Type string
	Thread    string // "": the whole log; else only this thread's entries
	// From and To bound the ids (From inclusive, To exclusive); "" for none.
	From, To string
	// Equal keeps the entries whose attribute has one of the values.
	Equal map[string][]string
	// Either keeps the entries of which at least one of these attributes
	// has one of its values (alternatives to each other: an event's actor
	// or what it wrote through); with Equal, both must hold.
	Either map[string][]string
	Asc    bool // oldest first; newest first otherwise
	Limit  int
	// MaxBytes caps the page's entries by their WireSize (plus a comma
	// each); the page ends before the entry that would exceed it.
	MaxBytes int
	Cursor   string
	// MaxReads bounds the Query calls one page makes when filters skip
	// most entries (default 10): the page then ends early, with a cursor.
	MaxReads int
}

// ReadLog returns a page of a log's entries as stored.
func (s *Store) ReadLog(ctx context.Context, q LogQuery) (Page[json.RawMessage], error) {
	out := Page[json.RawMessage]{Items: []json.RawMessage{}}
	bind := q.binding()
	skAttr, index := AttrSK, ""
	pks, err := s.shardPartitions(ctx, q.Org, func(n int) string { return ShardPartition(q.Org, q.Type, n) })
	if err != nil {
		return out, err
	}
	if q.Thread != "" {
		pks, skAttr, index = []string{logThread(q.Org, q.Type, q.Thread)}, GSI1.SK, GSI1.Name
	}
	from, to := q.From, q.To
	if q.Cursor != "" {
		pos, err := decodeCursor(q.Cursor, bind, MaxIDLength)
		if err != nil {
			return out, err
		}
		if q.Asc {
			from = pos + "\x00" // after pos
		} else {
			to = pos
		}
	}
	names := map[string]string{"#pk": AttrPK}
	if index != "" {
		names["#pk"] = GSI1.PK
	}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pks[0]}}
	cond := "#pk = :pk"
	if from != "" || to != "" {
		names["#sk"] = skAttr
	}
	switch {
	case from != "" && to != "":
		if from >= to {
			return out, nil
		}
		cond += " AND #sk BETWEEN :from AND :to"
		// BETWEEN includes to: an entry at to is skipped below.
		values[":from"], values[":to"] = &types.AttributeValueMemberS{Value: from}, &types.AttributeValueMemberS{Value: to}
	case from != "":
		cond += " AND #sk >= :from"
		values[":from"] = &types.AttributeValueMemberS{Value: from}
	case to != "":
		cond += " AND #sk < :to"
		values[":to"] = &types.AttributeValueMemberS{Value: to}
	}
	var filters []string
	filters = append(filters, inFilters("f", q.Equal, names, values)...)
	if either := inFilters("e", q.Either, names, values); len(either) > 0 {
		filters = append(filters, "("+strings.Join(either, " OR ")+")")
	}
	// Entries past their expiry are not yet deleted by the TTL: skip them.
	names["#ttl"] = AttrExpires
	values[":now"] = &types.AttributeValueMemberN{Value: fmt.Sprint(time.Now().Unix())}
	filters = append(filters, "(attribute_not_exists(#ttl) OR #ttl > :now)")
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String(cond),
		FilterExpression:          aws.String(strings.Join(filters, " AND ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(q.Asc),
		ConsistentRead:            aws.Bool(index == ""),
		Limit:                     aws.Int32(int32(min(max(q.Limit, 1)*2, 1000))),
	}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	maxReads := q.MaxReads
	if maxReads <= 0 {
		maxReads = 10
	}
	// Every partition of the log (its shards) is read in order, and the
	// entries merged by id; a partition whose filters skipped entries for
	// maxReads calls stands at the position it read to, and the page ends
	// there when the merge reaches it.
	var heads []*logHead
	defer func() {
		for _, h := range heads {
			h.stop()
		}
	}()
	for _, pk := range pks {
		one := *in
		one.ExpressionAttributeValues = maps.Clone(in.ExpressionAttributeValues)
		one.ExpressionAttributeValues[":pk"] = &types.AttributeValueMemberS{Value: pk}
		next, stop := iter.Pull2(s.logPartition(ctx, &one, q.Type, skAttr, to, maxReads))
		h := &logHead{next: next, stop: stop}
		if err := h.advance(); err != nil {
			return out, err
		}
		if h.done {
			stop()
			continue
		}
		heads = append(heads, h)
	}
	var pos []string
	size, more := 0, false
	for len(heads) > 0 {
		i := 0
		for j, h := range heads {
			if (q.Asc && h.sk < heads[i].sk) || (!q.Asc && h.sk > heads[i].sk) {
				i = j
			}
		}
		h := heads[i]
		if h.frontier {
			pos, more = append(pos, h.sk), true
			break
		}
		add := WireSize(h.doc) + 1
		if len(out.Items) == q.Limit || (q.MaxBytes > 0 && len(out.Items) > 0 && size+add > q.MaxBytes) {
			more = true
			break
		}
		out.Items = append(out.Items, json.RawMessage(h.doc))
		pos = append(pos, h.sk)
		size += add
		if err := h.advance(); err != nil {
			return out, err
		}
		if h.done {
			h.stop()
			heads = append(heads[:i], heads[i+1:]...)
		}
	}
	passedOver(ctx, -len(out.Items)) // counted as read above
	out.finish(pos, bind, more)
	return out, nil
}

// logHead is where the merge of a log's partitions stands in one of them:
// its next entry, or its frontier (the position its reads ended at, with
// more to read), or done.
type logHead struct {
	next     func() (logEntry, error, bool)
	stop     func()
	sk, doc  string
	frontier bool
	done     bool
}

func (h *logHead) advance() error {
	e, err, ok := h.next()
	if err != nil {
		return err
	}
	if !ok {
		h.done = true
		return nil
	}
	h.sk, h.doc, h.frontier = e.sk, e.doc, e.frontier
	return nil
}

type logEntry struct {
	sk, doc  string
	frontier bool
}

// logPartition yields the entries of one partition of a log that in
// selects, in its order, reading up to maxReads pages; when its filters
// left entries unread after those, it yields the position it read to as a
// frontier and ends.
func (s *Store) logPartition(ctx context.Context, in *dynamodb.QueryInput, typ, skAttr, to string, maxReads int) iter.Seq2[logEntry, error] {
	return func(yield func(logEntry, error) bool) {
		for reads := 0; ; reads++ {
			page, err := s.DB.Query(ctx, in)
			if err != nil {
				yield(logEntry{}, classify(ctx, fmt.Errorf("read the %s log: %w", typ, err)))
				return
			}
			passedOver(ctx, int(page.ScannedCount))
			for _, av := range page.Items {
				doc, ok, err := docText(av)
				sk, _ := av[AttrSK].(*types.AttributeValueMemberS)
				if !ok || err != nil || sk == nil || (to != "" && sk.Value >= to) {
					continue
				}
				if !yield(logEntry{sk: sk.Value, doc: doc}, nil) {
					return
				}
			}
			if page.LastEvaluatedKey == nil {
				return
			}
			if reads+1 >= maxReads {
				if k, _ := page.LastEvaluatedKey[skAttr].(*types.AttributeValueMemberS); k != nil {
					yield(logEntry{sk: k.Value, frontier: true}, nil)
				}
				return
			}
			in.ExclusiveStartKey = page.LastEvaluatedKey
		}
	}
}

// inFilters are the conditions "<attribute> IN (<values>)" of each of
// equal's attributes, in attribute order, their names and values (named
// by prefix) added to names and values.
func inFilters(prefix string, equal map[string][]string, names map[string]string, values map[string]types.AttributeValue) []string {
	var out []string
	for i, a := range sortedKeys(equal) {
		n := fmt.Sprintf("#%s%d", prefix, i)
		names[n] = a
		var alts []string
		for j, v := range equal[a] {
			p := fmt.Sprintf(":%s%d_%d", prefix, i, j)
			values[p] = &types.AttributeValueMemberS{Value: v}
			alts = append(alts, p)
		}
		out = append(out, n+" IN ("+strings.Join(alts, ", ")+")")
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// binding names the list a log cursor belongs to.
func (q LogQuery) binding() string {
	var b strings.Builder
	fmt.Fprintf(&b, "log|%s|%s|%s|%s|%s|%v", q.Org, q.Type, q.Thread, q.From, q.To, q.Asc)
	for _, a := range sortedKeys(q.Equal) {
		fmt.Fprintf(&b, "|%s=%s", a, strings.Join(q.Equal[a], ","))
	}
	for _, a := range sortedKeys(q.Either) {
		fmt.Fprintf(&b, "|%s~%s", a, strings.Join(q.Either[a], ","))
	}
	return b.String()
}
