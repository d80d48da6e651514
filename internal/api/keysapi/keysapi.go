// Package keysapi serves the organization's API keys: the admin-only list
// and revocation (keys are made by the operator, package keys).
package keysapi

import (
	"net/http"
	"reflect"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// API serves the keys' routes.
type API struct {
	keys *apikeys.Service
	auth *auth.Authenticator
}

// New returns the API over the keys and the authenticator whose cache a
// revocation clears.
func New(k *apikeys.Service, a *auth.Authenticator) *API { return &API{keys: k, auth: a} }

// Feature is the API keys, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("keys", Operations, Schemas, func(d service.Deps) *API { return New(d.Keys, d.Auth) })

// Operations are the admin-only reads and revocations of the
// organization's API keys (keys are made by the operator).
func Operations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(lambdas.Keys, http.MethodGet, "/v1/keys", (*API).listKeys).InTopic("keys").AdminOnly(ManagingKeys).Answers(routes.AnswerPaged).Doc(func(op *openapi.Operation) {
			op.Summary = "List the organization's API keys"
			op.Description = "Admin keys only. Secrets are never shown: a key's secret is answered once, when it is made (operator CLI). " +
				"Without `limit`, every key of the organization in one page (an organization holds at most 1,000); with it, a page as every list pages."
			op.Query, op.Data, op.Paged = operation.ListQuery(apikeys.SortFields(), nil), operation.ArrayOf("Key"), true
		}),
		operation.Declare(lambdas.Keys, http.MethodDelete, "/v1/keys/{clientId}", (*API).revokeKey).InTopic("keys").AdminOnly(ManagingKeys).Doc(func(op *openapi.Operation) {
			op.Summary, op.Preconditioned = "Revoke an API key", false
			op.Description = "Admin keys only. The key stops working at once on this instance, and on others within the key cache's lifetime. " +
				"The organization's last admin key cannot be revoked (409): have the operator create another admin key first."
		}),
	}
}

// ManagingKeys is what the admin-only routes do, as their 403 names it ("managing API keys
// requires an admin key"): the router refuses member keys (routes.Route.Admin).
const ManagingKeys = apikeys.Managing

// listKeys and revokeKey are admin-only routes (ManagingKeys).
func (a *API) listKeys(w http.ResponseWriter, r *http.Request) {
	if q, ok := httpapi.PageQuery(w, r); ok {
		// Every key of the organization, as the spec says, unless the
		// caller asks for a page: no organization holds more than
		// keys.MaxKeyLimit, a list's largest page.
		if !r.URL.Query().Has("limit") {
			q.Limit = apikeys.MaxKeyLimit
		}
		httpapi.ReplyPage[apikeys.Key](w, r)(a.keys.Page(r.Context(), httpapi.Caller(r).OrgID, q))
	}
}

// revokeKey revokes a key of the caller's organization; 409 when it is the
// organization's last admin key (keys.Service.Revoke).
func (a *API) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("clientId")
	err := a.keys.Revoke(r.Context(), httpapi.Caller(r).OrgID, id)
	if err == nil {
		a.auth.Forget(id)
	}
	httpapi.NoContent(w, r, err)
}

// Schemas adds the keys' component schemas to out.
func Schemas(out map[string]openapi.Schema) {
	out["Key"] = openapi.TypeOf(reflect.TypeFor[apikeys.Key]())
}
