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
	"github.com/sourcebase/sourcebase/internal/routes"
)

// enrichmentPath is the path of a record's candidate values.
const enrichmentPath = "/v1/enrichments/resources/{resourceType}/{resourceId}"

// enrichmentEndpoints are the enrichment routes of the data group.
func (a *API) enrichmentEndpoints() []endpoint {
	return []endpoint{
		{routes.Route{Group: fn.Data, Method: http.MethodPost, Path: enrichmentPath}, http.HandlerFunc(a.addEnrichments)},
		{routes.Route{Group: fn.Data, Method: http.MethodGet, Path: enrichmentPath}, http.HandlerFunc(a.listEnrichments)},
		{routes.Route{Group: fn.Data, Method: http.MethodPatch, Path: enrichmentPath + "/{valueId}"}, http.HandlerFunc(a.pinEnrichment)},
		{routes.Route{Group: fn.Data, Method: http.MethodDelete, Path: enrichmentPath + "/{valueId}"}, http.HandlerFunc(a.deleteEnrichment)},
	}
}

// addEnrichments stores a batch of candidate values: 201 {data: [value]}.
func (a *API) addEnrichments(w http.ResponseWriter, r *http.Request) {
	typ := r.PathValue("resourceType")
	if _, ok := a.d.Enrichment.Type(typ); !ok {
		httpapi.Error(w, r, apperr.ErrNotFound)
		return
	}
	in, ok := decodeBody(w, r, func(b []byte) ([]enrichment.Input, error) { return a.d.Enrichment.Decode(typ, b) })
	if !ok {
		return
	}
	reply(w, r, http.StatusCreated)(a.d.Enrichment.Add(r.Context(), principal(r).OrgID, typ, r.PathValue("resourceId"), in))
}

// enrichmentListParams are the query parameters of a record's listing:
// its order is the ranking, so it pages by limit, page and cursor only.
var enrichmentListParams = []string{"limit", "page", "cursor"}

// listEnrichments answers a page of the record's candidates,
// {data: [value]}, by property and rank, with the next-page headers
// (httpapi.List: within the byte budget).
func (a *API) listEnrichments(w http.ResponseWriter, r *http.Request) {
	for name := range r.URL.Query() {
		if !slices.Contains(enrichmentListParams, name) {
			httpapi.Error(w, r, apperr.InvalidQuery(name, "is not accepted; accepted parameters are %s (candidates are listed by property and rank)",
				strings.Join(enrichmentListParams, ", ")))
			return
		}
	}
	q, ok := pageQuery(w, r)
	if !ok {
		return
	}
	list[enrichment.Value](w, r)(a.d.Enrichment.Page(r.Context(), principal(r).OrgID, r.PathValue("resourceType"), r.PathValue("resourceId"), q))
}

// pinEnrichment pins or unpins a value: {"pinned": bool}.
func (a *API) pinEnrichment(w http.ResponseWriter, r *http.Request) {
	pinned, ok := decodeBody(w, r, func(b []byte) (bool, error) {
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
	reply(w, r, http.StatusOK)(a.d.Enrichment.Pin(r.Context(), principal(r).OrgID, r.PathValue("resourceType"),
		r.PathValue("resourceId"), r.PathValue("valueId"), pinned))
}

// deleteEnrichment removes a value: 204.
func (a *API) deleteEnrichment(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.d.Enrichment.Delete(r.Context(), principal(r).OrgID, r.PathValue("resourceType"),
		r.PathValue("resourceId"), r.PathValue("valueId")))
}
