package api

import (
	"net/http"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// resourceEndpoints are the routes of every declared resource with their
// generic handlers: create (201), list (paged, filtered by one lookup
// field), get, partial update and delete (204).
func (a *API) resourceEndpoints() []endpoint {
	var out []endpoint
	for _, r := range resources.Routes() {
		rt := routes.Route{Group: r.Group, Method: r.Method, Path: r.Path, Resource: r.Def.Name, MaxParam: r.MaxParam}
		out = append(out, endpoint{rt, a.resourceHandler(rt)})
	}
	return out
}

func (a *API) resourceHandler(rt routes.Route) http.Handler {
	service := func() *resource.Service {
		svc, ok := a.d.Resources.Service(rt.Resource)
		if !ok {
			panic("api: no service for declared resource " + rt.Resource)
		}
		return svc
	}
	org := func(r *http.Request) string { return principal(r).OrgID }
	switch {
	case rt.Method == http.MethodPost:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if body, ok := readBody(w, r); ok {
				reply(w, r, http.StatusCreated)(service().Create(r.Context(), org(r), body))
			}
		})
	case rt.Method == http.MethodGet && rt.Path == "/v1/"+rt.Resource:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			svc := service()
			q, filter, value, err := httpapi.ParseList(r.URL.Query(), svc.Def.Filters())
			if err != nil {
				httpapi.Error(w, r, err)
				return
			}
			list[store.JSON](w, r)(svc.ListJSON(r.Context(), org(r), q, filter, value))
		})
	case rt.Method == http.MethodGet:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			svc, id := service(), r.PathValue("id")
			if svc.Def.MultiGet && strings.HasPrefix(id, resource.MultiGetPrefix) {
				recs, err := svc.GetByIDs(r.Context(), org(r), id)
				if n, budget, ok := fits(r, recs); err == nil && !ok {
					err = apperr.InvalidPath("ids", "names records of %d bytes in all, more than the %d one answer may take; ask for fewer at once", n, budget)
				}
				reply(w, r, http.StatusOK)(recs, err)
				return
			}
			if len(id) > store.MaxIDLength {
				httpapi.Error(w, r, apperr.ErrNotFound)
				return
			}
			reply(w, r, http.StatusOK)(svc.GetJSON(r.Context(), org(r), id))
		})
	case rt.Method == http.MethodPut:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if body, ok := readBody(w, r); ok {
				reply(w, r, http.StatusOK)(service().Update(r.Context(), org(r), r.PathValue("id"), body))
			}
		})
	case rt.Method == http.MethodDelete:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			noContent(w, r, service().Delete(r.Context(), org(r), r.PathValue("id")))
		})
	}
	panic("api: no generic handler for " + rt.Pattern())
}

// readBody reads the request body; on failure it has answered.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return nil, false
	}
	return body, true
}
