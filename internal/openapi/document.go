package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Version is the interface's version, the document's info.version.
const Version = "1.0.0"

// Credential headers of every /v1 route but the document's own.
const (
	HeaderClientID = "x-service-client-id"
	HeaderAPIKey   = "x-service-api-key"
)

// AnyBodyExtension marks an operation whose body may be any bytes of any
// media type (a webhook's payload): there is no schema to check it by.
const AnyBodyExtension = "x-any-body"

// CommaSeparated is the extension of a string schema whose value lists
// values separated by commas (a list's sort=, fields=, and the values of
// a filter's in): its value is the array schema of those values. Clients
// that take arguments as JSON (the MCP tools) take the array, and send
// its elements joined by commas.
const CommaSeparated = "x-comma-separated"

// Operation describes one route for the document.
type Operation struct {
	Method, Path string
	Function     string // the function serving it (x-function)
	// Tag is the group of the reference it is listed under (one of
	// Info.Tags).
	Tag         string
	Summary     string
	Description string
	// Public routes need no credentials (the health check, the document,
	// the webhook, which has its own signature check).
	Public bool
	// Query parameters; the path's are derived from Path (a string, unless
	// PathParams describes it).
	Query      []Param
	PathParams map[string]Param
	// Headers the route reads besides the credentials.
	Headers []Param
	// Body is the request body's schema; nil: none. BodyOptional: an
	// empty body is accepted (a search, a run's start).
	Body         Schema
	BodyOptional bool
	// AnyMedia bodies may be of any media type (a webhook's payload).
	AnyMedia bool
	// Status is the success status; Data the schema of its {data} (nil:
	// no body, as 204). Raw answers Data as the whole body, no envelope.
	Status int
	Data   Schema
	Raw    bool
	// AlsoStatus is another success status answering the same body (200
	// for an add that finds the record already there).
	AlsoStatus int
	// Paged lists answer the next-page headers.
	Paged bool
	// ETag: the answer carries the record's version.
	ETag bool
	// NotModified: a GET whose If-None-Match names the current ETag is
	// answered 304 without a body.
	NotModified bool
	// Errors are the error statuses beyond the ones every route of its kind
	// can answer (see errorStatuses).
	Errors []int
	// ResponseHeaders of the success answer beyond the paging and ETag ones.
	ResponseHeaders map[string]Param
	// Idempotent POSTs keep Idempotency-Key answers (every authenticated
	// POST that changes something).
	Idempotent bool
	// Preconditioned writes take If-Match.
	Preconditioned bool
	// Example of a body, when the schema's own examples are not enough.
	Example any
	// Security overrides the credential headers (the webhook's schemes).
	Security []map[string][]string
	// ErrorBodies are error statuses whose body may be another than the
	// service's {error} (the MCP endpoint's JSON-RPC errors): that body's
	// schema, by status.
	ErrorBodies map[int]Schema
}

// Param is a parameter of an operation.
type Param struct {
	Name, Description string
	Schema            Schema
	Required          bool
	// Style and Explode say how the value is serialized, when not as
	// the location's default (form, exploded, for a query parameter):
	// "deepObject" with Explode for an object sent as name[key]=value
	// (a list's filter[field][op]=value).
	Style   string
	Explode bool
}

// Document is the OpenAPI 3.1 document of ops, with components holding
// the named schemas (records and other shared objects) and the security
// schemes. It is deterministic: the same ops give the same bytes.
func Document(ops []Operation, schemas map[string]Schema, securitySchemes map[string]Schema, info Info) ([]byte, error) {
	paths := map[string]map[string]any{}
	tags := map[string]string{} // tag -> the first operation listed under it
	for _, op := range ops {
		item := paths[op.Path]
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		m := strings.ToLower(op.Method)
		if _, dup := item[m]; dup {
			return nil, fmt.Errorf("openapi: %s %s declared twice", op.Method, op.Path)
		}
		item[m] = op.object()
		if _, ok := tags[op.Tag]; !ok {
			tags[op.Tag] = op.Method + " " + op.Path
		}
	}
	var tagList, sections []any
	section := map[string]int{}
	for _, t := range info.Tags {
		if _, ok := tags[t.Name]; !ok {
			return nil, fmt.Errorf("openapi: tag %q has no operation", t.Name)
		}
		delete(tags, t.Name)
		tagList = append(tagList, map[string]any{"name": t.Name, "x-displayName": t.Title, "description": t.Description})
		i, ok := section[t.Section]
		if !ok {
			i = len(sections)
			section[t.Section] = i
			sections = append(sections, map[string]any{"name": t.Section, "tags": []any{}})
		}
		g := sections[i].(map[string]any)
		g["tags"] = append(g["tags"].([]any), t.Name)
	}
	for _, t := range slices.Sorted(maps.Keys(tags)) {
		return nil, fmt.Errorf("openapi: %s is listed under tag %q, which is not one of the document's tags (Info.Tags)", tags[t], t)
	}
	headerComponents := headers()
	paramComponents := map[string]any{
		"IdempotencyKey": map[string]any{"name": "Idempotency-Key", "in": "header",
			"description": "makes a retried POST safe: the first answer is kept 24 hours for this key, organization, method and path, and replayed to a repeat with the same body (`Idempotent-Replayed: true`); another body is a 422",
			"schema":      Schema{"type": "string", "minLength": 1, "maxLength": 255}},
		"IfMatch": map[string]any{"name": "If-Match", "in": "header",
			"description": "the `ETag` the change is based on; another stored version is a 412",
			"schema":      Schema{"type": "string"}},
	}
	factorParameters(paths, paramComponents, headerComponents)
	bodyComponents := factorBodies(paths)
	all := map[string]Schema{"Error": errorSchema, "ErrorCode": errorCodeSchema()}
	for k, v := range schemas {
		all[k] = v
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title": info.Title, "version": Version, "description": info.Description,
			"license": map[string]any{"name": info.License, "identifier": info.LicenseID},
			"contact": map[string]any{"name": info.Title, "url": info.URL},
		},
		"servers": []any{map[string]any{"url": "{baseUrl}", "description": "the service's base URL",
			"variables": map[string]any{"baseUrl": map[string]any{"default": "http://localhost:8080",
				"description": "the dev server (make run), or the stack's ApiUrl output"}}}},
		"tags":        tagList,
		"x-tagGroups": sections,
		"paths":       paths,
		"components": map[string]any{
			"schemas":         all,
			"securitySchemes": securitySchemes,
			"responses":       errorResponses(),
			"headers":         headerComponents,
			"parameters":      paramComponents,
			"requestBodies":   bodyComponents,
		},
		"security": []any{map[string]any{"clientId": []any{}, "apiKey": []any{}}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// factorParameters moves every parameter (header, path or query) and
// every response header that three or more operations declare alike (the
// list's limit, cursor and X-Query-Plan, a record's id) into the
// components, each operation then referring to it: a part described once,
// named once in generated clients. A part whose component name another
// form of it already has stays inline, and so does a deepObject
// parameter (the published document leaves those out).
func factorParameters(paths map[string]map[string]any, params, hdrs map[string]any) {
	type use struct {
		v any
		n int
	}
	uses := map[string]*use{}
	key := func(kind, name string, v any) string {
		b, _ := json.Marshal(v)
		return kind + "\x00" + name + "\x00" + string(b)
	}
	each := func(visit func(kind, name string, v any, set func(any))) {
		for _, item := range paths {
			for _, op := range item {
				o, _ := op.(map[string]any)
				if ps, ok := o["parameters"].([]any); ok {
					for i, p := range ps {
						m, _ := p.(map[string]any)
						if m["$ref"] == nil && m["style"] != "deepObject" {
							visit("parameter", m["name"].(string), m, func(r any) { ps[i] = r })
						}
					}
				}
				rs, _ := o["responses"].(map[string]any)
				for _, r := range rs {
					hs, _ := r.(map[string]any)["headers"].(map[string]any)
					for name, h := range hs {
						if m, _ := h.(map[string]any); m["$ref"] == nil {
							visit("header", name, m, func(r any) { hs[name] = r })
						}
					}
				}
			}
		}
	}
	each(func(kind, name string, v any, _ func(any)) {
		k := key(kind, name, v)
		if uses[k] == nil {
			uses[k] = &use{v: v}
		}
		uses[k].n++
	})
	refs := map[string]string{} // key → $ref
	for _, k := range slices.Sorted(maps.Keys(uses)) {
		u := uses[k]
		if u.n < 3 {
			continue
		}
		kind, name, _ := strings.Cut(k, "\x00")
		name, _, _ = strings.Cut(name, "\x00")
		switch kind {
		case "parameter":
			comp := parameterComponent(u.v.(map[string]any))
			if params[comp] != nil {
				continue
			}
			params[comp], refs[k] = u.v, "#/components/parameters/"+comp
		case "header":
			if hdrs[name] != nil {
				continue
			}
			hdrs[name], refs[k] = u.v, "#/components/headers/"+name
		}
	}
	each(func(kind, name string, v any, set func(any)) {
		if r, ok := refs[key(kind, name, v)]; ok {
			set(map[string]any{"$ref": r})
		}
	})
}

// factorBodies moves every request body that two or more operations
// declare alike (a kind's partial update and its upsert by a unique
// field) into the components, named after the first of them by path and
// method (PatchCompaniesByIdBody), each operation then referring to it.
func factorBodies(paths map[string]map[string]any) map[string]any {
	type use struct {
		name string
		ops  []map[string]any
	}
	uses := map[string]*use{}
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		item := paths[path]
		for _, method := range slices.Sorted(maps.Keys(item)) {
			o, _ := item[method].(map[string]any)
			body, ok := o["requestBody"].(map[string]any)
			if !ok || body["$ref"] != nil {
				continue
			}
			b, _ := json.Marshal(body)
			u := uses[string(b)]
			if u == nil {
				id, _ := o["operationId"].(string)
				u = &use{name: upperFirst(id) + "Body"}
				uses[string(b)] = u
			}
			u.ops = append(u.ops, o)
		}
	}
	out := map[string]any{}
	for _, u := range uses {
		if len(u.ops) < 2 {
			continue
		}
		out[u.name] = u.ops[0]["requestBody"]
		for _, o := range u.ops {
			o["requestBody"] = map[string]any{"$ref": "#/components/requestBodies/" + u.name}
		}
	}
	return out
}

// parameterComponent is the component name of a parameter: a header's
// name without dashes (XQueryPlan), a query parameter's with its first
// letter upper-cased (Limit), a path parameter's followed by Path (IdPath).
func parameterComponent(p map[string]any) string {
	name := componentName.ReplaceAllString(p["name"].(string), "")
	switch p["in"] {
	case "header":
		return name
	case "path":
		return upperFirst(name) + "Path"
	}
	return upperFirst(name)
}

// componentName matches what a component's name may not hold.
var componentName = regexp.MustCompile(`[^A-Za-z0-9._]`)

// Info is the document's description.
type Info struct {
	Title, Description, URL string
	License, LicenseID      string
	// Tags are the groups of operations, in the order the reference
	// lists them; every operation's Tag is one, and each has an
	// operation.
	Tags []Tag
}

// Tag is a group of operations: Name is the tag (and the deep link's
// part), Title its displayed name (x-displayName), Section the heading it
// is listed under (x-tagGroups, in order of first use).
type Tag struct {
	Name, Title, Description, Section string
}

var errorSchema = Schema{
	"type": "object", "required": []any{"error"}, "additionalProperties": false,
	"description": "every error answer: one message saying what went wrong and where",
	"properties":  Schema{"error": Schema{"type": "string", "examples": []any{"Invalid request body: website must be a string, not a number"}}},
}

// errorMeaning says when each error status is answered.
var errorMeaning = map[int]string{
	400: "The request is invalid: the message names the parameter or body field and what is wrong.",
	401: "Missing or invalid credentials: exactly `invalid api key or clientId` (for a webhook, a failed signature check or a slug that leads to no trigger: `invalid signature`).",
	403: "The key's role may not do this: managing keys and rotating a webhook secret require an admin key; or the key's organization (for a webhook, the trigger's) is suspended by the operator (`organization_suspended`).",
	404: "No such record in the key's organization (`not found`), or no such endpoint (`no such endpoint: METHOD PATH`).",
	409: "The write conflicts with the stored data: a unique value taken, a record still referenced, a run already retried, the organization's last admin key.",
	412: "`If-Match` names another version than the stored one.",
	413: "The body exceeds 1 MiB, or the record would exceed the storage item limit.",
	415: "The body's `Content-Type` is not `application/json` (a body sent without one, or as curl's default `application/x-www-form-urlencoded`, is read as JSON).",
	422: "An `Idempotency-Key` reused with another body.",
	429: "Over a rate limit: of the API key or of its organization (all its keys together), or for a webhook of the trigger; the message says which. Wait `Retry-After` seconds.",
	500: "An unexpected failure: `internal error`, nothing more.",
	501: "The deployment runs without what the request needs: similar records without an embedding model (`semantic_off`).",
	503: "The storage is temporarily unavailable: try again after `Retry-After` seconds.",
}

// errorCodeSchema is the ErrorCode schema: the closed set of
// X-Error-Code values (apperr.Codes), each with its status and meaning.
func errorCodeSchema() Schema {
	var enum, names []any
	var desc strings.Builder
	desc.WriteString("The stable, machine-readable code of an error answer, in its `X-Error-Code` header (the body stays `{\"error\": \"…\"}`); branch on it, not on the message. The set is closed (docs/errors.md lists it); a new code is an additive change.\n")
	for _, c := range apperr.Codes {
		enum = append(enum, string(c.Code))
		name := "ErrorCode"
		for _, part := range strings.Split(string(c.Code), "_") {
			name += upperFirst(part)
		}
		names = append(names, name)
		fmt.Fprintf(&desc, "\n- `%s` (%d): %s", c.Code, c.Status, c.When)
	}
	// x-enum-varnames: the generated clients' names of the values
	// (ErrorCodeNotFound), which would otherwise be bare (NotFound).
	return Schema{"type": "string", "enum": enum, "description": desc.String(), "x-enum-varnames": names}
}

// errorDescription is the description of an error status's answers: its
// meaning, then the codes it carries.
func errorDescription(status int) string {
	var codes []string
	for _, c := range apperr.Codes {
		if c.Status == status {
			codes = append(codes, "`"+string(c.Code)+"`")
		}
	}
	return errorMeaning[status] + " `X-Error-Code`: " + strings.Join(codes, ", ") + "."
}

// errorHeaders are the headers of every error answer.
func errorHeaders() map[string]any {
	return map[string]any{
		"X-Request-Id":  map[string]any{"$ref": "#/components/headers/X-Request-Id"},
		"X-Error-Code":  map[string]any{"$ref": "#/components/headers/X-Error-Code"},
		"X-Error-Param": map[string]any{"$ref": "#/components/headers/X-Error-Param"},
	}
}

func errorResponses() map[string]any {
	out := map[string]any{}
	for status := range errorMeaning {
		r := map[string]any{
			"description": errorDescription(status),
			"content":     map[string]any{"application/json": map[string]any{"schema": Ref("Error")}},
		}
		hs := errorHeaders()
		if status == 503 || status == 429 {
			hs["Retry-After"] = map[string]any{"$ref": "#/components/headers/Retry-After"}
		}
		if status == 429 {
			for _, h := range rateHeaders {
				hs[h] = map[string]any{"$ref": "#/components/headers/" + h}
			}
		}
		r["headers"] = hs
		out[strconv.Itoa(status)] = r
	}
	return out
}

func headers() map[string]any {
	h := func(desc string, s Schema) map[string]any { return map[string]any{"description": desc, "schema": s} }
	return map[string]any{
		"Retry-After":   h("seconds to wait before trying again", Schema{"type": "integer", "minimum": 0}),
		"X-Next-Cursor": h("the cursor of the next page; absent on the last page", Schema{"type": "string"}),
		"Link":          h("`<url>; rel=\"next\"`: the next page's URL (this request's path and parameters with `cursor`); absent on the last page", Schema{"type": "string"}),
		"ETag":          h("the record's version, for `If-Match`", Schema{"type": "string"}),
		"Idempotent-Replayed": h("`true` when the answer is the one kept for this `Idempotency-Key`",
			Schema{"type": "string", "enum": []any{"true"}}),
		"X-Request-Id": h("the request's id, as logged", Schema{"type": "string"}),
		"X-Error-Code": map[string]any{"description": "the error's code, one of a closed set (ErrorCode): what to branch on", "required": true,
			"schema": Ref("ErrorCode")},
		"X-Error-Param": h("the field or parameter at fault, when one is: a body field's path (`location.city`, `points[1].value`), a query parameter, a part of the path, a header, a unique field; `%`, control and non-ASCII bytes percent-encoded (UTF-8)",
			Schema{"type": "string", "minLength": 1, "maxLength": 256}),
		"X-RateLimit-Limit": h("the requests a minute of the tighter limit: the key's or its organization's, whichever has fewer left (a webhook: the trigger's); on a 429, of the limit that refused",
			Schema{"type": "integer", "minimum": 1}),
		"X-RateLimit-Remaining": h("the requests left in this minute under that limit (across the service's instances, an estimate)",
			Schema{"type": "integer", "minimum": 0}),
		"X-RateLimit-Reset": h("seconds until the minute ends and the count starts again",
			Schema{"type": "integer", "minimum": 0, "maximum": 60}),
	}
}

// rateHeaders are on every answer a rate limit counted.
var rateHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

var pathParam = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// errorStatuses are the error statuses op can answer: those of the shared
// mechanisms it goes through, and its own.
func (op Operation) errorStatuses() []int {
	set := map[int]bool{500: true}
	for _, s := range op.Errors {
		set[s] = true
	}
	if !op.Public || strings.HasPrefix(op.Path, "/webhooks/") {
		set[401] = true
		set[403] = true // the organization suspended (apperr.CodeOrganizationSuspended)
		set[429] = true
	}
	if !op.Public {
		set[400] = true // unknown or malformed query parameters
		set[404] = true // "no such endpoint" of an unclean path
		set[503] = true
	}
	if pathParam.MatchString(op.Path) {
		set[404] = true
	}
	if strings.HasPrefix(op.Path, "/webhooks/") {
		delete(set, 404) // a slug that leads to no trigger is a 401, as a wrong secret
	}
	if op.Body != nil {
		set[400], set[413] = true, true
		if !op.AnyMedia {
			set[415] = true // a Content-Type other than JSON
		}
	}
	if op.Idempotent {
		set[422] = true
	}
	if op.Preconditioned {
		set[412] = true
	}
	out := make([]int, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// object is op's Operation Object.
func (op Operation) object() map[string]any {
	o := map[string]any{
		"operationId": OperationID(op.Method, op.Path),
		"summary":     op.Summary,
		"tags":        []any{op.Tag},
		"x-function":  op.Function,
	}
	if op.Description != "" {
		o["description"] = op.Description
	}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(op.Path, -1) {
		if p, ok := op.PathParams[m[1]]; ok {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": p.Description, "schema": p.Schema})
			continue
		}
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
			"description": "the " + m[1] + " of the record", "schema": Schema{"type": "string", "minLength": 1}})
	}
	for _, p := range op.Query {
		params = append(params, param(p, "query"))
	}
	for _, p := range op.Headers {
		params = append(params, param(p, "header"))
	}
	if op.Idempotent {
		params = append(params, map[string]any{"$ref": "#/components/parameters/IdempotencyKey"})
	}
	if op.Preconditioned {
		params = append(params, map[string]any{"$ref": "#/components/parameters/IfMatch"})
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.Body != nil {
		media := map[string]any{"schema": op.Body}
		if op.Example != nil {
			media["example"] = op.Example
		}
		content := map[string]any{"application/json": media}
		if op.AnyMedia {
			content["*/*"] = map[string]any{"schema": Schema{"description": "the payload as text: the run sees it as a string"}}
		}
		o["requestBody"] = map[string]any{"required": !op.BodyOptional, "content": content}
		if op.AnyMedia {
			o[AnyBodyExtension] = true
		}
	}
	responses := map[string]any{}
	success := map[string]any{"description": http.StatusText(op.Status)}
	if op.Data != nil {
		body := op.Data
		if !op.Raw {
			body = Schema{"type": "object", "required": []any{"data"}, "additionalProperties": false,
				"properties": Schema{"data": op.Data}}
		}
		success["content"] = map[string]any{"application/json": map[string]any{"schema": body}}
	}
	hs := map[string]any{"X-Request-Id": map[string]any{"$ref": "#/components/headers/X-Request-Id"}}
	if !op.Public {
		for _, h := range rateHeaders {
			hs[h] = map[string]any{"$ref": "#/components/headers/" + h}
		}
	}
	if op.Paged {
		hs["X-Next-Cursor"] = map[string]any{"$ref": "#/components/headers/X-Next-Cursor"}
		if op.Method == http.MethodGet { // a POST's next page is asked for with a body
			hs["Link"] = map[string]any{"$ref": "#/components/headers/Link"}
		}
	}
	if op.ETag {
		hs["ETag"] = map[string]any{"$ref": "#/components/headers/ETag"}
	}
	if op.Idempotent {
		hs["Idempotent-Replayed"] = map[string]any{"$ref": "#/components/headers/Idempotent-Replayed"}
	}
	for name, p := range op.ResponseHeaders {
		hs[name] = map[string]any{"description": p.Description, "schema": p.Schema}
	}
	success["headers"] = hs
	responses[strconv.Itoa(op.Status)] = success
	if op.AlsoStatus != 0 {
		also := map[string]any{}
		for k, v := range success {
			also[k] = v
		}
		also["description"] = http.StatusText(op.AlsoStatus)
		responses[strconv.Itoa(op.AlsoStatus)] = also
	}
	if op.NotModified {
		responses["304"] = map[string]any{"description": "Not Modified: the `If-None-Match` request header names the current `ETag`; no body",
			"headers": map[string]any{"ETag": map[string]any{"$ref": "#/components/headers/ETag"},
				"X-Request-Id": map[string]any{"$ref": "#/components/headers/X-Request-Id"}}}
	}
	for _, s := range op.errorStatuses() {
		if other, ok := op.ErrorBodies[s]; ok {
			responses[strconv.Itoa(s)] = map[string]any{"description": errorDescription(s),
				"content": map[string]any{"application/json": map[string]any{"schema": Schema{"oneOf": []any{Ref("Error"), other}}}},
				"headers": errorHeaders()}
			continue
		}
		responses[strconv.Itoa(s)] = map[string]any{"$ref": "#/components/responses/" + strconv.Itoa(s)}
	}
	o["responses"] = responses
	if op.Public {
		o["security"] = []any{}
	}
	if op.Security != nil {
		sec := make([]any, len(op.Security))
		for i, s := range op.Security {
			sec[i] = s
		}
		o["security"] = sec
	}
	return o
}

func param(p Param, in string) map[string]any {
	m := map[string]any{"name": p.Name, "in": in, "schema": p.Schema}
	if p.Description != "" {
		m["description"] = p.Description
	}
	if p.Required {
		m["required"] = true
	}
	if p.Style != "" {
		m["style"], m["explode"] = p.Style, p.Explode
	}
	return m
}

// OperationID names an operation from its method and path:
// GET /v1/companies/{id} -> getCompaniesById.
func OperationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/v1"), "/") {
		if seg == "" {
			continue
		}
		if m := pathParam.FindStringSubmatch(seg); m != nil {
			seg = "By" + upperFirst(m[1])
		}
		for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
			b.WriteString(upperFirst(part))
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
