package api

import (
	"errors"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/webhook"
)

// receiveWebhook hands the request to the run service (runs.Receive:
// verify, build the run input, start the run once per delivery id) and
// answers 202 with the run, marked Idempotent-Replayed for a repeated
// delivery; 401 when the signature check fails.
func (a *API) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	run, replayed, err := a.d.Runs.Receive(r.Context(), runs.Delivery{
		Slug: r.PathValue("slug"), Header: r.Header, Query: r.URL.Query(), Body: body,
	})
	if errors.Is(err, webhook.ErrInvalidSignature) {
		httpapi.ErrorBody(w, http.StatusUnauthorized, webhook.ErrInvalidSignature.Error())
		return
	}
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if replayed {
		w.Header().Set(httpapi.HeaderReplayed, "true")
	}
	httpapi.Data(w, http.StatusAccepted, run)
}
