package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 45, item 3: a member key reads in the history nothing that the
// admin-only routes (GET /v1/keys, GET /v1/webhook-endpoints) hide from it.
func TestAMemberKeyReadsNoEventOfAdminOnlyRecords(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	const token = "tok3nS3cretValue"
	var member = e.Key(t, admin.Org, "member")
	member.Do("GET", "/v1/keys", nil).Want(t, 403)
	member.Do("GET", "/v1/webhook-endpoints", nil).Want(t, 403)
	var companies []string
	for i := range 3 {
		// Hidden events between the shown ones: pages must neither end early nor skip.
		admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": fmt.Sprintf("%s/%d?token=%s", recv.URL, i, token)}).Want(t, 201)
		e.Key(t, admin.Org, "member")
		c := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprintf("Co %d", i)}).Want(t, 201).Object(t)
		companies = append(companies, c["id"].(string))
	}
	apitest.Caught(t, evs)

	all := apitest.AllEvents(t, admin, "")
	var hiddenID string
	for _, ev := range all {
		if typ := ev["type"].(string); strings.HasPrefix(typ, "apiKey.") || strings.HasPrefix(typ, "webhookEndpoint.") {
			hiddenID = ev["id"].(string)
		}
	}
	if hiddenID == "" {
		t.Fatalf("the admin reads no event of keys or endpoints: %v", apitest.EventTypes(all))
	}

	shown := apitest.AllEvents(t, member, "")
	body, _ := json.Marshal(shown)
	if strings.Contains(string(body), token) || strings.Contains(string(body), "apiKey.") || strings.Contains(string(body), "webhookEndpoint.") {
		t.Fatalf("a member key reads events of admin-only records: %v", apitest.EventTypes(shown))
	}
	var shownCompanies []string
	for _, ev := range shown {
		if ev["type"] == "company.created" {
			shownCompanies = append(shownCompanies, ev["resource"].(map[string]any)["id"].(string))
		}
	}
	slices.Reverse(shownCompanies)
	if !slices.Equal(shownCompanies, companies) {
		t.Fatalf("a member key reads companies %v, want %v", shownCompanies, companies)
	}
	// Paging one event at a time reads the same events, none skipped.
	var paged []string
	path := "/v1/events?limit=1"
	for range 100 {
		r := member.Do("GET", path, nil).Want(t, 200)
		for _, ev := range r.List(t) {
			paged = append(paged, ev["id"].(string))
		}
		next := r.Header.Get("X-Next-Cursor")
		if next == "" {
			break
		}
		path = "/v1/events?limit=1&cursor=" + url.QueryEscape(next)
	}
	var ids []string
	for _, ev := range shown {
		ids = append(ids, ev["id"].(string))
	}
	if !slices.Equal(paged, ids) {
		t.Fatalf("a member paging by 1 reads %v, want %v", paged, ids)
	}

	for _, q := range []string{"resourceType=apiKey", "resourceType=company,webhookEndpoint", "type=apiKey.created", "type=webhookEndpoint.*"} {
		member.Do("GET", "/v1/events?"+q, nil).Want(t, 403)
		admin.Do("GET", "/v1/events?"+q, nil).Want(t, 200)
	}
	member.Do("GET", "/v1/events/"+hiddenID, nil).Want(t, 404)
	admin.Do("GET", "/v1/events/"+hiddenID, nil).Want(t, 200)

	s := mcpSession(t, e, member)
	out, _ := call(t, s, "list_events", map[string]any{"limit": 100}, false)
	if text := fmt.Sprint(out); strings.Contains(text, token) || strings.Contains(text, "apiKey.") || !strings.Contains(text, companies[0]) {
		t.Fatalf("list_events of a member key: %s", text)
	}
	call(t, s, "list_events", map[string]any{"resourceType": "webhookEndpoint"}, true)
}

// Issue 45, item 6: the list-valued parameters of GET /v1/events are capped
// (a 400 naming the parameter) and their values taken once.
func TestTheListValuedEventParametersAreCappedAndDeduplicated(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	admin := e.Org(t)
	admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme"}).Want(t, 201)
	apitest.Caught(t, evs)
	for param, value := range map[string]string{
		"resourceType": strings.Repeat("company,", 199) + "company",
		"type":         strings.Repeat("company.created,", 199) + "company.created",
	} {
		msg := admin.Do("GET", "/v1/events?"+param+"="+value, nil).Want(t, 400).Error(t)
		if !strings.Contains(msg, param) {
			t.Errorf("%s with 200 values: %q does not name it", param, msg)
		}
	}
	if got := apitest.EventTypes(apitest.AllEvents(t, admin, "resourceType=company,company,company&type=company.created,company.created")); !slices.Equal(got, []string{"company.created"}) {
		t.Errorf("repeated values read %v", got)
	}
	s := mcpSession(t, e, admin)
	call(t, s, "list_events", map[string]any{"resourceType": strings.Repeat("company,", 199) + "company"}, true)
}
