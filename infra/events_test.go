package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

// mappingsOf are the event source mappings of the function named name.
func (s *synthesized) mappingsOf(name string) []map[string]any {
	var out []map[string]any
	for _, m := range s.t.ofType("AWS::Lambda::EventSourceMapping") {
		if jsonEqual(m.Properties["FunctionName"], ref(s.logicalID(s.stack.Functions[name]))) {
			out = append(out, m.Properties)
		}
	}
	return out
}

// Every deployment has the events function and the deliver function, and
// only the stream consumers and the deliver function have event sources:
// the events function and the deliver function one each, and the indexer
// with OpenSearch.
func TestEveryDeploymentHasTheEventsAndDeliverFunctionsAndTheirEventSourcesOnly(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		for _, name := range []string{lambdas.Hooks, lambdas.Events, lambdas.Deliver} {
			if s.stack.Functions[name] == nil {
				t.Errorf("no %s function", name)
			}
		}
		want := map[string]int{lambdas.Events: 1, lambdas.Deliver: 1}
		if s.stack.Options.OpenSearch() {
			want[lambdas.Indexer] = 1
		}
		total := 0
		for _, f := range s.deployed() {
			n := len(s.mappingsOf(f.Name))
			total += n
			if n != want[f.Name] {
				t.Errorf("%s (%s): %d event source mappings, want %d", f.Name, f.Reach, n, want[f.Name])
			}
		}
		if n := len(s.t.ofType("AWS::Lambda::EventSourceMapping")); n != total {
			t.Errorf("%d event source mappings, %d of them of the functions", n, total)
		}
	})
}

// The events function reads the table's stream like the indexer (from the
// trim horizon, in order, partial batch failures reported, a failing
// batch bisected and retried, then kept 14 days in its own queue), and
// only the changes of item types that have events invoke it: the filter
// criteria are deploy.EventsFilterPatterns, naming the model's event item
// types (the event catalog's) in the new or the old image.
func TestTheEventsFunctionReadsTheTablesStreamFilteredToTheItemTypesThatHaveEvents(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		ms := s.mappingsOf(lambdas.Events)
		if len(ms) != 1 {
			t.Fatalf("%d event source mappings of the events function, want 1", len(ms))
		}
		p := ms[0]
		var filters []any
		for _, pattern := range deploy.EventsFilterPatterns(s.stack.Model) {
			filters = append(filters, map[string]any{"Pattern": pattern})
		}
		for k, want := range map[string]any{
			"EventSourceArn":             getAtt(s.logicalID(s.stack.Table), "StreamArn"),
			"StartingPosition":           "TRIM_HORIZON",
			"BatchSize":                  deploy.EventsBatchSize,
			"BisectBatchOnFunctionError": true,
			"FunctionResponseTypes":      []string{"ReportBatchItemFailures"},
			"MaximumRetryAttempts":       deploy.StreamRetryAttempts,
			"ParallelizationFactor":      1,
			"DestinationConfig":          map[string]any{"OnFailure": map[string]any{"Destination": getAtt(s.logicalID(s.stack.EventsFailures), "Arn")}},
			"FilterCriteria":             map[string]any{"Filters": filters},
		} {
			if !jsonEqual(p[k], want) {
				t.Errorf("%s: %s, want %s", k, js(p[k]), js(want))
			}
		}
		failures := s.t.Resources[s.logicalID(s.stack.EventsFailures)].Properties
		if failures["MessageRetentionPeriod"] != float64(14*24*60*60) || failures["SqsManagedSseEnabled"] != true || failures["FifoQueue"] != nil {
			t.Errorf("EventsFailures %s, want a standard queue, encrypted, keeping 14 days", js(failures))
		}
	})
	m := deploymodel.Default()
	var types []any
	for _, typ := range m.EventItemTypes {
		types = append(types, typ)
	}
	want := []string{
		js(map[string]any{"dynamodb": map[string]any{"NewImage": map[string]any{"type": map[string]any{"S": types}}}}),
		js(map[string]any{"dynamodb": map[string]any{"OldImage": map[string]any{"type": map[string]any{"S": types}}}}),
	}
	if got := deploy.EventsFilterPatterns(m); !slices.Equal(got, want) || !slices.Contains(types, any("COMPANY")) || m.Table.ItemTypeAttribute != "type" {
		t.Errorf("filter patterns %q, want %q", got, want)
	}
}

// The deliver function takes the delivery queue's batches (at most 10, a
// FIFO queue's maximum) reporting partial batch failures, at a bounded
// concurrency; the queue's visibility timeout is six times its timeout.
func TestTheDeliverFunctionTakesTheDeliveryQueueWithPartialFailuresAtABoundedConcurrency(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		ms := s.mappingsOf(lambdas.Deliver)
		if len(ms) != 1 {
			t.Fatalf("%d event source mappings of the deliver function, want 1", len(ms))
		}
		want := map[string]any{
			"EventSourceArn":        getAtt(s.logicalID(s.stack.DeliverQueue), "Arn"),
			"BatchSize":             s.stack.Model.DeliverBatchSize,
			"FunctionResponseTypes": []string{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": deploy.DeliverMaxConcurrency},
		}
		for k, v := range want {
			if !jsonEqual(ms[0][k], v) {
				t.Errorf("%s: %s, want %s", k, js(ms[0][k]), js(v))
			}
		}
		if batch := s.stack.Model.DeliverBatchSize; batch < 1 || batch > 10 || deploy.DeliverMaxConcurrency < 2 || deploy.DeliverMaxConcurrency > 1000 {
			t.Errorf("batch size %d (a FIFO queue: at most 10), maximum concurrency %d (2 to 1000)", batch, deploy.DeliverMaxConcurrency)
		}
		timeout := s.fn(t, lambdas.Deliver).Properties["Timeout"].(float64)
		q := s.t.Resources[s.logicalID(s.stack.DeliverQueue)].Properties
		if v, _ := q["VisibilityTimeout"].(float64); v < 6*timeout || v > 12*60*60 {
			t.Errorf("the delivery queue's visibility timeout %v s, want at least six times the deliver function's %v s", q["VisibilityTimeout"], timeout)
		}
	})
}

// The delivery queue and its dead-letter queue are FIFO without content
// based deduplication (messages carry their delivery's id), encrypted by
// SQS, refusing requests without TLS, with their retentions; the queue
// redrives to the dead-letter queue; neither has a fixed name.
func TestTheDeliveryQueueAndItsDeadLetterQueueAreFIFOEncryptedAndTLSOnly(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		queue, dlq := s.logicalID(s.stack.DeliverQueue), s.logicalID(s.stack.DeliverDLQ)
		days := func(n int) float64 { return float64(n * 24 * 60 * 60) }
		for id, retention := range map[string]float64{queue: days(deploy.DeliverRetentionDays), dlq: days(deploy.DeliverDLQRetentionDays)} {
			r := s.t.Resources[id]
			p := r.Properties
			if p["FifoQueue"] != true || p["ContentBasedDeduplication"] != false || p["SqsManagedSseEnabled"] != true ||
				p["MessageRetentionPeriod"] != retention || p["QueueName"] != nil || p["KmsMasterKeyId"] != nil {
				t.Errorf("queue %s: %s; want FIFO, no content based deduplication, SQS-managed encryption, retention %v s, no name", id, js(p), retention)
			}
			policy := map[Stage]string{Prod: "Retain", Dev: "Delete"}[s.stack.Options.Stage]
			if r.DeletionPolicy != policy {
				t.Errorf("queue %s: deletion policy %q, want %q", id, r.DeletionPolicy, policy)
			}
		}
		q := s.t.Resources[queue].Properties
		if !jsonEqual(q["RedrivePolicy"], map[string]any{"deadLetterTargetArn": getAtt(dlq, "Arn"), "maxReceiveCount": deploy.DeliverMaxReceiveCount}) {
			t.Errorf("redrive policy %s", js(q["RedrivePolicy"]))
		}
		if q["DeduplicationScope"] != "messageGroup" || q["FifoThroughputLimit"] != "perMessageGroupId" {
			t.Errorf("deduplication scope %v, throughput limit %v: want high throughput FIFO", q["DeduplicationScope"], q["FifoThroughputLimit"])
		}
		if s.t.Resources[dlq].Properties["RedrivePolicy"] != nil {
			t.Errorf("the dead-letter queue has a redrive policy")
		}
		if d, want := time.Duration(q["VisibilityTimeout"].(float64))*time.Second, deploy.DeliverVisibilityTimeout(s.stack.Model); d != want || want == 0 {
			t.Errorf("visibility timeout %s, want %s", d, want)
		}
		// Every queue refuses requests without TLS (enforceSSL).
		for _, id := range []string{queue, dlq, s.logicalID(s.stack.EventsFailures)} {
			found := false
			for _, p := range s.t.ofType("AWS::SQS::QueuePolicy") {
				doc := js(p.Properties["PolicyDocument"])
				if jsonEqual(p.Properties["Queues"], []any{ref(id)}) && strings.Contains(doc, `"aws:SecureTransport":"false"`) && strings.Contains(doc, `"Effect":"Deny"`) {
					found = true
				}
			}
			if !found {
				t.Errorf("queue %s: no policy denying requests without TLS", id)
			}
		}
	})
}

// Who may send to the delivery queue: the functions that queue
// deliveries (hooks, events), sqs:SendMessage and nothing else; who may
// take from it: the deliver function only, which alone may send to the
// dead-letter queue. No role may do anything else with either queue.
func TestOnlyTheFunctionsThatQueueDeliveriesMaySendAndOnlyTheDeliverFunctionConsumes(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		queue := js(getAtt(s.logicalID(s.stack.DeliverQueue), "Arn"))
		dlq := js(getAtt(s.logicalID(s.stack.DeliverDLQ), "Arn"))
		byRole := map[string]string{}
		for _, f := range s.deployed() {
			byRole[s.logicalID(s.stack.Roles[f.Name])] = f.Name
		}
		senders := []string{}
		for id := range s.t.ofType("AWS::IAM::Role") {
			name := byRole[id]
			for g := range s.roleGrants(t, id) {
				action, resource, _ := strings.Cut(g, " on ")
				switch resource {
				case queue:
					switch {
					case action == "sqs:SendMessage" && (name == lambdas.Hooks || name == lambdas.Events):
						senders = append(senders, name)
					case name == lambdas.Deliver && action != "sqs:SendMessage":
					default:
						t.Errorf("role %s (%s) may %s on the delivery queue", id, name, action)
					}
				case dlq:
					if name != lambdas.Deliver || action != "sqs:SendMessage" {
						t.Errorf("role %s (%s) may %s on the dead-letter queue", id, name, action)
					}
				}
			}
		}
		slices.Sort(senders)
		if !slices.Equal(senders, []string{lambdas.Events, lambdas.Hooks}) {
			t.Errorf("the functions that may send to the delivery queue: %v, want events and hooks", senders)
		}
		for _, name := range []string{lambdas.Hooks, lambdas.Events} {
			if f, _ := s.stack.Model.Function(name); !f.SendsDeliveries {
				t.Errorf("the %s function does not declare SendsDeliveries", name)
			}
		}
	})
}

// TableProps translates the model's table, its stream included (the
// stack's table has it in every deployment: TestSearchingWithOpenSearch...),
// and refuses what it cannot translate rather than dropping it (what the
// model cannot express, derive refuses: internal/deploymodel/derive).
func TestTablePropsTranslatesTheStreamAndRefusesWhatItCannotTranslate(t *testing.T) {
	props, _, err := TableProps(deploymodel.Default().Table)
	if err != nil || props.Stream != "NEW_AND_OLD_IMAGES" {
		t.Fatalf("TableProps(the model's table) stream %v, %v; want NEW_AND_OLD_IMAGES", props.Stream, err)
	}
	for name, change := range map[string]func(d *deploymodel.Table){
		"an unknown stream view type":      func(d *deploymodel.Table) { d.StreamViewType = "ALL_OF_IT" },
		"provisioned billing":              func(d *deploymodel.Table) { d.BillingMode = "PROVISIONED" },
		"an unknown attribute type":        func(d *deploymodel.Table) { d.Attributes[0].Type = "SS" },
		"a key with no attribute":          func(d *deploymodel.Table) { d.KeySchema[1].Attribute = "nowhere" },
		"an unknown key type":              func(d *deploymodel.Table) { d.KeySchema[1].Type = "SORT" },
		"a table with no partition key":    func(d *deploymodel.Table) { d.KeySchema = d.KeySchema[1:] },
		"an index with an unknown project": func(d *deploymodel.Table) { d.Indexes[0].Projection = "SOME" },
		"an index with no projection":      func(d *deploymodel.Table) { d.Indexes[0].Projection = "" },
	} {
		def := deploymodel.Default().Clone().Table
		change(&def)
		if _, _, err := TableProps(def); err == nil {
			t.Errorf("%s: translated", name)
		}
	}
	def := deploymodel.Default().Clone().Table
	def.StreamViewType = ""
	if props, _, err := TableProps(def); err != nil || props.Stream != "" {
		t.Errorf("no stream: %v, %v", props.Stream, err)
	}
}

// Only the events function may publish to EventBridge, and only to the
// account's default bus, which its environment names.
func TestOnlyTheEventsFunctionPublishesToTheDefaultEventBus(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		for _, f := range s.deployed() {
			vars, _ := s.fn(t, f.Name).Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			publishes := false
			for g := range s.roleGrants(t, s.logicalID(s.stack.Roles[f.Name])) {
				action, resource, _ := strings.Cut(g, " on ")
				if strings.HasPrefix(action, "events:") {
					publishes = true
					if action != "events:PutEvents" || !strings.Contains(resource, ":event-bus/"+deploy.EventBus) {
						t.Errorf("%s may %s on %s", f.Name, action, resource)
					}
				}
			}
			if want := f.Name == lambdas.Events; publishes != want || (vars["EVENT_BUS_NAME"] == deploy.EventBus) != want {
				t.Errorf("%s: publishes %v, EVENT_BUS_NAME %v; want only the events function to publish to the default bus", f.Name, publishes, vars["EVENT_BUS_NAME"])
			}
		}
	})
}
