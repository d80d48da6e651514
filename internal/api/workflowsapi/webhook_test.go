package workflowsapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/webhooktest"
)

// signatureCase is one webhook request against a trigger configuration.
type signatureCase struct {
	name    string
	trigger map[string]any // the PUT trigger body; nil for the default
	reset   bool           // then set headerName back to null
	body    string         // sent body; "" for the default
	headers func(secret string, body []byte) []string
	status  int // 202 or 401
	// notPrism says why the delivery does not go through Prism's
	// validating proxy, as the others do.
	notPrism string
}

// checkSignatureCases runs each case against a fresh workflow, the
// deliveries through Prism's validating proxy (under make test): the
// document declares every way a correctly signed delivery comes (a custom
// header included).
func checkSignatureCases(t *testing.T, cases []signatureCase) {
	t.Helper()
	direct := apitest.New(t)
	e := direct.ThroughPrism(t)
	admin := e.Org(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			h := apitest.NewHook(t, c, tc.trigger)
			if tc.reset {
				c.Do("PUT", "/v1/workflows/"+h.WorkflowID, map[string]any{"trigger": map[string]any{"headerName": nil}}).Want(t, 200)
			}
			body := tc.body
			if body == "" {
				body = `{"event":"deal.created","id":42}`
			}
			via := e
			if tc.notPrism != "" {
				via = direct
			}
			r := apitest.Deliver(t, via, h.Slug, "", body, tc.headers(h.Secret, []byte(body))...)
			if tc.status == 202 {
				apitest.WantAccepted(t, c, h, r)
				return
			}
			apitest.WantInvalidSignature(t, r)
			if runs := apitest.RunsOf(t, c, h.WorkflowID); len(runs) != 0 {
				t.Errorf("a refused webhook started runs: %s", apitest.JSONOf(runs))
			}
		})
	}
}

func TestSharedSecretWebhookAcceptsTheSecretOnlyWhereTheTriggerSaysSo(t *testing.T) {
	t.Parallel()
	custom := map[string]any{"headerName": "X-Partner-Token"}
	checkSignatureCases(t, []signatureCase{
		{name: "the secret in the default header", status: 202,
			headers: func(s string, _ []byte) []string { return []string{"X-Service-Webhook-Secret", s} }},
		{name: "the secret as a Bearer token", status: 202,
			headers: func(s string, _ []byte) []string { return []string{"Authorization", "Bearer " + s} }},
		{name: "the secret as a bearer token in lower case", status: 202,
			headers:  func(s string, _ []byte) []string { return []string{"Authorization", "bearer " + s} },
			notPrism: "Prism takes only `Bearer` for the bearer scheme; the scheme's name is case-insensitive (RFC 9110)"},
		{name: "a wrong secret in the default header", status: 401,
			headers: func(string, []byte) []string { return []string{"X-Service-Webhook-Secret", "whsec_wrong"} }},
		{name: "a wrong Bearer token", status: 401,
			headers: func(string, []byte) []string { return []string{"Authorization", "Bearer whsec_wrong"} }},
		{name: "no secret at all", status: 401,
			headers: func(string, []byte) []string { return nil }},
		{name: "an empty default header", status: 401,
			headers: func(string, []byte) []string { return []string{"X-Service-Webhook-Secret", ""} }},
		{name: "the secret without its last character", status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Service-Webhook-Secret", s[:len(s)-1]} }},
		{name: "the secret with a character more", status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Service-Webhook-Secret", s + "x"} }},
		{name: "the secret as Basic credentials", status: 401,
			headers: func(s string, _ []byte) []string { return []string{"Authorization", "Basic " + s} }},
		{name: "the bare secret in Authorization", status: 401,
			headers: func(s string, _ []byte) []string { return []string{"Authorization", s} }},
		{name: "the secret in the HMAC header", status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Hub-Signature", s} }},
		{name: "the secret as the API key header", status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Service-Api-Key", s} }},
		{name: "an HMAC signature instead of the secret", status: 401,
			headers: func(s string, b []byte) []string {
				return []string{"X-Service-Webhook-Secret", "sha256=" + apitest.HMACHex(s, b)}
			}},

		{name: "a custom header with the secret", trigger: custom, status: 202,
			headers: func(s string, _ []byte) []string { return []string{"X-Partner-Token", s} }},
		{name: "a custom header with a wrong secret", trigger: custom, status: 401,
			headers: func(string, []byte) []string { return []string{"X-Partner-Token", "whsec_wrong"} }},
		{name: "Bearer once a custom header is set", trigger: custom, status: 401,
			headers: func(s string, _ []byte) []string { return []string{"Authorization", "Bearer " + s} }},
		{name: "the default header once a custom header is set", trigger: custom, status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Service-Webhook-Secret", s} }},
		{name: "the default header and Bearer once a custom header is set", trigger: custom, status: 401,
			headers: func(s string, _ []byte) []string {
				return []string{"X-Service-Webhook-Secret", s, "Authorization", "Bearer " + s}
			}},
		{name: "the default header after the custom header is removed", trigger: custom, reset: true, status: 202,
			headers: func(s string, _ []byte) []string { return []string{"X-Service-Webhook-Secret", s} }},
		{name: "Bearer after the custom header is removed", trigger: custom, reset: true, status: 202,
			headers: func(s string, _ []byte) []string { return []string{"Authorization", "Bearer " + s} }},
		{name: "the old custom header after it is removed", trigger: custom, reset: true, status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Partner-Token", s} }},
	})
}

func TestHMACWebhookAcceptsOnlyASignatureOfTheBodyAsSent(t *testing.T) {
	t.Parallel()
	hmacDefault := map[string]any{"scheme": "hmac-sha256"}
	hmacCustom := map[string]any{"scheme": "hmac-sha256", "headerName": "X-Hub-Signature-256"}
	sig := func(prefix string) func(string, []byte) []string {
		return func(s string, b []byte) []string { return []string{"X-Hub-Signature", prefix + apitest.HMACHex(s, b)} }
	}
	checkSignatureCases(t, []signatureCase{
		{name: "sha256= and the hex digest", trigger: hmacDefault, status: 202, headers: sig("sha256=")},
		{name: "the bare hex digest", trigger: hmacDefault, status: 202, headers: sig("")},
		{name: "a signature with a wrong secret", trigger: hmacDefault, status: 401,
			headers: func(_ string, b []byte) []string {
				return []string{"X-Hub-Signature", "sha256=" + apitest.HMACHex("whsec_wrong", b)}
			}},
		{name: "a signature of the body before re-serialization", trigger: hmacDefault, body: `{"a":1}`, status: 401,
			headers: func(s string, _ []byte) []string {
				return []string{"X-Hub-Signature", "sha256=" + apitest.HMACHex(s, []byte(`{"a": 1}`))}
			}},
		{name: "a signature of the body with a trailing newline", trigger: hmacDefault, status: 401,
			headers: func(s string, b []byte) []string {
				return []string{"X-Hub-Signature", "sha256=" + apitest.HMACHex(s, append(append([]byte{}, b...), '\n'))}
			}},
		{name: "no signature", trigger: hmacDefault, status: 401,
			headers: func(string, []byte) []string { return nil }},
		{name: "a sha1= prefix", trigger: hmacDefault, status: 401, headers: sig("sha1=")},
		{name: "a truncated digest", trigger: hmacDefault, status: 401,
			headers: func(s string, b []byte) []string {
				return []string{"X-Hub-Signature", "sha256=" + apitest.HMACHex(s, b)[:62]}
			}},
		{name: "the secret itself in the signature header", trigger: hmacDefault, status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Hub-Signature", s} }},
		{name: "the secret in the shared-secret header", trigger: hmacDefault, status: 401,
			headers: func(s string, _ []byte) []string { return []string{"X-Service-Webhook-Secret", s} }},
		{name: "the secret as a Bearer token", trigger: hmacDefault, status: 401,
			headers: func(s string, _ []byte) []string { return []string{"Authorization", "Bearer " + s} }},
		{name: "the signature in X-Hub-Signature-256 while the default is in use", trigger: hmacDefault, status: 401,
			headers: func(s string, b []byte) []string {
				return []string{"X-Hub-Signature-256", "sha256=" + apitest.HMACHex(s, b)}
			}},

		{name: "the custom header X-Hub-Signature-256", trigger: hmacCustom, status: 202,
			headers: func(s string, b []byte) []string {
				return []string{"X-Hub-Signature-256", "sha256=" + apitest.HMACHex(s, b)}
			}},
		{name: "the custom header with the bare hex digest", trigger: hmacCustom, status: 202,
			headers: func(s string, b []byte) []string { return []string{"X-Hub-Signature-256", apitest.HMACHex(s, b)} }},
		{name: "the default X-Hub-Signature once a custom header is set", trigger: hmacCustom, status: 401, headers: sig("sha256=")},
		{name: "the default header after the custom header is removed", trigger: hmacCustom, reset: true, status: 202,
			headers: sig("sha256=")},
	})
}

func TestRotatingTheSecretRefusesTheOldOneAtOnceAndAcceptsTheNewOne(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	body := []byte(`{"n":1}`)
	cases := []struct {
		name    string
		trigger map[string]any
		headers func(secret string) []string
	}{
		{"shared secret in the default header", nil, func(s string) []string { return []string{"X-Service-Webhook-Secret", s} }},
		{"shared secret as Bearer", nil, func(s string) []string { return []string{"Authorization", "Bearer " + s} }},
		{"shared secret in a custom header", map[string]any{"headerName": "X-Token"}, func(s string) []string { return []string{"X-Token", s} }},
		{"hmac-sha256", map[string]any{"scheme": "hmac-sha256"}, func(s string) []string {
			return []string{"X-Hub-Signature", "sha256=" + apitest.HMACHex(s, body)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			h := apitest.NewHook(t, c, tc.trigger)
			apitest.Deliver(t, e, h.Slug, "", body, tc.headers(h.Secret)...).Want(t, 202)

			rot := c.Do("POST", "/v1/workflows/"+h.WorkflowID+"/trigger/webhook-secret/rotate", nil).Want(t, 200).Object(t)
			slug, secret := apitest.SlugAndSecret(t, rot)
			if slug != h.Slug || secret == h.Secret {
				t.Fatalf("rotation answered slug %s and the %s secret, want the same slug and a new secret", slug,
					map[bool]string{true: "old", false: "new"}[secret == h.Secret])
			}
			apitest.WantInvalidSignature(t, apitest.Deliver(t, e, h.Slug, "", body, tc.headers(h.Secret)...))
			apitest.Deliver(t, e, h.Slug, "", body, tc.headers(secret)...).Want(t, 202)
			if runs := apitest.RunsOf(t, c, h.WorkflowID); len(runs) != 2 {
				t.Errorf("%d runs, want 2 (before and after rotation): %s", len(runs), apitest.JSONOf(runs))
			}
		})
	}
}

// comparableHeaders are an answer's headers but those that differ between
// any two answers (the request ids, the service's and the front's, and
// the date).
func comparableHeaders(h http.Header) http.Header {
	out := h.Clone()
	out.Del("X-Request-Id")
	out.Del("X-Amzn-Requestid")
	out.Del("Date")
	return out
}

func TestOnlyAnAdminKeyRotatesAWebhookSecret(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	h := apitest.NewHook(t, member, nil) // a member makes workflows: only rotation is for admins
	path := "/v1/workflows/" + h.WorkflowID + "/trigger/webhook-secret/rotate"
	const refusal = `{"error":"rotating a webhook secret requires an admin key"}`

	r := member.Do("POST", path, nil)
	if r.Status != 403 {
		t.Errorf("BUG: a member key rotated the trigger's secret: %d %s", r.Status, r.Body)
	}
	apitest.WantExactBody(t, r, refusal)
	apitest.WantExactBody(t, member.Do("POST", "/v1/workflows/wf_doesnotexist/trigger/webhook-secret/rotate", nil).Want(t, 403), refusal)
	// The secret did not change: it still starts a run.
	apitest.Deliver(t, e, h.Slug, "", `{}`, "X-Service-Webhook-Secret", h.Secret).Want(t, 202)

	// An admin's rotation with an Idempotency-Key is not replayed to a
	// member repeating the request with that key.
	rot := admin.Do("POST", path, nil, "Idempotency-Key", "rotate-1").Want(t, 200)
	_, secret := apitest.SlugAndSecret(t, rot.Object(t))
	again := member.Do("POST", path, nil, "Idempotency-Key", "rotate-1")
	if again.Status != 403 || strings.Contains(string(again.Body), secret) {
		t.Errorf("BUG: a member repeating an admin's rotation with its Idempotency-Key was answered %d %s, want 403", again.Status, again.Body)
	}
	apitest.WantExactBody(t, again, refusal)
	replay := admin.Do("POST", path, nil, "Idempotency-Key", "rotate-1").Want(t, 200)
	if replay.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(replay.Body, rot.Body) {
		t.Errorf("the admin's repeat answered %s, want the replay of %s", replay.Body, rot.Body)
	}
	apitest.Deliver(t, e, h.Slug, "", `{}`, "X-Service-Webhook-Secret", secret).Want(t, 202)
}

func TestAnUnknownOrDeletedSlugIsAnsweredExactlyAsAWrongSecret(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil)
	hmacHook := apitest.NewHook(t, c, map[string]any{"scheme": "hmac-sha256"})
	apitest.Deliver(t, e, h.Slug, "", `{}`, "X-Service-Webhook-Secret", h.Secret).Want(t, 202)

	body := `{"event":"probe"}`
	// What a sender presents: the real secret of a trigger, nothing, a wrong
	// secret, a signature.
	attempts := map[string][]string{
		"a trigger's real secret": {"X-Service-Webhook-Secret", h.Secret},
		"no secret":               nil,
		"a wrong secret":          {"X-Service-Webhook-Secret", "whsec_wrong"},
		"a Bearer token":          {"Authorization", "Bearer " + h.Secret},
		"an HMAC signature":       {"X-Hub-Signature", "sha256=" + apitest.HMACHex(hmacHook.Secret, []byte(body))},
	}
	// The answer of a known slug to a wrong secret.
	want := apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", "whsec_wrong")
	apitest.WantInvalidSignature(t, want)
	if want.Header.Get("X-Request-Id") == "" {
		t.Fatalf("the refusal carries no X-Request-Id: %v", want.Header)
	}
	same := func(t *testing.T, slug string, headers []string) {
		t.Helper()
		got := apitest.Deliver(t, e, slug, "", body, headers...)
		if got.Status != want.Status || !bytes.Equal(got.Body, want.Body) ||
			!reflect.DeepEqual(comparableHeaders(got.Header), comparableHeaders(want.Header)) || got.Header.Get("X-Request-Id") == "" {
			t.Fatalf("slug %.40s answered %d %s %v, want exactly what a wrong secret is answered: %d %s %v",
				slug, got.Status, got.Body, got.Header, want.Status, want.Body, want.Header)
		}
	}
	unknown := []string{"wh_doesnotexist", "wh_" + strings.Repeat("a", 32), "wh_" + strings.Repeat("a", 300), strings.Repeat("k", 2048),
		h.Slug + "x", strings.ToUpper(h.Slug), h.Slug[:len(h.Slug)-1]}
	for name, headers := range attempts {
		t.Run(name, func(t *testing.T) {
			for _, slug := range unknown {
				same(t, slug, headers)
			}
		})
	}
	// A deleted workflow's slug is unknown at once.
	c.Do("DELETE", "/v1/workflows/"+h.WorkflowID, nil).Want(t, 204)
	for name, headers := range attempts {
		t.Run("deleted, "+name, func(t *testing.T) { same(t, h.Slug, headers) })
	}
	if runs := c.Do("GET", "/v1/workflow-runs", nil).Want(t, 200).List(t); len(runs) != 1 {
		t.Errorf("%d runs after the workflow was deleted, want the 1 from before: %s", len(runs), apitest.JSONOf(runs))
	}
}

func TestAWebhookBodyOver1MiBIs413AndStartsNothing(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil)
	big := `{"blob":"` + strings.Repeat("x", 1<<20) + `"}`
	apitest.WantError(t, apitest.Deliver(t, e, h.Slug, "", big, "X-Service-Webhook-Secret", h.Secret), 413, "1 MiB")
	// Unauthenticated senders get the same answer for an oversized body, before any lookup.
	apitest.WantError(t, apitest.Deliver(t, e, "wh_doesnotexist", "", big), 413, "1 MiB")
	if runs := apitest.RunsOf(t, c, h.WorkflowID); len(runs) != 0 {
		t.Errorf("an oversized webhook started runs: %s", apitest.JSONOf(runs))
	}
}

func TestAWebhookRunSeesThePayloadHeadersAndQueryButNeverTheSecret(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	body := `{"event":"deal.created","deal":{"id":"d-1","amount":1500000.5,"tags":["a","b"]},"note":null}`
	// Every header that can carry a credential is sent, with the real
	// secret or signature where the trigger reads it and stale values elsewhere.
	cases := []struct {
		name    string
		trigger map[string]any
		creds   func(secret string) []string
	}{
		{"shared secret in the default header", nil, func(s string) []string {
			return []string{"X-Service-Webhook-Secret", s, "Authorization", "Bearer " + s, "X-Hub-Signature", "sha256=" + apitest.HMACHex(s, []byte(body))}
		}},
		{"shared secret as Bearer", nil, func(s string) []string { return []string{"Authorization", "Bearer " + s} }},
		{"shared secret in a custom header", map[string]any{"headerName": "X-Partner-Token"}, func(s string) []string {
			return []string{"X-Partner-Token", s, "X-Service-Webhook-Secret", s, "Authorization", "Bearer " + s}
		}},
		{"hmac-sha256", map[string]any{"scheme": "hmac-sha256"}, func(s string) []string {
			return []string{"X-Hub-Signature", "sha256=" + apitest.HMACHex(s, []byte(body)), "X-Service-Webhook-Secret", s}
		}},
		{"hmac-sha256 in X-Hub-Signature-256", map[string]any{"scheme": "hmac-sha256", "headerName": "X-Hub-Signature-256"},
			func(s string) []string {
				return []string{"X-Hub-Signature-256", "sha256=" + apitest.HMACHex(s, []byte(body)), "X-Hub-Signature", "sha256=" + apitest.HMACHex(s, []byte(body))}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			h := apitest.NewHook(t, c, tc.trigger)
			creds := tc.creds(h.Secret)
			headers := append([]string{"X-Event-Type", "deal.created", "X-Delivery", "dlv-7"}, creds...)
			run := apitest.WantAccepted(t, c, h, apitest.Deliver(t, e, h.Slug, "?source=crm&tag=a&tag=b&empty=", body, headers...))

			in := run["input"].(map[string]any)
			apitest.WantKeys(t, "run input", in, []string{"webhook"})
			wh := apitest.ObjectAt(t, in, "webhook")
			apitest.WantKeys(t, "input.webhook", wh, []string{"payload", "headers", "query"})
			var payload any
			if err := json.Unmarshal([]byte(body), &payload); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(wh["payload"], payload) {
				t.Errorf("webhook.payload %s, want the body %s", apitest.JSONOf(wh["payload"]), body)
			}
			wantQuery := map[string]any{"source": "crm", "tag": []any{"a", "b"}, "empty": ""}
			if !reflect.DeepEqual(wh["query"], wantQuery) {
				t.Errorf("webhook.query %s, want %s", apitest.JSONOf(wh["query"]), apitest.JSONOf(wantQuery))
			}
			hdrs := apitest.ObjectAt(t, wh, "headers")
			if hdrs["x-event-type"] != "deal.created" || hdrs["x-delivery"] != "dlv-7" || hdrs["content-type"] != "application/json" {
				t.Errorf("webhook.headers %s, want x-event-type, x-delivery and content-type", apitest.JSONOf(hdrs))
			}
			for name := range hdrs {
				if name != strings.ToLower(name) {
					t.Errorf("header name %q is not lower case", name)
				}
			}
			for i := 0; i < len(creds); i += 2 {
				if v, ok := hdrs[strings.ToLower(creds[i])]; ok {
					t.Errorf("webhook.headers exposes the credential header %s: %v", creds[i], v)
				}
			}
			if _, ok := hdrs["authorization"]; ok {
				t.Errorf("webhook.headers exposes Authorization")
			}
			if raw := apitest.JSONOf(run); strings.Contains(raw, h.Secret) || strings.Contains(raw, apitest.HMACHex(h.Secret, []byte(body))) {
				t.Errorf("the run record contains the secret or the signature: %s", raw)
			}
			if !reflect.DeepEqual(run["output"], in) {
				t.Errorf("output %s, want the input (the workflow has no steps)", apitest.JSONOf(run["output"]))
			}
		})
	}
}

func TestAWebhookRunNeverSeesAHeaderThatCarriesOrOnceCarriedTheSecret(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	member := e.Key(t, admin.Org, "member")
	body := `{"event":"deal.created"}`
	cases := []struct {
		name     string
		triggers []map[string]any // PUT one after the other
		// creds are what a sender that has not caught up sends besides the
		// current credential, given the secret and the rotated-away one.
		current, stale func(secret, old string) []string
	}{
		{"a custom header replaced by another",
			[]map[string]any{{"headerName": "X-Old-Token"}, {"headerName": "X-New-Token"}},
			func(s, _ string) []string { return []string{"X-New-Token", s} },
			func(s, _ string) []string { return []string{"X-Old-Token", s} }},
		{"two custom headers, then the default again",
			[]map[string]any{{"headerName": "X-First-Token"}, {"headerName": "X-Second-Token"}, {"headerName": nil}},
			func(s, _ string) []string { return []string{"X-Service-Webhook-Secret", s} },
			func(s, _ string) []string { return []string{"X-First-Token", s, "X-Second-Token", s} }},
		{"an HMAC header replaced by another",
			[]map[string]any{{"scheme": "hmac-sha256", "headerName": "X-Hub-Signature-256"}, {"headerName": "X-Partner-Signature"}},
			func(s, _ string) []string {
				return []string{"X-Partner-Signature", "sha256=" + apitest.HMACHex(s, []byte(body))}
			},
			func(s, _ string) []string {
				return []string{"X-Hub-Signature-256", "sha256=" + apitest.HMACHex(s, []byte(body))}
			}},
		{"the secret under a header the trigger never read",
			nil,
			func(s, _ string) []string { return []string{"X-Service-Webhook-Secret", s} },
			func(s, _ string) []string { return []string{"X-Partner-Token", s, "X-Echo", "token=" + s + "; v=1"} }},
		{"a rotated-away secret under any header",
			[]map[string]any{{"headerName": "X-Token"}},
			func(s, _ string) []string { return []string{"X-Token", s} },
			func(_, old string) []string { return []string{"X-Legacy", old, "X-Shouting", strings.ToUpper(old)} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			h := apitest.NewHook(t, c, nil)
			for _, trig := range tc.triggers {
				c.Do("PUT", "/v1/workflows/"+h.WorkflowID, map[string]any{"trigger": trig}).Want(t, 200)
			}
			old := h.Secret
			rot := c.Do("POST", "/v1/workflows/"+h.WorkflowID+"/trigger/webhook-secret/rotate", nil).Want(t, 200).Object(t)
			_, secret := apitest.SlugAndSecret(t, rot)
			stale := tc.stale(secret, old)
			headers := append(append([]string{"X-Event-Type", "deal.created"}, tc.current(secret, old)...), stale...)
			r := apitest.Deliver(t, e, h.Slug, "", body, headers...).Want(t, 202)
			// Members read runs: what they read must not hold the secret.
			run := apitest.AwaitRun(t, e.As(t, member), apitest.IDOf(t, r.Object(t)))
			hdrs := apitest.ObjectAt(t, run, "input", "webhook", "headers")
			if hdrs["x-event-type"] != "deal.created" {
				t.Errorf("webhook.headers %s, want x-event-type kept", apitest.JSONOf(hdrs))
			}
			for i := 0; i < len(stale); i += 2 {
				if v, ok := hdrs[strings.ToLower(stale[i])]; ok {
					t.Errorf("BUG: webhook.headers keeps %s: %v, a header that carries or once carried the trigger's secret", stale[i], v)
				}
			}
			raw := apitest.JSONOf(run)
			for _, s := range []string{secret, old, strings.ToUpper(old), apitest.HMACHex(secret, []byte(body))} {
				if strings.Contains(raw, s) {
					t.Errorf("BUG: the run a member reads holds a secret or signature: %s", raw)
				}
			}
		})
	}
}

func TestAWebhookPayloadIsTheJSONBodyOrElseTheRawText(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	cases := []struct {
		name        string
		body        string
		contentType string
		want        any
	}{
		{"a JSON object", `{"a":{"b":[1,2]}}`, "application/json", map[string]any{"a": map[string]any{"b": []any{1.0, 2.0}}}},
		{"a JSON array", `[1,"two",null]`, "application/json", []any{1.0, "two", nil}},
		{"a JSON string", `"hello"`, "application/json", "hello"},
		{"form data", "name=Acme&stage=seed", "application/x-www-form-urlencoded", "name=Acme&stage=seed"},
		{"plain text", "deal closed\nsee CRM", "text/plain", "deal closed\nsee CRM"},
		{"text that starts like JSON", `{"broken": `, "application/json", `{"broken": `},
		{"unicode text", "Zoë · naïve café — 日本 🚀", "text/plain; charset=utf-8", "Zoë · naïve café — 日本 🚀"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			h := apitest.NewHook(t, c, map[string]any{"scheme": "hmac-sha256"})
			r := apitest.Deliver(t, e, h.Slug, "", tc.body, "Content-Type", tc.contentType, "X-Hub-Signature", "sha256="+apitest.HMACHex(h.Secret, []byte(tc.body)))
			run := apitest.WantAccepted(t, c, h, r)
			wh := apitest.ObjectAt(t, run, "input", "webhook")
			if !reflect.DeepEqual(wh["payload"], tc.want) {
				t.Errorf("webhook.payload %s, want %s", apitest.JSONOf(wh["payload"]), apitest.JSONOf(tc.want))
			}
			if hdrs := apitest.ObjectAt(t, wh, "headers"); hdrs["content-type"] != tc.contentType {
				t.Errorf("content-type header %v, want %s", hdrs["content-type"], tc.contentType)
			}
			if q := apitest.ObjectAt(t, wh, "query"); len(q) != 0 {
				t.Errorf("webhook.query %s, want {}", apitest.JSONOf(q))
			}
		})
	}
}

func TestAWebhookRunsStepsThatReadThePayload(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil,
		apitest.Step("up", "upsertCompany", map[string]any{
			"canonicalName.$": "$.input.webhook.payload.company.name",
			"externalId.$":    "$.input.webhook.payload.company.id",
		}),
		apitest.Step("tag", "tagCompany", map[string]any{"companyId.$": "$.steps.up.company.id", "tags.$": "$.input.webhook.query.tag"}),
	)
	body := `{"company":{"name":"Webhook Co","id":"crm-77"}}`
	run := apitest.WantAccepted(t, c, h, apitest.Deliver(t, e, h.Slug, "?tag=inbound&tag=crm", body, "X-Service-Webhook-Secret", h.Secret))
	list := apitest.Companies(t, c)
	if len(list) != 1 {
		t.Fatalf("companies %s, want the one the webhook made", apitest.JSONOf(list))
	}
	co := list[0]
	if co["canonicalName"] != "Webhook Co" || co["externalId"] != "crm-77" || co["origin"] != "workflow" ||
		!reflect.DeepEqual(co["tags"], []any{"inbound", "crm"}) {
		t.Errorf("company %s, want Webhook Co / crm-77 from the workflow, tagged inbound and crm", apitest.JSONOf(co))
	}
	if got := apitest.ObjectAt(t, run, "output", "company"); got["id"] != co["id"] {
		t.Errorf("run output company %v, want %v", got["id"], co["id"])
	}
}

func TestSignaturesFromGitHubsOwnSignerAreAccepted(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	bodies := map[string]string{
		"compact JSON with unicode":          `{"action":"opened","sender":{"login":"Zoë"},"title":"naïve café — 日本 🚀"}`,
		"indented JSON with a final newline": "{\n  \"action\": \"closed\",\n\t\"numbers\": [ 1, 2.5, -3e2 ],\n  \"emoji\": \"🎉\"\n}\n",
		"escaped unicode and spaces":         `  { "name" : "caf\u00e9" , "quote" : "\"hi\"" }  `,
	}
	for _, header := range []string{"X-Hub-Signature", "X-Hub-Signature-256"} {
		for name, body := range bodies {
			t.Run(header+" "+name, func(t *testing.T) {
				t.Parallel()
				c := e.As(t, admin)
				trigger := map[string]any{"scheme": "hmac-sha256"}
				if header != "X-Hub-Signature" {
					trigger["headerName"] = header
				}
				h := apitest.NewHook(t, c, trigger)
				sig := webhooktest.OctokitSign(t, h.Secret, []byte(body))
				run := apitest.WantAccepted(t, c, h, apitest.Deliver(t, e, h.Slug, "", body, header, sig))
				var want any
				if err := json.Unmarshal([]byte(body), &want); err != nil {
					t.Fatal(err)
				}
				if got := apitest.ObjectAt(t, run, "input", "webhook")["payload"]; !reflect.DeepEqual(got, want) {
					t.Errorf("webhook.payload %s, want %s", apitest.JSONOf(got), apitest.JSONOf(want))
				}
				// A signature of the compacted body must not pass.
				var compact strings.Builder
				if err := json.NewEncoder(&compact).Encode(want); err != nil {
					t.Fatal(err)
				}
				if compacted := strings.TrimSuffix(compact.String(), "\n"); compacted != body {
					apitest.WantInvalidSignature(t, apitest.Deliver(t, e, h.Slug, "", compacted, header, sig))
				}
			})
		}
	}
}

func TestTheWebhookEndpointNeedsNoAPIKeyAndAcceptsNoOtherMethod(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil)
	// An API key is neither needed nor a substitute for the trigger secret.
	apitest.WantInvalidSignature(t, c.Do("POST", "/webhooks/workflows/"+h.Slug, `{}`))
	r := apitest.Deliver(t, e, h.Slug, "", nil, "X-Service-Webhook-Secret", h.Secret)
	apitest.WantAccepted(t, c, h, r)
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		res := e.Anonymous(t).Do(method, "/webhooks/workflows/"+h.Slug, nil, "X-Service-Webhook-Secret", h.Secret)
		apitest.WantError(t, res, 405)
		if allow := res.Header.Get("Allow"); allow != "POST" {
			t.Errorf("%s: Allow %q, want POST", method, allow)
		}
	}
}

func TestALargeWebhookPayloadIsRefusedOrItsRunFinishes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	// Bodies under the 1 MiB limit but near or over what one table item
	// holds (400 KB), in a workflow without steps, whose output is its input.
	for _, kb := range []int{150, 300, 600} {
		t.Run(strconv.Itoa(kb)+" KB", func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			h := apitest.NewHook(t, c, nil)
			body := `{"blob":"` + strings.Repeat("x", kb<<10) + `"}`
			r := apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", h.Secret)
			switch r.Status {
			case 413:
				apitest.WantError(t, r, 413)
				if runs := apitest.RunsOf(t, c, h.WorkflowID); len(runs) != 0 {
					t.Errorf("a refused webhook left runs: %d", len(runs))
				}
			case 202:
				id := apitest.IDOf(t, r.Object(t))
				run, done := apitest.PollRun(t, c, id, testenv.Scaled(30*time.Second))
				if !done {
					t.Errorf("BUG: a %d KB webhook payload was accepted (202) but its run is still %v after 30s; an accepted run must "+
						"end completed or failed (runs.Service.Execute once left it running when the outcome, output = input, "+
						"exceeded the table's 400 KB item limit)", kb, run["status"])
				}
			default:
				t.Errorf("BUG: a %d KB webhook payload (under the 1 MiB limit) answered %d %.200s, want 202 or 413", kb, r.Status, r.Body)
			}
		})
	}
}

func TestAWebhookPayloadKeepsItsNumbersExactlyAsSent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	cases := []struct{ name, body, want string }{
		// 2^53 − 1, the largest integer every client reads exactly (larger ones are a 400: numbers_test.go).
		{"a 53-bit id", `{"id":9007199254740991,"amount":0.1}`, `"payload":{"amount":0.1,"id":9007199254740991}`},
		// More digits than a float64 keeps: the POST /v1/workflows/{id}/runs input keeps it as sent.
		{"more digits than a float64 keeps", `{"x":3.14159265358979323846264338,"y":"kept"}`, `"payload":{"x":3.14159265358979323846264338,"y":"kept"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := apitest.NewHook(t, e.As(t, c), nil)
			r := apitest.Deliver(t, e, h.Slug, "", tc.body, "X-Service-Webhook-Secret", h.Secret).Want(t, 202)
			if body := string(r.Body); !strings.Contains(body, tc.want) {
				got := body[strings.Index(body, `"payload":`):]
				got = got[:strings.Index(got, "}")+1]
				t.Errorf("BUG: webhook body %s became run input %s, want %s as sent "+
					"(runs.webhookInput decodes the body with json.Unmarshal into any, i.e. float64, "+
					"unlike the run API's input which keeps json.Number)", tc.body, got, tc.want)
			}
		})
	}
}
