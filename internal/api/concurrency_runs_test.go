package api_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestTwentyParallelWebhookUpsertsOfOneExternalIDMakeOneCompanyAndEveryRunCompletes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil, apitest.Step("up", "upsertCompany", map[string]any{
		"canonicalName.$": "$.input.webhook.payload.name",
		"externalId.$":    "$.input.webhook.payload.id",
		"tags.$":          "$.input.webhook.payload.tags",
	}))
	rs := make([]*apitest.Response, 20)
	apitest.InParallel(len(rs), func(i int) {
		body := `{"name":"Upsert Co","id":"crm-42","tags":["inbound"]}`
		rs[i] = apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", h.Secret)
	})
	companyIDs := map[any]bool{}
	for _, r := range rs {
		run := apitest.AwaitRun(t, c, apitest.IDOf(t, r.Want(t, 202).Object(t)))
		apitest.WantStatus(t, run, "completed")
		companyIDs[apitest.ObjectAt(t, run, "output", "company")["id"]] = true
	}
	list := apitest.Companies(t, c)
	if len(list) != 1 || len(companyIDs) != 1 || !companyIDs[list[0]["id"]] {
		t.Fatalf("companies %s, runs wrote %v; want one company that every run wrote", apitest.JSONOf(apitest.IDsOf(t, list)), companyIDs)
	}
	if co := list[0]; co["externalId"] != "crm-42" || co["canonicalName"] != "Upsert Co" {
		t.Errorf("company %s, want Upsert Co with externalId crm-42", apitest.JSONOf(co))
	}
}

func TestAFailedRunIsRetriedOnceAndTwentyParallelRetriesMakeOneRun(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wfID := apitest.WorkflowWith(t, c, "Flaky", apitest.Step("stop", "fail", map[string]any{"message": "down"}))
	src := apitest.RunToEnd(t, c, wfID, nil)
	apitest.WantStatus(t, src, "failed")
	path := "/v1/workflow-runs/" + apitest.IDOf(t, src) + "/retry"

	rs := make([]*apitest.Response, 20)
	apitest.InParallel(len(rs), func(i int) { rs[i] = c.Do("POST", path, nil) })
	if got := apitest.StatusCounts(rs); got[202] != 1 || got[409] != 19 {
		t.Fatalf("statuses %v, want one 202 and nineteen 409", got)
	}
	var retryID string
	for _, r := range rs {
		if r.Status == 202 {
			retryID = apitest.IDOf(t, r.Object(t))
		}
	}
	for _, r := range rs {
		if r.Status == 409 {
			apitest.WantError(t, r, 409, "already been retried", retryID)
		}
	}
	if runs := apitest.RunsOf(t, c, wfID); len(runs) != 2 {
		t.Errorf("the workflow has %d runs, want the source and one retry", len(runs))
	}
	if got := c.Do("GET", "/v1/workflow-runs/"+apitest.IDOf(t, src), nil).Want(t, 200).Object(t); got["retriedBy"] != retryID {
		t.Errorf("source retriedBy %v, want %s", got["retriedBy"], retryID)
	}
	// Trying again is retrying the retry.
	retry := apitest.AwaitRun(t, c, retryID)
	apitest.WantStatus(t, retry, "failed")
	if retry["retriedBy"] != nil {
		t.Errorf("an unretried run shows retriedBy %v", retry["retriedBy"])
	}
	again := c.Do("POST", "/v1/workflow-runs/"+retryID+"/retry", nil).Want(t, 202).Object(t)
	if again["retryOf"] != retryID {
		t.Errorf("retry of the retry %s, want retryOf %s", apitest.JSONOf(again), retryID)
	}
}

// signedDelivery sends body to an HMAC trigger with its signature and headers.
func signedDelivery(t *testing.T, e *apitest.Env, h apitest.Hook, body string, headers ...string) *apitest.Response {
	t.Helper()
	return apitest.Deliver(t, e, h.Slug, "", body, append([]string{"X-Hub-Signature", "sha256=" + apitest.HMACHex(h.Secret, []byte(body))}, headers...)...)
}

func TestAWebhookDeliveryIDStartsOneRunAndARepeatAnswersWithThatRun(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.Org(t)
	for _, header := range []string{"X-GitHub-Delivery", "Webhook-Id", "X-Request-Id", "Idempotency-Key"} {
		t.Run(header, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, admin)
			h := apitest.NewHook(t, c, map[string]any{"scheme": "hmac-sha256"})
			body := `{"event":"deal.created"}`
			first := signedDelivery(t, e, h, body, header, "delivery-1").Want(t, 202)
			run := first.Object(t)
			done := apitest.AwaitRun(t, c, apitest.IDOf(t, run))
			again := signedDelivery(t, e, h, body, header, "delivery-1").Want(t, 202)
			if got := again.Object(t); !reflect.DeepEqual(got, done) {
				t.Errorf("the repeat answered %s, want the first run as it is now %s", apitest.JSONOf(got), apitest.JSONOf(done))
			}
			if again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("Idempotent-Replayed %q then %q, want none then true",
					first.Header.Get("Idempotent-Replayed"), again.Header.Get("Idempotent-Replayed"))
			}
			signedDelivery(t, e, h, body, header, "delivery-2").Want(t, 202)
			if runs := apitest.RunsOf(t, c, h.WorkflowID); len(runs) != 2 {
				t.Errorf("%d runs, want one per delivery id", len(runs))
			}
		})
	}
}

func TestConcurrentDeliveriesWithOneIDStartOneRunAndDeliveriesWithoutAnIDEachStartOne(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, map[string]any{"scheme": "hmac-sha256"})
	body := `{"event":"deal.created"}`
	rs := make([]*apitest.Response, 2)
	apitest.InParallel(len(rs), func(i int) { rs[i] = signedDelivery(t, e, h, body, "Webhook-Id", "msg_1") })
	a, b := rs[0].Want(t, 202).Object(t), rs[1].Want(t, 202).Object(t)
	if apitest.IDOf(t, a) != apitest.IDOf(t, b) {
		t.Errorf("two deliveries of msg_1 answered runs %s and %s, want one run", apitest.IDOf(t, a), apitest.IDOf(t, b))
	}
	if runs := apitest.RunsOf(t, c, h.WorkflowID); len(runs) != 1 {
		t.Fatalf("%d runs after two deliveries of one id, want 1", len(runs))
	}
	// Another trigger keeps its own delivery ids.
	other := apitest.NewHook(t, c, map[string]any{"scheme": "hmac-sha256"})
	signedDelivery(t, e, other, body, "Webhook-Id", "msg_1").Want(t, 202)
	if runs := apitest.RunsOf(t, c, other.WorkflowID); len(runs) != 1 {
		t.Errorf("another trigger's delivery of the same id started %d runs, want 1", len(runs))
	}
	// Without an id every delivery is a run.
	noID := apitest.NewHook(t, c, map[string]any{"scheme": "hmac-sha256"})
	signedDelivery(t, e, noID, body).Want(t, 202)
	signedDelivery(t, e, noID, body).Want(t, 202)
	if runs := apitest.RunsOf(t, c, noID.WorkflowID); len(runs) != 2 {
		t.Errorf("two deliveries without an id started %d runs, want 2", len(runs))
	}
	// A refused delivery does not use up its id.
	refused := apitest.Deliver(t, e, noID.Slug, "", body, "X-Hub-Signature", "sha256=00", "Webhook-Id", "msg_9")
	apitest.WantInvalidSignature(t, refused)
	signedDelivery(t, e, noID, body, "Webhook-Id", "msg_9").Want(t, 202)
	if runs := apitest.RunsOf(t, c, noID.WorkflowID); len(runs) != 3 {
		t.Errorf("%d runs, want 3", len(runs))
	}
}

func TestTheReadmesDryRunExampleCompletesWithAPlaceholderCompany(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.CreateWorkflow(t, c, map[string]any{
		"name": "Inbound companies",
		"steps": []any{
			apitest.Step("up", "upsertCompany", map[string]any{"canonicalName.$": "$.input.webhook.payload.name", "website.$": "$.input.webhook.payload.site"}),
			apitest.Step("tag", "tagCompany", map[string]any{"companyId.$": "$.steps.up.company.id", "tags": []any{"inbound"}}),
		},
	})
	run := apitest.RunToEnd(t, c, apitest.IDOf(t, wf), map[string]any{"dryRun": true,
		"input": map[string]any{"webhook": map[string]any{"payload": map[string]any{"name": "Gamma", "site": "gamma.example"}}}})
	apitest.WantStatus(t, run, "completed")
	out := apitest.ObjectAt(t, run, "output")
	id, _ := apitest.ObjectAt(t, out, "company")["id"].(string)
	if !strings.HasPrefix(id, "dry_cmp_") || out["dryRun"] != true {
		t.Errorf("output %s, want a dry run on a company with a dry_cmp_ placeholder id", apitest.JSONOf(out))
	}
	if would := apitest.ObjectAt(t, out, "wouldUpdate"); !reflect.DeepEqual(would, map[string]any{"tags": []any{"inbound"}}) {
		t.Errorf("wouldUpdate %s, want tags [inbound]", apitest.JSONOf(would))
	}
	if list := apitest.Companies(t, c); len(list) != 0 {
		t.Errorf("a dry run created companies: %s", apitest.JSONOf(list))
	}

	// The upsert step alone outputs the record it would create.
	up := apitest.WorkflowWith(t, c, "Dry create", apitest.UpsertStep("canonicalName", "externalId"))
	out = apitest.ObjectAt(t, apitest.RunToEnd(t, c, up, map[string]any{"dryRun": true,
		"input": map[string]any{"canonicalName": "Delta", "externalId": "crm-9"}}), "output")
	co := apitest.ObjectAt(t, out, "company")
	if id, _ := co["id"].(string); !strings.HasPrefix(id, "dry_cmp_") || co["canonicalName"] != "Delta" || co["externalId"] != "crm-9" ||
		co["origin"] != "workflow" {
		t.Errorf("company %s, want Delta / crm-9 from a workflow under a dry_cmp_ id", apitest.JSONOf(co))
	}
	if !reflect.DeepEqual(apitest.ObjectAt(t, out, "wouldCreate"), map[string]any{"canonicalName": "Delta", "externalId": "crm-9"}) {
		t.Errorf("wouldCreate %s, want the fields sent", apitest.JSONOf(out["wouldCreate"]))
	}
}
