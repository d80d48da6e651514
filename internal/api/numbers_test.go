package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/client"
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// What a number no client reads is refused with (I-JSON, RFC 7493 §2.2).
const (
	beyondDouble = "must be a number within the range of a 64-bit float (±1.7976931348623157e308), " +
		"the numbers every JSON client reads; send a larger one as a string"
	beyondInteger = "must be an integer from -9007199254740991 to 9007199254740991 (2^53 − 1), " +
		"the integers every JSON client reads exactly; send a larger one as a string"
)

// unreadable are numbers valid in JSON that clients cannot read back: with
// the reason they are refused.
var unreadable = []struct{ number, why string }{
	{"1e400", beyondDouble},
	{"-1e400", beyondDouble},
	{strings.Repeat("9", 400), beyondDouble},
	{"9007199254740992", beyondInteger},  // 2^53: 2^53 + 1 would arrive as it
	{"-9007199254740993", beyondInteger}, // -(2^53 + 1), a 64-bit id
	{"12345678901234567890", beyondInteger},
}

// invalidBody is the exact 400 body naming field.
func invalidBody(field, why string) string {
	b, _ := json.Marshal(map[string]string{"error": "Invalid request body: " + field + " " + why})
	return string(b)
}

func TestANumberNoClientReadsIs400NamingTheFieldAndTheCompaniesStayReadable(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	kept := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Kept"})
	path := "/v1/companies/" + apitest.IDOf(t, kept)
	for _, u := range unreadable {
		for _, body := range []struct{ method, path, body, field string }{
			{"POST", "/v1/companies", `{"canonicalName":"Big","custom":{"n":` + u.number + `}}`, "custom.n"},
			{"POST", "/v1/companies", `{"canonicalName":"Big","custom":{"a":[{"b":"1e400"},{"b":` + u.number + `}]}}`, "custom.a[1].b"},
			{"PUT", path, `{"custom":{"n":` + u.number + `}}`, "custom.n"},
		} {
			r := c.Do(body.method, body.path, body.body)
			r.Want(t, 400)
			apitest.WantExactBody(t, r, invalidBody(body.field, u.why))
		}
	}

	// What is accepted is stored as sent, and every client reads it: the
	// limits of a double and of exact integers, and non-integers with more
	// digits than a double keeps, which a client reads rounded.
	accepted := `{"float":9007199254740993.0,"huge":1.7976931348623157e308,"max":9007199254740991,` +
		`"min":-9007199254740991,"pi":3.14159265358979323846264338327950288,"tiny":1e-400}` // keys in the order stored
	created := c.Do("POST", "/v1/companies", `{"canonicalName":"Edges","custom":`+accepted+`}`).Want(t, 201)
	if !strings.Contains(string(created.Body), `"custom":`+accepted) {
		t.Errorf("custom came back altered: %s", created.Body)
	}

	// The project's own client reads the whole list page.
	gc, err := client.NewClientWithResponses(e.URL, client.WithCredentials(c.ClientID, c.Secret))
	if err != nil {
		t.Fatal(err)
	}
	page, err := gc.GetCompaniesWithResponse(context.Background(), nil)
	if err != nil || page.StatusCode() != http.StatusOK || page.JSON200 == nil {
		t.Fatalf("the Go client cannot read GET /v1/companies: %v (status %d): %.300s", err, page.StatusCode(), page.Body)
	}
	if n := len(page.JSON200.Data); n != 2 {
		t.Errorf("the organization has %d companies, want 2 (Kept, Edges): refused bodies stored something", n)
	}
	if got := apitest.ObjectAt(t, c.Do("GET", path, nil).Want(t, 200).Object(t), "custom"); len(got) != 0 {
		t.Errorf("a refused update changed custom to %s", apitest.JSONOf(got))
	}
}

func TestEveryJSONBodyOfTheContractRefusesANumberNoClientReads(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	b, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Ref     string         `json:"$ref"`
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			RequestBodies map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"requestBodies"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// Path parameters: records that do not exist, but of a type the route
	// serves (enrichments of companies), so that only the body is at fault.
	params := strings.NewReplacer("{resourceType}", "companies")
	param := regexp.MustCompile(`\{[^}]+\}`)
	var checked []string
	for p, ops := range doc.Paths {
		for method, op := range ops {
			if op.RequestBody != nil && op.RequestBody.Ref != "" {
				op.RequestBody.Content = doc.Components.RequestBodies[strings.TrimPrefix(op.RequestBody.Ref, "#/components/requestBodies/")].Content
			}
			if op.RequestBody == nil || op.RequestBody.Content["application/json"] == nil {
				continue
			}
			// /mcp carries JSON-RPC (a tool's arguments go through these
			// routes); the webhook is checked once its signature is, below.
			if p == "/mcp" || strings.HasPrefix(p, "/webhooks/") {
				continue
			}
			path := param.ReplaceAllString(params.Replace(p), "zz_missing")
			for _, u := range unreadable {
				r := c.Do(strings.ToUpper(method), path, `{"zz":{"list":[0,`+u.number+`]}}`)
				if r.Status != 400 || strings.TrimSpace(string(r.Body)) != invalidBody("zz.list[1]", u.why) {
					t.Errorf("%s %s with %s answered %d %s, want 400 %s", strings.ToUpper(method), p, u.number, r.Status, r.Body,
						invalidBody("zz.list[1]", u.why))
				}
			}
			checked = append(checked, strings.ToUpper(method)+" "+p)
		}
	}
	sort.Strings(checked)
	for _, want := range []string{"POST /v1/companies", "PUT /v1/companies/{id}", "POST /v1/workflows", "PUT /v1/workflows/{id}",
		"POST /v1/workflows/{id}/runs", "POST /v1/data/metric-points", "POST /v1/data/metric-series",
		"POST /v1/enrichments/resources/{resourceType}/{resourceId}", "POST /v1/deals", "POST /v1/companies/search"} {
		if !slices.Contains(checked, want) {
			t.Errorf("%s was not checked; checked %s", want, strings.Join(checked, ", "))
		}
	}
}

func TestANumberNoClientReadsInARunInputOrAWorkflowIs400AndNothingIsStored(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Numbers")
	for _, u := range unreadable {
		r := c.Do("POST", "/v1/workflows/"+wf+"/runs", `{"input":{"crm":{"id":`+u.number+`}}}`)
		r.Want(t, 400)
		apitest.WantExactBody(t, r, invalidBody("input.crm.id", u.why))

		// A step's literal is stored in the definition and copied to outputs.
		r = c.Do("POST", "/v1/workflows", `{"name":"Literal","steps":[{"id":"s","type":"set","with":{"n":`+u.number+`}}]}`)
		r.Want(t, 400)
		apitest.WantExactBody(t, r, invalidBody("steps[0].with.n", u.why))
	}
	wantNoRuns(t, c)
	if list := c.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 1 {
		t.Errorf("refused definitions stored workflows: %s", apitest.JSONOf(list))
	}
	// The limits themselves run and come back as sent.
	run := apitest.RunToEnd(t, c, wf, `{"input":{"id":9007199254740991,"x":-1.7976931348623157e308}}`)
	apitest.WantStatus(t, run, "completed")
}

func TestAWebhookPayloadWithANumberNoClientReadsIs400OnceTheSignatureIsChecked(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	h := apitest.NewHook(t, c, nil)
	for _, u := range unreadable {
		for body, field := range map[string]string{
			`{"order":{"id":` + u.number + `}}`: "payload.order.id",
			u.number:                            "payload",
		} {
			// A sender without the secret learns nothing about the body.
			apitest.WantInvalidSignature(t, apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", "whsec_wrong"))
			r := apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", h.Secret)
			r.Want(t, 400)
			apitest.WantExactBody(t, r, invalidBody(field, u.why))
		}
	}
	wantNoRuns(t, c)
	run := apitest.WantAccepted(t, c, h, apitest.Deliver(t, e, h.Slug, "", `{"id":9007199254740991,"ratio":0.1}`, "X-Service-Webhook-Secret", h.Secret))
	if got := apitest.JSONOf(apitest.ObjectAt(t, run, "input", "webhook")["payload"]); got != `{"id":9007199254740991,"ratio":0.1}` {
		t.Errorf("payload came back as %s", got)
	}
}
