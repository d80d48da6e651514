package runs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Delivery is one webhook request to a trigger's slug, as received.
type Delivery struct {
	Slug   string
	Header http.Header
	Query  url.Values
	Body   []byte
	// Admit, when set, is asked once the delivery passed the signature
	// check, with the trigger's organization: an error (a rate limit)
	// refuses the delivery.
	Admit func(org string) error
}

// Receive starts a run of the workflow whose trigger the delivery's slug
// names, once the delivery passes the trigger's signature check. A
// delivery carrying a delivery id (see deliveryID) starts one run per id
// within DeliveryWindow; a repeat gets that run as it is now, with
// replayed true.
//
// Errors: an error matching inbound.ErrInvalidSignature when the check
// fails and, alike, for a slug that leads to no trigger (unknown, or its
// workflow deleted; a run accepted before its workflow was deleted still
// executes the steps its route held), after a check of comparable cost
// (inbound.RefuseUnknown), so that slugs cannot be probed (the reason is
// logged, never returned to the sender); a 400 or 413 kind when the
// request cannot be a run's input.
func (s *Service) Receive(ctx context.Context, d Delivery) (run *Run, replayed bool, err error) {
	route, err := s.workflows.Route(ctx, d.Slug)
	if errors.Is(err, apperr.ErrNotFound) {
		err = inbound.RefuseUnknown(d.Header, d.Body)
		slog.InfoContext(ctx, "webhook refused", "workflowId", "", "reason", err.Error())
		return nil, false, inbound.ErrInvalidSignature
	}
	if err != nil {
		return nil, false, err
	}
	v := route.Verifier()
	if err := inbound.Verify(v, d.Header, d.Body); err != nil {
		if !errors.Is(err, inbound.ErrInvalidSignature) {
			return nil, false, err
		}
		slog.InfoContext(ctx, "webhook refused", "workflowId", route.WorkflowID, "reason", err.Error())
		return nil, false, inbound.ErrInvalidSignature
	}
	if d.Admit != nil {
		if err := d.Admit(route.OrganizationID); err != nil {
			return nil, false, err
		}
	}
	in, err := webhookInput(d, v)
	if err != nil {
		return nil, false, err
	}
	// The route names the workflow and holds its steps (it is written
	// with it, and deleted with it): the run executes those steps, even
	// if the workflow changes or is deleted from now on. Only a route
	// stored before it kept the name needs the workflow read; one stored
	// before it kept the steps leaves them to the execution to read.
	wf := &workflows.Workflow{ID: route.WorkflowID, Name: route.WorkflowName}
	if route.Steps != nil {
		wf.Steps = *route.Steps
	}
	if route.WorkflowName == "" {
		wf, err = s.workflows.Get(ctx, route.OrganizationID, route.WorkflowID)
		if errors.Is(err, apperr.ErrNotFound) {
			// Deleted since its route was read: as if a moment earlier.
			slog.InfoContext(ctx, "webhook refused", "workflowId", route.WorkflowID, "reason", "the workflow was deleted")
			return nil, false, inbound.ErrInvalidSignature
		}
		if err != nil {
			return nil, false, err
		}
	}
	ctx = store.WithActor(ctx, store.Actor{Type: store.ActorWebhook, ID: route.WorkflowID})
	run, first, err := s.createForDelivery(ctx, route.OrganizationID, wf, NewRun{StartedBy: StartedByWebhook, Input: in},
		route.Slug, deliveryID(d.Header))
	return run, !first, err
}

// deliveryHeaders name a webhook delivery's id, in order of preference:
// the sender's own delivery ids before generic request ids, which a proxy
// on the way may have set afresh for each attempt.
var deliveryHeaders = []string{"X-GitHub-Delivery", "Webhook-Id", "Idempotency-Key", "X-Request-Id"}

// deliveryID is the delivery's id, "" when it carries none.
func deliveryID(h http.Header) string {
	for _, name := range deliveryHeaders {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			return v
		}
	}
	return ""
}

// webhookInput is the run input {"webhook": ...} that exposes the request
// to the run: the payload (the JSON body, or the raw text when it is not
// JSON), the headers without any that carry, or once carried, the
// trigger's secret or another credential, or whose value holds a secret
// (inbound.Verifier.Withholds), and the query; a string of the payload or
// the query, at any depth, that is the trigger's secret, current or rotated
// away (inbound.Verifier.IsSecret), is replaced by inbound.Redacted. A
// payload nested deeper than input.MaxDepth is a 400; an input over
// MaxInputBytes, which a run record could not hold, is a 413.
func webhookInput(d Delivery, v inbound.Verifier) (map[string]any, error) {
	var payload any = string(d.Body)
	if json.Valid(d.Body) {
		var err error
		if payload, err = jsonbody.Free("payload", d.Body); err != nil {
			return nil, err
		}
	}
	headers := map[string]any{}
	for name, values := range d.Header {
		if !v.Withholds(name, values) {
			headers[strings.ToLower(name)] = strings.Join(values, ", ")
		}
	}
	query := map[string]any{}
	for k, vs := range d.Query {
		if len(vs) == 1 {
			query[k] = vs[0]
		} else {
			query[k] = slices.Clone(vs)
		}
	}
	// A sender may put the secret in the query string or the body too:
	// a value equal to the trigger's secret, current or rotated away, is
	// redacted before the input is stored, so the run, its events and
	// their deliveries never hold it.
	payload = v.Redact(payload)
	v.Redact(query)
	in := map[string]any{"webhook": map[string]any{"payload": payload, "headers": headers, "query": query}}
	n, err := jsonbody.EncodedSize(in)
	if err != nil {
		return nil, err
	}
	if n > MaxInputBytes {
		return nil, apperr.TooLarge("the webhook request is too large to start a run: its payload, headers and query "+
			"come to %d bytes of run input, more than the %s a run input may hold", n, jsonbody.KiB(MaxInputBytes))
	}
	return in, nil
}
