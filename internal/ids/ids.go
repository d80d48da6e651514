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
// them: prefix, "_", and a lowercase ULID.
func Valid(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != ulid.EncodedSize || rest != lower(rest) {
		return false
	}
	_, err := ulid.ParseStrict(strings.ToUpper(rest))
	return err == nil
}
