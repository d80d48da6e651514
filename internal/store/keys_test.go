package store

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Stored key values must never change shape: items already in a table are
// read by them. Each shape is pinned here, byte for byte.
func TestEveryKeyShapeOfTheTableStaysByteForByteTheSame(t *testing.T) {
	long := strings.Repeat("x", 600)
	const longHash = "5130b33e6b87fbf5316ed9049e98924eb110800bcbaaad8050f642fba6df37c9" // sha256 of long
	cases := []struct {
		name      string
		got, want Key
	}{
		{"record", RecordKey("org_1", TypeCompany, "co_1"), Key{"ORG#org_1#COMPANY", "co_1"}},
		{"organization", OrgKey("org_1"), Key{"ORG#org_1", "ORG"}},
		{"API key", APIKeyKey("ck_1"), Key{"APIKEY#ck_1", "APIKEY"}},
		{"rate counter", RateCounterKey("key", "ck_1", 1700000040), Key{"RATE#key#ck_1", "W#1700000040"}},
		{"rate limits", RateLimitsKey("org_1"), Key{"ORG#org_1", "LIMITS"}},
		{"trigger route", TriggerRouteKey("slug1"), Key{"TRIGGER#slug1", "TRIGGER"}},
		{"webhook delivery", DeliveryKey("org_1", "slug1", "d-1"),
			Key{"ORG#org_1#DELIVERY#slug1#0741a320e613baac937e2644e8e96a2832166a3eb222ade3abbfa21a8cff1035", "DELIVERY"}},
		{"idempotency record", IdempotencyKey("org_1", "POST", "/v1/companies", "k1"),
			Key{"ORG#org_1#IDEMPOTENCY#1aa6cf220095c001144afa6ba7faef40c927431a93dd867d446270b73ac160dd", "IDEMPOTENCY"}},
		{"record's vector", VectorKey("org_1", TypeCompany, "cmp_1"), Key{"ORG#org_1#VECTOR#COMPANY#cmp_1", "VECTOR"}},
		{"uniqueness item", uniqueItemKey("org_1", TypeCompany, "externalId", "e-1"),
			Key{"ORG#org_1#COMPANY#UNIQUE#externalId=e-1", "UNIQUE"}},
		{"change feed entry", ChangeKey("org_1", TypeCompany, time.Unix(1700000000, 5), "co_1", 3),
			Key{"ORG#org_1#COMPANY#CHANGES", "1700000000000000005#co_1#3"}},
		// Work queues of every organization, spread over GlobalShards.
		{"purge queue item", PurgeKey("ORG#org_1#ENRICH#companies#cmp_1"), Key{"PURGE#63", "ORG#org_1#ENRICH#companies#cmp_1"}},
		{"work queue item", QueueKey("JOBPENDING", "org_1#job_1"), Key{"JOBPENDING#49", "org_1#job_1"}},
		{"uniqueness item of a long value", uniqueItemKey("org_1", TypeCompany, "externalId", long),
			Key{"ORG#org_1#COMPANY#UNIQUE#externalId=sha256:" + longHash, "UNIQUE"}},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s key: got %q, want %q", c.name, c.got, c.want)
		}
	}

	strs := []struct{ name, got, want string }{
		{"organization partition", OrgPartition("org_1", TypeRun), "ORG#org_1#RUN"},
		{"lookup partition", lookupPartition("org_1", TypeRun, 0, "workflowId", "wf_1"), "ORG#org_1#RUN#workflowId=wf_1"},
		{"lookup partition of a long value", lookupPartition("org_1", TypeRun, 0, "externalId", long), "ORG#org_1#RUN#externalId=sha256:" + longHash},
		{"global lookup partition", globalLookupPartition(TypeRun, "active", "1", 0), "GLOBAL#RUN#active=1"},
		// Shards (shards.go): shard 0 is every shape above; others add "@<shard>".
		{"shard partition", ShardPartition("org_1", TypeRun, 33), "ORG#org_1#RUN@11"},
		{"lookup partition of a shard", lookupPartition("org_1", TypeRun, 5, "workflowId", "wf_1"), "ORG#org_1#RUN@05#workflowId=wf_1"},
		{"global lookup partition of a shard", globalLookupPartition(TypeRun, "active", "1", 7), "GLOBAL#RUN#active=1#7"},
		{"record partition of a sharded id", RecordKey("org_1", TypeRun, "run_01kb2d7xq5m3n4p6r8s9t0v1wx0z").PK, "ORG#org_1#RUN@0z"},
		{"change feed of a sharded id", ChangeKey("org_1", TypeRun, time.Unix(1, 0), "run_01kb2d7xq5m3n4p6r8s9t0v1wx10", 1).PK, "ORG#org_1#RUN@10#CHANGES"},
		{"shards of an organization", ShardsKey("org_1").PK + " " + ShardsKey("org_1").SK, "ORG#org_1 SHARDS"},
		{"sort index key", sortIndexKey("acme", "co_1"), "acme\x00co_1"},
		{"sort index key of a long value", sortIndexKey(long, "co_1"), long[:512] + "\x00co_1"},
		{"sort index prefix", sortIndexPrefix("acme"), "acme\x00"},
		{"organization of a partition", orgOfPartition("ORG#org_1#RUN"), "org_1"},
		{"organization of a shard's partition", orgOfPartition("ORG#org_1#RUN@05"), "org_1"},
		{"metric series partition", MetricPartition("org_1", "companies:cmp_1", "metric:revenue"), "ORG#org_1#METRIC#companies:cmp_1#metric:revenue"},
		{"metric point sort key", MetricSortKey("2025-03-31", "2026-01-02T03:04:05.006Z", "mpt_1"), "2025-03-31#2026-01-02T03:04:05.006Z#mpt_1"},
		{"metric date range start", first(MetricDateRange("2025-01-01", "2025-12-31")), "2025-01-01"},
		{"metric date range end", second(MetricDateRange("2025-01-01", "2025-12-31")), "2025-12-31$"},
		{"metric date range open start", first(MetricDateRange("", "")), ""},
		{"enrichment partition", EnrichmentPartition("org_1", "companies", "cmp_1"), "ORG#org_1#ENRICH#companies#cmp_1"},
		{"enrichment value", EnrichmentKey("org_1", "companies", "cmp_1", "env_1").SK, "env_1"},
		{"metric date range open end", second(MetricDateRange("", "")), "~"},
	}
	for _, c := range strs {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}

	types := map[string]string{TypeOrg: "ORG", TypeAPIKey: "APIKEY", TypeCompany: "COMPANY", TypeWorkflow: "WORKFLOW",
		TypeRun: "RUN", TypeTriggerRoute: "TRIGGER", TypeDelivery: "DELIVERY", TypeIdempotency: "IDEMPOTENCY", TypeChange: "CHANGE", TypeMetric: "METRIC", TypeEnrichment: "ENRICH",
		TypeRate: "RATE", TypeLimits: "LIMITS"}
	for got, want := range types {
		if got != want {
			t.Errorf("item type: got %q, want %q", got, want)
		}
	}
}

func TestParseRecordKeyReadsRecordKeysOnlyAndNoOtherItemOfTheTable(t *testing.T) {
	for _, id := range []string{"cmp_1", "cmp_01kb2d7xq5m3n4p6r8s9t0v1wx0z"} {
		rec := RecordKey("org_1", TypeCompany, id)
		if org, typ, got, ok := ParseRecordKey(rec.PK, rec.SK); !ok || org != "org_1" || typ != TypeCompany || got != id {
			t.Errorf("ParseRecordKey(%v) = %s, %s, %s, %v", rec, org, typ, got, ok)
		}
	}
	for name, k := range map[string]Key{
		"organization":     OrgKey("org_1"),
		"API key":          APIKeyKey("ck_1"),
		"rate counter":     RateCounterKey("key", "ck_1", 60),
		"rate limits":      RateLimitsKey("org_1"),
		"trigger route":    TriggerRouteKey("slug1"),
		"webhook delivery": DeliveryKey("org_1", "slug1", "d-1"),
		"idempotency":      IdempotencyKey("org_1", "POST", "/v1/companies", "k1"),
		"uniqueness item":  uniqueItemKey("org_1", TypeCompany, "externalId", "e-1"),
		"change entry":     ChangeKey("org_1", TypeCompany, time.Unix(1, 0), "cmp_1", 2),
		"lookup":           {lookupPartition("org_1", TypeCompany, 0, "ext", "e-1"), "cmp_1"},
		"sharded lookup":   {lookupPartition("org_1", TypeCompany, 3, "ext", "e-1"), "cmp_1"},
		"enrichment value": {EnrichmentPartition("org_1", "companies", "cmp_1"), "env_1"},
		"record's vector":  VectorKey("org_1", TypeCompany, "cmp_1"),
		"metric point":     {MetricPartition("org_1", "companies:cmp_1", "metric:revenue"), MetricSortKey("2025-01-01", "2026-01-01T00:00:00.000Z", "mpt_1")},
		"global lookup":    {globalLookupPartition(TypeRun, "status", "running", 0), "run_1"},
		"sk with a #":      {OrgPartition("org_1", TypeCompany), "cmp_1#x"},
		"empty sk":         {OrgPartition("org_1", TypeCompany), ""},
		"empty org":        {OrgPartition("", TypeCompany), "cmp_1"},
	} {
		if org, typ, id, ok := ParseRecordKey(k.PK, k.SK); ok {
			t.Errorf("%s %v read as a record key: %s, %s, %s", name, k, org, typ, id)
		}
	}
}

func first(a, _ string) string  { return a }
func second(_, b string) string { return b }

// BenchmarkDocValue is the write of a company-sized doc whose item is
// over a KB boundary: deflated.
func BenchmarkDocValue(b *testing.B) {
	doc := []byte(`{"id":"cmp_01m8fagjq85yvd6w84b7zfh7wd","canonicalName":"Company 042 logistics","alternativeNames":[],"website":"https://company042.example","linkedinUrl":null,"description":null,"shortDescription":null,"sector":null,"subsector":null,"industry":null,"location":{},"companyType":"operating","origin":"user","externalId":null,"externalReference":{},"tags":["seed"],"assignees":[],"custom":{},"employeeCount":null,"ownershipStatus":null,"lastValuation":null,"lastAmountRaised":null,"totalMoneyRaised":null,"lastRoundDate":null,"lastFinancials":{},"enrichment":{},"lastEnrichedAt":null,"lastEnrichmentStartedAt":null,"createdAt":"2026-11-27T20:17:55.432Z","updatedAt":"2026-11-27T20:17:55.432Z"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := docValue(doc, 400).(*types.AttributeValueMemberB); !ok {
			b.Fatal("the doc was not deflated")
		}
	}
}

func TestEveryKeyShapeHasTheClassOfWhoWritesIt(t *testing.T) {
	registerSharded(TypeCompany)
	registerSharded("EVENT")
	queues.Store("JOBPENDING", true)
	for pk, want := range map[string]KeyClass{
		RecordKey("org_1", TypeCompany, "cmp_1").PK:                            ClassShard,
		RecordKey("org_1", TypeCompany, "cmp_01kb2d7xq5m3n4p6r8s9t0v1wx0z").PK: ClassShard,
		ChangeKey("org_1", TypeCompany, time.Unix(1, 0), "cmp_1", 1).PK:        ClassShard,
		lookupPartition("org_1", TypeCompany, 3, "status", "active"):           ClassShard,
		ShardPartition("org_1", "EVENT", 0):                                    ClassShard,
		DeletedKey("org_1", TypeCompany, "cmp_1").PK:                           ClassShard,
		logThread("org_1", "EVENT", "cmp_1"):                                   ClassRecord,
		uniqueItemKey("org_1", TypeCompany, "externalId", "e").PK:              ClassRecord,
		EnrichmentPartition("org_1", "companies", "cmp_1"):                     ClassRecord,
		VectorKey("org_1", TypeCompany, "cmp_1").PK:                            ClassRecord,
		MetricPartition("org_1", "companies:cmp_1", "metric:revenue"):          ClassRecord,
		DeliveryKey("org_1", "slug", "d").PK:                                   ClassRecord,
		IdempotencyKey("org_1", "POST", "/v1/companies", "k").PK:               ClassRecord,
		APIKeyKey("ck_1").PK:                                                   ClassRecord,
		TriggerRouteKey("slug").PK:                                             ClassRecord,
		RateCounterKey("key", "ck_1", 60).PK:                                   ClassCounter,
		UsageKey("org_1", time.Unix(1, 0)).PK:                                  ClassCounter,
		OrgKey("org_1").PK:                                                     ClassOrganization,
		ShardsKey("org_1").PK:                                                  ClassOrganization,
		OrgPartition("org_1", "NOTSHARDED"):                                    ClassOrganization,
		PurgeKey("ORG#org_1#ENRICH#companies#cmp_1").PK:                        ClassQueue,
		"PURGE":                                  ClassQueue,
		QueueKey("JOBPENDING", "org_1#job_1").PK: ClassQueue,
		globalLookupPartition(TypeRun, "active", "1", 0): ClassQueue,
		globalLookupPartition(TypeRun, "active", "1", 9): ClassQueue,
		"EVERYONE": ClassGlobal,
		"ORG#":     ClassGlobal,
	} {
		if got := ClassOf(pk); got != want {
			t.Errorf("ClassOf(%q) = %q, want %q", pk, got, want)
		}
	}
}
