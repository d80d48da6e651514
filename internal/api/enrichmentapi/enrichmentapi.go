// Package enrichmentapi serves a record's candidate values: adding, listing,
// pinning and deleting them (package enrichment).
package enrichmentapi

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// path is the path of a record's candidate values.
const path = "/v1/enrichments/resources/{resourceType}/{resourceId}"

// API serves the feature's routes.
type API struct {
	enrichment *enrichment.Service
}

// New returns the API over its services.
func New(enrichment *enrichment.Service) *API {
	return &API{enrichment: enrichment}
}

// Feature is the enrichment candidates, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("enrichment", Operations, Schemas, func(d service.Deps) *API { return New(d.Enrichment) })

// Operations are a record's candidate values: add, page, pin,
// delete.
func Operations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(lambdas.Data, http.MethodPost, path, (*API).addEnrichments).InTopic("enrichment").Answers(routes.AnswerWritten).Doc(func(op *openapi.Operation) {
			op.Summary, op.Status = "Add candidate values of a record's attributes", http.StatusCreated
			op.Description = "A batch of candidates, reconciled with the others at once; see docs/enrichment.md."
			op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"values"},
				"properties": openapi.Schema{"values": openapi.Schema{"type": "array", "minItems": 1, "maxItems": enrichment.MaxBatch, "items": openapi.Ref("EnrichmentValueInput")}}}
			op.Data = operation.ArrayOf("EnrichmentValue")
		}),
		operation.Declare(lambdas.Data, http.MethodGet, path, (*API).listEnrichments).InTopic("enrichment").Answers(routes.AnswerPaged).
			AsTool("get_enrichment_candidates", "List the candidate values of a record's enrichable attributes (resourceType companies), "+
				"by property and rank, with source, confidence and pin: all of them, unless they would pass the answer's byte budget "+
				"(then follow nextCursor with cursor). The record's own attributes hold the winners.").
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Data = "List a record's candidate values", operation.ArrayOf("EnrichmentValue")
				op.Description = "Every candidate value of the record's enrichable attributes, by property and, within one, " +
					"in rank order (the first is the attribute's value). Only when they would take the answer past its byte budget " +
					"(" + strconv.Itoa(httpapi.ListBudget) + " bytes) does it end early: then `X-Next-Cursor` holds the `cursor` of the rest " +
					"and `Link` its URL. `limit` and `page` still cut it into pages of that size."
				op.Query, op.Paged = listQuery(), true
			}),
		operation.Declare(lambdas.Data, http.MethodPatch, path+"/{valueId}", (*API).pinEnrichment).InTopic("enrichment").Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
			op.Summary, op.Preconditioned = "Pin or unpin a candidate value", false
			op.Description = "A pinned candidate wins its attribute (the most recently pinned first); the record is reconciled at once."
			op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"pinned"},
				"properties": openapi.Schema{"pinned": openapi.Schema{"type": "boolean"}}}
			op.Data = openapi.Ref("EnrichmentValue")
		}),
		operation.Declare(lambdas.Data, http.MethodDelete, path+"/{valueId}", (*API).deleteEnrichment).InTopic("enrichment").Doc(func(op *openapi.Operation) {
			op.Summary, op.Preconditioned = "Delete a candidate value", false
			op.Description = "Deletes the candidate (204); the attribute is reconciled from the others, or cleared when none is left."
		}),
	}
}

// addEnrichments stores a batch of candidate values: 201 {data: [value]}.
func (a *API) addEnrichments(w http.ResponseWriter, r *http.Request) {
	typ := r.PathValue("resourceType")
	if _, ok := a.enrichment.Type(typ); !ok {
		httpapi.Error(w, r, apperr.ErrNotFound)
		return
	}
	in, ok := httpapi.DecodeBody(w, r, func(b []byte) ([]enrichment.Input, error) { return a.enrichment.Decode(typ, b) })
	if !ok {
		return
	}
	httpapi.Reply(w, r, http.StatusCreated)(a.enrichment.Add(r.Context(), httpapi.Caller(r).OrgID, typ, r.PathValue("resourceId"), in))
}

// enrichmentListParams are the query parameters of a record's listing:
// its order is the ranking, so it takes only a cursor (where the previous
// answer, cut at the byte budget, ended) and, kept for the clients that
// paged it, limit and page.
var enrichmentListParams = []string{"limit", "page", "cursor"}

// listEnrichments answers the record's candidates, {data: [value]}, by
// property and rank: every one, unless they would pass the answer's byte
// budget (httpapi.List ends it there, with the next-page headers); with
// limit, at most that many, page by page.
func (a *API) listEnrichments(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	for name := range query {
		if !slices.Contains(enrichmentListParams, name) {
			httpapi.Error(w, r, apperr.InvalidQuery(name, "is not accepted; accepted parameters are %s (candidates are listed by property and rank)",
				strings.Join(enrichmentListParams, ", ")))
			return
		}
	}
	if query.Has("page") && !query.Has("limit") {
		httpapi.Error(w, r, apperr.InvalidQuery("page", "needs limit: without limit the listing answers every candidate "+
			"(up to the answer's byte budget, then X-Next-Cursor)"))
		return
	}
	q, ok := httpapi.PageQuery(w, r)
	if !ok {
		return
	}
	if !query.Has("limit") {
		q.Limit = 0 // every candidate
	}
	httpapi.ReplyPage[enrichment.Value](w, r)(a.enrichment.Page(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("resourceType"), r.PathValue("resourceId"), q))
}

// pinEnrichment pins or unpins a value: {"pinned": bool}.
func (a *API) pinEnrichment(w http.ResponseWriter, r *http.Request) {
	pinned, ok := httpapi.DecodeBody(w, r, func(b []byte) (bool, error) {
		o, err := jsonbody.ParseObject(b, "pinned")
		if err != nil {
			return false, err
		}
		p, err := o.Bool("pinned")
		if err == nil && !p.Set {
			err = apperr.Invalid("pinned", "is required: true or false")
		}
		return p.Value, err
	})
	if !ok {
		return
	}
	httpapi.Reply(w, r, http.StatusOK)(a.enrichment.Pin(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("resourceType"),
		r.PathValue("resourceId"), r.PathValue("valueId"), pinned))
}

// deleteEnrichment removes a value: 204.
func (a *API) deleteEnrichment(w http.ResponseWriter, r *http.Request) {
	httpapi.NoContent(w, r, a.enrichment.Delete(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("resourceType"),
		r.PathValue("resourceId"), r.PathValue("valueId")))
}

// listQuery are the parameters of a record's candidate values:
// the cursor of an answer cut at the byte budget, and limit and page,
// which no longer have defaults (the ranking is the order, so none of
// the order's).
func listQuery() []openapi.Param {
	var out []openapi.Param
	for _, p := range operation.ListQuery(nil, nil) {
		if !slices.Contains(enrichmentListParams, p.Name) {
			continue
		}
		switch p.Name {
		case "cursor":
			p.Description = "the `X-Next-Cursor` of the previous answer (bound to this record's candidates)"
		case "limit":
			p.Description = "at most this many candidates, 1 to " + strconv.Itoa(httpapi.MaxLimit) + " (outside: clamped); default: every one"
			p.Schema = openapi.Schema{"type": "integer"}
		case "page":
			p.Description = "with `limit`, the page of that size, 1 to " + strconv.Itoa(httpapi.MaxPage) + " (400 without `limit`)"
			p.Schema = openapi.Schema{"type": "integer", "minimum": 1, "maximum": httpapi.MaxPage}
		}
		out = append(out, p)
	}
	return out
}

// valueInput is the schema of a candidate value to add.
func valueInput() openapi.Schema {
	props := slices.Sorted(slices.Values(enrichment.CompanyProperties))
	str := func(max int, d string) openapi.Schema {
		return openapi.Schema{"type": "string", "maxLength": max, "description": d}
	}
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"property", "value", "source", "confidence"},
		"properties": openapi.Schema{
			"property":   openapi.Schema{"type": "string", "enum": operation.Enums(props), "description": "the attribute"},
			"value":      openapi.Schema{"description": "a value of the attribute's type (as the record's field)"},
			"provider":   operation.NullableString(str(200, "who found it")),
			"source":     openapi.Schema{"type": "string", "enum": operation.Enums(enrichment.Sources)},
			"sourceId":   operation.NullableString(str(256, "where it was found; for a `document` source, the id of a document")),
			"confidence": openapi.Schema{"type": "number", "minimum": 0, "maximum": 100},
			"capturedOn": openapi.Schema{"type": []any{"string", "null"}, "format": "date-time", "description": "when it was found; now when not sent"},
		}}
}

// Schemas adds the candidate values' component schemas to out.
func Schemas(out map[string]openapi.Schema) {
	out["EnrichmentValue"] = openapi.TypeOf(reflect.TypeFor[enrichment.Value]())
	out["EnrichmentValueInput"] = valueInput()
}
