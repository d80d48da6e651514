// Package endpoints is the outbound webhooks: an organization's webhook
// endpoints (a URL and the event types it subscribes to), and the
// deliveries of events to them, signed per Standard Webhooks (package
// outbound), retried on a schedule of about a day with the same
// webhook-id, and listed with every attempt. Events come from package
// events (Publish); a Queue carries deliveries to the worker (Attempt):
// SQS and the deliver function in AWS, a queue in the process locally.
package endpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/store"
)

// TypeEndpoint is the item type of endpoints.
const TypeEndpoint = "WHENDPOINT"

// IDPrefix starts every endpoint id.
const IDPrefix = "we"

// Limits of an endpoint.
const (
	MaxEndpoints     = 20 // per organization
	MaxEventTypes    = 50
	MaxDescription   = 500
	DefaultOverlap   = 24 * time.Hour     // a rotated secret keeps signing this long
	MaxOverlap       = 7 * 24 * time.Hour // at most
	DisableAfter     = 3 * 24 * time.Hour // an endpoint failing this long is disabled
	maxStoredSecrets = 3
)

// Endpoint is a webhook endpoint as clients see it. Its secret is shown
// once, by the create and rotate answers (Created).
type Endpoint struct {
	store.Versioned
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	EventTypes  []string `json:"eventTypes"`
	Enabled     bool     `json:"enabled"`
	// DisabledReason says why the service disabled the endpoint ("" when
	// it is enabled, or a client disabled it).
	DisabledReason string `json:"disabledReason,omitempty"`
	// FailingSince is when the endpoint's deliveries began failing
	// without a success since; null while they succeed.
	FailingSince *clock.Time `json:"failingSince"`
	CreatedAt    clock.Time  `json:"createdAt"`
	UpdatedAt    clock.Time  `json:"updatedAt"`
	// Warning, in the answer of a create or update only, says what about
	// the url will fail deliveries now although the endpoint was saved: a
	// host that does not resolve yet (deliveries check it again at each
	// attempt). Null otherwise; never stored.
	Warning *string `json:"warning,omitempty"`
}

// record is an endpoint as stored: with its signing secrets, the current
// first, a rotated one with the time it stops signing.
type record struct {
	Endpoint
	Secrets []secret `json:"secrets"`
}

type secret struct {
	Value     string      `json:"value"`
	ExpiresAt *clock.Time `json:"expiresAt,omitempty"`
}

// Created is an endpoint with its signing secret (the answer of a create
// or a rotation: the only time the secret is shown).
type Created struct {
	*Endpoint
	Secret string `json:"secret"`
}

// live are the secrets that sign now.
func (r *record) live(now time.Time) []string {
	var out []string
	for _, s := range r.Secrets {
		if s.ExpiresAt == nil || s.ExpiresAt.After(now) {
			out = append(out, s.Value)
		}
	}
	return out
}

var spec = store.Spec[record]{
	Type:    TypeEndpoint,
	ID:      func(r *record) string { return r.ID },
	IDOrder: []string{"createdAt"},
	View: func(r *record) {
		if r.EventTypes == nil {
			r.EventTypes = []string{}
		}
	},
}

// Service manages an organization's endpoints and their deliveries.
type Service struct {
	st      *store.Store
	coll    *store.Collection[record]
	catalog *history.Catalog
	client  *outbound.Client
	queue   Queue
	now     func() clock.Time
	// Scale multiplies the retry schedule (tests compress it); 0: 1.
	Scale float64
	// DisableAfter is how long an endpoint fails before it is disabled;
	// 0: the constant DisableAfter (tests shorten it).
	DisableAfter time.Duration
	// OrgStatus, when set, says whether an organization's deliveries wait
	// (it is suspended: Attempt postpones them by PausedWait, attempting
	// nothing) or are dropped (its deletion began); Attempt asks it first.
	OrgStatus func(ctx context.Context, org string) (paused, gone bool, err error)
	// PausedWait is how long a suspended organization's delivery waits
	// before it is looked at again; 0: PausedWait.
	PausedWait time.Duration
}

// PausedWait is how long a delivery of a suspended organization waits
// before the deliver function looks at it again (Outcome.Paused).
const PausedWait = 5 * time.Minute

// New returns the service over st: catalog names the event types, client
// sends (its AllowLoopback is the dev server's setting), queue carries
// deliveries to Attempt.
func New(st *store.Store, catalog *history.Catalog, client *outbound.Client, queue Queue) *Service {
	return &Service{st: st, coll: store.NewCollection(st, spec), catalog: catalog, client: client, queue: queue, now: clock.Now}
}

// SetQueue sets the queue (made after the service, when it calls back).
func (s *Service) SetQueue(q Queue) { s.queue = q }

// Input is the body of a create or an update.
type Input struct {
	URL         *string   `json:"url"`
	Description *string   `json:"description"`
	EventTypes  *[]string `json:"eventTypes"`
	Enabled     *bool     `json:"enabled"`
}

// DecodeInput reads a create or update body: fields outside Input's, a
// wrong type or a null are 400s naming the field.
func DecodeInput(body []byte) (Input, error) {
	var in Input
	o, err := jsonbody.ParseObject(body, "url", "description", "eventTypes", "enabled")
	if err != nil {
		return in, err
	}
	notNull := func(name string, set, null bool) error {
		if set && null {
			return apperr.Invalid(name, "must not be null; leave it out to keep it")
		}
		return nil
	}
	u, err := o.String("url", jsonbody.Text{Min: 1, Max: 2048, Trim: true})
	if err == nil {
		err = notNull("url", u.Set, u.Null)
	}
	if err != nil {
		return in, err
	}
	d, err := o.String("description", jsonbody.Text{Max: MaxDescription, MultiLine: true})
	if err == nil {
		err = notNull("description", d.Set, d.Null)
	}
	if err != nil {
		return in, err
	}
	ts, err := o.Strings("eventTypes", jsonbody.Text{Min: 1, Max: 100, Trim: true}, MaxEventTypes)
	if err == nil {
		err = notNull("eventTypes", ts.Set, ts.Null)
	}
	if err != nil {
		return in, err
	}
	en, err := o.Bool("enabled")
	if err == nil {
		err = notNull("enabled", en.Set, en.Null)
	}
	if err != nil {
		return in, err
	}
	if u.Set {
		in.URL = &u.Value
	}
	if d.Set {
		in.Description = &d.Value
	}
	if ts.Set {
		in.EventTypes = &ts.Value
	}
	if en.Set {
		in.Enabled = &en.Value
	}
	return in, nil
}

// check refuses an input naming its first wrong field; the url's
// addresses are resolved last, once everything else is right. A host that
// resolves to no address now is accepted, as Svix, Stripe and GitHub
// accept it (it may be set up after the endpoint), with a warning for the
// answer; one that resolves to an address deliveries may not reach is
// refused.
func (s *Service) check(ctx context.Context, in Input, create bool) (warning *string, err error) {
	if create && in.URL == nil {
		return nil, apperr.Invalid("url", "is required: the https URL deliveries are sent to")
	}
	var u *url.URL
	if in.URL != nil {
		var err error
		if u, err = outbound.CheckURL(*in.URL); err != nil {
			return nil, apperr.Invalid("url", "%s", strings.TrimPrefix(err.Error(), "url: "))
		}
	}
	if in.EventTypes != nil {
		ts := *in.EventTypes
		if len(ts) == 0 || len(ts) > MaxEventTypes {
			return nil, apperr.Invalid("eventTypes", "must list 1 to %d event types (such as company.updated, company.* or *)", MaxEventTypes)
		}
		for i, t := range ts {
			if err := s.catalog.CheckPattern(t); err != nil {
				return nil, apperr.Invalid(fmt.Sprintf("eventTypes[%d]", i), "%s", err.Error())
			}
		}
	}
	if u != nil {
		err := s.client.CheckDestination(ctx, u)
		var unresolved *outbound.UnresolvedError
		if errors.As(err, &unresolved) {
			w := unresolved.Error() + " now: the endpoint is saved, and each delivery resolves it again (deliveries fail until it resolves to a public address)"
			return &w, nil
		}
		if err != nil {
			return nil, apperr.Invalid("url", "%s", err.Error())
		}
	}
	return nil, nil
}

func (in Input) apply(r *record) {
	if in.URL != nil {
		r.URL = *in.URL
	}
	if in.Description != nil {
		r.Description = *in.Description
	}
	if in.EventTypes != nil {
		r.EventTypes = dedupe(*in.EventTypes)
	}
	if in.Enabled != nil {
		r.Enabled = *in.Enabled
		if r.Enabled {
			r.DisabledReason, r.FailingSince = "", nil
		}
	}
}

func dedupe(ts []string) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Create adds an endpoint of org (enabled unless the body says not, every
// event type unless it names some) and answers it with its secret.
func (s *Service) Create(ctx context.Context, org string, in Input) (*Created, error) {
	warning, err := s.check(ctx, in, true)
	if err != nil {
		return nil, err
	}
	existing, err := s.coll.List(ctx, org, store.Query{Limit: MaxEndpoints})
	if err != nil {
		return nil, err
	}
	if len(existing.Items) >= MaxEndpoints {
		return nil, apperr.Conflict("the organization has %d webhook endpoints, the most it may have; delete one first", MaxEndpoints)
	}
	now := s.now()
	r := &record{Endpoint: Endpoint{ID: ids.New(IDPrefix), EventTypes: []string{"*"}, Enabled: true, CreatedAt: now, UpdatedAt: now}}
	in.apply(r)
	key := outbound.NewSecret()
	r.Secrets = []secret{{Value: key}}
	if err := s.coll.Create(ctx, org, r); err != nil {
		return nil, err
	}
	r.Warning = warning
	return &Created{Endpoint: &r.Endpoint, Secret: key}, nil
}

// Get reads an endpoint of org.
func (s *Service) Get(ctx context.Context, org, id string) (*Endpoint, error) {
	r, err := s.coll.Get(ctx, org, id)
	if err != nil {
		return nil, err
	}
	return &r.Endpoint, nil
}

// List pages org's endpoints.
func (s *Service) List(ctx context.Context, org string, q store.Query) (store.Page[Endpoint], error) {
	p, err := s.coll.List(ctx, org, q)
	return store.MapPage(p, func(r *record) Endpoint { return r.Endpoint }), err
}

// Update changes an endpoint's url, description, event types or enabled.
func (s *Service) Update(ctx context.Context, org, id string, in Input) (*Endpoint, error) {
	warning, err := s.check(ctx, in, false)
	if err != nil {
		return nil, err
	}
	r, err := s.coll.Update(ctx, org, id, func(r *record) error {
		in.apply(r)
		r.UpdatedAt = s.now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.Warning = warning
	return &r.Endpoint, nil
}

// Delete removes an endpoint: its pending deliveries are dropped when
// their turn comes.
func (s *Service) Delete(ctx context.Context, org, id string) error {
	return s.coll.Delete(ctx, org, id)
}

// DecodeRotation reads the optional body of a rotation,
// {"overlapSeconds": n}: the overlap to give Rotate (0 for the default;
// an overlap of 0 seconds is a nanosecond: the old secret stops at once).
func DecodeRotation(body []byte) (time.Duration, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return 0, nil
	}
	o, err := jsonbody.ParseObject(body, "overlapSeconds")
	if err != nil {
		return 0, err
	}
	n, err := o.Number("overlapSeconds")
	if err != nil || !n.Set {
		return 0, err
	}
	max := int64(MaxOverlap / time.Second)
	secs, convErr := n.Value.Int64()
	if n.Null || convErr != nil || secs < 0 || secs > max {
		return 0, apperr.Invalid("overlapSeconds", "must be a whole number of seconds from 0 to %d (seven days)", max)
	}
	if secs == 0 {
		return time.Nanosecond, nil
	}
	return time.Duration(secs) * time.Second, nil
}

// Rotate makes a new signing secret; the current one keeps signing beside
// it for overlap (0: DefaultOverlap; at most MaxOverlap), so that a
// receiver can switch without losing a delivery.
func (s *Service) Rotate(ctx context.Context, org, id string, overlap time.Duration) (*Created, error) {
	switch {
	case overlap == 0:
		overlap = DefaultOverlap
	case overlap < 0 || overlap > MaxOverlap:
		return nil, apperr.Invalid("overlapSeconds", "must be from 0 to %d (seven days)", int(MaxOverlap/time.Second))
	}
	key := outbound.NewSecret()
	r, err := s.coll.Update(ctx, org, id, func(r *record) error {
		now := s.now()
		until := clock.Time{Time: now.Add(overlap)}
		kept := []secret{{Value: key}}
		for _, old := range r.Secrets {
			if old.ExpiresAt == nil || old.ExpiresAt.After(until.Time) {
				old.ExpiresAt = &until
			}
			if old.ExpiresAt.After(now.Time) && len(kept) < maxStoredSecrets {
				kept = append(kept, old)
			}
		}
		r.Secrets, r.UpdatedAt = kept, now
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Created{Endpoint: &r.Endpoint, Secret: key}, nil
}

// subscribed are org's enabled endpoints subscribed to event type typ.
func (s *Service) subscribed(ctx context.Context, org, typ string) ([]*record, error) {
	p, err := s.coll.List(ctx, org, store.Query{Limit: MaxEndpoints})
	if err != nil {
		return nil, err
	}
	var out []*record
	for i := range p.Items {
		r := &p.Items[i]
		if r.Enabled && slices.ContainsFunc(r.EventTypes, func(p string) bool { return history.MatchType(p, typ) }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Managing is what every route of the endpoints is, admin keys only, as
// their 403 names it ("managing webhook endpoints requires an admin key").
const Managing = "managing webhook endpoints"

// EventKind is the events' kind of endpoints: their secrets never shown,
// an update that disables one after failing named webhookEndpoint.disabled,
// read by admin keys only (Managing).
func EventKind() history.Kind {
	return history.Kind{
		Name: "webhookEndpoint", Resource: "webhook-endpoints", StoreType: TypeEndpoint,
		Doc:       "an outbound webhook endpoint",
		AdminOnly: Managing,
		Secrets:   map[string]string{"secrets": "secret"},
		Verbs:     []string{"disabled"},
		Verb: func(before, after map[string]any) string {
			if before["enabled"] == true && after["enabled"] == false && after["disabledReason"] != nil && after["disabledReason"] != "" {
				return "disabled"
			}
			return ""
		},
	}
}

// errGone ends a delivery whose endpoint was deleted.
var errGone = errors.New("the endpoint was deleted")

// bodyOf is the JSON a delivery of ev sends.
func bodyOf(ev history.Event) ([]byte, error) { return json.Marshal(ev) }
