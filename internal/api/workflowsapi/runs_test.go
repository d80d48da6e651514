package workflowsapi_test

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

func TestARunIsAcceptedQueuedAndCompletesWithTheOutputOfItsLastStep(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Greeter",
		apitest.Step("first", "set", map[string]any{"ignored": true}),
		apitest.Step("greet", "set", map[string]any{"greeting": "hello", "name.$": "$.input.person.name",
			"tags.$": "$.input.tags", "from.$": "$.steps.first.ignored", "nested": map[string]any{"n.$": "$.input.n"}}),
	)
	in := map[string]any{"person": map[string]any{"name": "Ada"}, "tags": []any{"x", "y"}, "n": 3.5}

	r := c.Do("POST", "/v1/workflows/"+wfID+"/runs", map[string]any{"input": in})
	accepted := r.Want(t, 202).Object(t)
	apitest.WantKeys(t, "accepted run", accepted, apitest.RunFields)
	id := apitest.IDOf(t, accepted)
	if !strings.HasPrefix(id, "run_") {
		t.Errorf("run id %q, want a run_ id", id)
	}
	if accepted["status"] != "queued" || accepted["workflowId"] != wfID || accepted["startedBy"] != "api" ||
		accepted["dryRun"] != false || accepted["retryOf"] != nil || accepted["output"] != nil || accepted["error"] != nil ||
		accepted["completedAt"] != nil || accepted["createdAt"] == nil {
		t.Errorf("accepted run %s, want a queued api run of %s", apitest.JSONOf(accepted), wfID)
	}
	if !reflect.DeepEqual(accepted["input"], in) {
		t.Errorf("input %s, want %s", apitest.JSONOf(accepted["input"]), apitest.JSONOf(in))
	}

	run := apitest.AwaitRun(t, c, id)
	apitest.WantStatus(t, run, "completed")
	apitest.WantKeys(t, "finished run", run, apitest.RunFields)
	want := map[string]any{"greeting": "hello", "name": "Ada", "tags": []any{"x", "y"}, "from": true,
		"nested": map[string]any{"n": 3.5}}
	if !reflect.DeepEqual(run["output"], want) {
		t.Errorf("output %s, want %s", apitest.JSONOf(run["output"]), apitest.JSONOf(want))
	}
	if run["error"] != nil || run["startedAt"] == nil || run["completedAt"] == nil {
		t.Errorf("completed run %s, want no error and startedAt, completedAt set", apitest.JSONOf(run))
	}
	if run["title"] != accepted["title"] || run["createdAt"] != accepted["createdAt"] || !reflect.DeepEqual(run["input"], in) {
		t.Errorf("execution changed the run's title, createdAt or input: %s", apitest.JSONOf(run))
	}
	created, _ := time.Parse(time.RFC3339Nano, run["createdAt"].(string))
	started, _ := time.Parse(time.RFC3339Nano, run["startedAt"].(string))
	completed, _ := time.Parse(time.RFC3339Nano, run["completedAt"].(string))
	if started.Before(created) || completed.Before(started) {
		t.Errorf("createdAt %v, startedAt %v, completedAt %v are out of order", created, started, completed)
	}
}

func TestAWorkflowWithoutStepsCompletesWithItsInputAsOutput(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	wfID := apitest.WorkflowWith(t, admin, "Echo")
	cases := []struct {
		name string
		body any
		want map[string]any
	}{
		{"an input object", map[string]any{"input": map[string]any{"a": 1.0, "b": []any{"c"}}}, map[string]any{"a": 1.0, "b": []any{"c"}}},
		{"no body", nil, map[string]any{}},
		{"an empty object", map[string]any{}, map[string]any{}},
		{"a null input", map[string]any{"input": nil}, map[string]any{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := apitest.RunToEnd(t, e.As(t, admin), wfID, tc.body)
			apitest.WantStatus(t, run, "completed")
			if !reflect.DeepEqual(run["output"], tc.want) || !reflect.DeepEqual(run["input"], tc.want) {
				t.Errorf("input %s, output %s; want both %s", apitest.JSONOf(run["input"]), apitest.JSONOf(run["output"]), apitest.JSONOf(tc.want))
			}
		})
	}
}

func TestCreateRunRejectsInvalidBodiesWith400(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	wfID := apitest.WorkflowWith(t, admin, "Strict")
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"input an array", map[string]any{"input": []any{1}}, "input"},
		{"input a string", map[string]any{"input": "x"}, "input"},
		{"dryRun a string", map[string]any{"dryRun": "yes"}, "dryRun"},
		{"title a number", map[string]any{"title": 5}, "title"},
		{"title empty", map[string]any{"title": ""}, "title"},
		{"title only spaces", map[string]any{"title": "   "}, "title"},
		{"title null", map[string]any{"title": nil}, "title"},
		{"title of 121 characters", map[string]any{"title": strings.Repeat("t", 121)}, "title"},
		{"unknown field", map[string]any{"inputs": map[string]any{}}, "inputs"},
		{"not JSON", `{"input":`, "JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			apitest.WantError(t, e.As(t, admin).Do("POST", "/v1/workflows/"+wfID+"/runs", tc.body), 400, tc.field)
		})
	}
	t.Cleanup(func() {
		if runs := admin.Do("GET", "/v1/workflows/"+wfID+"/runs", nil).Want(t, 200).List(t); len(runs) != 0 {
			t.Errorf("rejected requests created runs: %s", apitest.JSONOf(runs))
		}
	})
}

func TestAFailStepFailsTheRunWithItsMessageAndStep(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	admin := e.Org(t)
	cases := []struct {
		name  string
		steps []map[string]any
		input map[string]any
		want  map[string]any // the run's error
	}{
		{"a literal message", []map[string]any{
			apitest.Step("prepare", "set", map[string]any{"x": 1}),
			apitest.Step("stop", "fail", map[string]any{"message": "deal is closed"}),
			apitest.Step("never", "set", map[string]any{"y": 2}),
		}, nil, map[string]any{"message": "deal is closed", "step": "stop"}},
		{"a message from the input", []map[string]any{
			apitest.Step("stop", "fail", map[string]any{"message.$": "$.input.reason"}),
		}, map[string]any{"reason": "bad payload"}, map[string]any{"message": "bad payload", "step": "stop"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			run := apitest.RunToEnd(t, c, apitest.WorkflowWith(t, c, "Failing", tc.steps...), map[string]any{"input": tc.input})
			apitest.WantStatus(t, run, "failed")
			if !reflect.DeepEqual(run["error"], tc.want) {
				t.Errorf("error %s, want %s", apitest.JSONOf(run["error"]), apitest.JSONOf(tc.want))
			}
			if run["output"] != nil || run["completedAt"] == nil {
				t.Errorf("failed run %s, want output null and completedAt set", apitest.JSONOf(run))
			}
		})
	}
}

func TestAStepWhosePathFindsNothingFailsTheRunNamingTheStep(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	run := apitest.RunToEnd(t, c, apitest.WorkflowWith(t, c, "Missing", apitest.Step("read", "set", map[string]any{"v.$": "$.input.absent"})), nil)
	apitest.WantStatus(t, run, "failed")
	if errObj := apitest.ObjectAt(t, run, "error"); errObj["step"] != "read" || errObj["message"] == "" {
		t.Errorf("error %s, want a message and step read", apitest.JSONOf(errObj))
	}
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestUpsertCompanyCreatesAndThenUpdatesTheCompanyItMatches(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	first := map[string]any{"canonicalName": "Acme", "externalId": "ext-1", "website": "https://acme.example", "sector": "Industrials"}
	cases := []struct {
		name   string
		second map[string]any // matches the company made by first, by the named field
	}{
		{"by externalId", map[string]any{"externalId": "ext-1", "canonicalName": "Acme Renamed", "description": "Updated."}},
		{"by website when the externalId matches nothing", map[string]any{"externalId": "ext-other", "website": "https://acme.example",
			"description": "Updated."}},
		{"by canonicalName when externalId and website match nothing", map[string]any{"externalId": "ext-zzz",
			"website": "https://elsewhere.example", "canonicalName": "Acme", "description": "Updated."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.Org(t) // an organization per case: the matching looks at all its companies
			// The organization's own company must be neither matched nor touched.
			bystander := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme Holdings", "externalId": "ext-2",
				"website": "https://holdings.example"})

			created := apitest.RunToEnd(t, c, apitest.WorkflowWith(t, c, "Upsert 1", apitest.UpsertStep(keysOf(first)...)), map[string]any{"input": first})
			apitest.WantStatus(t, created, "completed")
			out := apitest.ObjectAt(t, created, "output")
			if out["created"] != true {
				t.Errorf("first run output %s, want created true", apitest.JSONOf(out))
			}
			company := apitest.ObjectAt(t, out, "company")
			companyID := apitest.IDOf(t, company)
			for k, v := range first {
				if company[k] != v {
					t.Errorf("created company %s = %v, want %v", k, company[k], v)
				}
			}

			updated := apitest.RunToEnd(t, c, apitest.WorkflowWith(t, c, "Upsert 2", apitest.UpsertStep(keysOf(tc.second)...)), map[string]any{"input": tc.second})
			apitest.WantStatus(t, updated, "completed")
			out = apitest.ObjectAt(t, updated, "output")
			if out["created"] != false {
				t.Errorf("second run output %s, want created false", apitest.JSONOf(out))
			}
			if got := apitest.IDOf(t, apitest.ObjectAt(t, out, "company")); got != companyID {
				t.Errorf("second run wrote company %s, want the matched %s", got, companyID)
			}

			var fromWorkflow []map[string]any
			for _, co := range apitest.Companies(t, c) {
				if co["origin"] == "workflow" {
					fromWorkflow = append(fromWorkflow, co)
				}
			}
			if len(fromWorkflow) != 1 {
				t.Fatalf("%d companies with origin workflow, want exactly 1: %s", len(fromWorkflow), apitest.JSONOf(fromWorkflow))
			}
			got := fromWorkflow[0]
			if apitest.IDOf(t, got) != companyID {
				t.Errorf("the workflow's company is %s, want %s", apitest.IDOf(t, got), companyID)
			}
			want := apitest.Clone(t, first)
			for k, v := range tc.second {
				want[k] = v
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("company %s = %v, want %v (first %s then %s)", k, got[k], v, apitest.JSONOf(first), apitest.JSONOf(tc.second))
				}
			}
			after := c.Do("GET", "/v1/companies/"+apitest.IDOf(t, bystander), nil).Want(t, 200).Object(t)
			if !reflect.DeepEqual(after, bystander) {
				t.Errorf("the upserts changed another company:\nbefore %s\nafter  %s", apitest.JSONOf(bystander), apitest.JSONOf(after))
			}
		})
	}
}

func TestUpsertCompanyWithoutAMatchOrANameFailsTheRun(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	run := apitest.RunToEnd(t, c, apitest.WorkflowWith(t, c, "No name", apitest.UpsertStep("externalId")), map[string]any{"input": map[string]any{"externalId": "ext-9"}})
	apitest.WantStatus(t, run, "failed")
	if errObj := apitest.ObjectAt(t, run, "error"); errObj["step"] != "up" || !strings.Contains(errObj["message"].(string), "canonicalName") {
		t.Errorf("error %s, want step up and a message naming canonicalName", apitest.JSONOf(errObj))
	}
	if list := apitest.Companies(t, c); len(list) != 0 {
		t.Errorf("a failed upsert stored companies: %s", apitest.JSONOf(list))
	}
}

func TestTagCompanyTagsTheCompanyAnEarlierStepWrote(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Upsert and tag",
		apitest.Step("up", "upsertCompany", map[string]any{"canonicalName.$": "$.input.name", "tags": []any{"inbound"}}),
		apitest.Step("tag", "tagCompany", map[string]any{"companyId.$": "$.steps.up.company.id", "tags.$": "$.input.tags"}),
	)
	run := apitest.RunToEnd(t, c, wfID, map[string]any{"input": map[string]any{"name": "Tagged Co", "tags": []any{"fintech", "seed"}}})
	apitest.WantStatus(t, run, "completed")
	company := apitest.ObjectAt(t, run, "output", "company")
	wantTags := []any{"inbound", "fintech", "seed"}
	if !reflect.DeepEqual(company["tags"], wantTags) {
		t.Errorf("output company tags %v, want %v", company["tags"], wantTags)
	}
	list := apitest.Companies(t, c)
	if len(list) != 1 || !reflect.DeepEqual(list[0]["tags"], wantTags) || list[0]["canonicalName"] != "Tagged Co" {
		t.Errorf("companies %s, want one Tagged Co with tags %v", apitest.JSONOf(list), wantTags)
	}
}

func TestTagCompanyOfAnUnknownCompanyFailsTheRun(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	other := e.Org(t)
	theirs := apitest.CreateCompany(t, other, map[string]any{"canonicalName": "Theirs"})
	run := apitest.RunToEnd(t, c, apitest.WorkflowWith(t, c, "Tag",
		apitest.Step("tag", "tagCompany", map[string]any{"companyId": apitest.IDOf(t, theirs), "tags": []any{"stolen"}})), nil)
	apitest.WantStatus(t, run, "failed")
	if errObj := apitest.ObjectAt(t, run, "error"); errObj["step"] != "tag" {
		t.Errorf("error %s, want step tag", apitest.JSONOf(errObj))
	}
	if got := other.Do("GET", "/v1/companies/"+apitest.IDOf(t, theirs), nil).Want(t, 200).Object(t); !reflect.DeepEqual(got, theirs) {
		t.Errorf("a run tagged another organization's company: %s", apitest.JSONOf(got))
	}
}

func TestADryRunWritesNothingAndSaysWhatItWouldDo(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	upsert := apitest.WorkflowWith(t, c, "Dry upsert", apitest.UpsertStep("canonicalName", "website", "description"))

	in := map[string]any{"canonicalName": "Dry Co", "website": "https://dry.example", "description": "First."}
	run := apitest.RunToEnd(t, c, upsert, map[string]any{"input": in, "dryRun": true})
	apitest.WantStatus(t, run, "completed")
	if run["dryRun"] != true {
		t.Errorf("dryRun %v, want true", run["dryRun"])
	}
	out := apitest.ObjectAt(t, run, "output")
	if out["dryRun"] != true {
		t.Errorf("output %s, want dryRun true", apitest.JSONOf(out))
	}
	if would := apitest.ObjectAt(t, out, "wouldCreate"); !reflect.DeepEqual(would, in) {
		t.Errorf("wouldCreate %s, want the fields %s", apitest.JSONOf(would), apitest.JSONOf(in))
	}
	if list := apitest.Companies(t, c); len(list) != 0 {
		t.Fatalf("a dry run created companies: %s", apitest.JSONOf(list))
	}

	existing := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Dry Co", "website": "https://dry.example", "description": "First.",
		"tags": []any{"a"}})
	in["description"] = "Second."
	out = apitest.ObjectAt(t, apitest.RunToEnd(t, c, upsert, map[string]any{"input": in, "dryRun": true}), "output")
	if would := apitest.ObjectAt(t, out, "wouldUpdate"); !reflect.DeepEqual(would, map[string]any{"description": "Second."}) {
		t.Errorf("wouldUpdate %s, want only the changed description", apitest.JSONOf(would))
	}
	if _, ok := out["wouldCreate"]; ok {
		t.Errorf("output %s says wouldCreate for an existing company", apitest.JSONOf(out))
	}

	tag := apitest.WorkflowWith(t, c, "Dry tag", apitest.Step("tag", "tagCompany", map[string]any{"companyId": apitest.IDOf(t, existing), "tags": []any{"b"}}))
	out = apitest.ObjectAt(t, apitest.RunToEnd(t, c, tag, map[string]any{"dryRun": true}), "output")
	if would := apitest.ObjectAt(t, out, "wouldUpdate"); !reflect.DeepEqual(would, map[string]any{"tags": []any{"a", "b"}}) {
		t.Errorf("tag wouldUpdate %s, want tags [a b]", apitest.JSONOf(would))
	}

	list := apitest.Companies(t, c)
	if len(list) != 1 || !reflect.DeepEqual(list[0], existing) {
		t.Errorf("dry runs changed the companies: %s, want only %s unchanged", apitest.JSONOf(list), apitest.JSONOf(existing))
	}
}

func TestAGeneratedTitleNamesTheWorkflowAndHowTheRunStarted(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	long := strings.Repeat("Quarterly portfolio import ", 8)[:200]
	cases := []struct {
		name     string
		workflow string
		trigger  string // api, webhook or retry
		dryRun   bool
	}{
		{"an API run", "Deal sync", "api", false},
		{"an API dry run", "Deal sync", "api", true},
		{"a webhook run", "Deal sync", "webhook", false},
		{"a retry", "Deal sync", "retry", false},
		{"a 200-character name", long, "api", false},
		{"a 200-character name of multibyte letters", strings.Repeat("é", 200), "webhook", false},
		{"a 200-character name on a dry retry", long, "retry", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			var steps []any
			if tc.trigger == "retry" {
				steps = []any{apitest.Step("stop", "fail", map[string]any{"message": "for the retry"})}
			}
			wf := apitest.CreateWorkflow(t, c, map[string]any{"name": tc.workflow, "steps": steps})
			var run map[string]any
			switch tc.trigger {
			case "api":
				run = apitest.StartRun(t, c, apitest.IDOf(t, wf), map[string]any{"dryRun": tc.dryRun})
			case "webhook":
				slug, secret := apitest.SlugAndSecret(t, apitest.WebhookOf(t, wf))
				run = e.Anonymous(t).Do("POST", "/webhooks/workflows/"+slug, `{}`, "X-Service-Webhook-Secret", secret).Want(t, 202).Object(t)
			case "retry":
				src := apitest.RunToEnd(t, c, apitest.IDOf(t, wf), map[string]any{"dryRun": tc.dryRun})
				run = c.Do("POST", "/v1/workflow-runs/"+apitest.IDOf(t, src)+"/retry", nil).Want(t, 202).Object(t)
			}
			if run["startedBy"] != tc.trigger {
				t.Errorf("startedBy %v, want %s", run["startedBy"], tc.trigger)
			}
			title, _ := run["title"].(string)
			n := utf8.RuneCountInString(title)
			if strings.TrimSpace(title) == "" || n > 120 {
				t.Fatalf("title %q has %d characters, want 1 to 120", title, n)
			}
			name := []rune(tc.workflow)
			if len(name) > 20 {
				name = name[:20] // a long name is shortened; its start must show
			}
			if !strings.Contains(title, string(name)) {
				t.Errorf("title %q does not contain the workflow name %q", title, string(name))
			}
			if !strings.Contains(strings.ToLower(title), tc.trigger) {
				t.Errorf("title %q does not say the run was started by %s", title, tc.trigger)
			}
			if got := c.Do("GET", "/v1/workflow-runs/"+apitest.IDOf(t, run), nil).Want(t, 200).Object(t); got["title"] != title {
				t.Errorf("stored title %v, want the returned %q", got["title"], title)
			}
		})
	}
}

func TestATitleGivenAtCreationIsUsed(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Named runs")
	for _, title := range []string{"Backfill March", "  Padded  ", strings.Repeat("ü", 120)} {
		run := apitest.StartRun(t, c, wfID, map[string]any{"title": title})
		want := strings.TrimSpace(title)
		if run["title"] != want {
			t.Errorf("title %v, want %q", run["title"], want)
		}
		if got := apitest.AwaitRun(t, c, apitest.IDOf(t, run)); got["title"] != want {
			t.Errorf("finished run title %v, want %q", got["title"], want)
		}
	}
}

func TestRenameRunSetsTheTitle(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	admin := e.Org(t)
	wfID := apitest.WorkflowWith(t, admin, "Renamed")
	cases := []struct{ name, title, want string }{
		{"a short title", "Q3 import", "Q3 import"},
		{"one character", "x", "x"},
		{"exactly 120 characters", strings.Repeat("t", 120), strings.Repeat("t", 120)},
		{"120 multibyte characters", strings.Repeat("日", 120), strings.Repeat("日", 120)},
		{"surrounding spaces are trimmed", "  spaced  ", "spaced"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			before := apitest.AwaitRun(t, c, apitest.IDOf(t, apitest.StartRun(t, c, wfID, map[string]any{"input": map[string]any{"k": "v"}})))
			path := "/v1/workflow-runs/" + apitest.IDOf(t, before)
			got := c.Do("PATCH", path, map[string]any{"title": tc.title}).Want(t, 200).Object(t)
			want := apitest.Clone(t, before)
			want["title"] = tc.want
			if !reflect.DeepEqual(got, want) {
				t.Errorf("PATCH returned\n%s\nwant the run with only the title changed\n%s", apitest.JSONOf(got), apitest.JSONOf(want))
			}
			if stored := c.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(stored, want) {
				t.Errorf("GET after PATCH returned\n%s\nwant\n%s", apitest.JSONOf(stored), apitest.JSONOf(want))
			}
		})
	}
}

func TestRenameRunRejectsInvalidTitlesWith400AndKeepsTheTitle(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	wfID := apitest.WorkflowWith(t, admin, "Strict titles")
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"title missing", map[string]any{}, "title"},
		{"title null", map[string]any{"title": nil}, "title"},
		{"title empty", map[string]any{"title": ""}, "title"},
		{"title only whitespace", map[string]any{"title": " \t\n "}, "title"},
		{"title of 121 characters", map[string]any{"title": strings.Repeat("t", 121)}, "title"},
		{"title of 121 multibyte characters", map[string]any{"title": strings.Repeat("日", 121)}, "title"},
		{"title a number", map[string]any{"title": 42}, "title"},
		{"title an array", map[string]any{"title": []any{"a"}}, "title"},
		{"an unknown field", map[string]any{"title": "ok", "name": "x"}, "name"},
		{"no body", nil, "Invalid request body"},
		{"not JSON", `{"title": "x"`, "JSON"},
		{"a JSON string", `"x"`, "object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			before := apitest.AwaitRun(t, c, apitest.IDOf(t, apitest.StartRun(t, c, wfID, nil)))
			path := "/v1/workflow-runs/" + apitest.IDOf(t, before)
			apitest.WantError(t, c.Do("PATCH", path, tc.body), 400, tc.field)
			if after := c.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, before) {
				t.Errorf("a rejected rename changed the run:\nbefore %s\nafter  %s", apitest.JSONOf(before), apitest.JSONOf(after))
			}
		})
	}
}

func TestRenameOfAnUnknownRunIs404(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	apitest.NotFound(t, c.Do("PATCH", "/v1/workflow-runs/run_doesnotexist", map[string]any{"title": "x"}))
	apitest.NotFound(t, c.Do("GET", "/v1/workflow-runs/run_doesnotexist", nil))
	apitest.NotFound(t, c.Do("POST", "/v1/workflow-runs/run_doesnotexist/retry", nil))
}

func TestRetryingAFailedDryRunStartsADryRunOfTheSameInputAndLeavesTheSourceUnchanged(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Flaky", apitest.Step("stop", "fail", map[string]any{"message.$": "$.input.why"}))
	in := map[string]any{"why": "upstream down", "batch": 7.0}
	src := apitest.RunToEnd(t, c, wfID, map[string]any{"input": in, "dryRun": true, "title": "Source"})
	apitest.WantStatus(t, src, "failed")
	srcPath := "/v1/workflow-runs/" + apitest.IDOf(t, src)

	retry := c.Do("POST", srcPath+"/retry", nil).Want(t, 202).Object(t)
	apitest.WantKeys(t, "retry", retry, apitest.RunFields)
	if apitest.IDOf(t, retry) == apitest.IDOf(t, src) {
		t.Fatalf("the retry has the source's id")
	}
	if retry["retryOf"] != apitest.IDOf(t, src) || retry["dryRun"] != true || retry["startedBy"] != "retry" || retry["workflowId"] != wfID ||
		retry["error"] != nil || retry["output"] != nil {
		t.Errorf("retry %s, want a dry run of %s with retryOf %s, trigger retry, no error or output", apitest.JSONOf(retry), wfID, apitest.IDOf(t, src))
	}
	if s := retry["status"]; s != "queued" && s != "running" {
		t.Errorf("retry status %v, want queued or running", s)
	}
	if !reflect.DeepEqual(retry["input"], in) {
		t.Errorf("retry input %s, want the source's %s", apitest.JSONOf(retry["input"]), apitest.JSONOf(in))
	}

	done := apitest.AwaitRun(t, c, apitest.IDOf(t, retry))
	apitest.WantStatus(t, done, "failed")
	if errObj := apitest.ObjectAt(t, done, "error"); errObj["message"] != "upstream down" {
		t.Errorf("retry error %s, want the same failure", apitest.JSONOf(errObj))
	}
	// The source records its retry and is otherwise unchanged.
	if src["retriedBy"] != nil {
		t.Errorf("a run not yet retried shows retriedBy %v, want null", src["retriedBy"])
	}
	want := apitest.Clone(t, src)
	want["retriedBy"] = apitest.IDOf(t, retry)
	if after := c.Do("GET", srcPath, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, want) {
		t.Errorf("retry changed the source run beyond retriedBy:\nbefore %s\nafter  %s", apitest.JSONOf(src), apitest.JSONOf(after))
	}
	// The failed retry can itself be retried, and keeps pointing at its own source.
	apitest.WantError(t, c.Do("POST", srcPath+"/retry", nil), 409, apitest.IDOf(t, src), "already been retried", apitest.IDOf(t, retry))
	again := c.Do("POST", "/v1/workflow-runs/"+apitest.IDOf(t, done)+"/retry", nil).Want(t, 202).Object(t)
	if again["retryOf"] != apitest.IDOf(t, done) || again["dryRun"] != true || !reflect.DeepEqual(again["input"], in) {
		t.Errorf("retry of the retry %s, want retryOf %s, dryRun true and the same input", apitest.JSONOf(again), apitest.IDOf(t, done))
	}
	apitest.AwaitRun(t, c, apitest.IDOf(t, again))
	if got := apitest.IDsOf(t, c.Do("GET", "/v1/workflows/"+wfID+"/runs", nil).Want(t, 200).List(t)); !slices.Equal(got,
		[]string{apitest.IDOf(t, again), apitest.IDOf(t, done), apitest.IDOf(t, src)}) {
		t.Errorf("runs of the workflow %v, want the retries newest first then the source", got)
	}
}

func TestARetryRunsTheWorkflowsCurrentSteps(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Fixed later", apitest.Step("stop", "fail", map[string]any{"message": "bug"}))
	src := apitest.RunToEnd(t, c, wfID, map[string]any{"input": map[string]any{"v": "kept"}})
	apitest.WantStatus(t, src, "failed")
	c.Do("PUT", "/v1/workflows/"+wfID, map[string]any{"steps": []any{apitest.Step("ok", "set", map[string]any{"v.$": "$.input.v"})}}).Want(t, 200)
	retry := c.Do("POST", "/v1/workflow-runs/"+apitest.IDOf(t, src)+"/retry", nil).Want(t, 202).Object(t)
	done := apitest.AwaitRun(t, c, apitest.IDOf(t, retry))
	apitest.WantStatus(t, done, "completed")
	if !reflect.DeepEqual(done["output"], map[string]any{"v": "kept"}) || done["dryRun"] != false {
		t.Errorf("retry %s, want a completed non-dry run with output {v: kept}", apitest.JSONOf(done))
	}
}

func TestOnlyAFailedRunCanBeRetried(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Fine")
	done := apitest.RunToEnd(t, c, wfID, nil)
	apitest.WantStatus(t, done, "completed")
	path := "/v1/workflow-runs/" + apitest.IDOf(t, done)
	apitest.WantError(t, c.Do("POST", path+"/retry", nil), 409, "failed")
	if after := c.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, done) {
		t.Errorf("a refused retry changed the run: %s", apitest.JSONOf(after))
	}
	if runs := c.Do("GET", "/v1/workflows/"+wfID+"/runs", nil).Want(t, 200).List(t); len(runs) != 1 {
		t.Errorf("a refused retry created a run: %s", apitest.JSONOf(runs))
	}
}

func TestRetryingARunWhoseWorkflowWasDeletedIsAConflict(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Doomed", apitest.Step("stop", "fail", map[string]any{"message": "x"}))
	src := apitest.RunToEnd(t, c, wfID, nil)
	apitest.WantStatus(t, src, "failed")
	c.Do("DELETE", "/v1/workflows/"+wfID, nil).Want(t, 204)

	path := "/v1/workflow-runs/" + apitest.IDOf(t, src)
	// The run outlives its workflow.
	if got := c.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(got, src) {
		t.Errorf("deleting the workflow changed its run: %s", apitest.JSONOf(got))
	}
	apitest.WantError(t, c.Do("POST", path+"/retry", nil), 409, "deleted")
	if runs := c.Do("GET", "/v1/workflow-runs", nil).Want(t, 200).List(t); len(runs) != 1 {
		t.Errorf("a refused retry created a run: %s", apitest.JSONOf(runs))
	}
}

func TestRunListsAreNewestFirstAndPerWorkflow(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	a := apitest.WorkflowWith(t, c, "A")
	b := apitest.WorkflowWith(t, c, "B")
	a1 := apitest.IDOf(t, apitest.StartRun(t, c, a, nil))
	b1 := apitest.IDOf(t, apitest.StartRun(t, c, b, nil))
	a2 := apitest.IDOf(t, apitest.StartRun(t, c, a, nil))
	a3 := apitest.IDOf(t, apitest.StartRun(t, c, a, nil))
	for _, id := range []string{a1, b1, a2, a3} {
		apitest.AwaitRun(t, c, id)
	}
	cases := []struct {
		path string
		want []string
	}{
		{"/v1/workflows/" + a + "/runs", []string{a3, a2, a1}},
		{"/v1/workflows/" + b + "/runs", []string{b1}},
		{"/v1/workflow-runs", []string{a3, a2, b1, a1}},
		{"/v1/workflow-runs?limit=2", []string{a3, a2}},
		{"/v1/workflow-runs?limit=2&page=2", []string{b1, a1}},
		{"/v1/workflow-runs?lt=" + a2, []string{b1, a1}},
		{"/v1/workflows/" + a + "/runs?limit=1&page=2", []string{a2}},
		{"/v1/workflows/" + a + "/runs?lt=" + a3, []string{a2, a1}},
		{"/v1/workflows/" + a + "/runs?direction=asc", []string{a1, a2, a3}},
	}
	for _, tc := range cases {
		list := c.Do("GET", tc.path, nil).Want(t, 200).List(t)
		if got := apitest.IDsOf(t, list); !slices.Equal(got, tc.want) {
			t.Errorf("GET %s = %v, want %v", tc.path, got, tc.want)
		}
		for _, r := range list {
			apitest.WantKeys(t, "listed run", r, apitest.RunFields)
		}
	}
	apitest.WantError(t, c.Do("GET", "/v1/workflow-runs?page=101", nil), 400, "page")
}

func TestAnotherOrganizationsRunIsNotFoundAndUntouched(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.Org(t)
	other := e.Org(t)
	wfID := apitest.WorkflowWith(t, owner, "Private", apitest.Step("stop", "fail", map[string]any{"message": "x"}))
	theirs := apitest.RunToEnd(t, owner, wfID, map[string]any{"input": map[string]any{"secret": "data"}})
	apitest.WantStatus(t, theirs, "failed")
	mine := apitest.RunToEnd(t, other, apitest.WorkflowWith(t, other, "Mine"), nil)
	path := "/v1/workflow-runs/" + apitest.IDOf(t, theirs)

	apitest.NotFound(t, other.Do("GET", path, nil))
	apitest.NotFound(t, other.Do("PATCH", path, map[string]any{"title": "Hijacked"}))
	apitest.NotFound(t, other.Do("POST", path+"/retry", nil))
	apitest.NotFound(t, other.Do("GET", "/v1/workflows/"+wfID+"/runs", nil))

	if after := owner.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, theirs) {
		t.Errorf("another organization's requests changed the run:\nbefore %s\nafter  %s", apitest.JSONOf(theirs), apitest.JSONOf(after))
	}
	if got := apitest.IDsOf(t, other.Do("GET", "/v1/workflow-runs", nil).Want(t, 200).List(t)); !slices.Equal(got, []string{apitest.IDOf(t, mine)}) {
		t.Errorf("the other organization lists runs %v, want only its own %s", got, apitest.IDOf(t, mine))
	}
	if got := apitest.IDsOf(t, owner.Do("GET", "/v1/workflow-runs", nil).Want(t, 200).List(t)); !slices.Equal(got, []string{apitest.IDOf(t, theirs)}) {
		t.Errorf("the owner lists runs %v, want only its own %s (no retry by the other organization)", got, apitest.IDOf(t, theirs))
	}
}

func TestARenameWhileTheRunExecutesIsKept(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	steps := make([]map[string]any, 20)
	for i := range steps {
		steps[i] = apitest.Step("s"+strconv.Itoa(i), "set", map[string]any{"i": i, "all.$": "$.input"})
	}
	wfID := apitest.WorkflowWith(t, c, "Slow-ish", steps...)
	for i := range 5 {
		run := apitest.StartRun(t, c, wfID, map[string]any{"input": map[string]any{"n": i}})
		title := "Renamed " + strconv.Itoa(i)
		// Whatever the run's state at this moment, the rename must win over
		// the execution's own writes.
		c.Do("PATCH", "/v1/workflow-runs/"+apitest.IDOf(t, run), map[string]any{"title": title}).Want(t, 200)
		done := apitest.AwaitRun(t, c, apitest.IDOf(t, run))
		apitest.WantStatus(t, done, "completed")
		if done["title"] != title {
			t.Errorf("title %v after execution, want the rename %q", done["title"], title)
		}
		if out := apitest.ObjectAt(t, done, "output"); out["i"] != 19.0 {
			t.Errorf("output %s, want the last step's", apitest.JSONOf(out))
		}
	}
}

func TestAWorkflowWithoutStepsOutputsItsInputWithNumbersExactlyAsSent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	wfID := apitest.WorkflowWith(t, admin, "Exact")
	// The run API keeps free-form numbers exactly as sent, as company
	// custom fields do; a workflow without steps outputs its input.
	cases := []struct{ name, input string }{
		{"2^53 − 1, the largest integer every client reads exactly", `{"crmId":9007199254740991,"ratio":0.1}`},
		{"more digits than a float64 keeps", `{"x":3.14159265358979323846264338,"y":"kept"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			accepted := string(c.Do("POST", "/v1/workflows/"+wfID+"/runs", `{"input":`+tc.input+`}`).Want(t, 202).Body)
			m := regexp.MustCompile(`"id":"(run_[0-9a-z]+)"`).FindStringSubmatch(accepted)
			if m == nil {
				t.Fatalf("no run id in %s", accepted)
			}
			id := m[1]
			var raw string
			for deadline := time.Now().Add(testenv.Scaled(30 * time.Second)); ; time.Sleep(20 * time.Millisecond) {
				// Read the raw body: decoding into any would round the digits.
				raw = string(c.Do("GET", "/v1/workflow-runs/"+id, nil).Want(t, 200).Body)
				if strings.Contains(raw, `"status":"completed"`) || strings.Contains(raw, `"status":"failed"`) || time.Now().After(deadline) {
					break
				}
			}
			if !strings.Contains(raw, `"input":`+tc.input) {
				t.Errorf("run input altered: %s", raw)
			}
			if !strings.Contains(raw, `"status":"completed"`) || !strings.Contains(raw, `"output":`+tc.input) {
				t.Errorf("BUG: a workflow without steps must complete with its input %s as output, got %s "+
					"(steps.Executor.Execute round-trips the input through json.Unmarshal into float64 in plainObject: "+
					"digits a float64 does not keep are rounded)", tc.input, raw)
			}
		})
	}
}
