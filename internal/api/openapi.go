package api

import (
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi"
	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
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

func buildOpenAPI() ([]byte, error) {
	var ops []openapi.Operation
	for _, op := range registry() {
		ops = append(ops, operations(op)...)
	}
	topics, err := tags()
	if err != nil {
		return nil, err
	}
	doc, err := openapi.Document(ops, componentSchemas(), securitySchemes, openapi.Info{
		Title: "Sourcebase API",
		Description: "Financial-research data for private-markets firms: companies, deals, people, documents, " +
			"enrichment, metric series, scores and workflows. Every `/v1` route needs the two credential headers " +
			"`" + openapi.HeaderClientID + "` and `" + openapi.HeaderAPIKey + "` (except this document, " +
			"`GET " + OpenAPIPath + "`, which is public); success bodies are `{\"data\": ...}`, errors `{\"error\": \"...\"}`. " +
			"Lists page with `limit`, `page` and the opaque `cursor` of `X-Next-Cursor`.",
		URL:     "https://github.com/sourcebase/sourcebase",
		License: "Proprietary", LicenseID: "LicenseRef-Proprietary",
		Tags: topics,
	})
	if err != nil {
		return nil, err
	}
	// Every number a double, every integer an int64, stated (see
	// openapi.NumberFormat): a generated client reads them whole.
	return openapi.NumberFormats(doc)
}

// tags are the reference's groups (kinds.Topics: the hand-written
// routes.Topics, and a kind of record's from its declaration); the error
// names the file to change when a route is under none or one has no route.
func tags() ([]openapi.Tag, error) {
	topics, err := kinds.Topics()
	if err == nil {
		err = routes.CheckTopics(topics, Routes())
	}
	if err != nil {
		return nil, err
	}
	out := make([]openapi.Tag, len(topics))
	for i, t := range topics {
		out[i] = openapi.Tag{Name: t.Name, Title: t.Title, Description: t.About, Section: t.Section}
	}
	return out, nil
}

// componentSchemas are every feature's component schemas.
func componentSchemas() map[string]openapi.Schema {
	out := map[string]openapi.Schema{}
	for _, f := range features() {
		if f.Schemas != nil {
			f.Schemas(out)
		}
	}
	return out
}

var securitySchemes = map[string]openapi.Schema{
	"clientId": {"type": "apiKey", "in": "header", "name": openapi.HeaderClientID,
		"description": "the key's public client id; sent together with `" + openapi.HeaderAPIKey + "`"},
	"apiKey": {"type": "apiKey", "in": "header", "name": openapi.HeaderAPIKey,
		"description": "the key's secret, shown once when the key is made"},
	"webhookSharedSecret": {"type": "apiKey", "in": "header", "name": inbound.SharedSecret.DefaultHeader(),
		"description": "shared-secret scheme (the default): the header holds the trigger's secret, compared in constant time. " +
			"`Authorization: Bearer <secret>` is accepted too while the trigger uses the default header name. " +
			"A trigger's `headerName` replaces the header: the delivery's empty security requirement (`{}`) stands for it."},
	"webhookBearer": {"type": "http", "scheme": "bearer",
		"description": "shared-secret scheme, default header name only: `Authorization: Bearer <secret>`"},
	"webhookHmacSha256": {"type": "apiKey", "in": "header", "name": inbound.HMACSHA256.DefaultHeader(),
		"description": "hmac-sha256 scheme: the header holds `sha256=<hex>` (or the bare hex) of HMAC-SHA256(secret, the raw body " +
			"exactly as sent). A trigger's `headerName` replaces the header (such as `X-Hub-Signature-256`): the delivery's empty " +
			"security requirement (`{}`) stands for it."},
}

// operations describe op: one operation, but for the get of a declared
// resource with MultiGet, which also serves GET /v1/<name>/ids={ids}
// (multiGetOperation): neither the router's patterns nor API Gateway's
// routes match a part of a path segment, so one route serves both, and the
// document, which can, names them apart.
func operations(op operation.Operation) []openapi.Operation {
	doc := describe(op)
	if d := kinds.Find(op.Resource); op.Generic && d != nil && d.MultiGet && op.Method == http.MethodGet && op.Path == "/v1/"+d.Name+"/{id}" {
		return []openapi.Operation{doc, multiGetOperation(op, d)}
	}
	return []openapi.Operation{doc}
}

// multiGetOperation describes GET /v1/<name>/ids={ids} of d, served by the
// operation of GET /v1/<name>/{id}.
func multiGetOperation(get operation.Operation, d *resource.Def) openapi.Operation {
	op := describe(get)
	op.Path = recordsapi.MultiGetPath(d)
	op.Summary = "Get several " + d.Name + " by id"
	op.Description = "The " + d.Name + " with these ids in the key's organization, in the order asked, each once, as an array; " +
		"an id with no record in the organization is left out. Up to " + itoa(store.MaxBatch) + " ids, comma-separated: `" +
		resource.MultiGetPrefix + "<id>,<id>,...`. An answer that would exceed the response budget is a 400 naming `ids`: ask for fewer."
	op.Data, op.ETag = openapi.Schema{"type": "array", "items": openapi.Ref(openapi.SchemaName(d))}, false
	op.PathParams = map[string]openapi.Param{"ids": {Description: "the ids, comma-separated: 1 to " + itoa(store.MaxBatch) + ", none empty or blank",
		Schema: multiGetIDs()}}
	return op
}

// multiGetIDs is the schema of the ids of GET /v1/<name>/ids={ids}: one
// string, the ids joined by commas (resource.Service.GetByIDs splits it),
// rather than an array: tools read a path's array parameter each their own
// way (Prism's validating proxy failed on one). The pattern says what
// GetByIDs refuses (400): an empty or blank id, more than store.MaxBatch;
// each id is its leading blanks then a character that is neither blank
// nor a comma (so that no string matches two ways, which a backtracking
// matcher would pay for), then anything but a comma. The router answers a
// longer segment than resource.MaxMultiGetSegment 404.
func multiGetIDs() openapi.Schema {
	id := `\s*[^,\s][^,]*`
	return openapi.Schema{"type": "string", "minLength": 1, "maxLength": resource.MaxMultiGetSegment - len(resource.MultiGetPrefix),
		"pattern": "^" + id + "(," + id + "){0," + itoa(store.MaxBatch-1) + "}$", "examples": []any{"doc_01,doc_02"}}
}

// describe describes op: what its route and policies imply, then its
// declared text and shapes.
func describe(o operation.Operation) openapi.Operation {
	op := openapi.Operation{Method: o.Method, Path: o.Path, Function: o.Function, Tag: o.TopicName(), Status: http.StatusOK,
		Idempotent:     o.Idempotent,
		Preconditioned: o.Conditional(),
		Public:         !o.Authenticated()}
	if o.Method == http.MethodDelete {
		op.Status = http.StatusNoContent
	}
	o.Describe(&op)
	if op.Summary == "" {
		panic("api: no summary for " + o.Pattern())
	}
	for _, status := range roleAndWriteStatuses(o) {
		if !slices.Contains(op.Errors, status) {
			op.Errors = append(op.Errors, status)
		}
	}
	return op
}

// roleAndWriteStatuses are the error statuses o can answer by its role and
// its kind of write, whatever its own text declares:
//   - 403: an admin-only route refuses a member key (the router, before
//     the route runs), and a route that hides from member keys what only
//     admin keys read refuses one a request naming it (hidesAdminOnly: the
//     change history's events of keys and webhook endpoints);
//   - 409: a route that writes (any method but GET, unless ReadOnly) can
//     meet another write of the same record (concurrent_write), a write
//     of a unique value another record holds, the delete of a record
//     still referenced, and, for a POST, an Idempotency-Key whose first
//     request still runs (idempotency_in_progress). The MCP endpoint
//     (RateMessage) writes only through its tools' REST operations and
//     answers their failures in JSON-RPC, never 409.
func roleAndWriteStatuses(o operation.Operation) []int {
	var out []int
	if o.Admin != "" || o.Hidden {
		out = append(out, http.StatusForbidden)
	}
	if o.Method != http.MethodGet && !o.ReadOnly && o.Rate != routes.RateMessage {
		out = append(out, http.StatusConflict)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
