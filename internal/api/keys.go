package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/keys"
)

// What the admin-only routes do, as their 403 names it ("managing API keys
// requires an admin key"): the router refuses member keys (routes.Route.Admin).
const (
	ManagingKeys           = "managing API keys"
	RotatingWebhookSecrets = "rotating a webhook secret"
)

// listKeys and revokeKey are admin-only routes (ManagingKeys).
func (a *API) listKeys(w http.ResponseWriter, r *http.Request) {
	if q, ok := pageQuery(w, r); ok {
		// Every key of the organization, as the spec says, unless the
		// caller asks for a page: no organization holds more than
		// keys.MaxKeyLimit, a list's largest page.
		if !r.URL.Query().Has("limit") {
			q.Limit = keys.MaxKeyLimit
		}
		list[keys.Key](w, r)(a.d.Keys.Page(r.Context(), principal(r).OrgID, q))
	}
}

// revokeKey revokes a key of the caller's organization; 409 when it is the
// organization's last admin key (keys.Service.Revoke).
func (a *API) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("clientId")
	err := a.d.Keys.Revoke(r.Context(), principal(r).OrgID, id)
	if err == nil {
		a.d.Auth.Forget(id)
	}
	noContent(w, r, err)
}
