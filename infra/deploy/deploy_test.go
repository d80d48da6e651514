package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/outbound"
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
	for _, p := range EventsFilterPatterns(deploymodel.Default()) {
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

// Only the changes of records of the model's event item types (the event
// catalog's kinds) invoke the events function, whether created (a new
// image only), updated or deleted (an old image only); the items it writes
// itself (events, deliveries), deletion markers (it reads them by key),
// index entries and items without a type never do (which types the model
// lists, internal/deploymodel/derive's tests check).
func TestTheEventsFunctionsFilterLetsThroughExactlyTheChangesOfKindsWithEvents(t *testing.T) {
	types := deploymodel.Default().EventItemTypes
	if !slices.Contains(types, "COMPANY") {
		t.Fatalf("event item types %v, want COMPANY among them", types)
	}
	for _, typ := range types {
		for _, r := range []map[string]any{
			record("INSERT", typ, ""),
			record("MODIFY", typ, typ),
			record("REMOVE", "", typ),
		} {
			if !invokes(t, r) {
				t.Errorf("a %s of a %s record does not invoke the events function", r["eventName"], typ)
			}
		}
	}
	// events.TypeEvent, endpoints.TypeDelivery, store.TypeDeleted, ...
	for _, typ := range []string{"EVENT", "WHDELIVERY", "DELETED", "CHANGE", "APIKEYINDEX"} {
		for _, r := range []map[string]any{record("INSERT", typ, ""), record("MODIFY", typ, typ), record("REMOVE", "", typ)} {
			if invokes(t, r) {
				t.Errorf("a %s of a %s item invokes the events function", r["eventName"], typ)
			}
		}
	}
	if invokes(t, map[string]any{"dynamodb": map[string]any{"NewImage": map[string]any{"pk": map[string]any{"S": "x"}}}}) {
		t.Error("an item without a type invokes the events function")
	}
	for _, p := range EventsFilterPatterns(deploymodel.Default()) {
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
	m := deploymodel.Default()
	var deliver []deploymodel.Function
	for _, f := range m.Functions {
		if IsDeliverer(f) {
			deliver = append(deliver, f)
		}
	}
	if len(deliver) != 1 {
		t.Fatalf("%d functions take the delivery queue, want one", len(deliver))
	}
	timeout := time.Duration(deliver[0].TimeoutSeconds) * time.Second
	const maxVisibility = 12 * time.Hour // SQS's (sqsqueue.MaxVisibility)
	if v := DeliverVisibilityTimeout(m); v != 6*timeout || v > maxVisibility || timeout > 15*time.Minute {
		t.Errorf("visibility timeout %s, deliver timeout %s", v, timeout)
	}
	batch := m.DeliverBatchSize
	if timeout < time.Duration(batch)*outbound.DefaultTimeout {
		t.Errorf("deliver timeout %s: a batch of %d attempts of up to %s does not fit", timeout, batch, outbound.DefaultTimeout)
	}
	var schedule time.Duration
	for _, d := range outbound.Schedule {
		schedule += d
	}
	if retention := time.Duration(DeliverRetentionDays) * 24 * time.Hour; retention < 2*schedule || DeliverRetentionDays > 14 {
		t.Errorf("retention %s for a retry schedule of %s", retention, schedule)
	}
	attempts := 1 + len(outbound.Schedule)
	if DeliverMaxReceiveCount <= attempts*batch || DeliverMaxReceiveCount > 1000 {
		t.Errorf("max receive count %d, want above %d (%d attempts for each of a batch's messages of one group)", DeliverMaxReceiveCount, attempts*batch, attempts)
	}
}

// Env gives each variable of the model's environment its literal value,
// or the deployment's value of its reference; an unknown reference fails.
func TestEnvReplacesEveryReferenceWithTheDeploymentsValue(t *testing.T) {
	f := deploymodel.Function{Name: "f", Env: map[string]deploymodel.EnvValue{
		"TABLE_NAME": {Ref: deploymodel.RefTable}, "STORE_TIMEOUT": {Value: "10s"},
	}, OpenSearchEnv: map[string]deploymodel.EnvValue{
		"TABLE_NAME": {Ref: deploymodel.RefTable}, "OPENSEARCH_ENDPOINT": {Ref: deploymodel.RefOpenSearchEndpoint},
	}}
	values := func(r deploymodel.Ref) (string, error) {
		if r == deploymodel.RefTable {
			return "<table>", nil
		}
		return "", fmt.Errorf("no %s", r)
	}
	literal := func(v string) string { return "literal " + v }
	got, err := Env(f, false, literal, values)
	if want := map[string]string{"TABLE_NAME": "<table>", "STORE_TIMEOUT": "literal 10s"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("Env = %v, %v; want %v", got, err, want)
	}
	if got, err := Env(f, true, literal, values); err == nil {
		t.Errorf("Env with OpenSearch and no endpoint = %v, want an error", got)
	}
	// The events function's bus is a reference the stacks answer with
	// EventBus.
	for _, f := range deploymodel.Default().Functions {
		for k, v := range f.Env {
			if v.Ref == deploymodel.RefEventBus && (!IsEventsConsumer(f) || k != "EVENT_BUS_NAME") {
				t.Errorf("%s: %s refers to the event bus", f.Name, k)
			}
		}
	}
}

// The roles the model gives the functions: one indexer (OpenSearch only),
// one events consumer on the stream, one deliverer, one job runner.
func TestTheModelsFunctionsHaveOneOfEachRoleTheStacksLookFor(t *testing.T) {
	count := map[string][]string{}
	for _, f := range deploymodel.Default().Functions {
		for role, is := range map[string]bool{"indexer": IsIndexer(f), "events": IsEventsConsumer(f), "deliver": IsDeliverer(f), "runner": IsJobRunner(f)} {
			if is {
				count[role] = append(count[role], f.Name)
			}
		}
		if IsIndexer(f) && !f.OpenSearchOnly {
			t.Errorf("the indexer %s is deployed without OpenSearch", f.Name)
		}
	}
	for _, role := range []string{"indexer", "events", "deliver", "runner"} {
		if len(count[role]) != 1 || count[role][0] != role {
			t.Errorf("%s: functions %v, want the %s function", role, count[role], role)
		}
	}
}
