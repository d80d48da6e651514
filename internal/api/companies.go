package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/httpapi"
)

func (a *API) createCompany(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	f, err := companies.DecodeCreate(body)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	c, err := a.d.Companies.Create(r.Context(), principal(r).OrgID, f, companies.OriginUser)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusCreated, c)
}

func (a *API) listCompanies(w http.ResponseWriter, r *http.Request) {
	q, err := httpapi.ParsePage(r.URL.Query())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	cs, err := a.d.Companies.List(r.Context(), principal(r).OrgID, q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, cs)
}

func (a *API) getCompany(w http.ResponseWriter, r *http.Request) {
	c, err := a.d.Companies.Get(r.Context(), principal(r).OrgID, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, c)
}

func (a *API) updateCompany(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	f, err := companies.DecodeUpdate(body)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	c, err := a.d.Companies.Update(r.Context(), principal(r).OrgID, r.PathValue("id"), f)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Data(w, http.StatusOK, c)
}

func (a *API) deleteCompany(w http.ResponseWriter, r *http.Request) {
	if err := a.d.Companies.Delete(r.Context(), principal(r).OrgID, r.PathValue("id")); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
