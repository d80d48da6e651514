package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A collection whose Spec has Feed keeps a change feed per organization:
// every write of one of its records (create, update, delete) also puts an
// entry under ChangeKey, ordered by the time the write began. An entry
// names the record and its version (or is a tombstone); it does not copy
// the record, which would write it twice and make every reader of the
// window read it again. A tombstone, and an entry of a write with other
// operations, is written in the write's transaction; the entry of a lone
// create or update is written just ahead of the record instead, at half
// the cost (Store.Transact): a reader can then see an entry before its
// record, or an entry of a write that failed, and treats both as a
// record read older than its entry (below). A reader that keeps a
// copy of the records (a search index) reads the records once and then
// only the entries written since its last refresh (one strongly
// consistent Query, empty when nothing changed), and the records whose
// entry is newer than its copy (GetRecords).
//
// Entries are ordered by their writer's clock, and a write becomes visible
// some time after that clock was read (its transaction's call may take up
// to its deadline, and clocks of two machines differ a little). So a
// reader asks for the entries from FeedWindow before its last refresh,
// and applies them by version: an entry not newer than its copy changes
// nothing, a tombstone removes the record for good (ids are never reused).
// Small entries keep that overlap cheap: a window of 4 KB of entries (a
// few dozen writes) is one strongly consistent read unit.

// FeedWindow bounds how long after its time an entry can become visible:
// the longest storage call (MaxCallTimeout) plus clock skew between
// writers.
const FeedWindow = MaxCallTimeout + 5*time.Second

// FeedRetention is how long entries are kept (the table's TTL removes
// them later). A reader whose last refresh is older reads the records
// again instead of the feed.
const FeedRetention = 24 * time.Hour

// Change is one entry of a change feed.
type Change struct {
	ID      string
	Version int64 // the record's version after the write; 0 for a delete
	Deleted bool
	At      time.Time // when the write began
}

// attributes of a change entry outside the record
const (
	attrChangeID      = "rid"
	attrChangeDeleted = "deleted"
)

// changeOp is the feed entry of a write of record id at version, or of
// its deletion.
func (s *Store) changeOp(org, typ, id string, deleted bool, version int64) (Op, error) {
	at := time.Now()
	k := ChangeKey(org, typ, at, id, version)
	strs := map[string]string{attrChangeID: id}
	if deleted {
		strs[attrChangeDeleted] = "1"
	}
	// Unconditional: the key (the time in nanoseconds, the id, the
	// version) is the write's own, so a put sent again writes the same
	// entry; plain: no actor, time or token to read again at every search.
	it := Item{PK: k.PK, SK: k.SK, Type: TypeChange, Version: max(version, 1), Strings: strs,
		Numbers: withExpiry(nil, at.Add(FeedRetention))}
	op, err := s.putOp(it, "", nil, nil)
	op.plain = true
	if !deleted {
		op.ahead = at
	}
	return op, err
}

// Changes returns org's feed entries of typ written at or after since
// (ask from FeedWindow before the last refresh), oldest first, read
// strongly consistently: the feeds of every shard, merged.
func (s *Store) Changes(ctx context.Context, org, typ string, since time.Time) ([]Change, error) {
	pks, err := s.shardPartitions(ctx, org, func(n int) string { return changePartition(org, typ, n) })
	if err != nil {
		return nil, err
	}
	var out []Change
	now := time.Now()
	for _, pk := range pks {
		in := &dynamodb.QueryInput{
			TableName:              aws.String(s.Table),
			KeyConditionExpression: aws.String("pk = :pk AND sk >= :since"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk":    &types.AttributeValueMemberS{Value: pk},
				":since": &types.AttributeValueMemberS{Value: changeSortKey(since)},
			},
			ConsistentRead: aws.Bool(true),
		}
		for p := dynamodb.NewQueryPaginator(s.DB, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, classify(ctx, fmt.Errorf("read the change feed of %s: %w", typ, err))
			}
			for _, av := range page.Items {
				c, expiredEntry, err := decodeChange(av, now)
				if err != nil {
					return nil, err
				}
				if !expiredEntry {
					out = append(out, c)
				}
			}
		}
	}
	if len(pks) > 1 {
		slices.SortStableFunc(out, func(a, b Change) int { return a.At.Compare(b.At) })
	}
	return out, nil
}

func decodeChange(av map[string]types.AttributeValue, now time.Time) (Change, bool, error) {
	str := func(k string) string {
		v, _ := av[k].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	num := func(k string) int64 {
		v, _ := av[k].(*types.AttributeValueMemberN)
		if v == nil {
			return 0
		}
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	if exp := num(AttrExpires); exp > 0 && exp <= now.Unix() {
		return Change{}, true, nil
	}
	sk := str(AttrSK)
	nanos, err := strconv.ParseInt(sk[:min(19, len(sk))], 10, 64)
	if err != nil || str(attrChangeID) == "" {
		return Change{}, false, undecodable(av, 0, "it is not a change feed entry")
	}
	c := Change{ID: str(attrChangeID), At: time.Unix(0, nanos)}
	if str(attrChangeDeleted) != "" {
		c.Deleted = true
		return c, false, nil
	}
	c.Version = num(AttrVersion)
	return c, false, nil
}

// RawRecord is a record as stored: its JSON and version.
type RawRecord struct {
	ID      string
	Version int64
	Doc     json.RawMessage
	Stamp   string // the doc's shape stamp (Stamped), "" when none
}

// Records returns every record of org's type as stored, read strongly
// consistently (every shard's): for a reader that builds its copy of a
// fed collection (take the time before calling, and read the feed from
// then on).
func (s *Store) Records(ctx context.Context, org, typ string) ([]RawRecord, error) {
	pks, err := s.shardPartitions(ctx, org, func(n int) string { return ShardPartition(org, typ, n) })
	if err != nil {
		return nil, err
	}
	var out []RawRecord
	for _, pk := range pks {
		in := &dynamodb.QueryInput{
			TableName:                 aws.String(s.Table),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
			ConsistentRead:            aws.Bool(true),
		}
		for p := dynamodb.NewQueryPaginator(s.DB, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, classify(ctx, fmt.Errorf("read the records of %s: %w", typ, err))
			}
			for _, av := range page.Items {
				if r, ok := rawRecord(av); ok {
					out = append(out, r)
				}
			}
		}
	}
	if len(pks) > 1 {
		slices.SortFunc(out, func(a, b RawRecord) int { return strings.Compare(a.ID, b.ID) })
	}
	return out, nil
}

// rawRecord is a record item as stored; false when it has no doc.
func rawRecord(av map[string]types.AttributeValue) (RawRecord, bool) {
	sk, _ := av[AttrSK].(*types.AttributeValueMemberS)
	doc, ok, err := docText(av)
	ver, _ := av[AttrVersion].(*types.AttributeValueMemberN)
	if sk == nil || !ok || err != nil {
		return RawRecord{}, false
	}
	r := RawRecord{ID: sk.Value, Doc: json.RawMessage(doc)}
	if st, _ := av[AttrShape].(*types.AttributeValueMemberS); st != nil {
		r.Stamp = st.Value
	}
	if ver != nil {
		r.Version, _ = strconv.ParseInt(ver.Value, 10, 64)
	}
	return r, true
}
