package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/companies"
)

func (a *API) createCompany(w http.ResponseWriter, r *http.Request) {
	if f, ok := decodeBody(w, r, companies.DecodeCreate); ok {
		reply(w, r, http.StatusCreated)(a.d.Companies.Create(r.Context(), principal(r).OrgID, f, companies.OriginUser))
	}
}

func (a *API) listCompanies(w http.ResponseWriter, r *http.Request) {
	if q, ok := pageQuery(w, r); ok {
		list[companies.Company](w, r)(a.d.Companies.List(r.Context(), principal(r).OrgID, q))
	}
}

func (a *API) getCompany(w http.ResponseWriter, r *http.Request) {
	reply(w, r, http.StatusOK)(a.d.Companies.Get(r.Context(), principal(r).OrgID, r.PathValue("id")))
}

func (a *API) updateCompany(w http.ResponseWriter, r *http.Request) {
	if f, ok := decodeBody(w, r, companies.DecodeUpdate); ok {
		reply(w, r, http.StatusOK)(a.d.Companies.Update(r.Context(), principal(r).OrgID, r.PathValue("id"), f))
	}
}

func (a *API) deleteCompany(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.d.Companies.Delete(r.Context(), principal(r).OrgID, r.PathValue("id")))
}
