package api

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/keys"
	"github.com/sourcebase/sourcebase/internal/metrics"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/webhook"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// OpenAPIPath is where the service serves its OpenAPI document.
const OpenAPIPath = routes.OpenAPIPath

// OpenAPI is the service's OpenAPI 3.1 document (docs/openapi.json): every
// route of the route table, described from the declarations behind it, as
// published: its answers' schemas open to additive change (openapi.Publish).
func OpenAPI() ([]byte, error) {
	openAPIOnce.Do(buildOpenAPIs)
	return openAPIDoc, openAPIErr
}

// StrictOpenAPI is OpenAPI with every schema closed: the service's exact
// answers, which the contract tests (package apitest) hold it to, so that
// a field the document does not name is drift.
func StrictOpenAPI() ([]byte, error) {
	openAPIOnce.Do(buildOpenAPIs)
	return strictOpenAPIDoc, openAPIErr
}

var (
	openAPIOnce      sync.Once
	openAPIDoc       []byte
	strictOpenAPIDoc []byte
	openAPIErr       error
)

func buildOpenAPIs() {
	strictOpenAPIDoc, openAPIErr = buildOpenAPI()
	if openAPIErr == nil {
		openAPIDoc, openAPIErr = openapi.Publish(strictOpenAPIDoc)
	}
}

func (a *API) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	b, err := OpenAPI()
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(b)
}

func buildOpenAPI() ([]byte, error) {
	eps := New(Deps{}).endpoints()
	ops := make([]openapi.Operation, 0, len(eps))
	for _, ep := range eps {
		ops = append(ops, operations(ep.Route)...)
	}
	return openapi.Document(ops, componentSchemas(), securitySchemes, openapi.Info{
		Title: "Sourcebase API",
		Description: "Financial-research data for private-markets firms: companies, deals, people, documents, " +
			"enrichment, metric series, scores and workflows. Every `/v1` route needs the two credential headers " +
			"`" + openapi.HeaderClientID + "` and `" + openapi.HeaderAPIKey + "` (except this document, " +
			"`GET " + OpenAPIPath + "`, which is public); success bodies are `{\"data\": ...}`, errors `{\"error\": \"...\"}`. " +
			"Lists page with `limit`, `page` and the opaque `cursor` of `X-Next-Cursor`.",
		URL:     "https://github.com/sourcebase/sourcebase",
		License: "Proprietary", LicenseID: "LicenseRef-Proprietary",
		Tags: groupDocs(),
	})
}

// groupDocs describes each group (the operations' tags) by its function.
func groupDocs() map[string]string {
	out := map[string]string{}
	table := Routes()
	for _, f := range routes.Functions {
		out[f.Name] = f.Describe(table)
	}
	return out
}

// declaredByName are the record declarations whose schemas are named
// components: every resource, companies, workflows and runs.
func declared() []*resource.Def {
	return append([]*resource.Def{companies.Def, workflows.Def, runs.Def}, resources.All()...)
}

// SchemaName is the component name of d's records: "Company", "Deal".
func SchemaName(d *resource.Def) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(d.Singular, func(r rune) bool { return r == ' ' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	if d == runs.Def {
		return "WorkflowRun"
	}
	return b.String()
}

func componentSchemas() map[string]openapi.Schema {
	out := map[string]openapi.Schema{}
	for _, d := range declared() {
		out[SchemaName(d)] = openapi.Record(d, openapi.Output)
	}
	out["Key"] = openapi.TypeOf(reflect.TypeFor[keys.Key]())
	entry := openapi.TypeOf(reflect.TypeFor[resources.Entry]())
	entry["properties"].(openapi.Schema)["record"] = openapi.Schema{"type": []any{"object", "null"}, "additionalProperties": true,
		"description": "the record as GET answers it; null when it no longer exists"}
	out["ListEntry"] = entry
	out["EnrichmentValue"] = openapi.TypeOf(reflect.TypeFor[enrichment.Value]())
	out["MetricPoint"] = openapi.TypeOf(reflect.TypeFor[metrics.SeriesPoint]())
	out["StoredMetricPoint"] = openapi.TypeOf(reflect.TypeFor[metrics.Point]())
	series := openapi.TypeOf(reflect.TypeFor[metrics.Series]())
	series["properties"].(openapi.Schema)["points"] = arrayOf("MetricPoint")
	out["MetricSeries"] = series
	out["WebhookTrigger"] = openapi.TypeOf(reflect.TypeFor[workflows.WebhookTrigger]())
	for _, d := range Searchable() {
		out[SchemaName(d)+"Search"] = searchSchema(search.SchemaOf(d))
	}
	out["SearchPredicate"] = predicateSchema()
	out["MetricPointInput"] = metricPointInput()
	out["MetricSeriesQuery"] = metricQuery()
	out["EnrichmentValueInput"] = enrichmentInput()
	out["SearchMetadata"] = openapi.TypeOf(reflect.TypeFor[searchMetadata]())
	return out
}

var securitySchemes = map[string]openapi.Schema{
	"clientId": {"type": "apiKey", "in": "header", "name": openapi.HeaderClientID,
		"description": "the key's public client id; sent together with `" + openapi.HeaderAPIKey + "`"},
	"apiKey": {"type": "apiKey", "in": "header", "name": openapi.HeaderAPIKey,
		"description": "the key's secret, shown once when the key is made"},
	"webhookSharedSecret": {"type": "apiKey", "in": "header", "name": webhook.SharedSecret.DefaultHeader(),
		"description": "shared-secret scheme (the default): the header holds the trigger's secret, compared in constant time. " +
			"`Authorization: Bearer <secret>` is accepted too while the trigger uses the default header name. " +
			"A trigger's `headerName` replaces the header: the delivery's empty security requirement (`{}`) stands for it."},
	"webhookBearer": {"type": "http", "scheme": "bearer",
		"description": "shared-secret scheme, default header name only: `Authorization: Bearer <secret>`"},
	"webhookHmacSha256": {"type": "apiKey", "in": "header", "name": webhook.HMACSHA256.DefaultHeader(),
		"description": "hmac-sha256 scheme: the header holds `sha256=<hex>` (or the bare hex) of HMAC-SHA256(secret, the raw body " +
			"exactly as sent). A trigger's `headerName` replaces the header (such as `X-Hub-Signature-256`): the delivery's empty " +
			"security requirement (`{}`) stands for it."},
}

// operations describe route rt: one operation, but for the get of a
// declared resource with MultiGet, which also serves GET
// /v1/<name>/ids={ids} (multiGetOperation): neither the router's patterns
// nor API Gateway's routes match a part of a path segment, so one route
// serves both, and the document, which can, names them apart.
func operations(rt routes.Route) []openapi.Operation {
	op := operation(rt)
	if d := declaredDef(rt); d != nil && d.MultiGet && rt.Method == http.MethodGet && rt.Path == "/v1/"+d.Name+"/{id}" {
		return []openapi.Operation{op, multiGetOperation(rt, d)}
	}
	return []openapi.Operation{op}
}

// MultiGetPath is the path of the read of several records of d at once,
// served by the route of GET /v1/<name>/{id}.
func MultiGetPath(d *resource.Def) string {
	return "/v1/" + d.Name + "/" + resource.MultiGetPrefix + "{ids}"
}

// multiGetOperation describes GET /v1/<name>/ids={ids} of d, served by the
// route rt (GET /v1/<name>/{id}).
func multiGetOperation(rt routes.Route, d *resource.Def) openapi.Operation {
	op := operation(rt)
	op.Path = MultiGetPath(d)
	op.Summary = "Get several " + d.Name + " by id"
	op.Description = "The " + d.Name + " with these ids in the key's organization, in the order asked, each once, as an array; " +
		"an id with no record in the organization is left out. Up to " + itoa(store.MaxBatch) + " ids, comma-separated: `" +
		resource.MultiGetPrefix + "<id>,<id>,...`. An answer that would exceed the response budget is a 400 naming `ids`: ask for fewer."
	op.Data, op.ETag = openapi.Schema{"type": "array", "items": openapi.Ref(SchemaName(d))}, false
	op.PathParams = map[string]openapi.Param{"ids": {Description: "the ids, comma-separated (up to " + itoa(store.MaxBatch) + ")",
		Schema: openapi.Schema{"type": "array", "minItems": 1, "maxItems": store.MaxBatch, "items": openapi.Schema{"type": "string", "minLength": 1}}}}
	return op
}

// operation describes route rt.
func operation(rt routes.Route) openapi.Operation {
	op := openapi.Operation{Method: rt.Method, Path: rt.Path, Group: rt.Group, Status: http.StatusOK,
		Idempotent:     rt.Authenticated() && rt.Method == http.MethodPost && !rt.ReadOnly,
		Preconditioned: rt.Method == http.MethodPut || rt.Method == http.MethodPatch || rt.Method == http.MethodDelete,
		Public:         !rt.Authenticated()}
	if rt.Method == http.MethodDelete {
		op.Status = http.StatusNoContent
	}
	if d := declaredDef(rt); d != nil && rt.Group != fn.Search {
		recordOperation(&op, d)
	} else if describe, ok := handOperations[rt.Pattern()]; ok {
		describe(&op)
	} else if rt.Group == fn.Search {
		searchOperation(&op, declaredDef(rt))
	} else {
		panic("api: no OpenAPI description of " + rt.Pattern())
	}
	if op.Summary == "" {
		panic("api: no summary for " + rt.Pattern())
	}
	if rt.Admin != "" {
		op.Errors = append(op.Errors, http.StatusForbidden)
	}
	return op
}

// declaredDef is the declaration whose records rt serves, by its path.
func declaredDef(rt routes.Route) *resource.Def {
	for _, d := range declared() {
		if rt.Resource == d.Name {
			return d
		}
	}
	for _, d := range []*resource.Def{companies.Def, workflows.Def} {
		if rt.Path == "/v1/"+d.Name || rt.Path == "/v1/"+d.Name+"/{id}" {
			return d
		}
	}
	if rt.Path == "/v1/workflow-runs" || rt.Path == "/v1/workflow-runs/{id}" {
		if rt.Method == http.MethodGet {
			return runs.Def
		}
	}
	return nil
}

// listQuery are the parameters of a list of d, filtered by filters.
func listQuery(sortable, filters []string) []openapi.Param {
	str := openapi.Schema{"type": "string"}
	sortEnum := make([]any, len(sortable))
	for i, s := range sortable {
		sortEnum[i] = s
	}
	ps := []openapi.Param{
		{Name: "limit", Description: "records per page, 1 to " + itoa(httpapi.MaxLimit) + " (outside: clamped); default " + itoa(httpapi.DefaultLimit),
			Schema: openapi.Schema{"type": "integer", "default": httpapi.DefaultLimit}},
		{Name: "page", Description: "the page, 1 to " + itoa(httpapi.MaxPage) + "; for deeper lists follow `cursor`",
			Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": httpapi.MaxPage, "default": 1}},
		{Name: "cursor", Description: "the `X-Next-Cursor` of the previous page (bound to this list: same sort and filter)", Schema: str},
		{Name: "sort", Description: "the field to order by; default `id`, the order records were created in", Schema: openapi.Schema{"type": "string", "enum": sortEnum}},
		{Name: "direction", Description: "`desc` (default, newest first) or `asc`", Schema: openapi.Schema{"type": "string", "enum": []any{"asc", "desc"}, "default": "desc"}},
		{Name: "lt", Description: "only records whose `id` is less than this one, whatever the sort", Schema: str},
	}
	for _, f := range filters {
		ps = append(ps, openapi.Param{Name: f, Description: "only records whose `" + f + "` is this value (one filter at a time)", Schema: str})
	}
	return ps
}

// recordOperation describes a create, list, get, update or delete of d.
func recordOperation(op *openapi.Operation, d *resource.Def) {
	name, ref := SchemaName(d), openapi.Ref(SchemaName(d))
	item := op.Path == "/v1/"+d.Name+"/{id}"
	switch {
	case op.Method == http.MethodPost:
		op.Summary = "Create " + withArticle(d.Singular)
		op.Description = d.Doc + " Answers the stored record (201), with its version as `ETag`."
		op.Body, op.Status, op.Data, op.ETag = openapi.Record(d, openapi.Create), http.StatusCreated, ref, true
		op.Errors = []int{409}
	case op.Method == http.MethodGet && !item:
		op.Summary = "List " + d.Name
		op.Description = "A page of the organization's " + d.Name + ", newest first unless `sort` and `direction` say otherwise. " +
			"When more records follow, `X-Next-Cursor` holds the next page's `cursor` and `Link` its URL."
		filters := d.Filters()
		switch d {
		case companies.Def:
			filters = companies.Filters
		case runs.Def:
			filters = runs.Filters
		}
		op.Query, op.Data, op.Paged = listQuery(d.SortFields(), filters), openapi.Schema{"type": "array", "items": ref}, true
	case op.Method == http.MethodGet:
		op.Summary = "Get " + withArticle(d.Singular)
		op.Description = "The " + d.Singular + " with this id in the key's organization, with its version as `ETag`."
		op.Data, op.ETag = ref, true
		if d.MultiGet {
			op.Description += " Several at once: `GET " + MultiGetPath(d) + "`."
		}
	case op.Method == http.MethodPut:
		op.Summary = "Update " + withArticle(d.Singular)
		op.Description = "Changes the fields sent; a field sent as `null` is cleared. Other fields keep their values."
		op.Body, op.Data, op.ETag = openapi.Record(d, openapi.Update), ref, true
		op.Errors = []int{409}
	case op.Method == http.MethodDelete:
		op.Summary = "Delete " + withArticle(d.Singular)
		op.Description = "Deletes the " + d.Singular + " (204). A record another one still references where the reference restricts deletes is a 409 naming it."
		op.Errors = []int{409}
	}
	_ = name
}

// searchOperation describes POST /v1/<name>/search of d.
func searchOperation(op *openapi.Operation, d *resource.Def) {
	op.Summary = "Search " + d.Name
	op.Description = "Full-text and structured search of the organization's " + d.Name + "; see docs/search.md. " +
		"Results are the records as `GET /v1/" + d.Name + "/{id}` answers them."
	op.Query = []openapi.Param{
		{Name: "page", Description: "the page, from 1; (page-1)*limit at most " + itoa(search.MaxOffset), Schema: openapi.Schema{"type": "integer", "minimum": 1, "default": 1}},
		{Name: "limit", Description: "results per page", Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": search.MaxLimit, "default": search.DefaultLimit}},
	}
	op.Body, op.BodyOptional, op.Raw = openapi.Ref(SchemaName(d)+"Search"), true, true
	op.Data = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"data", "metadata"},
		"properties": openapi.Schema{"data": arrayOf(SchemaName(d)), "metadata": openapi.Ref("SearchMetadata")}}
}

// searchSchema is the search body of s: its fields and operators.
func searchSchema(s *search.Schema) openapi.Schema {
	var sortable []any
	for _, f := range s.Fields {
		if f.Sortable {
			sortable = append(sortable, f.Name)
		}
	}
	group := openapi.Schema{"type": "array", "items": openapi.Ref("SearchPredicate")}
	return openapi.Schema{"type": "object", "additionalProperties": false,
		"description": "a search of " + s.Resource + ": text, filters (fields: " + fieldList(s) + "), sort",
		"properties": openapi.Schema{
			"text":     openapi.Schema{"type": "string", "maxLength": search.MaxTextLength, "description": "words matched in the text fields"},
			"filters":  openapi.Schema{"type": "object", "additionalProperties": false, "properties": openapi.Schema{"and": group, "or": group}},
			"sort":     openapi.Schema{"type": "array", "maxItems": search.MaxSortKeys, "items": openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"field"}, "properties": openapi.Schema{"field": openapi.Schema{"type": "string", "enum": sortable}, "direction": openapi.Schema{"type": "string", "enum": []any{"asc", "desc"}}}}},
			"hybrid":   openapi.Schema{"type": "boolean", "description": "rank by text relevance and recency together"},
			"fuzzy":    openapi.Schema{"type": "boolean", "description": "let words match with small typos"},
			"fullText": openapi.Schema{"type": "boolean", "description": "match text in every text field, not only the weighted ones"},
		}}
}

func fieldList(s *search.Schema) string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = "`" + f.Name + "`"
	}
	return strings.Join(names, ", ")
}

// predicateSchema is one node of a search's filter tree.
func predicateSchema() openapi.Schema {
	ops := make([]any, len(search.Ops))
	for i, o := range search.Ops {
		ops[i] = string(o)
	}
	group := openapi.Schema{"type": "array", "items": openapi.Ref("SearchPredicate")}
	return openapi.Schema{"type": "object", "additionalProperties": false,
		"description": "a condition on a field (`field`, `operator`, `value`), and/or nested `and` / `or` groups; at most " +
			itoa(search.MaxDepth) + " levels and " + itoa(search.MaxPredicates) + " predicates in all",
		"properties": openapi.Schema{
			"field":    openapi.Schema{"type": "string"},
			"operator": openapi.Schema{"type": "string", "enum": ops},
			"value":    openapi.Schema{"description": "a value of the field's type; an array for `in` and `nin`, a boolean for `exists`"},
			"and":      group,
			"or":       group,
		}}
}

// handOperations describe the routes written by hand, by pattern.
var handOperations = map[string]func(*openapi.Operation){
	"GET " + routes.HealthPath: func(op *openapi.Operation) {
		op.Summary, op.Raw = "Check the service's health", true
		op.Description = "200 when the table answers within 2 seconds, else 503."
		op.Data = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"status"},
			"properties": openapi.Schema{"status": openapi.Schema{"type": "string", "enum": []any{"ok"}}}}
		op.Errors = []int{503}
	},
	"GET " + routes.OpenAPIPath: func(op *openapi.Operation) {
		op.Summary, op.Raw = "Get this OpenAPI document", true
		op.Description = "The one `/v1` route without credentials."
		op.Data = openapi.Schema{"type": "object", "additionalProperties": true}
	},
	"POST " + routes.MCPPath: func(op *openapi.Operation) {
		op.Summary, op.Public, op.Idempotent, op.Raw = "Model Context Protocol endpoint (streamable HTTP)", false, false, true
		op.Description = "JSON-RPC messages of the Model Context Protocol (initialize, tools/list, tools/call, resources/list, " +
			"resources/read), answered as JSON (stateless: no Mcp-Session-Id). Needs the same two headers as every /v1 route; " +
			"its tools call the REST operations with them. Every message counts against the key's rate limit (a batch of " +
			itoa(MaxMCPBatch) + " at most counts each), and the whole answer stays within the response budget. See docs/mcp.md."
		message := openapi.Schema{"type": "object", "description": "a JSON-RPC 2.0 request or notification", "required": []any{"jsonrpc"}, "additionalProperties": true,
			"properties": openapi.Schema{"jsonrpc": openapi.Schema{"type": "string", "enum": []any{"2.0"}}}}
		op.Body = openapi.Schema{"oneOf": []any{message, openapi.Schema{"type": "array", "minItems": 1, "items": message,
			"description": "a batch (protocol versions 2025-03-26 and before); more than " + itoa(MaxMCPBatch) + " messages are refused (400)"}}}
		answer := openapi.Schema{"type": "object", "description": "the JSON-RPC 2.0 response", "additionalProperties": true}
		op.Data = openapi.Schema{"oneOf": []any{answer, openapi.Schema{"type": "array", "items": answer, "description": "the responses to a batch"}}}
		op.AlsoStatus = http.StatusAccepted
		// The transport's refusals: an Accept without both application/json
		// and text/event-stream (400), a body that is not JSON (415); a
		// batch of too many messages (400, a JSON-RPC error without id).
		op.Errors = []int{http.StatusBadRequest, http.StatusUnsupportedMediaType}
		op.ErrorBodies = map[int]openapi.Schema{http.StatusBadRequest: {"type": "object", "required": []any{"jsonrpc", "error"},
			"description": "a JSON-RPC 2.0 error response (a batch of more than " + itoa(MaxMCPBatch) + " messages: code -32600, id null)",
			"properties": openapi.Schema{"jsonrpc": openapi.Schema{"type": "string", "enum": []any{"2.0"}},
				"id": openapi.Schema{"description": "the message's id; null for a refusal of the whole request",
					"oneOf": []any{openapi.Schema{"type": "string"}, openapi.Schema{"type": "integer"}, openapi.Schema{"type": "null"}}},
				"error": openapi.Schema{"type": "object", "required": []any{"code", "message"},
					"properties": openapi.Schema{"code": openapi.Schema{"type": "integer"}, "message": openapi.Schema{"type": "string"}}}}}}
		op.Security = []map[string][]string{{"clientId": {}, "apiKey": {}}}
	},
	"GET /v1/keys": func(op *openapi.Operation) {
		op.Summary = "List the organization's API keys"
		op.Description = "Admin keys only. Secrets are never shown: a key's secret is answered once, when it is made (operator CLI). " +
			"Without `limit`, every key of the organization in one page (an organization holds at most 1,000); with it, a page as every list pages."
		op.Query, op.Data, op.Paged, op.Errors = listQuery(keys.SortFields(), nil), arrayOf("Key"), true, []int{403}
	},
	"DELETE /v1/keys/{clientId}": func(op *openapi.Operation) {
		op.Summary, op.Errors, op.Preconditioned = "Revoke an API key", []int{403, 409}, false
		op.Description = "Admin keys only. The key stops working at once on this instance, and on others within the key cache's lifetime. " +
			"The organization's last admin key cannot be revoked (409): have the operator create another admin key first."
	},
	"POST /v1/workflows/{id}/trigger/webhook-secret/rotate": func(op *openapi.Operation) {
		op.Summary = "Rotate a workflow's webhook secret"
		op.Description = "Admin keys only. Answers the trigger with its new `secret`, shown this once; the old secret stops working at once."
		op.Data = openapi.Ref("WebhookTrigger")
	},
	"POST /v1/workflows/{id}/runs": func(op *openapi.Operation) {
		op.Summary, op.Status = "Start a run of a workflow", http.StatusAccepted
		op.Description = "Queues a run with the given input (202); it executes afterwards: follow it with `GET /v1/workflow-runs/{id}`."
		op.Body, op.BodyOptional = openapi.Record(runs.NewRunDef, openapi.Create), true
		op.Data = openapi.Ref("WorkflowRun")
	},
	"GET /v1/workflows/{id}/runs": func(op *openapi.Operation) {
		op.Summary = "List a workflow's runs"
		op.Description = "A page of the runs of one workflow, newest first."
		op.Query, op.Data, op.Paged = listQuery(runs.Def.SortFields(), nil), arrayOf("WorkflowRun"), true
	},
	"PATCH /v1/workflow-runs/{id}": func(op *openapi.Operation) {
		op.Summary = "Rename a run"
		op.Description = "Changes the run's title, the only part of a run a client changes."
		op.Body, op.Data, op.ETag = openapi.Record(runs.TitleDef, openapi.Create), openapi.Ref("WorkflowRun"), true
	},
	"POST /v1/workflow-runs/{id}/retry": func(op *openapi.Operation) {
		op.Summary, op.Status, op.Errors = "Retry a failed run", http.StatusAccepted, []int{409}
		op.Description = "Starts a new run with the failed run's input and dry-run setting; a run is retried once (409 after)."
		op.Data = openapi.Ref("WorkflowRun")
	},
	"POST /webhooks/workflows/{slug}": func(op *openapi.Operation) {
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
		op.Errors = []int{401}
		op.Preconditioned = false
	},
	"POST /v1/lists/{id}/entries": func(op *openapi.Operation) {
		op.Summary, op.Status, op.AlsoStatus = "Add a record to a list", http.StatusCreated, http.StatusOK
		op.Description = "201 with the new entry, or 200 with the existing one when the record is on the list already."
		op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"recordId"},
			"properties": openapi.Schema{"recordId": openapi.Schema{"type": "string", "minLength": 1, "maxLength": 256,
				"description": "the id of a record of the list's resourceType"}}}
		op.Data, op.Errors = openapi.Ref("ListEntry"), []int{409}
		op.ResponseHeaders = nil
	},
	"GET /v1/lists/{id}/entries": func(op *openapi.Operation) {
		op.Summary = "List a list's entries"
		op.Description = "A page of the records on a list, each with the record itself."
		op.Query, op.Data, op.Paged = listQuery(resources.EntrySortFields(), nil), arrayOf("ListEntry"), true
	},
	"DELETE /v1/lists/{id}/entries/{recordId}": func(op *openapi.Operation) {
		op.Summary, op.Preconditioned = "Remove a record from a list", false
		op.Description = "Takes the record off the list (204); the record itself stays."
	},
	"POST /v1/data/metric-points": func(op *openapi.Operation) {
		op.Summary, op.Status = "Write metric points", http.StatusCreated
		op.Description = "Up to " + itoa(metrics.MaxBatch) + " candidate points in one write; see docs/metrics.md."
		op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"points"},
			"properties": openapi.Schema{"points": openapi.Schema{"type": "array", "minItems": 1, "maxItems": metrics.MaxBatch, "items": openapi.Ref("MetricPointInput")}}}
		op.Data, op.Errors = arrayOf("StoredMetricPoint"), []int{404}
	},
	"POST /v1/data/metric-series": func(op *openapi.Operation) {
		op.Summary = "Read a metric series"
		op.Description = "One series of a record over a period, bucketed and picked by a policy; see docs/metrics.md."
		op.Body, op.Data = openapi.Ref("MetricSeriesQuery"), openapi.Ref("MetricSeries")
	},
	"POST " + enrichmentPath: func(op *openapi.Operation) {
		op.Summary, op.Status = "Add candidate values of a record's attributes", http.StatusCreated
		op.Description = "A batch of candidates, reconciled with the others at once; see docs/enrichment.md."
		op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"values"},
			"properties": openapi.Schema{"values": openapi.Schema{"type": "array", "minItems": 1, "maxItems": enrichment.MaxBatch, "items": openapi.Ref("EnrichmentValueInput")}}}
		op.Data = arrayOf("EnrichmentValue")
	},
	"GET " + enrichmentPath: func(op *openapi.Operation) {
		op.Summary, op.Data = "List a record's candidate values", arrayOf("EnrichmentValue")
		op.Description = "A page of the candidate values of the record's enrichable attributes, by property and, within one, " +
			"in rank order (the first is the attribute's value). When more candidates follow, `X-Next-Cursor` holds the next " +
			"page's `cursor` and `Link` its URL."
		op.Query, op.Paged = enrichmentListQuery(), true
	},
	"PATCH " + enrichmentPath + "/{valueId}": func(op *openapi.Operation) {
		op.Summary, op.Preconditioned = "Pin or unpin a candidate value", false
		op.Description = "A pinned candidate wins its attribute (the most recently pinned first); the record is reconciled at once."
		op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"pinned"},
			"properties": openapi.Schema{"pinned": openapi.Schema{"type": "boolean"}}}
		op.Data = openapi.Ref("EnrichmentValue")
	},
	"DELETE " + enrichmentPath + "/{valueId}": func(op *openapi.Operation) {
		op.Summary, op.Preconditioned = "Delete a candidate value", false
		op.Description = "Deletes the candidate (204); the attribute is reconciled from the others, or cleared when none is left."
	},
}

// enrichmentListQuery are the paging parameters of a record's candidate
// values: those of every list but its order's (the ranking is the order).
func enrichmentListQuery() []openapi.Param {
	var out []openapi.Param
	for _, p := range listQuery(nil, nil) {
		if slices.Contains(enrichmentListParams, p.Name) {
			if p.Name == "cursor" {
				p.Description = "the `X-Next-Cursor` of the previous page (bound to this record's candidates)"
			}
			out = append(out, p)
		}
	}
	return out
}

// withArticle is a noun with its indefinite article: "a deal", "an activity".
func withArticle(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

func arrayOf(name string) openapi.Schema {
	return openapi.Schema{"type": "array", "items": openapi.Ref(name)}
}

func enums(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

func enrichmentInput() openapi.Schema {
	props := slices.Sorted(slices.Values(enrichment.CompanyProperties))
	str := func(max int, d string) openapi.Schema {
		return openapi.Schema{"type": "string", "maxLength": max, "description": d}
	}
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"property", "value", "source", "confidence"},
		"properties": openapi.Schema{
			"property":   openapi.Schema{"type": "string", "enum": enums(props), "description": "the attribute"},
			"value":      openapi.Schema{"description": "a value of the attribute's type (as the record's field)"},
			"provider":   nullableStr(str(200, "who found it")),
			"source":     openapi.Schema{"type": "string", "enum": enums(enrichment.Sources)},
			"sourceId":   nullableStr(str(256, "where it was found; for a `document` source, the id of a document")),
			"confidence": openapi.Schema{"type": "number", "minimum": 0, "maximum": 100},
			"capturedOn": openapi.Schema{"type": []any{"string", "null"}, "format": "date-time", "description": "when it was found; now when not sent"},
		}}
}

func nullableStr(s openapi.Schema) openapi.Schema {
	s["type"] = []any{"string", "null"}
	return s
}

func metricPointInput() openapi.Schema {
	str := func(d string) openapi.Schema { return openapi.Schema{"type": "string", "description": d} }
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"resource", "key", "date", "value", "source"},
		"properties": openapi.Schema{
			"resource":   str(metrics.ResourceFormat),
			"key":        str(metrics.KeyFormat),
			"date":       openapi.Schema{"type": "string", "format": "date"},
			"value":      openapi.Schema{"type": "number"},
			"unit":       nullableStr(openapi.Schema{"maxLength": 50}),
			"currency":   nullableStr(openapi.Schema{"pattern": "^[A-Z]{3}$", "description": "an ISO 4217 code"}),
			"source":     openapi.Schema{"type": "string", "minLength": 1, "maxLength": 100},
			"confidence": openapi.Schema{"type": []any{"number", "null"}, "minimum": 0, "maximum": 100},
			"dealId":     nullableStr(openapi.Schema{"description": "the deal the point belongs to"}),
			"periodType": openapi.Schema{"type": []any{"string", "null"}, "enum": append(enums(metrics.PeriodTypes), nil)},
		}}
}

func metricQuery() openapi.Schema {
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"resource", "key"},
		"properties": openapi.Schema{
			"resource":    openapi.Schema{"type": "string", "description": metrics.ResourceFormat},
			"key":         openapi.Schema{"type": "string", "description": metrics.KeyFormat},
			"dealContext": nullableStr(openapi.Schema{"description": "a deal id: its points take precedence over general points"}),
			"policy":      openapi.Schema{"type": []any{"string", "null"}, "enum": append(enums(metrics.Policies), nil)},
			"period": openapi.Schema{"type": []any{"object", "null"}, "additionalProperties": false, "properties": openapi.Schema{
				"start":         openapi.Schema{"type": []any{"string", "null"}, "format": "date"},
				"end":           openapi.Schema{"type": []any{"string", "null"}, "format": "date"},
				"granularity":   openapi.Schema{"type": []any{"string", "null"}, "enum": append(enums(metrics.Granularities), nil)},
				"sources":       openapi.Schema{"type": []any{"array", "null"}, "items": openapi.Schema{"type": "string"}, "maxItems": 50},
				"minConfidence": openapi.Schema{"type": []any{"number", "null"}, "minimum": 0, "maximum": 100},
			}},
		}}
}

func itoa(n int) string { return strconv.Itoa(n) }
