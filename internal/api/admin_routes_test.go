package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestEveryAdminOnlyRouteRefusesAMemberKeyBeforeAnythingElseAndDeclaresIt(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	doc := loadOpenAPI(t)
	var admins []string
	for _, rt := range api.Routes() {
		if rt.Admin == "" {
			continue
		}
		admins = append(admins, rt.Pattern())
		path := strings.NewReplacer("{id}", "wf_doesnotexist", "{clientId}", admin.ClientID, "{deliveryId}", "msg_doesnotexist").Replace(rt.Path)
		r := member.Do(rt.Method, path, nil, "Idempotency-Key", "admin-only")
		apitest.WantExactBody(t, r.Want(t, 403), `{"error":"`+rt.Admin+` requires an admin key"}`)
		if op := doc.Paths.Find(rt.Path).GetOperation(rt.Method); op == nil || op.Responses.Status(403) == nil {
			t.Errorf("the OpenAPI document does not declare the 403 of %s", rt.Pattern())
		}
	}
	want := []string{"GET /v1/keys", "DELETE /v1/keys/{clientId}", "POST /v1/workflows/{id}/trigger/webhook-secret/rotate",
		// Every route of the outbound webhook endpoints (eventsapi.ManagingWebhookEndpoints);
		// the change history (GET /v1/events) is every key's to read.
		"POST /v1/webhook-endpoints", "GET /v1/webhook-endpoints", "GET /v1/webhook-endpoints/{id}",
		"PATCH /v1/webhook-endpoints/{id}", "DELETE /v1/webhook-endpoints/{id}",
		"POST /v1/webhook-endpoints/{id}/secret/rotate", "POST /v1/webhook-endpoints/{id}/test",
		"GET /v1/webhook-endpoints/{id}/deliveries", "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry"}
	if !slices.Equal(admins, want) {
		t.Errorf("admin-only routes %v, want %v", admins, want)
	}
	if list := admin.Do("GET", "/v1/keys", nil).Want(t, 200).List(t); len(list) != 2 {
		t.Errorf("%d keys after a member's refused requests, want 2", len(list))
	}
}
