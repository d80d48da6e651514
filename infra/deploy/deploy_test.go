package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/endpoints"
	"github.com/sourcebase/sourcebase/internal/endpoints/sqsqueue"
	"github.com/sourcebase/sourcebase/internal/events"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/sizing"
	"github.com/sourcebase/sourcebase/internal/store"
)

// matches is Lambda's event filtering for the patterns used here: every
// key of the pattern is in the value with a matching value; a list of
// the pattern matches a value equal to one of its items.
func matches(pattern, value any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		v, ok := value.(map[string]any)
		if !ok {
			return false
		}
		for k, sub := range p {
			x, ok := v[k]
			if !ok || !matches(sub, x) {
				return false
			}
		}
		return true
	case []any:
		for _, item := range p {
			if fmt.Sprint(item) == fmt.Sprint(value) {
				return true
			}
		}
		return false
	}
	return false
}

// invokes reports whether a stream record passes the events function's
// filter criteria (any pattern).
func invokes(t *testing.T, record any) bool {
	t.Helper()
	for _, p := range EventsFilterPatterns() {
		var pattern any
		if err := json.Unmarshal([]byte(p), &pattern); err != nil {
			t.Fatalf("pattern %s: %v", p, err)
		}
		if matches(pattern, record) {
			return true
		}
	}
	return false
}

func record(name string, newType, oldType string) map[string]any {
	img := func(typ string) any {
		if typ == "" {
			return nil
		}
		return map[string]any{"pk": map[string]any{"S": "ORG#org_1#" + typ}, "type": map[string]any{"S": typ}}
	}
	d := map[string]any{"Keys": map[string]any{}}
	if i := img(newType); i != nil {
		d["NewImage"] = i
	}
	if i := img(oldType); i != nil {
		d["OldImage"] = i
	}
	return map[string]any{"eventName": name, "dynamodb": d}
}

// Only the changes of records of the catalog's kinds invoke the events
// function, whether created (a new image only), updated or deleted (an
// old image only); the items it writes itself (events, deliveries),
// deletion markers (it reads them by key), index entries and items
// without a type never do.
func TestTheEventsFunctionsFilterLetsThroughExactlyTheChangesOfKindsWithEvents(t *testing.T) {
	for _, k := range api.EventCatalog().Kinds() {
		for _, r := range []map[string]any{
			record("INSERT", k.StoreType, ""),
			record("MODIFY", k.StoreType, k.StoreType),
			record("REMOVE", "", k.StoreType),
		} {
			if !invokes(t, r) {
				t.Errorf("a %s of a %s record does not invoke the events function", r["eventName"], k.StoreType)
			}
		}
	}
	for _, typ := range []string{events.TypeEvent, endpoints.TypeDelivery, store.TypeDeleted, "CHANGE", "APIKEYINDEX"} {
		for _, r := range []map[string]any{record("INSERT", typ, ""), record("MODIFY", typ, typ), record("REMOVE", "", typ)} {
			if invokes(t, r) {
				t.Errorf("a %s of a %s item invokes the events function", r["eventName"], typ)
			}
		}
	}
	if invokes(t, map[string]any{"dynamodb": map[string]any{"NewImage": map[string]any{"pk": map[string]any{"S": "x"}}}}) {
		t.Error("an item without a type invokes the events function")
	}
	for _, p := range EventsFilterPatterns() {
		if len(p) > 4096 {
			t.Errorf("a pattern of %d characters: Lambda takes at most 4096", len(p))
		}
	}
	// The sample stream events: the company change passes, the unique
	// constraint item and the change feed entry of the indexer's sample
	// do not.
	for name, want := range map[string][]bool{
		"events-stream.json":  {true},
		"indexer-stream.json": {true, false, true, false, true, true, true, true, true, true},
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
		if err != nil {
			t.Fatal(err)
		}
		var ev struct{ Records []any }
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, r := range ev.Records {
			got = append(got, invokes(t, r))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: records invoking %v, want %v", name, got, want)
		}
	}
}

// The delivery queue's settings hold together: the visibility timeout
// (six times the deliver function's timeout) is within SQS's 12 hours,
// the retention outlasts the retry schedule, and the redrive's receive
// count is above what a message can be received in normal operation.
func TestTheDeliveryQueuesSettingsHoldTogether(t *testing.T) {
	deliver, _ := routes.FunctionNamed(fn.Deliver)
	size, err := sizing.Of(deliver)
	if err != nil {
		t.Fatal(err)
	}
	if DeliverVisibilityTimeout < 6*size.Timeout || DeliverVisibilityTimeout > sqsqueue.MaxVisibility || size.Timeout > 15*time.Minute {
		t.Errorf("visibility timeout %s, deliver timeout %s", DeliverVisibilityTimeout, size.Timeout)
	}
	if size.Timeout < DeliverBatchSize*outbound.DefaultTimeout {
		t.Errorf("deliver timeout %s: a batch of %d attempts of up to %s does not fit", size.Timeout, DeliverBatchSize, outbound.DefaultTimeout)
	}
	var schedule time.Duration
	for _, d := range outbound.Schedule {
		schedule += d
	}
	if retention := time.Duration(DeliverRetentionDays) * 24 * time.Hour; retention < 2*schedule || DeliverRetentionDays > 14 {
		t.Errorf("retention %s for a retry schedule of %s", retention, schedule)
	}
	attempts := 1 + len(outbound.Schedule)
	if DeliverMaxReceiveCount <= attempts*DeliverBatchSize || DeliverMaxReceiveCount > 1000 {
		t.Errorf("max receive count %d, want above %d (%d attempts for each of a batch's messages of one group)", DeliverMaxReceiveCount, attempts*DeliverBatchSize, attempts)
	}
}

// Config gives the delivery queue to the functions that queue deliveries
// and to the deliver function, the dead-letter queue to the deliver
// function only, and never allows loopback webhook endpoints; the
// OpenSearch configuration goes to the indexer, not to the events
// function, though both read the stream.
func TestConfigGivesTheQueuesWhereTheyAreUsedAndOpenSearchToTheIndexerOnly(t *testing.T) {
	base := app.DefaultConfig()
	base.WebhooksAllowLoopback, base.DeliverQueueURL, base.DeliverDLQURL = true, "stale", "stale"
	refs := Refs{Table: "t", DeliverQueueURL: "q", DeliverDLQURL: "d"}
	for _, f := range routes.Deployed(true) {
		cfg := OpenSearch(Config(base, f, refs), f, "https://collection")
		wantQueue, wantDLQ := "", ""
		if f.SendsDeliveries || f.Name == fn.Deliver {
			wantQueue = "q"
		}
		if f.Name == fn.Deliver {
			wantDLQ = "d"
		}
		if cfg.DeliverQueueURL != wantQueue || cfg.DeliverDLQURL != wantDLQ || cfg.WebhooksAllowLoopback {
			t.Errorf("%s: queue %q, dead letters %q, loopback %v; want %q, %q, false", f.Name, cfg.DeliverQueueURL, cfg.DeliverDLQURL, cfg.WebhooksAllowLoopback, wantQueue, wantDLQ)
		}
		if got, want := cfg.SearchEngine == app.SearchOpenSearch, f.HoldsIndexes || f.Name == fn.Indexer; got != want {
			t.Errorf("%s: searches with OpenSearch %v, want %v", f.Name, got, want)
		}
		if (f.Name == fn.Indexer) != IsIndexer(f) || (f.Name == fn.Events) != IsEventsConsumer(f) || (f.Name == fn.Deliver) != IsDeliverer(f) {
			t.Errorf("%s: indexer %v, events consumer %v, deliverer %v", f.Name, IsIndexer(f), IsEventsConsumer(f), IsDeliverer(f))
		}
	}
}
