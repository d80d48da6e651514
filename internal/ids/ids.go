// Package ids makes identifiers: time-ordered ids for records, so that "id
// descending" is "newest first" and an id cursor is a key condition, and
// random tokens for secrets and client ids.
package ids

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

var (
	mu      sync.Mutex
	entropy = ulid.Monotonic(rand.Reader, 0)
)

// New returns prefix + "_" + a lowercase ULID. Ids made by one process are
// strictly increasing, even within a millisecond.
func New(prefix string) string {
	mu.Lock()
	id := ulid.MustNew(ulid.Timestamp(time.Now()), entropy)
	mu.Unlock()
	// One allocation: the prefix and the lowercased text built in place.
	b := make([]byte, len(prefix)+1+ulid.EncodedSize)
	copy(b, prefix)
	b[len(prefix)] = '_'
	_ = id.MarshalTextTo(b[len(prefix)+1:])
	for i, c := range b[len(prefix)+1:] {
		if c >= 'A' && c <= 'Z' {
			b[len(prefix)+1+i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Random returns n random bytes encoded as lowercase unpadded base32.
func Random(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return lower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Derived returns prefix + "_" + a lowercase ULID of time t whose random
// part is taken from seed's SHA-256: the same t and seed always give the
// same id, so that work done again (a stream record handled twice) writes
// the same item. Derived ids sort by t like New's.
func Derived(prefix string, t time.Time, seed string) string {
	sum := sha256.Sum256([]byte(seed))
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		panic("ids: time out of the ULID range: " + err.Error())
	}
	_ = id.SetEntropy(sum[:10])
	return prefix + "_" + lower(id.String())
}

// At returns the lowest id of prefix at time t: every id made by New or
// Derived at or after t (to the millisecond) sorts at or after it, every
// earlier one before it. For time bounds of time-ordered ids.
func At(prefix string, t time.Time) string {
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		panic("ids: time out of the ULID range: " + err.Error())
	}
	return prefix + "_" + lower(id.String())
}

// Valid reports whether id is an id of prefix as New and Derived make
// them: prefix, "_", and a lowercase ULID, with or without a shard
// (InShard).
func Valid(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if len(rest) == ulid.EncodedSize+shardDigits && Shard(id) > 0 {
		rest = rest[:ulid.EncodedSize]
	}
	if !ok || len(rest) != ulid.EncodedSize || rest != lower(rest) {
		return false
	}
	_, err := ulid.ParseStrict(strings.ToUpper(rest))
	return err == nil
}

// Shards: an organization whose records are written faster than one
// DynamoDB partition takes spreads them over shards (internal/store), and
// a record's id names its shard, so that reading it by id needs nothing
// else. An id of shard 0 is an id as New makes it; an id of shard n > 0
// ends with n in two more base32 digits. Ids of every shard sort by their
// time as New's do: the digits follow the ULID.
const (
	// MaxShards is the most shards an id can name.
	MaxShards   = 32 * 32
	shardDigits = 2
)

// shardAlphabet is the lowercase Crockford base32 of ULIDs.
const shardAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// InShard returns id (as New or Derived make it) naming shard n: id
// itself for shard 0. It panics for n outside [0, MaxShards).
func InShard(id string, n int) string {
	if n < 0 || n >= MaxShards {
		panic("ids: shard out of range")
	}
	if n == 0 {
		return id
	}
	return id + string(shardAlphabet[n/32]) + string(shardAlphabet[n%32])
}

// Shard is the shard an id names: 0 for an id without one (every id
// that is not an id of InShard, client-chosen ones included).
func Shard(id string) int {
	i := strings.LastIndexByte(id, '_')
	rest := id[i+1:]
	if i < 0 || len(rest) != ulid.EncodedSize+shardDigits {
		return 0
	}
	hi := strings.IndexByte(shardAlphabet, rest[ulid.EncodedSize])
	lo := strings.IndexByte(shardAlphabet, rest[ulid.EncodedSize+1])
	if hi < 0 || lo < 0 {
		return 0
	}
	return hi*32 + lo
}
