package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/ids"
)

// The table's key design: every partition key (pk), sort key (sk) and
// index key value any item gets is built here, and nowhere else. Values
// are stored, so a change here must keep existing items readable (the
// shapes are pinned by keys_test.go). <org> is an organization id, <TYPE>
// an item type below, <id> a record id.

// Key is the primary key of one item.
type Key struct{ PK, SK string }

// Item types: the <TYPE> of partitions and the type attribute.
const (
	TypeOrg          = "ORG"         // an organization (keys' quota counters)
	TypeAPIKey       = "APIKEY"      // an API key, read by client id
	TypeCompany      = "COMPANY"     // a company record
	TypeWorkflow     = "WORKFLOW"    // a workflow record
	TypeRun          = "RUN"         // a workflow run record
	TypeTriggerRoute = "TRIGGER"     // a webhook slug's route to its workflow
	TypeDelivery     = "DELIVERY"    // a remembered webhook delivery id
	TypeIdempotency  = "IDEMPOTENCY" // a remembered Idempotency-Key request
	TypeChange       = "CHANGE"      // an entry of a change feed
	TypeMetric       = "METRIC"      // a point of a metric series
	TypeEnrichment   = "ENRICH"      // a candidate value of a record's attribute
	TypeRate         = "RATE"        // a rate limit's request counter of one window
	TypeLimits       = "LIMITS"      // an organization's rate limits
	TypePurge        = "PURGE"       // a partition left to delete after its record's deletion
	TypeUsage        = "USAGE"       // an organization's requests and units of one UTC day (package usage)
	typeUniqueSuffix = "#UNIQUE"     // <TYPE>#UNIQUE: a uniqueness item
)

// OrgPartition is "ORG#<org>#<TYPE>": the partition of org's records of
// one type (a Collection's records: sk is the id), and the index
// partition of their sort orders and of a Home index.
func OrgPartition(org, typ string) string { return "ORG#" + org + "#" + typ }

// orgOfPartition is the <org> of an OrgPartition or ShardPartition.
func orgOfPartition(pk string) string {
	org, _, _ := strings.Cut(strings.TrimPrefix(pk, "ORG#"), "#")
	return org
}

// ParseRecordKey reads the key of an item as a record's key
// {ShardPartition(org, typ, shard), <id>}: false for every other item
// (feed entries, uniqueness items, lookups, items outside organizations),
// whose pk has more parts or whose sk holds a "#". For readers of the
// table's stream.
func ParseRecordKey(pk, sk string) (org, typ, id string, ok bool) {
	rest, isOrg := strings.CutPrefix(pk, "ORG#")
	org, typ, found := strings.Cut(rest, "#")
	if !isOrg || !found || org == "" || typ == "" || strings.Contains(typ, "#") || sk == "" || strings.Contains(sk, "#") {
		return "", "", "", false
	}
	if typ, shard, sharded := strings.Cut(typ, "@"); sharded {
		if typ == "" || len(shard) != 2 {
			return "", "", "", false
		}
		return org, typ, sk, true
	}
	return org, typ, sk, true
}

// RecordKey is {ShardPartition(org, typ, <the id's shard>), <id>}: one
// record of a Collection (shards.go).
func RecordKey(org, typ, id string) Key { return Key{recordPartition(org, typ, id), id} }

// sortIndexKey is "<value cut to 512 bytes>\x00<id>": the index sort key
// of a sortable field, ordered by value and then id.
func sortIndexKey(value, id string) string { return sortValue(value) + sortSep + id }

// sortIndexPrefix is the sort index keys' prefix of one exact value.
func sortIndexPrefix(value string) string { return sortValue(value) + sortSep }

// lookupPartition is "ORG#<org>#<TYPE>[@<shard>]#<lookup>=<value>": the
// index partition of org's records of one shard with one lookup value
// (index sk: the id). Values over 512 bytes are "sha256:<hex>" (see
// lookupValue).
func lookupPartition(org, typ string, shard int, lookup, value string) string {
	return ShardPartition(org, typ, shard) + "#" + lookup + "=" + lookupValue(value)
}

// globalLookupPartition is "GLOBAL#<TYPE>#<lookup>=<value>[#<shard>]": a
// lookup across organizations (such as unfinished runs), never shown to
// clients, spread over GlobalShards by a hash of the record's id
// (globalShard), so that no one key takes every organization's writes;
// readers read every shard.
func globalLookupPartition(typ, lookup, value string, shard int) string {
	pk := "GLOBAL#" + typ + "#" + lookup + "=" + lookupValue(value)
	if shard > 0 {
		pk += "#" + strconv.Itoa(shard)
	}
	return pk
}

// GlobalShards is how many keys a work queue of every organization (a
// global lookup, the partitions to purge, the pending jobs) is spread
// over: each takes 1/64 of the writes (a deployment's 10,000 run starts
// and ends a second are 156 write units a second of each), and a sweep
// reads the 64.
const GlobalShards = 64

// globalShard is the shard of a global work queue that an item of key s
// (a record's id, a partition) goes to: 0 to GlobalShards-1, by hash.
func globalShard(s string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return int(h.Sum32() % GlobalShards)
}

// uniqueItemKey is {"ORG#<org>#<TYPE>#UNIQUE#<field>=<value>", "UNIQUE"}:
// the uniqueness item of one value of a unique field.
func uniqueItemKey(org, typ, field, value string) Key {
	return Key{OrgPartition(org, typ) + "#UNIQUE#" + field + "=" + lookupValue(value), "UNIQUE"}
}

// ChangeKey is {"ORG#<org>#<TYPE>[@<shard>]#CHANGES", "<unix
// nanoseconds, 19 digits>#<id>#<version>"}: one write of a record of a
// type with a change feed, in the feed of the record's shard, ordered by
// the time it was written.
func ChangeKey(org, typ string, at time.Time, id string, version int64) Key {
	return Key{changePartition(org, typ, ids.Shard(id)), changeSortKey(at) + "#" + id + "#" + strconv.FormatInt(version, 10)}
}

// changePartition is "ORG#<org>#<TYPE>[@<shard>]#CHANGES": org's change
// feed of a type, of one shard.
func changePartition(org, typ string, shard int) string {
	return ShardPartition(org, typ, shard) + "#CHANGES"
}

// changeSortKey is the feed's sort key position of time t.
func changeSortKey(t time.Time) string { return fmt.Sprintf("%019d", max(t.UnixNano(), 0)) }

// MetricPartition is "ORG#<org>#METRIC#<resource>#<key>": the points of
// one metric series of org (resource "companies:cmp_1", key
// "metric:revenue"), so that a series and a date range are one Query.
// Neither resource nor key holds a "#" (the metrics package checks).
func MetricPartition(org, resource, key string) string {
	return OrgPartition(org, TypeMetric) + "#" + resource + "#" + key
}

// MetricSortKey is "<date YYYY-MM-DD>#<capturedOn, clock.Layout>#<id>":
// one point of a series, in date order, then capture order.
func MetricSortKey(date, capturedOn, id string) string { return date + "#" + capturedOn + "#" + id }

// MetricDateRange is the sort key range [lo, hi] holding every point of a
// series dated from start to end (YYYY-MM-DD, both included); "" leaves
// that end open. "$" follows "#", so hi is past every key of end.
func MetricDateRange(start, end string) (lo, hi string) {
	lo, hi = start, end+"$"
	if end == "" {
		hi = "~"
	}
	return lo, hi
}

// EnrichmentPartition is "ORG#<org>#ENRICH#<resourceType>#<resourceId>":
// the candidate values of one record (resource type "companies"), each an
// item whose sk is the value's id, so that a record's candidates are one
// strongly consistent Query and no item grows with them.
func EnrichmentPartition(org, resourceType, resourceID string) string {
	return OrgPartition(org, TypeEnrichment) + "#" + resourceType + "#" + resourceID
}

// EnrichmentKey is {EnrichmentPartition, <valueId>}: one candidate value.
func EnrichmentKey(org, resourceType, resourceID, valueID string) Key {
	return Key{EnrichmentPartition(org, resourceType, resourceID), valueID}
}

// PurgeKey is QueueKey(TypePurge, <partition>): a partition whose record
// was deleted and whose items are yet to be deleted (the record's
// candidate values), written in the record's delete transaction and
// deleted once the partition is.
func PurgeKey(partition string) Key { return QueueKey(TypePurge, partition) }

// QueueKey is {"<queue>[#<shard>]", <item>}: an item of a work queue of
// every organization (the partitions to purge, the jobs to resume), in
// the shard of GlobalShards its name hashes to (shard 0: the queue's name
// alone), so that no one key takes every organization's writes. Such
// items are few and short-lived; a sweep reads the queue's every shard
// (QueuePartitions).
func QueueKey(queue, item string) Key {
	registerQueue(queue)
	return Key{queuePartition(queue, globalShard(item)), item}
}

// QueuePartitions is the partition of every shard of a work queue.
func QueuePartitions(queue string) []string {
	registerQueue(queue)
	out := make([]string, GlobalShards)
	for n := range out {
		out[n] = queuePartition(queue, n)
	}
	return out
}

func queuePartition(queue string, shard int) string {
	if shard == 0 {
		return queue
	}
	return queue + "#" + strconv.Itoa(shard)
}

// OrgKey is {"ORG#<org>", "ORG"}: an organization's own item.
func OrgKey(org string) Key { return Key{"ORG#" + org, TypeOrg} }

// RateCounterKey is {"RATE#<scope>#<id>", "W#<window>"}: the requests a
// rate limit of scope (key, webhook) has granted id (a client id, a
// trigger slug) in one window (its start in Unix seconds), outside any
// organization's partition; it expires with AttrExpires.
func RateCounterKey(scope, id string, window int64) Key {
	return Key{TypeRate + "#" + scope + "#" + id, "W#" + strconv.FormatInt(window, 10)}
}

// RateLimitsKey is {"ORG#<org>", "LIMITS"}: an organization's own rate
// limits, beside its record.
func RateLimitsKey(org string) Key { return Key{"ORG#" + org, TypeLimits} }

// APIKeyKey is {"APIKEY#<clientId>", "APIKEY"}: an API key, outside any
// organization's partition, so that authentication reads it in one call.
func APIKeyKey(clientID string) Key { return Key{"APIKEY#" + clientID, TypeAPIKey} }

// TriggerRouteKey is {"TRIGGER#<slug>", "TRIGGER"}: where a webhook slug
// leads (organization, workflow, verification); the webhook path's one read.
func TriggerRouteKey(slug string) Key { return Key{"TRIGGER#" + slug, TypeTriggerRoute} }

// DeliveryKey is {"ORG#<org>#DELIVERY#<slug>#<sha256 hex of the delivery
// id>", "DELIVERY"}: a webhook delivery id seen on a slug (senders choose
// the id, so it is hashed).
func DeliveryKey(org, slug, deliveryID string) Key {
	return Key{OrgPartition(org, TypeDelivery) + "#" + slug + "#" + sha256Hex(deliveryID), TypeDelivery}
}

// IdempotencyKey is {"ORG#<org>#IDEMPOTENCY#<sha256 hex of "<method>
// <path>\n<key>">", "IDEMPOTENCY"}: a request made with an Idempotency-Key.
func IdempotencyKey(org, method, path, key string) Key {
	return Key{OrgPartition(org, TypeIdempotency) + "#" + sha256Hex(method+" "+path+"\n"+key), TypeIdempotency}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// UsagePartition is "ORG#<org>#USAGE": org's daily usage totals (package
// usage), in the organization's own partition, never a key shared by
// organizations.
func UsagePartition(org string) string { return OrgPartition(org, TypeUsage) }

// UsageKey is {UsagePartition(org), "D#<YYYY-MM-DD>"}: org's requests and
// read and write units of one UTC day, added to by each instance at most
// every few seconds (a counter, ClassCounter).
func UsageKey(org string, day time.Time) Key {
	return Key{UsagePartition(org), UsageSortKey(day)}
}

// UsageSortKey is the sort key of day's usage item (its UTC date).
func UsageSortKey(day time.Time) string { return "D#" + day.UTC().Format(time.DateOnly) }
