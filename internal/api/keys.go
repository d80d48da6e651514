package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/keys"
)

func (a *API) requireAdmin(w http.ResponseWriter, r *http.Request) bool {
	if !principal(r).IsAdmin() {
		httpapi.Error(w, r, apperr.Forbidden("managing API keys requires an admin key"))
		return false
	}
	return true
}

func (a *API) listKeys(w http.ResponseWriter, r *http.Request) {
	if !a.requireAdmin(w, r) {
		return
	}
	if q, ok := pageQuery(w, r); ok {
		list[keys.Key](w, r)(a.d.Keys.Page(r.Context(), principal(r).OrgID, q))
	}
}

func (a *API) revokeKey(w http.ResponseWriter, r *http.Request) {
	if !a.requireAdmin(w, r) {
		return
	}
	id := r.PathValue("clientId")
	err := a.d.Keys.Revoke(r.Context(), principal(r).OrgID, id)
	if err == nil {
		a.d.Auth.Forget(id)
	}
	noContent(w, r, err)
}
