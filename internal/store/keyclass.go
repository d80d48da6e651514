package store

import (
	"strings"
	"sync"
)

// KeyClass is the class of a partition key value by who writes it, and so
// what caps its writes: DynamoDB serves one key at most 1,000 write units
// a second (a partition's), and cannot spread a key whose writes only
// append past its last sort key. ClassOf classifies every key this file's
// builders make; the route usage guard (internal/perfreport) holds every
// route to the classes that scale.
type KeyClass string

const (
	// ClassRecord keys hold one record's items, or one API key's, one
	// trigger's, one request's: written at the rate of one record.
	ClassRecord KeyClass = "record"
	// ClassShard keys are the partitions of one organization's items of
	// one type in one shard (ShardPartition: records, their index
	// entries and lookups, change feeds, logs, deletion markers): an
	// organization writes as fast as its shards (shards.go) take.
	ClassShard KeyClass = "organization+type, sharded"
	// ClassOrganization keys are an organization's own items (its record,
	// limits, shard count): written by operators, read through caches.
	ClassOrganization KeyClass = "organization"
	// ClassCounter keys are rate limit counters of one API key, trigger or
	// organization, written once per lease of requests, not per request,
	// and an organization's daily usage (UsageKey), written once per
	// flush of an instance's totals (package usage), not per request.
	ClassCounter KeyClass = "rate counter"
	// ClassQueue keys are the shards of a work queue of every
	// organization (QueueKey, global lookups): each takes 1/GlobalShards
	// of its writes.
	ClassQueue KeyClass = "global queue, sharded"
	// ClassGlobal is any other key: one that every organization's
	// requests could write. No route may write one.
	ClassGlobal KeyClass = "global"
)

// shardedTypes are the item types whose partitions are built by
// ShardPartition: the collections' (NewCollection), the logs' (AppendLog)
// and the deletion markers'.
var shardedTypes sync.Map

func registerSharded(typ string) {
	if _, ok := shardedTypes.Load(typ); !ok { // a log registers its type at every append: read first
		shardedTypes.Store(typ, true)
	}
}

func init() {
	registerSharded(TypeDeleted)
	queues.Store(TypePurge, true)
}

// perRecordTypes are the item types whose partitions are one record's,
// one value's or one request's (after the type: "#<record or hash>").
var perRecordTypes = map[string]bool{TypeEnrichment: true, TypeMetric: true, TypeDelivery: true, TypeIdempotency: true, TypeVector: true}

// ClassOf is the class of a partition key value (of the table or of an
// index) that the store's key builders make.
func ClassOf(pk string) KeyClass {
	switch {
	case strings.HasPrefix(pk, TypeAPIKey+"#"), strings.HasPrefix(pk, TypeTriggerRoute+"#"):
		return ClassRecord
	case strings.HasPrefix(pk, TypeRate+"#"):
		return ClassCounter
	case strings.HasPrefix(pk, "GLOBAL#"):
		// A global lookup's shard 0 has no suffix, its others "#<n>".
		return ClassQueue
	}
	if name, _, _ := strings.Cut(pk, "#"); isQueue(name) {
		return ClassQueue
	}
	rest, ok := strings.CutPrefix(pk, "ORG#")
	if !ok {
		return ClassGlobal
	}
	org, rest, _ := strings.Cut(rest, "#")
	if org == "" {
		return ClassGlobal
	}
	if rest == "" {
		return ClassOrganization
	}
	typ, more, _ := strings.Cut(rest, "#")
	typ, _, _ = strings.Cut(typ, "@")
	if typ == TypeUsage {
		return ClassCounter // an organization's daily usage, added to once per flush of an instance
	}
	if strings.HasPrefix(more, "UNIQUE#") || perRecordTypes[typ] || strings.HasPrefix(more, "T#") {
		return ClassRecord // a unique value's item, a record's partition, a log's thread
	}
	if _, ok := shardedTypes.Load(typ); ok {
		return ClassShard
	}
	return ClassOrganization
}

// queues are the work queues of every organization (QueueKey).
var queues sync.Map

func registerQueue(name string) {
	if !isQueue(name) {
		queues.Store(name, true)
	}
}

func isQueue(name string) bool {
	_, ok := queues.Load(name)
	return ok
}
