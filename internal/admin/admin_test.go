package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/admin"
	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/apitest/wholeservice"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// TestMain serves the whole service (apitest), whose HTTP API the
// tenant lifecycle's tests call as clients would.
func TestMain(m *testing.M) { apitest.Main(m, wholeservice.Service) }

type handler = func(context.Context, admin.Request) (any, error)

// event loads a sample admin event as the Lambda runtime would decode it,
// after replacing each old, new pair of replace.
func event(t *testing.T, name string, replace ...string) admin.Request {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../events", name))
	if err != nil {
		t.Fatalf("read sample event: %v", err)
	}
	s := string(raw)
	if len(replace) > 0 {
		s = strings.NewReplacer(replace...).Replace(s)
	}
	var req admin.Request
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields() // every field of the sample must mean something
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("%s is not an admin request: %v", name, err)
	}
	return req
}

// call runs req and returns the output as the Lambda would send it: JSON.
func call(t *testing.T, h handler, req admin.Request) (map[string]any, []any) {
	t.Helper()
	out, err := h(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", req.Action, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("%s: output does not encode: %v", req.Action, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	m, _ := v.(map[string]any)
	l, _ := v.([]any)
	return m, l
}

func TestSampleEventsCreateOrgCreateKeyListAndRevoke(t *testing.T) {
	t.Parallel()
	h := admin.Handler(testenv.Store(t))

	org, _ := call(t, h, event(t, "admin-create-org.json"))
	orgID, _ := org["id"].(string)
	if !strings.HasPrefix(orgID, "org_") || org["name"] != "Acme Capital" {
		t.Fatalf("create-org returned %v, want an org_ id and the name Acme Capital", org)
	}

	key, _ := call(t, h, event(t, "admin-create-key.json", "org_REPLACE", orgID))
	clientID, _ := key["clientId"].(string)
	secret, _ := key["secret"].(string)
	if !strings.HasPrefix(clientID, "ck_") || len(secret) < 32 {
		t.Fatalf("create-key returned %v, want a ck_ client id and a long secret", key)
	}
	if key["keyLastFour"] != secret[len(secret)-4:] {
		t.Errorf("keyLastFour %v, want the last four of the secret %q", key["keyLastFour"], secret[len(secret)-4:])
	}
	if key["role"] != "admin" || key["name"] != "ci" || key["organizationId"] != orgID {
		t.Errorf("create-key returned %v, want role admin, name ci, organizationId %s", key, orgID)
	}

	_, list := call(t, h, event(t, "admin-list-keys.json", "org_REPLACE", orgID))
	if len(list) != 1 {
		t.Fatalf("list-keys returned %v, want the one key", list)
	}
	listed := list[0].(map[string]any)
	if listed["clientId"] != clientID || listed["keyLastFour"] != key["keyLastFour"] || listed["role"] != "admin" ||
		listed["name"] != "ci" || listed["organizationId"] != orgID {
		t.Errorf("list-keys returned %v, want the metadata of %s", listed, clientID)
	}
	for _, field := range []string{"secret", "secretHash"} {
		if _, ok := listed[field]; ok {
			t.Errorf("list-keys shows %s: %v", field, listed)
		}
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), secret) {
		t.Errorf("list-keys leaks the secret: %s", b)
	}

	revoked, _ := call(t, h, event(t, "admin-revoke-key.json", "ck_REPLACE", clientID))
	if revoked["clientId"] != clientID || revoked["revoked"] != true {
		t.Errorf("revoke-key returned %v", revoked)
	}
	if _, list := call(t, h, event(t, "admin-list-keys.json", "org_REPLACE", orgID)); len(list) != 0 {
		t.Errorf("after revoke-key, list-keys returned %v, want none", list)
	}
	_, err := h(context.Background(), event(t, "admin-revoke-key.json", "ck_REPLACE", clientID))
	if !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("revoking the key again: %v, want not found", err)
	}
}

func TestSetLimitsChangesWhatItIsGivenAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	h := admin.Handler(testenv.Store(t))
	org, _ := call(t, h, event(t, "admin-create-org.json"))
	orgID := org["id"].(string)
	got, _ := call(t, h, admin.Request{Action: "get-limits", Org: orgID})
	if l := got["limits"].(map[string]any); l["keyPerMinute"] != 60000.0 || l["organizationPerMinute"] != 120000.0 || l["webhookPerMinute"] != 6000.0 {
		t.Errorf("default limits %v", l)
	}
	set, _ := call(t, h, event(t, "admin-set-limits.json", "org_REPLACE", orgID))
	if l := set["limits"].(map[string]any); l["keyPerMinute"] != 120000.0 || l["organizationPerMinute"] != 240000.0 || l["webhookPerMinute"] != 12000.0 {
		t.Errorf("set-limits answered %v", l)
	}
	call(t, h, admin.Request{Action: "set-limits", Org: orgID, WebhookPerMinute: 30})
	got, _ = call(t, h, admin.Request{Action: "get-limits", Org: orgID})
	if l := got["limits"].(map[string]any); l["keyPerMinute"] != 120000.0 || l["organizationPerMinute"] != 240000.0 || l["webhookPerMinute"] != 30.0 {
		t.Errorf("after setting the webhook limit only: %v", l)
	}
	call(t, h, admin.Request{Action: "set-limits", Org: orgID, OrganizationPerMinute: 500})
	got, _ = call(t, h, admin.Request{Action: "get-limits", Org: orgID})
	if l := got["limits"].(map[string]any); l["keyPerMinute"] != 120000.0 || l["organizationPerMinute"] != 500.0 || l["webhookPerMinute"] != 30.0 {
		t.Errorf("after setting the organization's limit only: %v", l)
	}
}

func TestCreateTableIsIdempotent(t *testing.T) {
	t.Parallel()
	h := admin.Handler(testenv.Store(t)) // the store's table exists already
	out, _ := call(t, h, admin.Request{Action: "create-table"})
	if out["created"] != false || out["table"] == "" {
		t.Errorf("create-table on an existing table returned %v, want created false", out)
	}
}

func TestBadRequestsAreRefusedNamingTheProblem(t *testing.T) {
	t.Parallel()
	h := admin.Handler(testenv.Store(t))
	org, _ := call(t, h, event(t, "admin-create-org.json"))
	orgID := org["id"].(string)

	tests := []struct {
		name    string
		req     admin.Request
		field   string // the invalid field, or "" for a plain error
		message string // a part of the message
	}{
		{"unknown action", admin.Request{Action: "drop-table"}, "", `unknown action "drop-table"`},
		{"no action", admin.Request{}, "", `unknown action ""`},
		{"create-key without org", withOrg(event(t, "admin-create-key.json"), ""), "org", "is required"},
		{"create-key for a missing org", event(t, "admin-create-key.json", "org_REPLACE", "org_missing"), "", "no such organization: org_missing"},
		{"list-keys for a missing org", admin.Request{Action: "list-keys", Org: "org_missing"}, "", "no such organization: org_missing"},
		{"create-key with a bad role", withRole(event(t, "admin-create-key.json", "org_REPLACE", orgID), "owner"), "role", "must be admin or member"},
		{"create-key without a name", admin.Request{Action: "create-key", Org: orgID}, "name", "must be 1 to 200 characters"},
		{"create-org without a name", admin.Request{Action: "create-org", Name: "  "}, "name", "must be 1 to 200 characters"},
		{"list-keys without org", admin.Request{Action: "list-keys"}, "org", "is required"},
		{"revoke-key without client id", admin.Request{Action: "revoke-key"}, "clientId", "is required"},
		{"set-limits for a missing org", admin.Request{Action: "set-limits", Org: "org_missing", KeyPerMinute: 5}, "", "no such organization: org_missing"},
		{"set-limits out of range", admin.Request{Action: "set-limits", Org: orgID, KeyPerMinute: -1}, "keyPerMinute", "must be from 1 to"},
		{"set-limits organization out of range", admin.Request{Action: "set-limits", Org: orgID, OrganizationPerMinute: -1}, "organizationPerMinute", "must be from 1 to"},
		{"list-orgs with too many segments", admin.Request{Action: "list-orgs", Segments: admin.MaxSegments + 1}, "segments", "must be from 1 to 256"},
		{"list-orgs with negative segments", admin.Request{Action: "list-orgs", Segments: -1}, "segments", "must be from 1 to 256"},
		{"delete-org with negative pages", admin.Request{Action: "delete-org", Org: orgID, Confirm: orgID, MaxPages: -1}, "maxPages", "must be 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := h(context.Background(), tt.req)
			if err == nil {
				t.Fatalf("succeeded with %v, want an error", out)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q, want it to say %q", err, tt.message)
			}
			var inv *apperr.InvalidError
			if tt.field != "" && (!errors.As(err, &inv) || inv.Field != tt.field) {
				t.Errorf("error %#v, want an invalid %s", err, tt.field)
			}
		})
	}
	// None of the refused requests made a key.
	if _, list := call(t, h, admin.Request{Action: "list-keys", Org: orgID}); len(list) != 0 {
		t.Errorf("refused requests left keys behind: %v", list)
	}
}

func withOrg(r admin.Request, org string) admin.Request   { r.Org = org; return r }
func withRole(r admin.Request, role string) admin.Request { r.Role = role; return r }

func TestTheOperatorSetsAnOrganizationsEventRetentionAndEventBridge(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	h := admin.Handler(st)
	org, _ := call(t, h, event(t, "admin-create-org.json"))
	orgID := org["id"].(string)
	ks := apikeys.New(st)
	ctx := context.Background()
	if d, err := ks.EventRetention(ctx, orgID); err != nil || d != 0 {
		t.Errorf("a new organization's retention: %v %v, want none set (the default)", d, err)
	}
	call(t, h, admin.Request{Action: "set-event-retention", Org: orgID, EventRetentionDays: 30})
	if d, _ := ks.EventRetention(ctx, orgID); d != 30*24*time.Hour {
		t.Errorf("retention after set-event-retention 30: %v", d)
	}
	on := true
	call(t, h, admin.Request{Action: "set-event-bridge", Org: orgID, EventBridge: &on})
	if got, _ := ks.EventBridge(ctx, orgID); !got {
		t.Error("set-event-bridge true did not turn it on")
	}
	for _, req := range []admin.Request{
		{Action: "set-event-retention", Org: orgID, EventRetentionDays: 0},
		{Action: "set-event-retention", Org: orgID, EventRetentionDays: 4000},
		{Action: "set-event-bridge", Org: orgID},
		{Action: "set-event-bridge", Org: "org_nope", EventBridge: &on},
	} {
		if _, err := h(ctx, req); err == nil {
			t.Errorf("%+v was accepted", req)
		}
	}
}
