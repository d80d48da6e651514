package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/input"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/webhook"
)

// receiveWebhook starts a run of the workflow whose trigger the slug names,
// once the request passes the trigger's signature check: 202 with the run.
// A delivery carrying a delivery id (see deliveryID) starts one run per id
// within runs.DeliveryWindow; a repeat answers 202 with that run as it is
// now, marked Idempotent-Replayed.
func (a *API) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	t, err := a.d.Workflows.Route(r.Context(), r.PathValue("slug"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	trig := t.Verifier()
	if err := webhook.Verify(trig, r.Header, body); err != nil {
		if !errors.Is(err, webhook.ErrInvalidSignature) {
			httpapi.Error(w, r, err)
			return
		}
		slog.InfoContext(r.Context(), "webhook refused", "workflowId", t.WorkflowID, "reason", err.Error())
		httpapi.ErrorBody(w, http.StatusUnauthorized, webhook.ErrInvalidSignature.Error())
		return
	}
	in, err := webhookInput(r, body, trig)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	wf, err := a.d.Workflows.Get(r.Context(), t.OrganizationID, t.WorkflowID)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	run, first, err := a.d.Runs.CreateForDelivery(r.Context(), t.OrganizationID, wf, runs.NewRun{
		StartedBy: runs.StartedByWebhook,
		Input:     in,
	}, t.Slug, deliveryID(r.Header))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if !first {
		w.Header().Set(httpapi.HeaderReplayed, "true")
	}
	httpapi.Data(w, http.StatusAccepted, run)
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
// JSON), the headers without any that carry the trigger's secret or another
// credential, and the query. A payload nested deeper than input.MaxDepth is
// a 400; an input over runs.MaxInputBytes, which a run record could not
// hold, is a 413.
func webhookInput(r *http.Request, body []byte, trig webhook.Verifier) (map[string]any, error) {
	var payload any = string(body)
	if json.Valid(body) {
		var err error
		if payload, err = input.Free("payload", body); err != nil {
			return nil, err
		}
	}
	headers := map[string]any{}
	for name, values := range r.Header {
		if !trig.HidesHeader(name) {
			headers[strings.ToLower(name)] = strings.Join(values, ", ")
		}
	}
	query := map[string]any{}
	for k, vs := range r.URL.Query() {
		if len(vs) == 1 {
			query[k] = vs[0]
		} else {
			query[k] = vs
		}
	}
	in := map[string]any{"webhook": map[string]any{"payload": payload, "headers": headers, "query": query}}
	n, err := input.EncodedSize(in)
	if err != nil {
		return nil, err
	}
	if n > runs.MaxInputBytes {
		return nil, apperr.TooLarge("the webhook request is too large to start a run: its payload, headers and query "+
			"come to %d bytes of run input, more than the %s a run input may hold", n, input.KiB(runs.MaxInputBytes))
	}
	return in, nil
}
