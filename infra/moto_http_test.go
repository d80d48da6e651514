package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/store"
)

// checkService runs the service on the deployed table: the admin CLI makes
// an organization and an admin key in it, then the dev server, pointed at
// the table through AWS_ENDPOINT_URL_DYNAMODB and TABLE_NAME, answers
// serviceCalls with that key. Every call goes through apitest's client, so
// each answer is also checked against the OpenAPI document.
//
// The dev server, not the functions: moto deploys the functions but runs
// them only in Docker, and the HTTP API is not deployed (motoUnsupported);
// the dev server serves the same handlers from one process, on the same
// table, through the same store.
func (d *deployment) checkService(ctx context.Context, t *testing.T, bins serviceBinaries) {
	table := d.physical(t, d.tableID(t))

	// The operator's part: an organization, an admin key, limits.
	var org struct {
		ID string `json:"id"`
	}
	d.admin(ctx, t, bins.admin, &org, "create-org", "--name", "Moto smoke test")
	var key struct {
		ClientID string `json:"clientId"`
		Secret   string `json:"secret"`
		Role     string `json:"role"`
	}
	d.admin(ctx, t, bins.admin, &key, "create-key", "--org", org.ID, "--name", "moto smoke test", "--role", "admin")
	if org.ID == "" || key.ClientID == "" || key.Secret == "" || key.Role != "admin" {
		t.Fatalf("the admin CLI made organization %q and key %+v", org.ID, key)
	}
	// Generous limits: the calls below include polling.
	var limits struct {
		Limits map[string]int64 `json:"limits"`
	}
	d.admin(ctx, t, bins.admin, &limits, "set-limits", "--org", org.ID, "--key-per-minute", "6000")
	d.admin(ctx, t, bins.admin, &limits, "get-limits", "--org", org.ID)
	if limits.Limits["keyPerMinute"] != 6000 {
		t.Errorf("get-limits after set-limits --key-per-minute 6000 printed %v", limits.Limits)
	}
	var keys []map[string]any
	d.admin(ctx, t, bins.admin, &keys, "list-keys", "--org", org.ID)
	if len(keys) != 1 || keys[0]["clientId"] != key.ClientID {
		t.Errorf("list-keys printed %v, want the one key %s", keys, key.ClientID)
	}

	srv := d.startDevServer(t, bins.devserver)
	db := d.moto.dynamodb()
	// The server serves the deployed table and made none of its own.
	tables, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tables.TableNames, []string{table}) {
		t.Errorf("moto's tables are %v once the dev server started, want only the deployed %s", tables.TableNames, table)
	}
	// It found the table without the TTL moto's CloudFormation ignores,
	// and enabled it on the attribute the template names.
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if desc := ttl.TimeToLiveDescription; desc.TimeToLiveStatus != ddbtypes.TimeToLiveStatusEnabled || aws.ToString(desc.AttributeName) != store.AttrExpires {
		t.Errorf("TTL once the dev server started: %s %q, want ENABLED on %s", desc.TimeToLiveStatus, aws.ToString(desc.AttributeName), store.AttrExpires)
	}

	env := &apitest.Env{URL: srv.url}
	c := env.Anonymous(t)
	c.Org, c.ClientID, c.Secret = org.ID, key.ClientID, key.Secret
	wrong := env.Anonymous(t)
	wrong.ClientID, wrong.Secret = key.ClientID, key.Secret+"x"
	clients := map[string]*apitest.Client{"": c, "anonymous": env.Anonymous(t), "wrong secret": wrong}

	start := time.Now()
	vars := map[string]string{"clientId": key.ClientID}
	calls := serviceCalls(t, c, vars)
	for _, call := range calls {
		client := clients[call.as]
		if client == nil {
			t.Fatalf("%s: no client %q", call.name, call.as)
		}
		path := expand(t, call.path, vars)
		var body any
		if call.body != nil {
			body = call.body()
		}
		r := client.Do(call.method, path, body)
		if call.until != nil {
			within := testenv.Scaled(30 * time.Second)
			deadline := time.Now().Add(within)
			for r.Status == call.want && !call.until(r) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %s %s still answers %s after %s", call.name, call.method, path, r.Body, within)
				}
				time.Sleep(50 * time.Millisecond)
				r = client.Do(call.method, path, body)
			}
		}
		if r.Status != call.want {
			t.Fatalf("%s: %s %s answered %d, want %d: %s", call.name, call.method, path, r.Status, call.want, r.Body)
		}
		if call.save != "" {
			id, _ := r.Object(t)["id"].(string)
			if id == "" {
				t.Fatalf("%s: no id in %s", call.name, r.Body)
			}
			vars[call.save] = id
		}
		if call.check != nil {
			if err := call.check(r); err != nil {
				t.Errorf("%s: %s %s: %v\n%s", call.name, call.method, path, err, r.Body)
			}
		}
	}
	t.Logf("%d HTTP calls answered as expected by the dev server on the deployed table in %s", len(calls), time.Since(start).Round(10*time.Millisecond))
}

// serviceCall is one request of serviceCalls and what it must answer.
type serviceCall struct {
	name   string
	as     string // the client: "" (the admin key), "anonymous", "wrong secret"
	method string
	path   string     // {name} is the value saved under name
	body   func() any // evaluated when the call is made
	want   int
	save   string // the name under which the answer's data.id is saved
	// until, when set, repeats the call (while it answers want) until the
	// answer satisfies it, within a scaled deadline.
	until func(r *apitest.Response) bool
	check func(r *apitest.Response) error
}

// serviceCalls is the HTTP table: the key the admin CLI made, a company
// through its whole life (create, read back, update, a filtered list, a
// search, delete), a deal of the company (a declared resource: every
// field, a lookup filter), a list with the company as entry, and a workflow
// run to its end; reads after writes throughout.
func serviceCalls(t *testing.T, c *apitest.Client, vars map[string]string) []serviceCall {
	seq := apitest.NextSeq()
	name := fmt.Sprintf("Motoworks Robotics %d", seq)
	externalID := fmt.Sprintf("moto-%d", seq)
	data := func(r *apitest.Response) map[string]any { return r.Object(t) }
	list := func(r *apitest.Response) []map[string]any { return r.List(t) }
	field := func(k string, want any) func(r *apitest.Response) error {
		return func(r *apitest.Response) error {
			if got := data(r)[k]; js(got) != js(want) {
				return fmt.Errorf("%s is %s, want %s", k, js(got), js(want))
			}
			return nil
		}
	}
	ids := func(want ...string) func(r *apitest.Response) error {
		return func(r *apitest.Response) error {
			var got []string
			for _, rec := range list(r) {
				got = append(got, fmt.Sprint(rec["id"]))
			}
			wantIDs := []string{}
			for _, w := range want {
				wantIDs = append(wantIDs, vars[w])
			}
			if !slices.Equal(got, wantIDs) {
				return fmt.Errorf("ids %v, want %v", got, wantIDs)
			}
			return nil
		}
	}
	body := func(b map[string]any) func() any {
		return func() any {
			out := map[string]any{}
			for k, v := range b {
				if s, ok := v.(string); ok {
					v = expand(t, s, vars)
				}
				out[k] = v
			}
			return out
		}
	}
	return []serviceCall{
		{name: "health", method: "GET", path: "/healthz", want: 200},
		{name: "no key", as: "anonymous", method: "GET", path: "/v1/companies", want: 401},
		{name: "a wrong secret", as: "wrong secret", method: "GET", path: "/v1/companies", want: 401},
		{name: "the admin CLI's key is the organization's", method: "GET", path: "/v1/keys", want: 200, check: func(r *apitest.Response) error {
			if l := list(r); len(l) != 1 || l[0]["clientId"] != vars["clientId"] {
				return fmt.Errorf("want the one key %s", vars["clientId"])
			}
			return nil
		}},
		{name: "the organization starts empty", method: "GET", path: "/v1/companies", want: 200, check: ids()},

		{name: "create a company", method: "POST", path: "/v1/companies", body: body(map[string]any{
			"canonicalName": name, "website": "https://motoworks.example", "companyType": "operating",
			"externalId": externalID, "description": "industrial robots", "tags": []any{"moto"},
		}), want: 201, save: "company", check: field("canonicalName", name)},
		{name: "read it back", method: "GET", path: "/v1/companies/{company}", want: 200, check: field("externalId", externalID)},
		{name: "update it", method: "PUT", path: "/v1/companies/{company}", body: body(map[string]any{"description": "warehouse robots"}),
			want: 200, check: field("description", "warehouse robots")},
		{name: "read the update", method: "GET", path: "/v1/companies/{company}", want: 200, check: field("description", "warehouse robots")},
		{name: "list companies filtered by externalId", method: "GET", path: "/v1/companies?externalId=" + externalID, want: 200, check: ids("company")},
		{name: "a filter matching nothing", method: "GET", path: "/v1/companies?externalId=nobody", want: 200, check: ids()},
		{name: "search companies", method: "POST", path: "/v1/companies/search", body: body(map[string]any{"text": "motoworks warehouse"}),
			want: 200, check: ids("company")},

		{name: "create a deal of the company (every field)", method: "POST", path: "/v1/deals", body: func() any {
			b := apitest.Sample(t, c, resources.Deals, true)
			b["companyId"] = vars["company"]
			return b
		}, want: 201, save: "deal", check: func(r *apitest.Response) error { return field("companyId", vars["company"])(r) }},
		{name: "read the deal back", method: "GET", path: "/v1/deals/{deal}", want: 200, check: func(r *apitest.Response) error { return field("companyId", vars["company"])(r) }},
		{name: "update the deal", method: "PUT", path: "/v1/deals/{deal}", body: body(map[string]any{"stage": "IC", "status": "won"}),
			want: 200, check: field("status", "won")},
		{name: "list the company's deals", method: "GET", path: "/v1/deals?companyId={company}", want: 200, check: ids("deal")},
		{name: "list won deals", method: "GET", path: "/v1/deals?status=won", want: 200, check: ids("deal")},

		{name: "create a list of companies", method: "POST", path: "/v1/lists", body: body(map[string]any{
			"name": "Moto targets", "resourceType": "company", "columns": []any{map[string]any{"field": "canonicalName", "label": "Name"}},
		}), want: 201, save: "list"},
		{name: "add the company to it", method: "POST", path: "/v1/lists/{list}/entries", body: body(map[string]any{"recordId": "{company}"}), want: 201},
		{name: "read the list's entries", method: "GET", path: "/v1/lists/{list}/entries", want: 200, check: func(r *apitest.Response) error {
			if l := list(r); len(l) != 1 || l[0]["recordId"] != vars["company"] {
				return fmt.Errorf("want one entry of %s", vars["company"])
			}
			return nil
		}},

		{name: "create a workflow", method: "POST", path: "/v1/workflows", body: body(map[string]any{
			"name": "Moto greeter", "steps": []any{map[string]any{"id": "greet", "type": "set", "with": map[string]any{"greeting": "hello", "name.$": "$.input.name"}}},
		}), want: 201, save: "workflow"},
		{name: "start a run", method: "POST", path: "/v1/workflows/{workflow}/runs", body: body(map[string]any{"input": map[string]any{"name": "moto"}}),
			want: 202, save: "run"},
		{name: "the run completes", method: "GET", path: "/v1/workflow-runs/{run}", want: 200,
			until: func(r *apitest.Response) bool { s := data(r)["status"]; return s != "queued" && s != "running" },
			check: func(r *apitest.Response) error {
				if err := field("status", "completed")(r); err != nil {
					return err
				}
				return field("output", map[string]any{"greeting": "hello", "name": "moto"})(r)
			}},
		{name: "the workflow's runs", method: "GET", path: "/v1/workflows/{workflow}/runs", want: 200, check: ids("run")},

		{name: "delete the list", method: "DELETE", path: "/v1/lists/{list}", want: 204},
		{name: "delete the deal", method: "DELETE", path: "/v1/deals/{deal}", want: 204},
		{name: "the deal is gone", method: "GET", path: "/v1/deals/{deal}", want: 404},
		{name: "delete the workflow", method: "DELETE", path: "/v1/workflows/{workflow}", want: 204},
		{name: "delete the company", method: "DELETE", path: "/v1/companies/{company}", want: 204},
		{name: "the company is gone", method: "GET", path: "/v1/companies/{company}", want: 404},
		{name: "and no longer listed", method: "GET", path: "/v1/companies?externalId=" + externalID, want: 200, check: ids()},
	}
}

var placeholder = regexp.MustCompile(`\{(\w+)\}`)

// expand replaces each {name} of s by vars[name].
func expand(t *testing.T, s string, vars map[string]string) string {
	t.Helper()
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := vars[strings.Trim(m, "{}")]
		if !ok {
			t.Fatalf("%s: nothing saved as %s yet", s, m)
		}
		return v
	})
}
