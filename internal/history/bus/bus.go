// Package bus publishes events to an EventBridge bus, for the
// organizations whose operator asked for it (the events function's; apart
// from package events so that only it links the EventBridge client).
package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/sourcebase/sourcebase/internal/history"
)

// Source is the source of the events published to EventBridge: a
// rule matches them with {"source": ["sourcebase"]}.
const Source = "sourcebase"

// maxBridgeEntry is EventBridge's limit on one entry (256 KB); an event
// above it is sent without its data and changes' values (truncated).
const maxBridgeEntry = 256_000

// Bridge publishes the events of the organizations that asked for it to
// an EventBridge bus of the deployment's account, for customers who route
// them with rules of their own: source "sourcebase", detail-type the event
// type, detail the event with its organizationId.
type Bridge struct {
	Client *eventbridge.Client
	Bus    string // the bus's name or ARN ("default": the account's default bus)
	// Enabled is whether an organization publishes to the bus (its
	// operator's setting); read at most every few minutes per organization.
	Enabled func(ctx context.Context, org string) (bool, error)

	mu    sync.Mutex
	cache map[string]enabled
}

type enabled struct {
	on   bool
	read time.Time
}

// Detail is the detail of an event published to EventBridge.
type Detail struct {
	OrganizationID string `json:"organizationId"`
	history.Event
}

// Publish sends d's event to the bus when its organization publishes
// there; at least once, as every delivery (a retried stream batch sends
// it again, with the same event id).
func (b *Bridge) Publish(ctx context.Context, d history.Derived) error {
	on, err := b.enabled(ctx, d.Org)
	if err != nil || !on {
		return err
	}
	detail, err := json.Marshal(Detail{OrganizationID: d.Org, Event: d.Event})
	if err != nil {
		return err
	}
	if len(detail) > maxBridgeEntry {
		if detail, err = json.Marshal(Detail{OrganizationID: d.Org, Event: d.Event.Truncate()}); err != nil {
			return err
		}
	}
	out, err := b.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		EventBusName: aws.String(b.Bus), Source: aws.String(Source), DetailType: aws.String(d.Event.Type),
		Detail: aws.String(string(detail)), Time: aws.Time(d.Event.OccurredAt.Time), Resources: []string{},
	}}})
	if err != nil {
		return fmt.Errorf("publish event %s to EventBridge: %w", d.Event.ID, err)
	}
	if out.FailedEntryCount > 0 && len(out.Entries) > 0 {
		return fmt.Errorf("publish event %s to EventBridge: %s: %s", d.Event.ID, aws.ToString(out.Entries[0].ErrorCode), aws.ToString(out.Entries[0].ErrorMessage))
	}
	return nil
}

// bridgeCache is how long an organization's setting is remembered.
const bridgeCache = 5 * time.Minute

func (b *Bridge) enabled(ctx context.Context, org string) (bool, error) {
	b.mu.Lock()
	e, ok := b.cache[org]
	b.mu.Unlock()
	if ok && time.Since(e.read) < bridgeCache {
		return e.on, nil
	}
	on, err := b.Enabled(ctx, org)
	if err != nil {
		return false, err
	}
	b.mu.Lock()
	if b.cache == nil {
		b.cache = map[string]enabled{}
	}
	b.cache[org] = enabled{on, time.Now()}
	b.mu.Unlock()
	return on, nil
}
