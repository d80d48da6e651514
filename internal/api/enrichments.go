package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/fn"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/input"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// enrichmentPath is the path of a record's candidate values.
const enrichmentPath = "/v1/enrichments/resources/{resourceType}/{resourceId}"

// enrichmentOperations are a record's candidate values: add, page, pin,
// delete.
func enrichmentOperations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(fn.Data, http.MethodPost, enrichmentPath, (*API).addEnrichments).InTopic("enrichment").Answers(routes.AnswerWritten).Doc(func(op *openapi.Operation) {
			op.Summary, op.Status = "Add candidate values of a record's attributes", http.StatusCreated
			op.Description = "A batch of candidates, reconciled with the others at once; see docs/enrichment.md."
			op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"values"},
				"properties": openapi.Schema{"values": openapi.Schema{"type": "array", "minItems": 1, "maxItems": enrichment.MaxBatch, "items": openapi.Ref("EnrichmentValueInput")}}}
			op.Data = arrayOf("EnrichmentValue")
		}),
		operation.Declare(fn.Data, http.MethodGet, enrichmentPath, (*API).listEnrichments).InTopic("enrichment").Answers(routes.AnswerPaged).
			AsTool("get_enrichment_candidates", "List the candidate values of a record's enrichable attributes (resourceType companies), "+
				"by property and rank, with source, confidence and pin: all of them, unless they would pass the answer's byte budget "+
				"(then follow nextCursor with cursor). The record's own attributes hold the winners.").
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Data = "List a record's candidate values", arrayOf("EnrichmentValue")
				op.Description = "Every candidate value of the record's enrichable attributes, by property and, within one, " +
					"in rank order (the first is the attribute's value). Only when they would take the answer past its byte budget " +
					"(" + itoa(httpapi.ListBudget) + " bytes) does it end early: then `X-Next-Cursor` holds the `cursor` of the rest " +
					"and `Link` its URL. `limit` and `page` still cut it into pages of that size."
				op.Query, op.Paged = enrichmentListQuery(), true
			}),
		operation.Declare(fn.Data, http.MethodPatch, enrichmentPath+"/{valueId}", (*API).pinEnrichment).InTopic("enrichment").Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
			op.Summary, op.Preconditioned = "Pin or unpin a candidate value", false
			op.Description = "A pinned candidate wins its attribute (the most recently pinned first); the record is reconciled at once."
			op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"pinned"},
				"properties": openapi.Schema{"pinned": openapi.Schema{"type": "boolean"}}}
			op.Data = openapi.Ref("EnrichmentValue")
		}),
		operation.Declare(fn.Data, http.MethodDelete, enrichmentPath+"/{valueId}", (*API).deleteEnrichment).InTopic("enrichment").Doc(func(op *openapi.Operation) {
			op.Summary, op.Preconditioned = "Delete a candidate value", false
			op.Description = "Deletes the candidate (204); the attribute is reconciled from the others, or cleared when none is left."
		}),
	}
}

// addEnrichments stores a batch of candidate values: 201 {data: [value]}.
func (a *API) addEnrichments(w http.ResponseWriter, r *http.Request) {
	typ := r.PathValue("resourceType")
	if _, ok := a.d.Enrichment.Type(typ); !ok {
		httpapi.Error(w, r, apperr.ErrNotFound)
		return
	}
	in, ok := httpapi.DecodeBody(w, r, func(b []byte) ([]enrichment.Input, error) { return a.d.Enrichment.Decode(typ, b) })
	if !ok {
		return
	}
	httpapi.Reply(w, r, http.StatusCreated)(a.d.Enrichment.Add(r.Context(), httpapi.Caller(r).OrgID, typ, r.PathValue("resourceId"), in))
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
	httpapi.ReplyPage[enrichment.Value](w, r)(a.d.Enrichment.Page(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("resourceType"), r.PathValue("resourceId"), q))
}

// pinEnrichment pins or unpins a value: {"pinned": bool}.
func (a *API) pinEnrichment(w http.ResponseWriter, r *http.Request) {
	pinned, ok := httpapi.DecodeBody(w, r, func(b []byte) (bool, error) {
		o, err := input.ParseObject(b, "pinned")
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
	httpapi.Reply(w, r, http.StatusOK)(a.d.Enrichment.Pin(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("resourceType"),
		r.PathValue("resourceId"), r.PathValue("valueId"), pinned))
}

// deleteEnrichment removes a value: 204.
func (a *API) deleteEnrichment(w http.ResponseWriter, r *http.Request) {
	httpapi.NoContent(w, r, a.d.Enrichment.Delete(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("resourceType"),
		r.PathValue("resourceId"), r.PathValue("valueId")))
}
