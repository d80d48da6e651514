package api

import (
	"errors"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/webhook"
)

// errRateLimited refuses a delivery over its trigger's rate limit.
var errRateLimited = errors.New("rate limited")

// receiveWebhook hands the request to the run service (runs.Receive:
// verify, build the run input, start the run once per delivery id) and
// answers 202 with the run, marked Idempotent-Replayed for a repeated
// delivery; 401 when the signature check fails, and alike (same body,
// same headers) when the slug leads to no trigger.
func (a *API) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	slug := r.PathValue("slug")
	var limited *ratelimit.Decision
	run, replayed, err := a.d.Runs.Receive(r.Context(), runs.Delivery{
		Slug: slug, Header: r.Header, Query: r.URL.Query(), Body: body,
		Admit: func(org string) error {
			if a.d.Limits == nil {
				return nil
			}
			d := a.d.Limits.Webhook(r.Context(), org, slug)
			limited = &d
			if !d.Allowed {
				return errRateLimited
			}
			return nil
		},
	})
	if limited != nil && !httpapi.RateLimit(w, *limited, "this webhook trigger") {
		return
	}
	if errors.Is(err, webhook.ErrInvalidSignature) {
		httpapi.Refuse(w, apperr.CodeInvalidSignature, "", webhook.ErrInvalidSignature.Error())
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
