package apperr

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Code is an error's stable, machine-readable name, answered in the
// X-Error-Code header beside the {"error": ...} body, so that a client
// can branch on it without parsing messages. The set is closed: Codes
// lists every code the service answers, and a code, once published, keeps
// its meaning.
type Code string

// The codes, in the order of Codes.
const (
	CodeInvalidRequest Code = "invalid_request"
	CodeInvalidBody    Code = "invalid_body"
	CodeInvalidQuery   Code = "invalid_query"
	CodeInvalidPath    Code = "invalid_path"
	CodeInvalidHeader  Code = "invalid_header"
	CodeBatchTooLarge  Code = "batch_too_large"

	CodeUnauthenticated  Code = "unauthenticated"
	CodeInvalidSignature Code = "invalid_signature"
	CodeForbidden        Code = "forbidden"
	// CodeOrganizationSuspended: the key's (or the trigger's)
	// organization is suspended by an operator (admin suspend-org).
	CodeOrganizationSuspended Code = "organization_suspended"

	CodeNotFound         Code = "not_found"
	CodeNoSuchEndpoint   Code = "no_such_endpoint"
	CodeMethodNotAllowed Code = "method_not_allowed"

	CodeConflict              Code = "conflict"
	CodeUniqueViolation       Code = "unique_violation"
	CodeReferenced            Code = "referenced"
	CodeConcurrentWrite       Code = "concurrent_write"
	CodeIdempotencyInProgress Code = "idempotency_in_progress"

	CodePreconditionFailed   Code = "precondition_failed"
	CodePayloadTooLarge      Code = "payload_too_large"
	CodeRecordTooLarge       Code = "record_too_large"
	CodeUnsupportedMediaType Code = "unsupported_media_type"
	CodeIdempotencyKeyReused Code = "idempotency_key_reused"
	CodeRateLimited          Code = "rate_limited"

	CodeInternal Code = "internal"
	// CodeSemanticOff: the deployment has no embedding model (EMBEDDINGS=off).
	CodeSemanticOff    Code = "semantic_off"
	CodeUpstreamFailed Code = "upstream_failed"
	CodeUnavailable    Code = "unavailable"
)

// CodeInfo describes a code: the status it is answered with, when, and
// what X-Error-Param names with it ("" when it never has one).
type CodeInfo struct {
	Code   Code
	Status int
	When   string
	Param  string
}

// Codes is the closed set of error codes, the one list that the error
// writer (httpapi), the OpenAPI document's ErrorCode schema and
// docs/errors.md follow. Each code has one status; the first code of a
// status is that status's generic code (StatusCode), answered when
// nothing more specific is known (a refusal of the MCP SDK's transport).
var Codes = []CodeInfo{
	{CodeInvalidRequest, http.StatusBadRequest,
		"the request breaks a rule of the transport that is none of the ones below (on `/mcp`: an `Accept` or `Mcp-Session-Id` header the MCP transport refuses, a payload that is no JSON-RPC message)", ""},
	{CodeInvalidBody, http.StatusBadRequest,
		"a body that is not JSON, or a field of it that breaks a rule (wrong type, unknown, missing, out of range, a number beyond 2^53 − 1); a metric series whose answer would exceed 5 MB (`period`)", "the field's path: `website`, `location.city`, `points[1].value`; absent when the whole body is at fault"},
	{CodeInvalidQuery, http.StatusBadRequest,
		"a query parameter that is unknown, given twice or breaks a rule", "the parameter: `page`, `colour`"},
	{CodeInvalidPath, http.StatusBadRequest,
		"a part of the path that breaks a rule: `GET /v1/documents/ids=…` naming too many ids or an empty one, or records over one answer's 5 MB", "the part: `ids`"},
	{CodeInvalidHeader, http.StatusBadRequest,
		"a request header that breaks a rule", "the header: `Idempotency-Key`"},
	{CodeBatchTooLarge, http.StatusBadRequest,
		"`POST /mcp` with a batch of more than 10 JSON-RPC messages (the body is a JSON-RPC error); send smaller batches", ""},
	{CodeUnauthenticated, http.StatusUnauthorized,
		"missing, unknown or wrong credentials on `/v1` (the body is exactly `invalid api key or clientId`)", ""},
	{CodeInvalidSignature, http.StatusUnauthorized,
		"a webhook delivery whose signature check fails, or whose slug leads to no trigger (answered alike)", ""},
	{CodeForbidden, http.StatusForbidden,
		"the key's role may not do this: managing API keys, managing webhook endpoints and rotating a webhook secret need an admin key", ""},
	{CodeOrganizationSuspended, http.StatusForbidden,
		"the key's organization (for a webhook, the trigger's) is suspended by the service's operator: every key and trigger of it is refused, its data kept, until the operator resumes it; ask them", ""},
	{CodeNotFound, http.StatusNotFound,
		"no such record in the key's organization (or a path parameter longer than any id)", ""},
	{CodeNoSuchEndpoint, http.StatusNotFound,
		"no route serves this method and path (an unknown or unclean path)", ""},
	{CodeMethodNotAllowed, http.StatusMethodNotAllowed,
		"a known path with another method; `Allow` lists the methods", ""},
	{CodeConflict, http.StatusConflict,
		"the write conflicts with the stored state: a run already retried or not failed, the organization's last admin key, its key limit, a deleted framework", ""},
	{CodeUniqueViolation, http.StatusConflict,
		"a value that must be unique in the organization is already used by another record (the message names it)", "the unique field: `externalId`, `website`"},
	{CodeReferenced, http.StatusConflict,
		"a record still referenced by another is deleted (the message names the other); change or delete that first", ""},
	{CodeConcurrentWrite, http.StatusConflict,
		"another request changed the record (or the key's organization) at the same time; read again and retry", ""},
	{CodeIdempotencyInProgress, http.StatusConflict,
		"a request with this `Idempotency-Key` is still running; retry after `Retry-After`", ""},
	{CodePreconditionFailed, http.StatusPreconditionFailed,
		"`If-Match` names another version than the stored one", ""},
	{CodePayloadTooLarge, http.StatusRequestEntityTooLarge,
		"a body over 1 MiB; a webhook payload over 128 KiB of run input", ""},
	{CodeRecordTooLarge, http.StatusRequestEntityTooLarge,
		"the record would exceed the storage's item size limit", ""},
	{CodeUnsupportedMediaType, http.StatusUnsupportedMediaType,
		"a body whose `Content-Type` is not `application/json`", ""},
	{CodeIdempotencyKeyReused, http.StatusUnprocessableEntity,
		"an `Idempotency-Key` reused with another body; use a new key", ""},
	{CodeRateLimited, http.StatusTooManyRequests,
		"over the rate limit of the key, its organization or the webhook trigger (the message says which); wait `Retry-After` seconds", ""},
	{CodeInternal, http.StatusInternalServerError,
		"an unexpected failure, logged with the request id", ""},
	{CodeSemanticOff, http.StatusNotImplemented,
		"similar records need an embedding model, and the deployment runs without one (`EMBEDDINGS=off`)", ""},
	{CodeUpstreamFailed, http.StatusBadGateway,
		"the REST call of an MCP tool's search could not reach the search function (the tool's result says so; `/mcp` itself answers `200`)", ""},
	{CodeUnavailable, http.StatusServiceUnavailable,
		"the storage did not answer in time; retry after `Retry-After` seconds", ""},
}

// codeInfo holds Codes by code.
var codeInfo = func() map[Code]CodeInfo {
	m := make(map[Code]CodeInfo, len(Codes))
	for _, c := range Codes {
		m[c.Code] = c
	}
	return m
}()

// Lookup returns the description of c; false when c is none of Codes.
func Lookup(c Code) (CodeInfo, bool) {
	info, ok := codeInfo[c]
	return info, ok
}

// Status is the HTTP status c is answered with (500 for a code that is
// none of Codes).
func (c Code) Status() int {
	if info, ok := codeInfo[c]; ok {
		return info.Status
	}
	return http.StatusInternalServerError
}

// StatusCode is the generic code of an error status (the first of Codes
// with it): the code of an answer that says no more than its status. A
// status none of Codes has is invalid_request (4xx) or internal.
func StatusCode(status int) Code {
	for _, c := range Codes {
		if c.Status == status {
			return c.Code
		}
	}
	if status >= 400 && status < 500 {
		return CodeInvalidRequest
	}
	return CodeInternal
}

// CodeOf is the code of err and the field at fault ("" when none): the
// code an error of this package (or another error with an ErrorCode
// method, such as a store.UniqueError) carries, else the one of its kind.
// It is "" for an error of no known kind (an internal failure).
func CodeOf(err error) (code Code, param string) {
	var coded interface{ ErrorCode() Code }
	if errors.As(err, &coded) {
		if p, ok := coded.(interface{ ErrorParam() string }); ok {
			param = p.ErrorParam()
		}
		return coded.ErrorCode(), param
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return CodeNotFound, ""
	case errors.Is(err, ErrForbidden):
		return CodeForbidden, ""
	case errors.Is(err, ErrConflict):
		return CodeConflict, ""
	case errors.Is(err, ErrTooLarge):
		return CodePayloadTooLarge, ""
	case errors.Is(err, ErrPreconditionFailed):
		return CodePreconditionFailed, ""
	case errors.Is(err, ErrUnavailable):
		return CodeUnavailable, ""
	}
	return "", ""
}

// Markdown is the table of docs/errors.md between "<!-- codes -->" and
// "<!-- /codes -->": one row per code of Codes.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| `X-Error-Code` | Status | When | `X-Error-Param` |\n|---|---|---|---|\n")
	for _, c := range Codes {
		param := "—"
		if c.Param != "" {
			param = c.Param
		}
		fmt.Fprintf(&b, "| `%s` | `%d` | %s | %s |\n", c.Code, c.Status, c.When, param)
	}
	return b.String()
}
