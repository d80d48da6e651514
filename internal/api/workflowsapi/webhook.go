package workflowsapi

import (
	"cmp"
	"errors"
	"math"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// WebhookOperations are the intake of signed webhook deliveries: public
// (the trigger's signature check), served by the webhook function's URL,
// counted against the trigger's rate limit. Every slug reaches the
// handler, however long: one that leads to no trigger is answered exactly
// as a wrong secret (runs.Receive).
func WebhookOperations() []operation.Operation {
	op := operation.Declare(lambdas.Webhook, http.MethodPost, workflows.WebhookPath+"{slug}", (*API).receiveWebhook).
		RateOf(routes.RateDelivery).Answers(routes.AnswerRecord).Of(runs.Def.Name).Doc(func(op *openapi.Operation) {
		op.Summary, op.Status = "Deliver a webhook to a workflow's trigger", http.StatusAccepted
		op.Description = "Starts a run of the trigger's workflow after the signature check of its scheme; the payload becomes the run's " +
			"`webhook.payload` (with `webhook.headers` and `webhook.query`). A delivery id (`X-GitHub-Delivery`, `Webhook-Id`, " +
			"`Idempotency-Key` or `X-Request-Id`) starts one run per trigger within 24 hours; a repeat answers that run. " +
			"A slug that leads to no trigger (unknown, or its workflow deleted) is answered exactly as a failed signature check " +
			"(401 `invalid signature`, the same headers), so that slugs cannot be probed. " +
			"The secret or signature is in the header of the trigger's scheme (`webhookSharedSecret`, `webhookBearer`, " +
			"`webhookHmacSha256`), or in the header the trigger names instead (its `headerName`, any name but the standard " +
			"headers'): no document can name that one, so the empty requirement `{}` declares it, and the service checks it."
		op.Body, op.BodyOptional, op.AnyMedia = openapi.Schema{"description": "any JSON payload, or any other text"}, true, true
		op.Data = openapi.Ref("WorkflowRun")
		op.Security = []map[string][]string{{"webhookSharedSecret": {}}, {"webhookBearer": {}}, {"webhookHmacSha256": {}}, {}}
		op.Public = false
		op.Errors = []int{401, 403}
		op.Preconditioned = false
	})
	op.MaxParam = math.MaxInt
	return []operation.Operation{op}
}

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
	run, replayed, err := a.runs.Receive(r.Context(), runs.Delivery{
		Slug: slug, Header: r.Header, Query: r.URL.Query(), Body: body,
		Admit: func(org string) error {
			if a.orgs != nil { // a suspended organization's triggers are refused (403)
				if suspended, err := a.orgs.Suspended(r.Context(), org); err != nil || suspended {
					return cmp.Or(err, apikeys.SuspendedError(org))
				}
			}
			if a.limits == nil {
				return nil
			}
			d := a.limits.Webhook(r.Context(), org, slug)
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
	if errors.Is(err, inbound.ErrInvalidSignature) {
		httpapi.Refuse(w, apperr.CodeInvalidSignature, "", inbound.ErrInvalidSignature.Error())
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
