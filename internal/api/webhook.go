package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/webhook"
)

// receiveWebhook starts a run of the workflow whose trigger the slug names,
// once the request passes the trigger's signature check: 202 with the run.
func (a *API) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	t, err := a.d.Workflows.Trigger(r.Context(), r.PathValue("slug"))
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
	wf, err := a.d.Workflows.Get(r.Context(), t.OrganizationID, t.WorkflowID)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	run, err := a.d.Runs.Create(r.Context(), t.OrganizationID, wf, runs.NewRun{
		Trigger: runs.TriggerWebhook,
		Input:   map[string]any{"webhook": webhookInput(r, body, trig)},
	})
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusAccepted, run)
}

// webhookInput exposes the request to the run: the payload (the JSON body,
// or the raw text when it is not JSON), the headers without any that can
// carry the trigger's secret, and the query.
func webhookInput(r *http.Request, body []byte, trig webhook.Trigger) map[string]any {
	var payload any = string(body)
	if json.Valid(body) {
		// json.Number keeps every number exactly as the sender wrote it.
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		_ = dec.Decode(&payload)
	}
	secret := map[string]bool{}
	for _, h := range trig.CredentialHeaders() {
		secret[http.CanonicalHeaderKey(h)] = true
	}
	headers := map[string]any{}
	for name, values := range r.Header {
		if !secret[http.CanonicalHeaderKey(name)] {
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
	return map[string]any{"payload": payload, "headers": headers, "query": query}
}
