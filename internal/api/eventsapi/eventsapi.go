// Package eventsapi serves the change history (GET /v1/events, package
// events) and the outbound webhook endpoints with their deliveries (package
// endpoints).
package eventsapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// ManagingWebhookEndpoints is what the routes of the outbound webhook
// endpoints are, admin keys only (their 403s).
const ManagingWebhookEndpoints = endpoints.Managing

// API serves the feature's routes.
type API struct {
	history   *history.History
	endpoints *endpoints.Service
	// adminOnly are the event types hidden from member keys (AdminOnly).
	adminOnly map[string]string
}

// New returns the API over its services.
func New(history *history.History, endpoints *endpoints.Service) *API {
	return &API{history: history, endpoints: endpoints, adminOnly: AdminOnly()}
}

// Feature is the change history and the outbound webhook endpoints, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("events", Operations, Schemas, func(d service.Deps) *API { return New(d.History, d.Endpoints) })

// Operations are the change history's reads (with the MCP tool
// list_events) and the outbound webhook endpoints: their CRUD, secret
// rotation, test, deliveries and retries, admin keys only.
func Operations() []operation.Operation {
	const base, item = "/v1/webhook-endpoints", "/v1/webhook-endpoints/{id}"
	endpoint := func(op *openapi.Operation) { op.Data = openapi.Ref("WebhookEndpoint") }
	created := func(op *openapi.Operation) { op.Data = openapi.Ref("WebhookEndpointWithSecret") }
	return []operation.Operation{
		operation.Declare(lambdas.Hooks, http.MethodGet, "/v1/events", (*API).listEvents).InTopic("events").Answers(routes.AnswerPaged).HidesAdminOnly().
			AsTool("list_events", "Read the change history: who changed which record, when, from what to what. Filter by resourceType, resourceId, type (event type), actor, since and until.").
			Doc(func(op *openapi.Operation) {
				op.Summary = "List the change history"
				op.Description = "One event per create, update and delete of every record (companies, workflows, runs, every declared resource, " +
					"API keys, webhook endpoints), newest first (`direction=asc`: oldest first), kept for the organization's retention " +
					"(90 days unless the operator set another). Events appear within seconds of their change (they are derived from the " +
					"table's stream). Filters combine; see docs/events.md for every event type and its payload. A member key reads no event of " +
					"the records only admin keys read (API keys, webhook endpoints): the list leaves them out, and naming their resource type " +
					"in `resourceType` or `type` is a 403."
				op.Query, op.Data, op.Paged = eventQuery(), operation.ArrayOf("Event"), true
			}),
		operation.Declare(lambdas.Hooks, http.MethodGet, "/v1/events/{id}", (*API).getEvent).InTopic("events").Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
			op.Summary, op.Data = "Get one event", openapi.Ref("Event")
			op.Description = "An event of the change history by its id (`evt_…`, the `id` of a webhook's payload)."
		}),
		operation.Declare(lambdas.Hooks, http.MethodPost, base, (*API).createEndpoint).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerWritten).Doc(func(op *openapi.Operation) {
			op.Summary, op.Status = "Create a webhook endpoint", http.StatusCreated
			op.Description = "Admin keys only. Events of the `eventTypes` it names (default `[\"*\"]`; `company.*` names a resource's events) are " +
				"POSTed to `url`, signed per Standard Webhooks with the `secret` this answer shows once. The url must be http(s) and resolve to " +
				"public addresses only. At most " + strconv.Itoa(endpoints.MaxEndpoints) + " endpoints per organization."
			op.Body = endpointInput(true)
			created(op)
		}),
		operation.Declare(lambdas.Hooks, http.MethodGet, base, (*API).listEndpoints).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerPaged).Doc(func(op *openapi.Operation) {
			op.Summary, op.Description = "List the webhook endpoints", "Admin keys only. Secrets are never shown."
			op.Query, op.Data, op.Paged = operation.PageOnlyQuery(), operation.ArrayOf("WebhookEndpoint"), true
		}),
		operation.Declare(lambdas.Hooks, http.MethodGet, item, (*API).getEndpoint).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
			op.Summary, op.Description = "Get a webhook endpoint", "Admin keys only."
			endpoint(op)
		}),
		operation.Declare(lambdas.Hooks, http.MethodPatch, item, (*API).updateEndpoint).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerWritten).Doc(func(op *openapi.Operation) {
			op.Summary = "Update a webhook endpoint"
			op.Description = "Admin keys only. Change `url`, `description`, `eventTypes` or `enabled`; enabling clears `disabledReason` and `failingSince`."
			op.Body = endpointInput(false)
			endpoint(op)
		}),
		operation.Declare(lambdas.Hooks, http.MethodDelete, item, (*API).deleteEndpoint).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Doc(func(op *openapi.Operation) {
			op.Summary = "Delete a webhook endpoint"
			op.Description = "Admin keys only. Its pending deliveries are dropped."
		}),
		operation.Declare(lambdas.Hooks, http.MethodPost, item+"/secret/rotate", (*API).rotateEndpointSecret).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerWritten).Doc(func(op *openapi.Operation) {
			op.Summary = "Rotate a webhook endpoint's signing secret"
			op.Description = "Admin keys only. Answers the new `secret`, shown this once. The previous secret keeps signing beside it for " +
				"`overlapSeconds` (default 86400, at most 604800): each delivery meanwhile carries both signatures in `webhook-signature`."
			op.Body, op.BodyOptional = openapi.Schema{"type": "object", "additionalProperties": false, "properties": openapi.Schema{
				"overlapSeconds": openapi.Schema{"type": "integer", "minimum": 0, "maximum": int(endpoints.MaxOverlap / time.Second)}}}, true
			created(op)
		}),
		operation.Declare(lambdas.Hooks, http.MethodPost, item+"/test", (*API).testEndpoint).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
			op.Summary = "Send a test event to a webhook endpoint"
			op.Description = "Admin keys only. POSTs a signed `" + endpoints.TestType + "` event to the endpoint now (enabled or not) and answers " +
				"the delivery with its one attempt (`status` succeeded or failed, the endpoint's HTTP status, latency and answer excerpt). Not retried."
			op.Data = openapi.Ref("WebhookDelivery")
		}),
		operation.Declare(lambdas.Hooks, http.MethodGet, item+"/deliveries", (*API).listDeliveries).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerPaged).Doc(func(op *openapi.Operation) {
			op.Summary = "List a webhook endpoint's deliveries"
			op.Description = "Admin keys only. Newest first, each with its attempts (time, HTTP status, latency, the first KiB of the answer). " +
				"Kept 30 days."
			op.Query = append(operation.PageOnlyQuery(), openapi.Param{Name: "status", Description: "only deliveries in this status",
				Schema: openapi.Schema{"type": "string", "enum": []any{endpoints.Pending, endpoints.Succeeded, endpoints.Failed}}})
			op.Data, op.Paged = operation.ArrayOf("WebhookDelivery"), true
		}),
		operation.Declare(lambdas.Hooks, http.MethodPost, item+"/deliveries/{deliveryId}/retry", (*API).retryDelivery).InTopic("webhook-endpoints").AdminOnly(ManagingWebhookEndpoints).Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
			op.Summary, op.Status = "Retry a delivery", http.StatusAccepted
			op.Description = "Admin keys only. Queues the delivery again, whatever its status, with the same `webhook-id` and payload: " +
				"one more attempt, made at once."
			op.Data = openapi.Ref("WebhookDelivery")
		}),
	}
}

// Schemas are the component schemas of events and endpoints.
func Schemas(out map[string]openapi.Schema) {
	ev := openapi.TypeOf(reflect.TypeFor[history.Event]())
	props := ev["properties"].(openapi.Schema)
	types := []any{}
	for _, t := range kinds.Events().Types() {
		types = append(types, t)
	}
	props["type"] = openapi.Schema{"type": "string", "description": "`<resource type>.<verb>`", "enum": append(types, endpoints.TestType)}
	props["data"] = openapi.Schema{"type": "object", "additionalProperties": true,
		"description": "the record as created (a create) or its last state (a delete), as GET answers it; absent for updates"}
	props["changes"] = openapi.Schema{"type": "object", "description": "each changed field with its value before (`from`) and after (`to`); null: absent",
		"additionalProperties": openapi.Schema{"type": "object", "required": []any{"from", "to"},
			"properties": openapi.Schema{"from": anyValue, "to": anyValue}}}
	out["Event"] = ev
	out["WebhookEndpoint"] = openapi.TypeOf(reflect.TypeFor[endpoints.Endpoint]())
	withSecret := openapi.TypeOf(reflect.TypeFor[endpoints.Endpoint]())
	withSecret["properties"].(openapi.Schema)["secret"] = openapi.Schema{"type": "string", "pattern": "^whsec_",
		"description": "the signing secret (Standard Webhooks), shown this once"}
	withSecret["required"] = append(withSecret["required"].([]any), "secret")
	out["WebhookEndpointWithSecret"] = withSecret
	out["WebhookDelivery"] = openapi.TypeOf(reflect.TypeFor[endpoints.Delivery]())
}

// anyValue is any JSON value, null included.
var anyValue = openapi.Schema{"anyOf": []any{openapi.Schema{}, openapi.Schema{"type": "null"}}}

func endpointInput(create bool) openapi.Schema {
	s := openapi.Schema{"type": "object", "additionalProperties": false, "properties": openapi.Schema{
		"url":         openapi.Schema{"type": "string", "format": "uri", "maxLength": 2048, "description": "where deliveries are POSTed (http or https, public addresses only)"},
		"description": openapi.Schema{"type": "string", "maxLength": endpoints.MaxDescription},
		"eventTypes": openapi.Schema{"type": "array", "minItems": 1, "maxItems": endpoints.MaxEventTypes,
			"items": openapi.Schema{"type": "string"}, "description": "event types (`company.updated`), a resource's (`company.*`) or every (`*`)"},
		"enabled": openapi.Schema{"type": "boolean"},
	}}
	if create {
		s["required"] = []any{"url"}
	}
	return s
}

// The query parameters of GET /v1/events.
var eventParams = []string{"limit", "cursor", "direction", "resourceType", "resourceId", "type", "actor", "since", "until"}

func eventQuery() []openapi.Param {
	str := openapi.Schema{"type": "string"}
	out := operation.PageOnlyQuery()
	return append(out,
		openapi.Param{Name: "direction", Description: "`desc` (default, newest first) or `asc`", Schema: openapi.Schema{"type": "string", "enum": []any{"asc", "desc"}, "default": "desc"}},
		openapi.Param{Name: "resourceType", Description: "only events of these resource types, comma-separated (`company,deal`; at most " + strconv.Itoa(MaxEventFilterValues) + ", each counted once)", Schema: str},
		openapi.Param{Name: "resourceId", Description: "only events of this record", Schema: str},
		openapi.Param{Name: "type", Description: "only these event types, comma-separated (at most " + strconv.Itoa(MaxEventFilterValues) + " patterns, naming at most " + strconv.Itoa(MaxEventTypes) + " types); `company.*` names a resource's", Schema: str},
		openapi.Param{Name: "actor", Description: "only changes by this actor, or made through this: `<type>:<id>` (`apiKey:ck_…`: the key's own writes and " +
			"those of its imports, batches and runs; `import:imp_…`, `batch:<X-Request-Id>`, `workflowRun:run_…`: what that import, batch or run wrote) " +
			"or a type (`" + strings.Join(actorFilterTypes(), "`, `") + "`)", Schema: str},
		openapi.Param{Name: "since", Description: "only events at or after this time (RFC 3339)", Schema: openapi.Schema{"type": "string", "format": "date-time"}},
		openapi.Param{Name: "until", Description: "only events before this time (RFC 3339)", Schema: openapi.Schema{"type": "string", "format": "date-time"}},
	)
}

// logPage reads the parameters of a list of a log (the events, an
// endpoint's deliveries), which pages by cursor only: every name in q must
// be accepted and given once; limit as every list's.
func logPage(q url.Values, accepted []string) (limit int, cursor string, err error) {
	for name, vs := range q {
		if !slices.Contains(accepted, name) {
			return 0, "", apperr.InvalidQuery(name, "is not accepted; accepted parameters are %s", strings.Join(accepted, ", "))
		}
		if len(vs) > 1 {
			return 0, "", apperr.InvalidQuery(name, "is given %d times; give it once", len(vs))
		}
	}
	limit = httpapi.DefaultLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return 0, "", apperr.InvalidQuery("limit", "must be an integer (1 to %d)", httpapi.MaxLimit)
		}
		limit = min(max(n, 1), httpapi.MaxLimit)
	}
	return limit, q.Get("cursor"), nil
}

// MaxEventFilterValues is how many comma-separated values the list-valued
// parameters of GET /v1/events (resourceType, type) take each; more is a
// 400 naming the parameter, and a value given twice counts once. With the
// expanded event types (at most MaxEventTypes) they are the operands of
// the query's FilterExpression: each an "IN" operand of about 8 bytes, so
// that the expression stays far under DynamoDB's 4 KB (and its 100
// operands of one IN).
const MaxEventFilterValues = 20

// MaxEventTypes is how many event types the type filter may name once its
// patterns are expanded.
const MaxEventTypes = 50

// listValues reads the comma-separated values of param, each once in the
// order given; more than MaxEventFilterValues is a 400.
func listValues(q url.Values, param string) ([]string, error) {
	s := q.Get(param)
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxEventFilterValues {
		return nil, apperr.InvalidQuery(param, "holds %d comma-separated values; give at most %d", len(parts), MaxEventFilterValues)
	}
	var out []string
	for _, v := range parts {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// eventFilter reads GET /v1/events' parameters. hidden are the resource
// types whose events the caller may not read (AdminOnly, for a key
// that is not an admin's), each with the admin-only action of its routes:
// naming one in resourceType or type is a 403, and the list leaves them
// out.
func eventFilter(q url.Values, hidden map[string]string) (history.Filter, int, string, error) {
	var f history.Filter
	limit, cursor, err := logPage(q, eventParams)
	if err != nil {
		return f, 0, "", err
	}
	switch q.Get("direction") {
	case "", "desc":
	case "asc":
		f.Asc = true
	default:
		return f, 0, "", apperr.InvalidQuery("direction", "must be asc or desc")
	}
	catalog := kinds.Events()
	resourceTypes, err := listValues(q, "resourceType")
	if err != nil {
		return f, 0, "", err
	}
	for _, t := range resourceTypes {
		if !catalog.HasResourceType(t) {
			return f, 0, "", apperr.InvalidQuery("resourceType", "%q is not a resource type with events; they are %s", t, strings.Join(catalog.ResourceTypes(), ", "))
		}
		if action, ok := hidden[t]; ok {
			return f, 0, "", hiddenEvents(t, action)
		}
		f.ResourceTypes = append(f.ResourceTypes, t)
	}
	patterns, err := listValues(q, "type")
	if err != nil {
		return f, 0, "", err
	}
	for _, p := range patterns {
		if err := catalog.CheckPattern(p); err != nil {
			return f, 0, "", apperr.InvalidQuery("type", "%s", err.Error())
		}
		var shown []string
		hiddenType, hiddenAction := "", ""
		for _, t := range catalog.Types() {
			if !history.MatchType(p, t) {
				continue
			}
			res, _, _ := strings.Cut(t, ".")
			if action, ok := hidden[res]; ok {
				hiddenType, hiddenAction = res, action
				continue
			}
			shown = append(shown, t)
		}
		if len(shown) == 0 && hiddenType != "" {
			return f, 0, "", hiddenEvents(hiddenType, hiddenAction)
		}
		for _, t := range shown {
			if !slices.Contains(f.Types, t) {
				f.Types = append(f.Types, t)
			}
		}
		if len(f.Types) > MaxEventTypes {
			return f, 0, "", apperr.InvalidQuery("type", "names %d event types; name at most %d", len(f.Types), MaxEventTypes)
		}
	}
	if len(f.ResourceTypes) == 0 && len(hidden) > 0 {
		// Every resource type but the hidden ones, in the query's
		// FilterExpression: pages stay full and end only at the end.
		for _, t := range catalog.ResourceTypes() {
			if _, ok := hidden[t]; !ok {
				f.ResourceTypes = append(f.ResourceTypes, t)
			}
		}
	}
	f.ResourceID = q.Get("resourceId")
	if len(f.ResourceID) > store.MaxIDLength {
		return f, 0, "", apperr.InvalidQuery("resourceId", "is longer than %d characters", store.MaxIDLength)
	}
	if a := q.Get("actor"); a != "" {
		typ, _, _ := strings.Cut(a, ":")
		if !slices.Contains(actorFilterTypes(), typ) || len(a) > 300 {
			return f, 0, "", apperr.InvalidQuery("actor", "must be <type>:<id> or a type; types are %s", strings.Join(actorFilterTypes(), ", "))
		}
		f.Actor = a
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if s := q.Get(p.name); s != "" {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return f, 0, "", apperr.InvalidQuery(p.name, "must be a time in RFC 3339 (2026-01-31T09:00:00Z)")
			}
			*p.to = t
		}
	}
	return f, limit, cursor, nil
}

// hiddenEvents is the 403 of a member key naming the events of an
// admin-only resource type.
func hiddenEvents(resourceType, action string) error {
	return apperr.Forbidden("the events of %s are read by admin keys only, as %s requires an admin key", resourceType, action)
}

// AdminOnly are the resource types with events whose records only admin
// keys read (history.Kind.AdminOnly), each with the action that needs an
// admin key: their events are hidden from other keys (GET /v1/events, its
// MCP tool list_events, GET /v1/events/{id}). The list route of such a
// kind is admin-only with the same action (a test of package api holds
// the catalog and the route table alike).
func AdminOnly() map[string]string {
	out := map[string]string{}
	for _, k := range kinds.Events().Kinds() {
		if k.AdminOnly != "" {
			out[k.Name] = k.AdminOnly
		}
	}
	return out
}

// hiddenFrom are the resource types whose events r's caller may not read.
func (a *API) hiddenFrom(r *http.Request) map[string]string {
	if httpapi.Caller(r).IsAdmin() {
		return nil
	}
	return a.adminOnly
}

// actorFilterTypes are the types the actor filter of GET /v1/events
// takes: an actor's, or a via's (what an actor wrote through).
func actorFilterTypes() []string {
	var out []string
	for _, t := range append(slices.Clone(store.ActorTypes), store.ViaTypes...) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (a *API) listEvents(w http.ResponseWriter, r *http.Request) {
	f, limit, cursor, err := eventFilter(r.URL.Query(), a.hiddenFrom(r))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.ReplyPage[json.RawMessage](w, r)(a.history.List(r.Context(), httpapi.Caller(r).OrgID, f, limit, httpapi.Budget(r.Context()), cursor))
}

func (a *API) getEvent(w http.ResponseWriter, r *http.Request) {
	doc, err := a.history.Get(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"))
	if hidden := a.hiddenFrom(r); err == nil && len(hidden) > 0 {
		// An event of an admin-only resource type is none to other keys.
		var ev struct {
			Resource struct {
				Type string `json:"type"`
			} `json:"resource"`
		}
		if json.Unmarshal(doc, &ev) != nil {
			err = apperr.ErrNotFound
		} else if _, ok := hidden[ev.Resource.Type]; ok {
			err = apperr.ErrNotFound
		}
	}
	httpapi.Reply(w, r, http.StatusOK)(doc, err)
}

func (a *API) createEndpoint(w http.ResponseWriter, r *http.Request) {
	if in, ok := httpapi.DecodeBody(w, r, endpoints.DecodeInput); ok {
		httpapi.Reply(w, r, http.StatusCreated)(a.endpoints.Create(r.Context(), httpapi.Caller(r).OrgID, in))
	}
}

func (a *API) listEndpoints(w http.ResponseWriter, r *http.Request) {
	if q, ok := httpapi.PageQuery(w, r); ok {
		httpapi.ReplyPage[endpoints.Endpoint](w, r)(a.endpoints.List(r.Context(), httpapi.Caller(r).OrgID, q))
	}
}

func (a *API) getEndpoint(w http.ResponseWriter, r *http.Request) {
	httpapi.Reply(w, r, http.StatusOK)(a.endpoints.Get(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id")))
}

func (a *API) updateEndpoint(w http.ResponseWriter, r *http.Request) {
	if in, ok := httpapi.DecodeBody(w, r, endpoints.DecodeInput); ok {
		httpapi.Reply(w, r, http.StatusOK)(a.endpoints.Update(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), in))
	}
}

func (a *API) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	httpapi.NoContent(w, r, a.endpoints.Delete(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id")))
}

func (a *API) rotateEndpointSecret(w http.ResponseWriter, r *http.Request) {
	if overlap, ok := httpapi.DecodeBody(w, r, endpoints.DecodeRotation); ok {
		httpapi.Reply(w, r, http.StatusOK)(a.endpoints.Rotate(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), overlap))
	}
}

func (a *API) testEndpoint(w http.ResponseWriter, r *http.Request) {
	httpapi.Reply(w, r, http.StatusOK)(a.endpoints.Test(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id")))
}

func (a *API) listDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, cursor, err := logPage(q, []string{"limit", "cursor", "status"})
	status := q.Get("status")
	if err == nil && status != "" && !slices.Contains([]string{endpoints.Pending, endpoints.Succeeded, endpoints.Failed}, status) {
		err = apperr.InvalidQuery("status", "must be pending, succeeded or failed")
	}
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.ReplyPage[endpoints.Delivery](w, r)(a.endpoints.Deliveries(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), status, limit, httpapi.Budget(r.Context()), cursor))
}

func (a *API) retryDelivery(w http.ResponseWriter, r *http.Request) {
	httpapi.Reply(w, r, http.StatusAccepted)(a.endpoints.Retry(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), r.PathValue("deliveryId")))
}
