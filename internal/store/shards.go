package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ids"
)

// Write shards. A DynamoDB partition key value serves at most 1,000 write
// units a second, and DynamoDB cannot spread a key whose writes always
// land past its last sort key (records created with time-ordered ids, a
// change feed, an events log, an index ordered by updatedAt). So an
// organization that writes faster than one key can take spreads its
// records over shards: a record of shard n > 0 lives in the partitions of
// its type with "@<n>" (ShardPartition), its index entries, lookups, feed
// entries and events too, and its id names n (ids.InShard), so that it is
// read by id in one call. Lists read every shard and merge them by their
// sort key, so cursors and orders are those of one partition.
//
// Every organization starts with one shard (and its partitions are those
// of an unsharded table: a table written before shards is read as it is).
// An operator raises an organization's shards (SetShards; sourcebase-admin
// set-shards) ahead of the load: they only grow. Readers read the new
// count at once; writers start to use it ShardSettle after the change, by
// which time every process's cache has it, so no reader misses a record.

// MaxShards is the most shards an organization can have.
const MaxShards = 64

// ShardSettle is how long a process keeps an organization's shard count
// before reading it again, and so how long after a raise writers wait
// before they use the new shards.
const ShardSettle = time.Minute

// TypeShards is the type of an organization's shard count item.
const TypeShards = "SHARDS"

// ShardsKey is {"ORG#<org>", "SHARDS"}: an organization's shard count.
func ShardsKey(org string) Key { return Key{"ORG#" + org, TypeShards} }

// shardCount is the stored shard count of an organization.
type shardCount struct {
	Shards int `json:"shards"`
	// Previous is the count before the last raise, which writers keep
	// using until Since+ShardSettle.
	Previous int       `json:"previous"`
	Since    time.Time `json:"since"`
}

// write is the shard count writers use at t.
func (c shardCount) write(t time.Time) int {
	if t.Before(c.Since.Add(ShardSettle)) {
		return max(c.Previous, 1)
	}
	return max(c.Shards, 1)
}

// shardCache holds the shard counts a process has read.
var shardCache = struct {
	sync.Mutex
	m map[string]cachedShards
}{m: map[string]cachedShards{}}

type cachedShards struct {
	count shardCount
	read  time.Time
}

// shards returns org's shard count, read at most every ShardSettle.
func (s *Store) shards(ctx context.Context, org string) (shardCount, error) {
	id := s.Table + "\x00" + org
	now := time.Now()
	shardCache.Lock()
	c, ok := shardCache.m[id]
	shardCache.Unlock()
	if ok && now.Sub(c.read) < ShardSettle {
		return c.count, nil
	}
	var count shardCount
	k := ShardsKey(org)
	if _, err := s.Get(ctx, k.PK, k.SK, &count); err != nil && !errors.Is(err, apperr.ErrNotFound) {
		return shardCount{}, err
	}
	count.Shards, count.Previous = max(count.Shards, 1), max(count.Previous, 1)
	shardCache.Lock()
	if len(shardCache.m) >= maxCachedShards { // a process serving many organizations keeps the current ones
		for k, c := range shardCache.m {
			if now.Sub(c.read) >= ShardSettle {
				delete(shardCache.m, k)
			}
		}
	}
	shardCache.m[id] = cachedShards{count, now}
	shardCache.Unlock()
	return count, nil
}

// maxCachedShards is how many organizations' counts a process keeps
// before it drops those read more than ShardSettle ago.
const maxCachedShards = 10_000

// ReadShards is how many shards hold org's records: every list reads them all.
func (s *Store) ReadShards(ctx context.Context, org string) (int, error) {
	c, err := s.shards(ctx, org)
	return c.Shards, err
}

// NewID returns a new id of prefix (ids.New) for a record of org, in one
// of the shards org's writers use now, picked at random.
func (s *Store) NewID(ctx context.Context, org, prefix string) (string, error) {
	c, err := s.shards(ctx, org)
	if err != nil {
		return "", err
	}
	return ids.InShard(ids.New(prefix), rand.IntN(c.write(time.Now()))), nil
}

// SetShards raises org's shard count to n (1 to MaxShards); a count that
// is already n or more is left as it is (shards only grow: records live in
// them). It reports the count in force.
func (s *Store) SetShards(ctx context.Context, org string, n int) (int, error) {
	if n < 1 || n > MaxShards {
		return 0, apperr.Invalid("shards", "must be from 1 to %d", MaxShards)
	}
	k := ShardsKey(org)
	for range 5 {
		var cur shardCount
		version, err := s.Get(ctx, k.PK, k.SK, &cur)
		if err != nil && !errors.Is(err, apperr.ErrNotFound) {
			return 0, err
		}
		cur.Shards, cur.Previous = max(cur.Shards, 1), max(cur.Previous, 1)
		if cur.Shards >= n {
			return cur.Shards, nil
		}
		next := shardCount{Shards: n, Previous: cur.write(time.Now()), Since: time.Now().UTC()}
		it := Item{PK: k.PK, SK: k.SK, Type: TypeShards, Doc: next, Version: version + 1}
		var op Op
		if version == 0 {
			op, err = s.CreateOp(it)
		} else {
			op, err = s.ReplaceOp(it)
		}
		if err != nil {
			return 0, err
		}
		err = s.Transact(ctx, errRace, op)
		if errors.Is(err, errRace) {
			continue
		}
		if err != nil {
			return 0, err
		}
		shardCache.Lock()
		delete(shardCache.m, s.Table+"\x00"+org)
		shardCache.Unlock()
		return n, nil
	}
	return 0, fmt.Errorf("store: the shard count of %s kept changing while it was raised", org)
}

// InitShards gives a new organization, which has made no request yet
// (no key exists to make one), n shards that its writers use at once:
// no process can have read its count. apperr.ErrConflict when it has a
// count already (raise it with SetShards).
func (s *Store) InitShards(ctx context.Context, org string, n int) error {
	if n < 1 || n > MaxShards {
		return apperr.Invalid("shards", "must be from 1 to %d", MaxShards)
	}
	k := ShardsKey(org)
	op, err := s.CreateOp(Item{PK: k.PK, SK: k.SK, Type: TypeShards, Doc: shardCount{Shards: n, Previous: n, Since: time.Now().UTC()}, Version: 1})
	if err != nil {
		return err
	}
	if err := s.Transact(ctx, apperr.Conflict("organization %s has a shard count already; raise it with set-shards", org), op); err != nil {
		return err
	}
	shardCache.Lock()
	delete(shardCache.m, s.Table+"\x00"+org)
	shardCache.Unlock()
	return nil
}

// ShardPartition is the partition of org's items of typ in shard n:
// OrgPartition(org, typ) for shard 0, "ORG#<org>#<TYPE>@<n>" for others.
func ShardPartition(org, typ string, n int) string {
	if n == 0 {
		return OrgPartition(org, typ)
	}
	return OrgPartition(org, typ) + "@" + shardText(n)
}

// shardText is n as two base32 digits, the form ids give it.
func shardText(n int) string {
	id := ids.InShard("x_00000000000000000000000000", n)
	return id[len(id)-2:]
}

// recordPartition is the partition of org's record id of typ: that of the
// shard its id names.
func recordPartition(org, typ, id string) string {
	return ShardPartition(org, typ, ids.Shard(id))
}

// shardPartitions is the partition of every shard of org's items of typ,
// shard 0 first.
func (s *Store) shardPartitions(ctx context.Context, org string, part func(n int) string) ([]string, error) {
	n, err := s.ReadShards(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		out[i] = part(i)
	}
	return out, nil
}
