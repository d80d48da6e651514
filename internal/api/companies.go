package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/store"
)

func (a *API) createCompany(w http.ResponseWriter, r *http.Request) {
	if f, ok := decodeBody(w, r, companies.DecodeCreate); ok {
		reply(w, r, http.StatusCreated)(a.d.Companies.Create(r.Context(), principal(r).OrgID, f, companies.OriginUser))
	}
}

func (a *API) listCompanies(w http.ResponseWriter, r *http.Request) {
	q, filter, value, err := httpapi.ParseList(r.URL.Query(), companies.Filters)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	list[store.JSON](w, r)(a.d.Companies.ListJSON(r.Context(), principal(r).OrgID, q, filter, value))
}

func (a *API) getCompany(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusOK)(a.d.Companies.GetJSON(r.Context(), principal(r).OrgID, r.PathValue("id")))
}

func (a *API) updateCompany(w http.ResponseWriter, r *http.Request) {
	if f, ok := decodeBody(w, r, companies.DecodeUpdate); ok {
		// An enrichable attribute a user sets becomes a pinned user
		// candidate when its property has candidates (docs/enrichment.md).
		reply(w, r, http.StatusOK)(a.d.Enrichment.UpdateCompany(r.Context(), a.d.Companies, principal(r).OrgID, r.PathValue("id"), f, f.SetNames()))
	}
}

func (a *API) deleteCompany(w http.ResponseWriter, r *http.Request) {
	// The company's candidate values go with it (enrichment.DeleteCompany).
	noContent(w, r, a.d.Enrichment.DeleteCompany(r.Context(), a.d.Companies, principal(r).OrgID, r.PathValue("id")))
}
