// Package workflows stores workflow definitions and their webhook triggers.
// A workflow's trigger secret lives in the workflow item and, for the
// webhook path's single read, in its trigger route (TriggerRoute, keyed by
// slug, with the workflow's name and steps); both are written in one
// transaction so they never disagree.
package workflows

import (
	"context"
	"net/textproto"
	"reflect"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/store"
)

// WebhookPath is where a trigger receives webhooks: WebhookPath + slug.
const WebhookPath = "/webhooks/workflows/"

// WebhookTrigger is a workflow's webhook trigger as clients see it (no
// secret, except Secret in the create and rotate responses).
type WebhookTrigger struct {
	Slug       string         `json:"slug"`
	Scheme     inbound.Scheme `json:"scheme"`
	HeaderName *string        `json:"headerName"`
	URL        string         `json:"url"`
	Secret     string         `json:"secret,omitempty"`
}

// Workflow is a workflow definition.
type Workflow struct {
	store.Versioned
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Steps       []steps.Step   `json:"steps"`
	Trigger     WebhookTrigger `json:"trigger"`
	CreatedAt   clock.Time     `json:"createdAt"`
	UpdatedAt   clock.Time     `json:"updatedAt"`
}

// record is the stored workflow: the definition plus the trigger secret and
// the header names the trigger read it from before (pastHeaderNames, see
// MaxPastHeaderNames) and the hashes of its rotated-away secrets
// (pastSecretHashes, see MaxPastSecrets), never answered.
type record struct {
	Workflow
	TriggerSecret    string   `json:"triggerSecret"`
	PastHeaderNames  []string `json:"pastHeaderNames,omitempty"`
	PastSecretHashes []string `json:"pastSecretHashes,omitempty"`
}

// MaxPastSecrets bounds the rotated-away secrets a trigger remembers, the
// most recent kept, as inbound.HashSecret only: they no longer verify,
// but a value equal to one is redacted from a run's input all the same
// (a sender that has not caught up may still send one in its query
// string or body). Rotations before this was kept are not remembered.
const MaxPastSecrets = 20

// MaxPastHeaderNames bounds the header names a trigger remembers having
// read its secret from, the most recent kept: runs never see those
// headers (a sender that has not caught up may still send the secret
// there). Older ones are still withheld when their value holds a secret
// (inbound.Verifier.Withholds).
const MaxPastHeaderNames = 20

// TriggerRoute is the item a webhook slug leads to: everything the webhook
// path needs (organization, workflow, verification) in one read.
type TriggerRoute struct {
	Slug           string `json:"slug"`
	OrganizationID string `json:"organizationId"`
	WorkflowID     string `json:"workflowId"`
	// WorkflowName is the workflow's name, which a run's title shows: with
	// it, accepting a delivery reads nothing but the route. "" in a route
	// stored before it was kept here.
	WorkflowName string `json:"workflowName,omitempty"`
	// Steps are the workflow's steps, which a run started by a delivery
	// executes: with them, executing the run reads nothing of the
	// workflow. nil in a route stored before they were kept here.
	Steps      *[]steps.Step  `json:"steps,omitempty"`
	Scheme     inbound.Scheme `json:"scheme"`
	HeaderName string         `json:"headerName"`
	Secret     string         `json:"secret"`
	// PastHeaderNames are the record's: headers withheld from runs.
	PastHeaderNames []string `json:"pastHeaderNames,omitempty"`
	// PastSecretHashes are the record's: values redacted from runs.
	PastSecretHashes []string `json:"pastSecretHashes,omitempty"`
}

// Verifier returns what signature verification needs of the route.
func (t TriggerRoute) Verifier() inbound.Verifier {
	return inbound.Verifier{Scheme: t.Scheme, HeaderName: t.HeaderName, Secret: t.Secret, PastHeaders: t.PastHeaderNames,
		PastSecretHashes: t.PastSecretHashes}
}

// equal reports whether two routes are the same item.
func (t TriggerRoute) equal(o TriggerRoute) bool {
	return t.Slug == o.Slug && t.OrganizationID == o.OrganizationID && t.WorkflowID == o.WorkflowID && t.WorkflowName == o.WorkflowName &&
		t.Scheme == o.Scheme && t.HeaderName == o.HeaderName && t.Secret == o.Secret &&
		slices.Equal(t.PastHeaderNames, o.PastHeaderNames) && slices.Equal(t.PastSecretHashes, o.PastSecretHashes) && (t.Steps == nil) == (o.Steps == nil) &&
		(t.Steps == nil || reflect.DeepEqual(*t.Steps, *o.Steps))
}

var spec = store.Spec[record]{
	Type:    store.TypeWorkflow,
	ID:      func(r *record) string { return r.ID },
	IDOrder: []string{"createdAt"},
	Sorts: []store.Sort[record]{
		{Field: "name", Index: store.GSI1, Key: func(r *record) string { return strings.ToLower(r.Name) }},
		{Field: "updatedAt", Index: store.GSI2, Key: func(r *record) string { return r.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000000000Z") }},
	},
}

// Service stores workflows.
type Service struct {
	st          *store.Store
	coll        *store.Collection[record]
	webhookBase string
	now         func() clock.Time
	// check refuses steps whose writes every run would refuse (nil:
	// none refused); see CheckStepsWith.
	check func([]steps.Step) error
}

// CheckStepsWith makes Create and Update refuse the steps check refuses
// (runs.Service.CheckSteps: the fields, tags and values a step writes
// that every run would refuse), so that such a workflow is a 400 when it
// is saved rather than a failure of every run. Call it while the service
// is built.
func (s *Service) CheckStepsWith(check func([]steps.Step) error) { s.check = check }

// checkSteps has check judge the steps in sets, if any.
func (s *Service) checkSteps(in Input) error {
	if s.check == nil || !in.Steps.Set {
		return nil
	}
	return invalidSteps(s.check(in.Steps.Value))
}

// NewService returns the service; webhookBase is the public base URL of the
// webhook endpoint (such as https://abc.lambda-url.us-east-1.on.aws), used
// to show each trigger's url.
func NewService(st *store.Store, webhookBase string) *Service {
	return &Service{st: st, coll: store.NewCollection(st, spec), webhookBase: strings.TrimRight(webhookBase, "/"),
		now: clock.Now}
}

func (s *Service) view(r *record) *Workflow {
	w := r.Workflow
	w.Trigger.URL = s.webhookBase + WebhookPath + w.Trigger.Slug
	w.Trigger.Secret = ""
	if w.Steps == nil {
		w.Steps = []steps.Step{}
	}
	return &w
}

// route is the trigger route derived from a workflow record.
func route(org string, r *record) TriggerRoute {
	header := ""
	if r.Trigger.HeaderName != nil {
		header = *r.Trigger.HeaderName
	}
	run := slices.Clone(r.Steps)
	if run == nil {
		run = []steps.Step{}
	}
	return TriggerRoute{Slug: r.Trigger.Slug, OrganizationID: org, WorkflowID: r.ID, WorkflowName: r.Name, Steps: &run,
		Scheme: r.Trigger.Scheme, HeaderName: header, Secret: r.TriggerSecret, PastHeaderNames: r.PastHeaderNames,
		PastSecretHashes: r.PastSecretHashes}
}

// rememberHeader adds the header the trigger read its secret from before a
// change (was) to the record's past header names, unless it is a scheme's
// default (always withheld) or the header read now; the most recent
// MaxPastHeaderNames are kept.
func rememberHeader(r *record, was string) {
	was = textproto.CanonicalMIMEHeaderKey(was)
	now := route("", r).Verifier().Header()
	if was == "" || was == now || was == inbound.SharedSecret.DefaultHeader() || was == inbound.HMACSHA256.DefaultHeader() {
		return
	}
	past := slices.DeleteFunc(slices.Clone(r.PastHeaderNames), func(n string) bool { return n == was || n == now })
	past = append(past, was)
	if len(past) > MaxPastHeaderNames {
		past = past[len(past)-MaxPastHeaderNames:]
	}
	r.PastHeaderNames = past
}

func (s *Service) routeOp(org string, r *record, create bool) (store.Op, error) {
	k := store.TriggerRouteKey(r.Trigger.Slug)
	it := store.Item{PK: k.PK, SK: k.SK, Type: store.TypeTriggerRoute, Doc: route(org, r)}
	if create {
		return s.st.CreateOp(it)
	}
	return s.st.OverwriteOp(it)
}

// Create stores a new workflow with a new trigger. The returned workflow's
// trigger carries the secret: the one time it is shown besides rotation.
func (s *Service) Create(ctx context.Context, org string, in Input) (*Workflow, error) {
	if err := s.checkSteps(in); err != nil {
		return nil, err
	}
	id, err := s.coll.NewID(ctx, org, "wf")
	if err != nil {
		return nil, err
	}
	now := s.now()
	r := &record{Workflow: Workflow{
		ID: id, Steps: []steps.Step{}, CreatedAt: now, UpdatedAt: now,
		Trigger: WebhookTrigger{Slug: inbound.NewSlug(), Scheme: inbound.SharedSecret},
	}, TriggerSecret: inbound.NewSecret()}
	in.apply(r)
	op, err := s.routeOp(org, r, true)
	if err != nil {
		return nil, err
	}
	if err := s.coll.Create(ctx, org, r, op); err != nil {
		return nil, err
	}
	w := s.view(r)
	w.Trigger.Secret = r.TriggerSecret
	return w, nil
}

// Get reads a workflow of org.
func (s *Service) Get(ctx context.Context, org, id string) (*Workflow, error) {
	r, err := s.coll.Get(ctx, org, id)
	if err != nil {
		return nil, err
	}
	return s.view(r), nil
}

// GetWith reads a workflow of org as Get does, and the records of also in
// the same call (store.FetchAll): their results are theirs to read.
func (s *Service) GetWith(ctx context.Context, org, id string, also ...store.Fetch) (*Workflow, error) {
	wf := s.coll.Fetch(org, id)
	if err := store.FetchAll(ctx, append([]store.Fetch{wf}, also...)...); err != nil {
		return nil, err
	}
	r, err := wf.Result()
	if err != nil {
		return nil, err
	}
	return s.view(r), nil
}

// List returns a page of org's workflows.
func (s *Service) List(ctx context.Context, org string, q store.Query) (store.Page[Workflow], error) {
	p, err := s.coll.List(ctx, org, q)
	return store.MapPage(p, func(r *record) Workflow { return *s.view(r) }), err
}

// Update applies a partial update; the trigger route follows in the same
// transaction when what it holds changes (the trigger, the name, the steps).
func (s *Service) Update(ctx context.Context, org, id string, in Input) (*Workflow, error) {
	if err := s.checkSteps(in); err != nil {
		return nil, err
	}
	r, err := s.coll.UpdateTx(ctx, org, id, func(r *record) ([]store.Op, error) {
		if !in.changes() {
			return nil, store.ErrUnchanged
		}
		before := route(org, r)
		in.apply(r)
		r.UpdatedAt = s.now()
		if was := before.Verifier().Header(); was != route(org, r).Verifier().Header() {
			rememberHeader(r, was)
		}
		if route(org, r).equal(before) {
			return nil, nil
		}
		op, err := s.routeOp(org, r, false)
		return []store.Op{op}, err
	})
	if err != nil {
		return nil, err
	}
	return s.view(r), nil
}

// RotateSecret replaces the trigger's secret; the old one stops working at
// once, and its hash joins the past secrets' (MaxPastSecrets). It returns
// the trigger with the new secret.
func (s *Service) RotateSecret(ctx context.Context, org, id string) (*WebhookTrigger, error) {
	r, err := s.coll.UpdateTx(ctx, org, id, func(r *record) ([]store.Op, error) {
		if r.TriggerSecret != "" {
			past := append(slices.Clone(r.PastSecretHashes), inbound.HashSecret(r.TriggerSecret))
			if len(past) > MaxPastSecrets {
				past = past[len(past)-MaxPastSecrets:]
			}
			r.PastSecretHashes = past
		}
		r.TriggerSecret = inbound.NewSecret()
		r.UpdatedAt = s.now()
		op, err := s.routeOp(org, r, false)
		return []store.Op{op}, err
	})
	if err != nil {
		return nil, err
	}
	t := s.view(r).Trigger
	t.Secret = r.TriggerSecret
	return &t, nil
}

// Delete removes a workflow and its trigger: its webhook stops at once.
// Its runs are kept.
func (s *Service) Delete(ctx context.Context, org, id string) error {
	r, err := s.coll.Get(ctx, org, id)
	if err != nil {
		return err
	}
	k := store.TriggerRouteKey(r.Trigger.Slug)
	return s.coll.Delete(ctx, org, id, s.st.DeleteOp(k.PK, k.SK))
}

// Route finds where a webhook slug leads; apperr.ErrNotFound for an
// unknown slug or a deleted workflow.
func (s *Service) Route(ctx context.Context, slug string) (TriggerRoute, error) {
	var t TriggerRoute
	if slug == "" || len(slug) > 128 {
		return t, apperr.ErrNotFound
	}
	k := store.TriggerRouteKey(slug)
	_, err := s.st.Get(ctx, k.PK, k.SK, &t)
	return t, err
}

// Input is a workflow create or update body.
type Input struct {
	Name        jsonbody.Field[string]
	Description jsonbody.Field[string]
	Steps       jsonbody.Field[[]steps.Step]
	Scheme      jsonbody.Field[string]
	HeaderName  jsonbody.Field[string]
}

func (in Input) changes() bool {
	return in.Name.Set || in.Description.Set || in.Steps.Set || in.Scheme.Set || in.HeaderName.Set
}

func (in Input) apply(r *record) {
	if in.Name.Set {
		r.Name = in.Name.Value
	}
	if in.Description.Set {
		if in.Description.Null {
			r.Description = nil
		} else {
			d := in.Description.Value
			r.Description = &d
		}
	}
	if in.Steps.Set {
		r.Steps = in.Steps.Value
	}
	if in.Scheme.Set {
		r.Trigger.Scheme = inbound.Scheme(in.Scheme.Value)
	}
	if in.HeaderName.Set {
		if in.HeaderName.Null {
			r.Trigger.HeaderName = nil
		} else {
			h := in.HeaderName.Value
			r.Trigger.HeaderName = &h
		}
	}
}
