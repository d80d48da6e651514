package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// deepJSON is an object nested levels deep: {"a":{"a":...1...}}.
func deepJSON(levels int) string {
	return strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels)
}

// nested is deepJSON as a Go value.
func nested(levels int) any {
	var v any = 1.0
	for i := 0; i < levels; i++ {
		v = map[string]any{"a": v}
	}
	return v
}

// wantNoRuns fails unless the organization has no runs.
func wantNoRuns(t *testing.T, c *apitest.Client) {
	t.Helper()
	if list := c.Do("GET", "/v1/workflow-runs", nil).Want(t, 200).List(t); len(list) != 0 {
		t.Errorf("a refused body created %d runs: %.300s", len(list), apitest.JSONOf(list))
	}
}

func TestACustomNestedDeeperThan64LevelsIs400AndNothingIsStored(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	for _, levels := range []int{65, 10_000} {
		t.Run(fmt.Sprint(levels, " levels"), func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			const want = `{"error":"Invalid request body: custom is nested deeper than 64 levels"}`
			r := c.Do("POST", "/v1/companies", `{"canonicalName":"Deep","custom":`+deepJSON(levels)+`}`)
			r.Want(t, 400)
			apitest.WantExactBody(t, r, want)

			// An update is refused the same way and leaves the record as it was.
			rec := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Shallow " + t.Name()})
			path := "/v1/companies/" + apitest.IDOf(t, rec)
			r = c.Do("PUT", path, `{"custom":`+deepJSON(levels)+`}`)
			r.Want(t, 400)
			apitest.WantExactBody(t, r, want)
			if got := apitest.ObjectAt(t, c.Do("GET", path, nil).Want(t, 200).Object(t), "custom"); len(got) != 0 {
				t.Errorf("a refused update changed custom to %.200s", apitest.JSONOf(got))
			}
			c.Do("DELETE", path, nil).Want(t, 204)
		})
	}
	t.Run("64 levels", func(t *testing.T) {
		c := e.As(t, admin)
		rec := apitest.CreateCompany(t, c, `{"canonicalName":"Deep enough","custom":`+deepJSON(64)+`}`)
		got := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, rec), nil).Want(t, 200).Object(t)
		if apitest.JSONOf(got["custom"]) != apitest.JSONOf(nested(64)) {
			t.Errorf("custom nested 64 levels came back as %.200s", apitest.JSONOf(got["custom"]))
		}
		c.Do("DELETE", "/v1/companies/"+apitest.IDOf(t, rec), nil).Want(t, 204)
	})
	t.Cleanup(func() { apitest.WantNoCompanies(t, admin) })
}

func TestARunInputNestedDeeperThan64LevelsIs400AndNoRunIsCreated(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Deep input")
	for _, levels := range []int{65, 10_000} {
		r := c.Do("POST", "/v1/workflows/"+wf+"/runs", `{"input":`+deepJSON(levels)+`}`)
		r.Want(t, 400)
		apitest.WantExactBody(t, r, `{"error":"Invalid request body: input is nested deeper than 64 levels"}`)
	}
	wantNoRuns(t, c)
	run := apitest.RunToEnd(t, c, wf, `{"input":`+deepJSON(64)+`}`)
	apitest.WantStatus(t, run, "completed")
}

func TestAWebhookPayloadNestedDeeperThan64LevelsIs400OnceTheSignatureIsChecked(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil)
	for _, levels := range []int{65, 10_000} {
		body := deepJSON(levels)
		// A sender without the secret learns nothing about the body.
		apitest.WantInvalidSignature(t, apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", "whsec_wrong"))
		r := apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", h.Secret)
		r.Want(t, 400)
		apitest.WantExactBody(t, r, `{"error":"Invalid request body: payload is nested deeper than 64 levels"}`)
	}
	wantNoRuns(t, c)
	run := apitest.WantAccepted(t, c, h, apitest.Deliver(t, e, h.Slug, "", deepJSON(64), "X-Service-Webhook-Secret", h.Secret))
	if got := apitest.ObjectAt(t, run, "input", "webhook")["payload"]; apitest.JSONOf(got) != apitest.JSONOf(nested(64)) {
		t.Errorf("a payload nested 64 levels came back as %.200s", apitest.JSONOf(got))
	}
}

func TestAFreeFormFieldOver128KiBAsStoredIs400NamingTheField(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Big input")
	big := map[string]any{"blob": strings.Repeat("x", 130<<10)}
	// 30,000 U+2028 are 90,000 bytes sent raw but 180,000 stored: JSON
	// keeps them as \u2028.
	escaped := map[string]any{"blob": strings.Repeat("\u2028", 30_000)}
	for _, v := range []map[string]any{big, escaped} {
		apitest.WantError(t, c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Big", "custom": v}), 400,
			"Invalid request body: custom must be at most 128 KiB (131072 bytes) as JSON; it is ")
		apitest.WantError(t, c.Do("POST", "/v1/workflows/"+wf+"/runs", map[string]any{"input": v}), 400,
			"Invalid request body: input must be at most 128 KiB (131072 bytes) as JSON; it is ")
	}
	apitest.WantNoCompanies(t, c)
	wantNoRuns(t, c)

	fits := map[string]any{"blob": strings.Repeat("x", 120<<10)}
	rec := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Fits", "custom": fits})
	if got := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, rec), nil).Want(t, 200).Object(t); apitest.JSONOf(got["custom"]) != apitest.JSONOf(fits) {
		t.Errorf("a 120 KiB custom did not round-trip")
	}
	apitest.WantStatus(t, apitest.RunToEnd(t, c, wf, map[string]any{"input": fits}), "completed")
}

func TestAWebhookRequestLargerThanARunInputIs413AndStartsNothing(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil)
	for name, body := range map[string]string{
		"a JSON payload": `{"blob":"` + strings.Repeat("x", 200<<10) + `"}`,
		"a text payload": strings.Repeat("deal closed ", 20_000),
	} {
		r := apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", h.Secret)
		msg := apitest.WantError(t, r, 413, "the webhook request is too large to start a run", "128 KiB")
		if strings.Contains(msg, "internal") {
			t.Errorf("%s: %q", name, msg)
		}
	}
	wantNoRuns(t, c)
}

func TestAStepOutputLargerThan224KiBFailsTheRunNamingTheStep(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	// Three copies of an 80 KiB input are 240 KiB: too much for one step,
	// although input and output together would still fit a run record.
	wf := apitest.WorkflowWith(t, c, "Triple", apitest.Step("triple", "set", map[string]any{
		"a.$": "$.input.blob", "b.$": "$.input.blob", "c.$": "$.input.blob"}))
	run := apitest.RunToEnd(t, c, wf, map[string]any{"input": map[string]any{"blob": strings.Repeat("x", 80<<10)}})
	apitest.WantStatus(t, run, "failed")
	runErr := apitest.ObjectAt(t, run, "error")
	if msg, _ := runErr["message"].(string); runErr["step"] != "triple" ||
		!strings.Contains(msg, `step "triple": the output is `) || !strings.Contains(msg, "more than the 224 KiB (229376 bytes) a step may output") {
		t.Errorf("run error %s, want the triple step's output over 224 KiB", apitest.JSONOf(runErr))
	}
}

func TestAStepOutputNestedDeeperThan128LevelsFailsTheRunNamingTheStep(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	// Each step wraps the previous output in "with" nested 10 levels: an
	// input 63 levels deep gives outputs of 73, 83, ... levels, and the
	// seventh (133) is over the limit of 128.
	wrap := func(path string) map[string]any {
		w := map[string]any{"x.$": path}
		for i := 0; i < 9; i++ {
			w = map[string]any{"w": w}
		}
		return w
	}
	list := []map[string]any{apitest.Step("s1", "set", wrap("$.input"))}
	for i := 2; i <= 8; i++ {
		list = append(list, apitest.Step(fmt.Sprint("s", i), "set", wrap(fmt.Sprint("$.steps.s", i-1))))
	}
	wf := apitest.WorkflowWith(t, c, "Deeper and deeper", list...)
	run := apitest.RunToEnd(t, c, wf, map[string]any{"input": map[string]any{"deep": nested(62)}})
	apitest.WantStatus(t, run, "failed")
	runErr := apitest.ObjectAt(t, run, "error")
	if runErr["step"] != "s7" || runErr["message"] != `step "s7": the output is nested deeper than 128 levels, the most a step may output` {
		t.Errorf("run error %s, want step s7's output nested deeper than 128 levels", apitest.JSONOf(runErr))
	}
}

func TestControlCharactersInSingleLineTextAre400NamingTheField(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	wf := apitest.WorkflowWith(t, admin, "Control")
	run := apitest.RunToEnd(t, admin, wf, nil)
	const single = "must not contain control characters"
	const multi = "must not contain control characters other than line breaks and tabs"
	cases := []struct {
		name, method, path string
		body               map[string]any
		want               string
	}{
		{"NUL in canonicalName", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme\x00"}, "canonicalName " + single},
		{"ESC in canonicalName", "POST", "/v1/companies", map[string]any{"canonicalName": "\x1b[31mAcme"}, "canonicalName " + single},
		{"a line break inside canonicalName", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme\nCorp"}, "canonicalName " + single},
		{"DEL in an alternative name", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "alternativeNames": []any{"A", "B\x7f"}}, "alternativeNames[1] " + single},
		{"C1 NEL in a tag", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "tags": []any{"a\u0085b"}}, "tags[0] " + single},
		{"a tab in externalId", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "externalId": "crm\t1"}, "externalId " + single},
		{"ESC in website", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "website": "acme.com\x1b"}, "website " + single},
		{"NUL in sector", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "sector": "Fin\x00tech"}, "sector " + single},
		{"a bell in industry", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "industry": "Bank\a"}, "industry " + single},
		{"a line break in location.city", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "location": map[string]any{"city": "Os\nlo"}}, "location.city " + single},
		{"NUL in description", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "description": "a\x00b"}, "description " + multi},
		{"ESC in shortDescription", "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "shortDescription": "\x1b[2J"}, "shortDescription " + multi},
		{"NUL in canonicalName on update", "PUT", "", map[string]any{"canonicalName": "Ac\x00me"}, "canonicalName " + single},
		{"ESC in a workflow name", "POST", "/v1/workflows", map[string]any{"name": "Flow\x1b"}, "name " + single},
		{"NUL in a workflow description", "POST", "/v1/workflows", map[string]any{"name": "Flow", "description": "x\x00"}, "description " + multi},
		{"a control character in a trigger header name", "PUT", "/v1/workflows/" + wf, map[string]any{"trigger": map[string]any{"headerName": "X-Sig\x00"}}, "trigger.headerName " + single},
		{"NUL in a run title", "POST", "/v1/workflows/" + wf + "/runs", map[string]any{"title": "Run\x00"}, "title " + single},
		{"ESC in a run rename", "PATCH", "/v1/workflow-runs/" + apitest.IDOf(t, run), map[string]any{"title": "\x1b]0;pwned\a"}, "title " + single},
	}
	company := apitest.CreateCompany(t, admin, map[string]any{"canonicalName": "Before"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			path := tc.path
			if path == "" {
				path = "/v1/companies/" + apitest.IDOf(t, company)
			}
			r := c.Do(tc.method, path, tc.body)
			r.Want(t, 400)
			apitest.WantExactBody(t, r, apitest.JSONOf(map[string]string{"error": "Invalid request body: " + tc.want}))
		})
	}
	t.Cleanup(func() {
		if list := admin.Do("GET", "/v1/companies", nil).Want(t, 200).List(t); len(list) != 1 || list[0]["canonicalName"] != "Before" {
			t.Errorf("refused bodies changed the companies: %.500s", apitest.JSONOf(list))
		}
		if list := admin.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 1 || list[0]["trigger"].(map[string]any)["headerName"] != nil {
			t.Errorf("refused bodies changed the workflows: %.500s", apitest.JSONOf(list))
		}
		if list := admin.Do("GET", "/v1/workflow-runs", nil).Want(t, 200).List(t); len(list) != 1 || list[0]["title"] != run["title"] {
			t.Errorf("refused bodies changed the runs: %.500s", apitest.JSONOf(list))
		}
	})
}

func TestDescriptionsKeepLineBreaksAndTabs(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	text := "Line one.\r\nLine two:\tindented.\n"
	rec := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme", "description": text, "shortDescription": text})
	got := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, rec), nil).Want(t, 200).Object(t)
	if got["description"] != text || got["shortDescription"] != text {
		t.Errorf("descriptions came back as %q and %q, want %q", got["description"], got["shortDescription"], text)
	}
	wf := apitest.CreateWorkflow(t, c, map[string]any{"name": "Flow", "description": text})
	if wf["description"] != text {
		t.Errorf("workflow description came back as %q, want %q", wf["description"], text)
	}
}

func TestATriggerHeaderNameThatLooksLikeACredentialIs400NamingTheField(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.IDOf(t, apitest.CreateWorkflow(t, c, map[string]any{"name": "Hook"}))
	for _, name := range []string{"X-Service-Api-Key", "x-service-client-id", "X-Service-Anything", "Cookie", "Set-Cookie",
		"Proxy-Authorization", "Authorization", "X-Api-Key", "Api-Key", "x-apikey", "X_API_KEY", "X-Goog-Api-Key", "X-CSRF-Token"} {
		msg := apitest.WantError(t, c.Do("PUT", "/v1/workflows/"+wf, map[string]any{"trigger": map[string]any{"headerName": name}}), 400,
			"Invalid request body: trigger.headerName is invalid: header name ")
		if !strings.Contains(msg, "credential") && !strings.Contains(msg, "reserved") {
			t.Errorf("headerName %s: %q does not say why", name, msg)
		}
		apitest.WantError(t, c.Do("POST", "/v1/workflows", map[string]any{"name": "x", "trigger": map[string]any{"headerName": name}}), 400,
			"trigger.headerName is invalid")
	}
	if list := c.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 1 || list[0]["trigger"].(map[string]any)["headerName"] != nil {
		t.Errorf("refused trigger headers were stored: %.500s", apitest.JSONOf(list))
	}
	// Headers that senders use for webhook secrets stay accepted.
	for _, name := range []string{"X-Gitlab-Token", "X-Hub-Signature-256", "X-Service-Webhook-Secret", "X-Partner-Token"} {
		c.Do("PUT", "/v1/workflows/"+wf, map[string]any{"trigger": map[string]any{"headerName": name}}).Want(t, 200)
	}
}

func TestWebhookHeadersNeverExposeCookiesOrServiceAPICredentials(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil)
	r := apitest.Deliver(t, e, h.Slug, "", `{}`, "X-Service-Webhook-Secret", h.Secret,
		"Cookie", "session=abc", "X-Service-Api-Key", "sk_leaked", "X-Service-Client-Id", "ck_leaked",
		"Proxy-Authorization", "Basic Zm9vOmJhcg==", "X-Api-Key", "k_leaked", "X-Event", "kept")
	run := apitest.WantAccepted(t, c, h, r)
	hdrs := apitest.ObjectAt(t, run, "input", "webhook", "headers")
	for _, name := range []string{"cookie", "x-service-api-key", "x-service-client-id", "proxy-authorization", "x-api-key",
		"x-service-webhook-secret", "authorization"} {
		if v, ok := hdrs[name]; ok {
			t.Errorf("webhook.headers exposes %s: %v", name, v)
		}
	}
	if hdrs["x-event"] != "kept" {
		t.Errorf("webhook.headers %s, want x-event kept", apitest.JSONOf(hdrs))
	}
	if raw := apitest.JSONOf(run); strings.Contains(raw, "leaked") || strings.Contains(raw, "session=abc") {
		t.Errorf("the run holds a credential: %.500s", raw)
	}
}

func TestBodyLevelErrorsAreFullSentences(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Sentences")
	cases := []struct{ path, body, want string }{
		{"/v1/companies", ``, "Invalid request body: the body is empty; send a JSON object"},
		{"/v1/workflows", " \n", "Invalid request body: the body is empty; send a JSON object"},
		{"/v1/companies", `{"canonicalName":"Acme"`, "Invalid request body: the body is not valid JSON: it ends unexpectedly"},
		{"/v1/workflows/" + wf + "/runs", `{"input":{`, "Invalid request body: the body is not valid JSON: it ends unexpectedly"},
		{"/v1/workflows", `[]`, "Invalid request body: the body must be a JSON object, not an array"},
		{"/v1/workflows/" + wf + "/runs", `true`, "Invalid request body: the body must be a JSON object, not a boolean"},
		{"/v1/companies", `{"canonicalName":"A"} {}`, "Invalid request body: the body must hold a single JSON object, but more data follows it"},
		{"/v1/companies", `{"canonicalName":"A",}`, "Invalid request body: the body is not valid JSON: invalid character '}' looking for beginning of object key string at byte 22"},
	}
	for _, tc := range cases {
		r := c.Do("POST", tc.path, tc.body)
		r.Want(t, 400)
		apitest.WantExactBody(t, r, apitest.JSONOf(map[string]string{"error": tc.want}))
	}
}
