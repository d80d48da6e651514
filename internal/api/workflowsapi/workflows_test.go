package workflowsapi_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// workflowFields are the fields of a workflow record as GET shows it.
var workflowFields = []string{"id", "name", "description", "steps", "trigger", "createdAt", "updatedAt"}

// triggerFields are the fields of a workflow's trigger as GET shows it; the
// create and rotate responses add "secret".
var triggerFields = []string{"slug", "scheme", "headerName", "url"}

// wantNoSecret fails if the response body contains the secret.
func wantNoSecret(t *testing.T, what string, r *apitest.Response, secret string) {
	t.Helper()
	if strings.Contains(string(r.Body), secret) {
		t.Errorf("%s response contains the trigger secret: %s", what, r.Body)
	}
	if strings.Contains(string(r.Body), `"secret"`) {
		t.Errorf("%s response has a secret field: %s", what, r.Body)
	}
}

func TestCreateWorkflowReturnsTheRecordWithItsTriggerAndSecretAndGetShowsItWithoutTheSecret(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	stepsIn := []any{
		map[string]any{"id": "greet", "type": "set", "with": map[string]any{"hello": "world", "who.$": "$.input.name"}},
		map[string]any{"id": "stop", "type": "fail", "with": map[string]any{"message": "no"}},
	}
	created := apitest.CreateWorkflow(t, c, map[string]any{"name": "  Import deals  ", "description": "From the CRM.", "steps": stepsIn})

	trig := apitest.WebhookOf(t, created)
	apitest.WantKeys(t, "created workflow", created, workflowFields)
	apitest.WantKeys(t, "created trigger", trig, append(slices.Clone(triggerFields), "secret"))
	id := apitest.IDOf(t, created)
	if !strings.HasPrefix(id, "wf_") {
		t.Errorf("id %q, want a wf_ id", id)
	}
	if created["name"] != "Import deals" {
		t.Errorf("name %q, want the trimmed %q", created["name"], "Import deals")
	}
	if created["description"] != "From the CRM." {
		t.Errorf("description %v", created["description"])
	}
	if !reflect.DeepEqual(created["steps"], stepsIn) {
		t.Errorf("steps %s, want %s", apitest.JSONOf(created["steps"]), apitest.JSONOf(stepsIn))
	}
	slug, secret := apitest.SlugAndSecret(t, trig)
	if trig["scheme"] != "shared-secret" || trig["headerName"] != nil {
		t.Errorf("trigger %s, want the default scheme shared-secret and headerName null", apitest.JSONOf(trig))
	}
	if want := e.URL + "/webhooks/workflows/" + slug; trig["url"] != want {
		t.Errorf("trigger url %v, want %s", trig["url"], want)
	}
	if created["createdAt"] == nil || created["createdAt"] != created["updatedAt"] {
		t.Errorf("createdAt %v, updatedAt %v: want both set and equal on create", created["createdAt"], created["updatedAt"])
	}

	r := c.Do("GET", "/v1/workflows/"+id, nil).Want(t, 200)
	wantNoSecret(t, "GET", r, secret)
	got := r.Object(t)
	apitest.WantKeys(t, "workflow", got, workflowFields)
	apitest.WantKeys(t, "trigger", apitest.WebhookOf(t, got), triggerFields)
	want := apitest.Clone(t, created)
	delete(apitest.WebhookOf(t, want), "secret")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET returned\n%s\nwant the created record without the secret\n%s", apitest.JSONOf(got), apitest.JSONOf(want))
	}
}

func TestCreateWorkflowWithOnlyANameHasNoStepsAndANullDescription(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	wf := apitest.CreateWorkflow(t, e.Org(t), map[string]any{"name": "Bare"})
	if wf["description"] != nil {
		t.Errorf("description %v, want null", wf["description"])
	}
	if s, ok := wf["steps"].([]any); !ok || len(s) != 0 {
		t.Errorf("steps %v, want []", wf["steps"])
	}
}

// invalidWorkflowBody is a create or update body that must be refused
// with a 400 whose message names field.
type invalidWorkflowBody struct {
	name       string
	body       any
	field      string
	createOnly bool // valid as a partial update
}

func invalidWorkflowBodies() []invalidWorkflowBody {
	set := func(with map[string]any) []any {
		return []any{map[string]any{"id": "a", "type": "set", "with": with}}
	}
	return []invalidWorkflowBody{
		{name: "name missing", body: map[string]any{"description": "x"}, field: "name", createOnly: true},
		{name: "name a number", body: map[string]any{"name": 5}, field: "name"},
		{name: "name empty", body: map[string]any{"name": ""}, field: "name"},
		{name: "name only spaces", body: map[string]any{"name": "   "}, field: "name"},
		{name: "name null", body: map[string]any{"name": nil}, field: "name"},
		{name: "description a number", body: map[string]any{"name": "x", "description": 5}, field: "description"},
		{name: "description an object", body: map[string]any{"name": "x", "description": map[string]any{}}, field: "description"},
		{name: "steps an object", body: map[string]any{"name": "x", "steps": map[string]any{"id": "a", "type": "set"}}, field: "steps"},
		{name: "steps a string", body: map[string]any{"name": "x", "steps": "set"}, field: "steps"},
		{name: "step not an object", body: map[string]any{"name": "x", "steps": []any{"set"}}, field: "steps[0]"},
		{name: "unknown step type", body: map[string]any{"name": "x", "steps": []any{
			map[string]any{"id": "a", "type": "sendEmail"}}}, field: "steps[0].type"},
		{name: "step without type", body: map[string]any{"name": "x", "steps": []any{map[string]any{"id": "a"}}}, field: "steps[0].type"},
		{name: "step without id", body: map[string]any{"name": "x", "steps": []any{map[string]any{"type": "set"}}}, field: "steps[0].id"},
		{name: "duplicate step ids", body: map[string]any{"name": "x", "steps": []any{
			map[string]any{"id": "a", "type": "set"}, map[string]any{"id": "b", "type": "set"}, map[string]any{"id": "a", "type": "set"}}},
			field: "steps[2].id"},
		{name: "unknown step field", body: map[string]any{"name": "x", "steps": []any{
			map[string]any{"id": "a", "type": "set", "when": true}}}, field: "steps[0].when"},
		{name: "malformed .$ path", body: map[string]any{"name": "x", "steps": set(map[string]any{"x.$": "$.input[("})},
			field: "steps[0].with.x.$"},
		{name: ".$ path not starting at the root", body: map[string]any{"name": "x", "steps": set(map[string]any{"x.$": "input.name"})},
			field: "steps[0].with.x.$"},
		{name: ".$ value not a string", body: map[string]any{"name": "x", "steps": set(map[string]any{"x.$": 3})},
			field: "steps[0].with.x.$"},
		{name: "malformed .$ path nested in with", body: map[string]any{"name": "x", "steps": set(map[string]any{
			"outer": map[string]any{"inner.$": "$..["}})}, field: "steps[0].with.outer.inner.$"},
		{name: "fail step without a message", body: map[string]any{"name": "x", "steps": []any{
			map[string]any{"id": "f", "type": "fail"}}}, field: "steps[0].with.message"},
		{name: "upsertCompany setting a read-only field", body: map[string]any{"name": "x", "steps": []any{
			map[string]any{"id": "up", "type": "upsertCompany", "with": map[string]any{"canonicalName.$": "$.input.name", "employeeCount": 5}}}},
			field: "steps[0].with.employeeCount"},
		{name: "trigger scheme not in the enum", body: map[string]any{"name": "x", "trigger": map[string]any{"scheme": "md5"}},
			field: "trigger.scheme"},
		{name: "trigger scheme empty", body: map[string]any{"name": "x", "trigger": map[string]any{"scheme": ""}}, field: "trigger.scheme"},
		{name: "trigger scheme null", body: map[string]any{"name": "x", "trigger": map[string]any{"scheme": nil}}, field: "trigger.scheme"},
		{name: "trigger scheme a number", body: map[string]any{"name": "x", "trigger": map[string]any{"scheme": 1}}, field: "trigger.scheme"},
		{name: "headerName with a space", body: map[string]any{"name": "x", "trigger": map[string]any{"headerName": "Bad Header"}},
			field: "trigger.headerName"},
		{name: "headerName Authorization", body: map[string]any{"name": "x", "trigger": map[string]any{"headerName": "Authorization"}},
			field: "trigger.headerName"},
		{name: "headerName authorization in lower case", body: map[string]any{"name": "x",
			"trigger": map[string]any{"scheme": "hmac-sha256", "headerName": "authorization"}}, field: "trigger.headerName"},
		{name: "headerName Content-Type", body: map[string]any{"name": "x", "trigger": map[string]any{"headerName": "Content-Type"}},
			field: "trigger.headerName"},
		{name: "headerName empty", body: map[string]any{"name": "x", "trigger": map[string]any{"headerName": ""}}, field: "trigger.headerName"},
		{name: "headerName with a colon", body: map[string]any{"name": "x", "trigger": map[string]any{"headerName": "X-Sig:"}},
			field: "trigger.headerName"},
		{name: "trigger a string", body: map[string]any{"name": "x", "trigger": "hmac-sha256"}, field: "trigger"},
		{name: "trigger null", body: map[string]any{"name": "x", "trigger": nil}, field: "trigger"},
		{name: "a chosen trigger secret", body: map[string]any{"name": "x", "trigger": map[string]any{"secret": "mine"}},
			field: "trigger.secret"},
		{name: "a chosen trigger slug", body: map[string]any{"name": "x", "trigger": map[string]any{"slug": "wh_mine"}},
			field: "trigger.slug"},
		{name: "unknown top-level field", body: map[string]any{"name": "x", "color": "red"}, field: "color"},
		{name: "body not JSON", body: `{"name": "x"`, field: "JSON"},
		{name: "body an array", body: `[{"name": "x"}]`, field: "object"},
	}
}

func TestCreateWorkflowRejectsInvalidBodiesWith400NamingTheField(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	t.Cleanup(func() {
		if list := admin.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 0 {
			t.Errorf("rejected creates stored %d workflows: %s", len(list), apitest.JSONOf(list))
		}
	})
	for _, tc := range invalidWorkflowBodies() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msg := apitest.WantError(t, e.As(t, admin).Do("POST", "/v1/workflows", tc.body), 400, tc.field)
			if !strings.HasPrefix(msg, "Invalid request body") {
				t.Errorf("error %q does not start with %q", msg, "Invalid request body")
			}
		})
	}
}

func TestUpdateWorkflowRejectsInvalidBodiesWith400AndLeavesItUnchanged(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	for _, tc := range invalidWorkflowBodies() {
		if tc.createOnly {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			wf := apitest.CreateWorkflow(t, c, map[string]any{"name": "Keep", "description": "d",
				"steps": []any{map[string]any{"id": "a", "type": "set", "with": map[string]any{"k": "v"}}}})
			path := "/v1/workflows/" + apitest.IDOf(t, wf)
			before := c.Do("GET", path, nil).Want(t, 200).Object(t)
			apitest.WantError(t, c.Do("PUT", path, tc.body), 400, tc.field)
			if after := c.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, before) {
				t.Errorf("a rejected update changed the workflow:\nbefore %s\nafter  %s", apitest.JSONOf(before), apitest.JSONOf(after))
			}
		})
	}
}

func TestUpdateWorkflowIsPartial(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	admin := e.Org(t)
	stepsA := []any{map[string]any{"id": "a", "type": "set", "with": map[string]any{"k": "v"}}}
	stepsB := []any{map[string]any{"id": "b", "type": "fail", "with": map[string]any{"message.$": "$.input.why"}}}
	cases := []struct {
		name    string
		body    any
		changes map[string]any // fields expected to differ from the created record; trigger fields under "trigger."
	}{
		{"name changes, the rest stays", map[string]any{"name": "Renamed"}, map[string]any{"name": "Renamed"}},
		{"description changes", map[string]any{"description": "New."}, map[string]any{"description": "New."}},
		{"null clears the description", map[string]any{"description": nil}, map[string]any{"description": nil}},
		{"steps are replaced", map[string]any{"steps": stepsB}, map[string]any{"steps": stepsB}},
		{"an empty steps array removes every step", map[string]any{"steps": []any{}}, map[string]any{"steps": []any{}}},
		{"null steps remove every step", map[string]any{"steps": nil}, map[string]any{"steps": []any{}}},
		{"the scheme and header change", map[string]any{"trigger": map[string]any{"scheme": "hmac-sha256", "headerName": "X-Hub-Signature-256"}},
			map[string]any{"trigger.scheme": "hmac-sha256", "trigger.headerName": "X-Hub-Signature-256"}},
		{"only the header changes", map[string]any{"trigger": map[string]any{"headerName": "X-Partner-Token"}},
			map[string]any{"trigger.headerName": "X-Partner-Token"}},
		{"an empty body changes nothing", map[string]any{}, nil},
		{"an empty trigger changes nothing", map[string]any{"trigger": map[string]any{}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			created := apitest.CreateWorkflow(t, c, map[string]any{"name": "Original", "description": "Old.", "steps": stepsA})
			_, secret := apitest.SlugAndSecret(t, apitest.WebhookOf(t, created))
			path := "/v1/workflows/" + apitest.IDOf(t, created)
			before := c.Do("GET", path, nil).Want(t, 200).Object(t)
			time.Sleep(5 * time.Millisecond) // so that a change shows in updatedAt (millisecond precision)

			r := c.Do("PUT", path, tc.body).Want(t, 200)
			wantNoSecret(t, "PUT", r, secret)
			got := r.Object(t)
			want := apitest.Clone(t, before)
			for f, v := range tc.changes {
				if sub, ok := strings.CutPrefix(f, "trigger."); ok {
					apitest.WebhookOf(t, want)[sub] = v
				} else {
					want[f] = v
				}
			}
			want["updatedAt"] = got["updatedAt"]
			if !reflect.DeepEqual(got, want) {
				t.Errorf("PUT %s returned\n%s\nwant\n%s", apitest.JSONOf(tc.body), apitest.JSONOf(got), apitest.JSONOf(want))
			}
			if len(tc.changes) == 0 && got["updatedAt"] != before["updatedAt"] {
				t.Errorf("an update that changed nothing moved updatedAt from %v to %v", before["updatedAt"], got["updatedAt"])
			}
			if len(tc.changes) > 0 && got["updatedAt"] == before["updatedAt"] {
				t.Errorf("an update that changed the workflow left updatedAt at %v", got["updatedAt"])
			}
			if after := c.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, got) {
				t.Errorf("GET after PUT returned\n%s\nwant the PUT response\n%s", apitest.JSONOf(after), apitest.JSONOf(got))
			}
		})
	}
}

func TestANullHeaderNameReturnsTheTriggerToTheDefaultHeader(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.CreateWorkflow(t, c, map[string]any{"name": "Hdr", "trigger": map[string]any{"scheme": "hmac-sha256", "headerName": "X-Hub-Signature-256"}})
	trig := apitest.WebhookOf(t, wf)
	if trig["scheme"] != "hmac-sha256" || trig["headerName"] != "X-Hub-Signature-256" {
		t.Fatalf("created trigger %s, want hmac-sha256 with X-Hub-Signature-256", apitest.JSONOf(trig))
	}
	path := "/v1/workflows/" + apitest.IDOf(t, wf)
	got := apitest.WebhookOf(t, c.Do("PUT", path, map[string]any{"trigger": map[string]any{"headerName": nil}}).Want(t, 200).Object(t))
	if got["headerName"] != nil || got["scheme"] != "hmac-sha256" || got["slug"] != trig["slug"] {
		t.Errorf("trigger after headerName null: %s, want the same slug and scheme with headerName null", apitest.JSONOf(got))
	}
}

func TestTheSecretIsShownOnlyInTheCreateAndRotateResponses(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	wf := apitest.CreateWorkflow(t, c, map[string]any{"name": "Secretive"})
	id := apitest.IDOf(t, wf)
	path := "/v1/workflows/" + id
	slug, secret := apitest.SlugAndSecret(t, apitest.WebhookOf(t, wf))
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 32 {
		t.Errorf("secret %q, want a long whsec_ secret", secret)
	}

	wantNoSecret(t, "GET", c.Do("GET", path, nil).Want(t, 200), secret)
	wantNoSecret(t, "list", c.Do("GET", "/v1/workflows", nil).Want(t, 200), secret)
	wantNoSecret(t, "PUT", c.Do("PUT", path, map[string]any{"description": "changed"}).Want(t, 200), secret)
	wantNoSecret(t, "PUT of the trigger", c.Do("PUT", path, map[string]any{"trigger": map[string]any{"scheme": "hmac-sha256"}}).Want(t, 200), secret)

	rot := c.Do("POST", path+"/trigger/webhook-secret/rotate", nil).Want(t, 200).Object(t)
	apitest.WantKeys(t, "rotate response", rot, append(slices.Clone(triggerFields), "secret"))
	rotSlug, rotated := apitest.SlugAndSecret(t, rot)
	if rotSlug != slug {
		t.Errorf("rotation changed the slug from %s to %s", slug, rotSlug)
	}
	if rotated == secret {
		t.Errorf("rotation returned the old secret")
	}
	if rot["scheme"] != "hmac-sha256" || rot["headerName"] != nil || rot["url"] != e.URL+"/webhooks/workflows/"+slug {
		t.Errorf("rotate response %s, want the current scheme, header and url", apitest.JSONOf(rot))
	}
	for _, s := range []string{secret, rotated} {
		wantNoSecret(t, "GET after rotation", c.Do("GET", path, nil).Want(t, 200), s)
		wantNoSecret(t, "list after rotation", c.Do("GET", "/v1/workflows", nil).Want(t, 200), s)
	}
	// Nor does a run of the workflow see it.
	run := apitest.AwaitRun(t, c, apitest.IDOf(t, apitest.StartRun(t, c, id, nil)))
	if strings.Contains(apitest.JSONOf(run), rotated) {
		t.Errorf("a run record contains the trigger secret: %s", apitest.JSONOf(run))
	}
}

func TestDeleteWorkflowAnswers204ThenItIsGone(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	keep := apitest.CreateWorkflow(t, c, map[string]any{"name": "Keep"})
	gone := apitest.CreateWorkflow(t, c, map[string]any{"name": "Gone"})
	path := "/v1/workflows/" + apitest.IDOf(t, gone)

	r := c.Do("DELETE", path, nil).Want(t, 204)
	if len(r.Body) != 0 {
		t.Errorf("DELETE body %q, want empty", r.Body)
	}
	apitest.NotFound(t, c.Do("GET", path, nil))
	apitest.NotFound(t, c.Do("DELETE", path, nil))
	apitest.NotFound(t, c.Do("PUT", path, map[string]any{"name": "Back"}))
	apitest.NotFound(t, c.Do("POST", path+"/trigger/webhook-secret/rotate", nil))
	apitest.NotFound(t, c.Do("POST", path+"/runs", map[string]any{}))
	apitest.NotFound(t, c.Do("GET", path+"/runs", nil))
	if got := apitest.IDsOf(t, c.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t)); !slices.Equal(got, []string{apitest.IDOf(t, keep)}) {
		t.Errorf("list after delete = %v, want only %s", got, apitest.IDOf(t, keep))
	}
}

func TestAnUnknownWorkflowIsNotFound(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	path := "/v1/workflows/wf_doesnotexist"
	apitest.NotFound(t, c.Do("GET", path, nil))
	apitest.NotFound(t, c.Do("PUT", path, map[string]any{"name": "x"}))
	apitest.NotFound(t, c.Do("DELETE", path, nil))
	apitest.NotFound(t, c.Do("POST", path+"/trigger/webhook-secret/rotate", nil))
	apitest.NotFound(t, c.Do("POST", path+"/runs", nil))
	apitest.NotFound(t, c.Do("GET", path+"/runs", nil))
}

func TestAnotherOrganizationsWorkflowIsNotFoundAndUntouched(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.Org(t)
	other := e.Org(t)
	theirs := apitest.CreateWorkflow(t, owner, map[string]any{"name": "Theirs", "description": "private"})
	slug, secret := apitest.SlugAndSecret(t, apitest.WebhookOf(t, theirs))
	mine := apitest.CreateWorkflow(t, other, map[string]any{"name": "Mine"})
	path := "/v1/workflows/" + apitest.IDOf(t, theirs)
	before := owner.Do("GET", path, nil).Want(t, 200).Object(t)

	cases := []struct {
		method, path string
		body         any
	}{
		{"GET", path, nil},
		{"PUT", path, map[string]any{"name": "Hijacked", "trigger": map[string]any{"scheme": "hmac-sha256"}}},
		{"PUT", path, map[string]any{}},
		{"DELETE", path, nil},
		{"POST", path + "/trigger/webhook-secret/rotate", nil},
		{"POST", path + "/runs", map[string]any{"input": map[string]any{"x": 1}}},
		{"POST", path + "/runs", nil},
		{"GET", path + "/runs", nil},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+strings.TrimPrefix(tc.path, path), func(t *testing.T) {
			apitest.NotFound(t, e.As(t, other).Do(tc.method, tc.path, tc.body))
		})
	}

	if after := owner.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, before) {
		t.Errorf("another organization's requests changed the workflow:\nbefore %s\nafter  %s", apitest.JSONOf(before), apitest.JSONOf(after))
	}
	if runs := owner.Do("GET", path+"/runs", nil).Want(t, 200).List(t); len(runs) != 0 {
		t.Errorf("another organization started runs of the workflow: %s", apitest.JSONOf(runs))
	}
	// The secret was not rotated: it still starts a run.
	e.Anonymous(t).Do("POST", "/webhooks/workflows/"+slug, `{}`, "X-Service-Webhook-Secret", secret).Want(t, 202)
	if got := apitest.IDsOf(t, other.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t)); !slices.Equal(got, []string{apitest.IDOf(t, mine)}) {
		t.Errorf("the other organization lists %v, want only its own %s", got, apitest.IDOf(t, mine))
	}
}

func TestListWorkflowsIsNewestFirstAndPages(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	if list := c.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 0 {
		t.Fatalf("a new organization lists workflows: %s", apitest.JSONOf(list))
	}
	var ids []string
	for _, name := range []string{"First", "Second", "Third"} {
		ids = append(ids, apitest.IDOf(t, apitest.CreateWorkflow(t, c, map[string]any{"name": name})))
	}
	newest := []string{ids[2], ids[1], ids[0]}
	cases := []struct {
		query string
		want  []string
	}{
		{"", newest},
		{"?limit=2", newest[:2]},
		{"?limit=2&page=2", newest[2:]},
		{"?lt=" + ids[2], newest[1:]},
		{"?direction=asc", ids},
	}
	for _, tc := range cases {
		r := c.Do("GET", "/v1/workflows"+tc.query, nil).Want(t, 200)
		list := r.List(t)
		if got := apitest.IDsOf(t, list); !slices.Equal(got, tc.want) {
			t.Errorf("GET /v1/workflows%s = %v, want %v", tc.query, got, tc.want)
		}
		for _, wf := range list {
			apitest.WantKeys(t, "listed workflow", wf, workflowFields)
			apitest.WantKeys(t, "listed trigger", apitest.WebhookOf(t, wf), triggerFields)
		}
	}
	apitest.WantError(t, c.Do("GET", "/v1/workflows?page=0", nil), 400, "page")
	apitest.WantError(t, c.Do("GET", "/v1/workflows?direction=up", nil), 400, "direction")
}
