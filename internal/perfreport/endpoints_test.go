package perfreport_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/partitionsim"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	decl "github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// routeRequests is how many requests of every route the meter counts.
const routeRequests = 3

// routeUsage is one route's DynamoDB calls and capacity, summed over
// routeRequests requests, and their median latency (for the Lambda
// duration of the cost).
type routeUsage struct {
	Route routes.Route
	// Case names a request other than the route's typical one (its worst
	// case: worstLists); "" for the typical one.
	Case    string
	Usage   apitest.Usage
	Latency time.Duration
	// Keys is what a request took of each key (keyMeter), when metered.
	Keys []keyUse
}

// call is one request of a route: made ready by prep (unmetered: the
// records it reads or deletes), then sent.
type call struct {
	method, path string
	body         any
	headers      []string
	signed       string // a webhook delivery's trigger secret: the body is signed with it
	anonymous    bool   // sent without the API key (public routes, webhook deliveries)
}

// recipe makes the i-th request of a route.
type recipe func(t *testing.T, i int) call

// everyEndpoint sends routeRequests successful requests to every route of
// the route table, each measured alone by the meter: the usage table of
// the report. A route without a recipe fails the report, so a new route
// cannot go unmeasured. Requests that start runs count the runs too (they
// execute in process, and are waited for).
func everyEndpoint(t *testing.T, env *apitest.Env, m *apitest.Meter) []routeUsage {
	t.Helper()
	c := env.Org(t)
	ok := func(r *apitest.Response) *apitest.Response {
		t.Helper()
		if r.Status < 200 || r.Status > 299 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return r
	}
	create := func(path string, body any) string {
		t.Helper()
		return ok(c.Do("POST", path, body)).Object(t)["id"].(string)
	}
	company := func() string {
		return create("/v1/companies", map[string]any{"canonicalName": fmt.Sprintf("Usage %d", apitest.NextSeq())})
	}
	companyID := company()
	workflow := func(steps ...any) map[string]any {
		return ok(c.Do("POST", "/v1/workflows", map[string]any{"name": fmt.Sprintf("Usage %d", apitest.NextSeq()),
			"trigger": map[string]any{"scheme": "hmac-sha256"}, "steps": steps})).Object(t)
	}
	upsert := map[string]any{"id": "up", "type": "upsertCompany", "with": map[string]any{"canonicalName.$": "$.input.name"}}
	wf := workflow(upsert)
	wfID, trigger := wf["id"].(string), wf["trigger"].(map[string]any)
	runOf := func(wfID string) string {
		id := create("/v1/workflows/"+wfID+"/runs", map[string]any{"input": map[string]any{"name": "Run co"}})
		waitForRuns(t, env, c)
		return id
	}
	runID := runOf(wfID)
	failing := workflow(map[string]any{"id": "stop", "type": "fail", "with": map[string]any{"message": "down"}})["id"].(string)
	listID := create("/v1/lists", withResourceType(apitest.Sample(t, c, declared(t, "lists"), true)))
	value := func() string {
		v := ok(c.Do("POST", "/v1/enrichments/resources/companies/"+companyID, map[string]any{"values": []any{
			map[string]any{"property": "sector", "value": fmt.Sprintf("Sector %d", apitest.NextSeq()), "source": "provider", "confidence": 50}}})).List(t)
		return v[0]["id"].(string)
	}
	valueID := value()
	enrichPath := "/v1/enrichments/resources/companies/" + companyID
	resource := "companies:" + companyID
	seriesBody := map[string]any{"resource": resource, "key": "metric:revenue", "policy": "highest_confidence",
		"period": map[string]any{"start": "2025-01-01", "end": "2025-12-31", "granularity": "month"}}
	mcpHeaders := []string{"Accept", "application/json, text/event-stream"}

	get := func(path string) recipe { return func(*testing.T, int) call { return call{method: "GET", path: path} } }
	recipes := map[string]recipe{
		"GET /healthz":              func(*testing.T, int) call { return call{method: "GET", path: routes.HealthPath, anonymous: true} },
		"GET " + routes.OpenAPIPath: func(*testing.T, int) call { return call{method: "GET", path: routes.OpenAPIPath, anonymous: true} },
		"GET /v1/keys":              get("/v1/keys"),
		"DELETE /v1/keys/{clientId}": func(t *testing.T, _ int) call {
			return call{method: "DELETE", path: "/v1/keys/" + env.Key(t, c.Org, "member").ClientID}
		},
		"POST /v1/companies": func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/companies", body: map[string]any{"canonicalName": fmt.Sprintf("Created %d", apitest.NextSeq()),
				"website": fmt.Sprintf("https://created%d.example", apitest.NextSeq()), "companyType": "operating"}}
		},
		"GET /v1/companies":      get("/v1/companies"),
		"GET /v1/companies/{id}": get("/v1/companies/" + companyID),
		"PUT /v1/companies/{id}": func(_ *testing.T, i int) call {
			return call{method: "PUT", path: "/v1/companies/" + companyID, body: map[string]any{"description": fmt.Sprintf("Described %d", i)}}
		},
		"DELETE /v1/companies/{id}": func(*testing.T, int) call { return call{method: "DELETE", path: "/v1/companies/" + company()} },
		"POST /v1/workflows": func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/workflows", body: map[string]any{"name": fmt.Sprintf("Created %d", apitest.NextSeq()),
				"trigger": map[string]any{"scheme": "hmac-sha256"}, "steps": []any{upsert}}}
		},
		"GET /v1/workflows":      get("/v1/workflows"),
		"GET /v1/workflows/{id}": get("/v1/workflows/" + wfID),
		"PUT /v1/workflows/{id}": func(_ *testing.T, i int) call {
			return call{method: "PUT", path: "/v1/workflows/" + wfID, body: map[string]any{"name": fmt.Sprintf("Renamed %d", i)}}
		},
		"DELETE /v1/workflows/{id}": func(*testing.T, int) call {
			return call{method: "DELETE", path: "/v1/workflows/" + workflow(upsert)["id"].(string)}
		},
		"POST /v1/workflows/{id}/trigger/webhook-secret/rotate": func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/workflows/" + workflow(upsert)["id"].(string) + "/trigger/webhook-secret/rotate"}
		},
		"POST /v1/workflows/{id}/runs": func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/workflows/" + wfID + "/runs", body: map[string]any{"input": map[string]any{"name": "Started co"}}}
		},
		"GET /v1/workflows/{id}/runs": get("/v1/workflows/" + wfID + "/runs"),
		"GET /v1/workflow-runs":       get("/v1/workflow-runs"),
		"GET /v1/workflow-runs/{id}":  get("/v1/workflow-runs/" + runID),
		"PATCH /v1/workflow-runs/{id}": func(_ *testing.T, i int) call {
			return call{method: "PATCH", path: "/v1/workflow-runs/" + runID, body: map[string]any{"title": fmt.Sprintf("Title %d", i)}}
		},
		"POST /v1/workflow-runs/{id}/retry": func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/workflow-runs/" + runOf(failing) + "/retry"}
		},
		"POST /webhooks/workflows/{slug}": func(*testing.T, int) call {
			return call{method: "POST", path: "/webhooks/workflows/" + trigger["slug"].(string), body: `{"name":"Hooked co"}`, signed: trigger["secret"].(string), anonymous: true}
		},
		"POST " + routes.MCPPath: func(*testing.T, int) call {
			return call{method: "POST", path: routes.MCPPath, body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers: mcpHeaders}
		},
		"POST /v1/lists/{id}/entries": func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/lists/" + listID + "/entries", body: map[string]any{"recordId": company()}}
		},
		"GET /v1/lists/{id}/entries": get("/v1/lists/" + listID + "/entries"),
		"DELETE /v1/lists/{id}/entries/{recordId}": func(*testing.T, int) call {
			id := company()
			ok(c.Do("POST", "/v1/lists/"+listID+"/entries", map[string]any{"recordId": id}))
			return call{method: "DELETE", path: "/v1/lists/" + listID + "/entries/" + id}
		},
		"POST /v1/data/metric-points": func(_ *testing.T, i int) call {
			return call{method: "POST", path: "/v1/data/metric-points", body: map[string]any{"points": []any{map[string]any{
				"resource": resource, "key": "metric:revenue", "date": time.Date(2025, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly),
				"value": float64(i), "source": "crm", "confidence": 80, "unit": "USD", "currency": "USD"}}}}
		},
		"POST /v1/data/metric-series": func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/data/metric-series", body: seriesBody}
		},
		"POST /v1/enrichments/resources/{resourceType}/{resourceId}": func(_ *testing.T, i int) call {
			return call{method: "POST", path: enrichPath, body: map[string]any{"values": []any{
				map[string]any{"property": "sector", "value": fmt.Sprintf("Posted %d", i), "source": "provider", "confidence": 60}}}}
		},
		"GET /v1/enrichments/resources/{resourceType}/{resourceId}": get(enrichPath),
		"PATCH /v1/enrichments/resources/{resourceType}/{resourceId}/{valueId}": func(_ *testing.T, i int) call {
			return call{method: "PATCH", path: enrichPath + "/" + valueID, body: map[string]any{"pinned": i%2 == 0}}
		},
		"DELETE /v1/enrichments/resources/{resourceType}/{resourceId}/{valueId}": func(*testing.T, int) call {
			return call{method: "DELETE", path: enrichPath + "/" + value()}
		},
	}
	// Every declared resource's routes, and every search.
	records := map[string]string{}
	for _, r := range api.Routes() {
		i := slices.IndexFunc(resources.All(), func(d *decl.Def) bool { return d.Name == r.Resource })
		if i < 0 || (r.Path != "/v1/"+r.Resource && r.Path != "/v1/"+r.Resource+"/{id}") {
			continue
		}
		def, name := resources.All()[i], r.Resource
		key := r.Method + " " + r.Path
		switch {
		case r.Method == "POST":
			recipes[key] = func(t *testing.T, _ int) call {
				return call{method: "POST", path: "/v1/" + name, body: withResourceType(apitest.Sample(t, c, def, true))}
			}
		case r.Method == "GET" && r.Path == "/v1/"+name:
			recipes[key] = get("/v1/" + name)
		default:
			if _, made := records[name]; !made {
				records[name] = create("/v1/"+name, withResourceType(apitest.Sample(t, c, def, true)))
			}
			id := records[name]
			switch r.Method {
			case "GET":
				recipes[key] = get("/v1/" + name + "/" + id)
			case "PUT":
				recipes[key] = func(t *testing.T, _ int) call {
					return call{method: "PUT", path: "/v1/" + name + "/" + id, body: apitest.SampleFields(t, c, mutable(def), true)}
				}
			case "DELETE":
				recipes[key] = func(t *testing.T, _ int) call {
					return call{method: "DELETE", path: "/v1/" + name + "/" + create("/v1/"+name, withResourceType(apitest.Sample(t, c, def, false)))}
				}
			}
		}
	}
	// Bulk writes: a batch of 10 creates, an upsert that creates.
	sampleOf := func(t *testing.T, name string) map[string]any {
		if name == resources.Companies {
			return map[string]any{"canonicalName": fmt.Sprintf("Batch %d", apitest.NextSeq()), "externalId": fmt.Sprintf("usage-%d", apitest.NextSeq())}
		}
		return withResourceType(apitest.Sample(t, c, declared(t, name), true))
	}
	for _, r := range api.Routes() {
		name := r.Resource
		switch {
		case r.Method == "POST" && r.Path == "/v1/"+name+"/batch":
			recipes[r.Pattern()] = func(t *testing.T, _ int) call {
				var ops []any
				for range 10 {
					ops = append(ops, map[string]any{"op": "create", "data": sampleOf(t, name)})
				}
				return call{method: "POST", path: r.Path, body: map[string]any{"operations": ops}}
			}
		case r.Method == "POST" && r.Path == "/v1/"+name+"/query":
			recipes[r.Pattern()] = func(*testing.T, int) call {
				return call{method: "POST", path: r.Path, body: map[string]any{"limit": 100}}
			}
		case r.Method == "PUT" && r.Path == "/v1/"+name:
			recipes[r.Pattern()] = func(t *testing.T, _ int) call {
				field := "externalId"
				if name != resources.Companies {
					field = declared(t, name).UniqueFields()[0]
				}
				return call{method: "PUT", path: r.Path + "?match=" + field, body: sampleOf(t, name)}
			}
		}
	}
	// Bulk jobs: created and read, never started here (the report's
	// import is measured on its own: bulkImport).
	env.Deps.Jobs.SetStarter(nil) // exports queued, not run: their work is no route's
	defer env.Deps.Jobs.SetStarter(env.Runner)
	importPath := "/v1/imports/" + create("/v1/imports", map[string]any{"resource": "companies", "format": "csv"})
	exportPath := "/v1/exports/" + create("/v1/exports", map[string]any{"resource": "deals"})
	recipes["POST /v1/imports"] = func(*testing.T, int) call {
		return call{method: "POST", path: "/v1/imports", body: map[string]any{"resource": "companies", "format": "csv", "mode": "upsert", "match": "externalId"}}
	}
	recipes["GET /v1/imports"] = get("/v1/imports")
	recipes["GET /v1/imports/{id}"] = get(importPath)
	recipes["POST /v1/exports"] = func(*testing.T, int) call {
		return call{method: "POST", path: "/v1/exports", body: map[string]any{"resource": "companies", "format": "ndjson"}}
	}
	recipes["GET /v1/exports"] = get("/v1/exports")
	recipes["GET /v1/exports/{id}"] = get(exportPath)

	for _, d := range kinds.Searchable() {
		recipes["POST /v1/"+d.Name+"/search"] = func(*testing.T, int) call {
			return call{method: "POST", path: "/v1/" + d.Name + "/search", body: map[string]any{"text": "usage"}}
		}
		if d.Similar {
			id := companyID
			if d.Name != "companies" {
				id = records[d.Name] // the record the resource's GET reads
			}
			recipes["POST /v1/"+d.Name+"/{id}/similar"] = func(*testing.T, int) call {
				return call{method: "POST", path: "/v1/" + d.Name + "/" + id + "/similar"}
			}
		}
	}

	// The change history and the outbound webhooks: the events of every
	// change above, read from the table's stream until caught up and then
	// stopped, so that the events function's writes load no measurement;
	// an endpoint on a receiver of the report (apitest's service delivers
	// to loopback addresses) and a delivery to it. A retry is queued on a
	// queue that only takes it, as SQS takes it from the hooks function:
	// its attempt is the deliver function's, no route's.
	evs := env.StartEvents(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(2*time.Minute))
	defer cancel()
	if err := evs.Caught(ctx); err != nil {
		t.Fatalf("the events code did not catch up with the stream: %v", err)
	}
	evs.Stop()
	env.Deps.Endpoints.SetQueue(takenQueue{})
	eventID := ok(c.Do("GET", "/v1/events?limit=1", nil)).List(t)[0]["id"].(string)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(receiver.Close)
	endpointBody := func() map[string]any {
		return map[string]any{"url": fmt.Sprintf("%s/hooks/%d", receiver.URL, apitest.NextSeq()), "eventTypes": []string{"company.*", "workflowRun.updated"},
			"description": "Usage"}
	}
	endpointPath := "/v1/webhook-endpoints/" + create("/v1/webhook-endpoints", endpointBody())
	deliveryID := ok(c.Do("POST", endpointPath+"/test", nil)).Object(t)["id"].(string)
	recipes["GET /v1/events"] = get("/v1/events")
	recipes["GET /v1/events/{id}"] = get("/v1/events/" + eventID)
	recipes["POST /v1/webhook-endpoints"] = func(*testing.T, int) call {
		return call{method: "POST", path: "/v1/webhook-endpoints", body: endpointBody()}
	}
	recipes["GET /v1/webhook-endpoints"] = get("/v1/webhook-endpoints")
	recipes["GET /v1/webhook-endpoints/{id}"] = get(endpointPath)
	recipes["PATCH /v1/webhook-endpoints/{id}"] = func(_ *testing.T, i int) call {
		return call{method: "PATCH", path: endpointPath, body: map[string]any{"description": fmt.Sprintf("Described %d", i)}}
	}
	recipes["DELETE /v1/webhook-endpoints/{id}"] = func(*testing.T, int) call {
		return call{method: "DELETE", path: "/v1/webhook-endpoints/" + create("/v1/webhook-endpoints", endpointBody())}
	}
	recipes["POST /v1/webhook-endpoints/{id}/secret/rotate"] = func(*testing.T, int) call {
		return call{method: "POST", path: endpointPath + "/secret/rotate"}
	}
	recipes["POST /v1/webhook-endpoints/{id}/test"] = func(*testing.T, int) call { return call{method: "POST", path: endpointPath + "/test"} }
	recipes["GET /v1/webhook-endpoints/{id}/deliveries"] = get(endpointPath + "/deliveries")
	recipes["POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry"] = func(*testing.T, int) call {
		return call{method: "POST", path: endpointPath + "/deliveries/" + deliveryID + "/retry"}
	}

	anonymous := env.Anonymous(t)
	var out []routeUsage
	for _, rt := range api.Routes() {
		rec, known := recipes[rt.Pattern()]
		if !known {
			t.Errorf("%s: the report does not know how to call it; give it a recipe in endpoints_test.go", rt.Pattern())
			continue
		}
		out = append(out, measureRoute(t, env, m, c, anonymous, rt, rec))
	}
	return out
}

// measureRoute sends routeRequests requests of rec to route rt, as c (or
// anonymous), each measured alone by the meter.
func measureRoute(t *testing.T, env *apitest.Env, m *apitest.Meter, c, anonymous *apitest.Client, rt routes.Route, rec recipe) routeUsage {
	t.Helper()
	u := routeUsage{Route: rt}
	var lat []time.Duration
	var before []partitionsim.KeyStats
	if keyMeter != nil {
		before, _ = keyMeter.Stats()
	}
	for i := range routeRequests {
		cl := rec(t, i)
		if cl.signed != "" {
			cl.headers = append(cl.headers, "X-Hub-Signature", inbound.Sign(cl.signed, []byte(cl.body.(string))))
		}
		sender := c
		if cl.anonymous {
			sender = anonymous
		}
		m.Reset()
		start := time.Now()
		r := sender.Do(cl.method, cl.path, cl.body, cl.headers...)
		lat = append(lat, time.Since(start))
		if r.Status < 200 || r.Status > 299 {
			t.Fatalf("%s (%s %s): %d %s", rt.Pattern(), cl.method, cl.path, r.Status, r.Body)
		}
		waitForRuns(t, env, c) // a run it started counts
		got := m.Reset()
		u.Usage.Calls += got.Calls
		u.Usage.Reads += got.Reads
		u.Usage.Write += got.Write
		u.Usage.Shared.Calls += got.Shared.Calls
		u.Usage.Shared.Reads += got.Shared.Reads
		u.Usage.Shared.Write += got.Shared.Write
		u.Usage.Written = append(u.Usage.Written, got.Written...)
	}
	slices.Sort(lat)
	u.Latency = lat[len(lat)/2]
	if keyMeter != nil {
		after, _ := keyMeter.Stats()
		u.Keys = keyUses(before, after, routeRequests)
	}
	return u
}

// takenQueue is the delivery queue of the report's service: it takes a
// message as SQS does, with no DynamoDB call, and attempts nothing.
type takenQueue struct{}

func (takenQueue) Send(context.Context, endpoints.Message) error { return nil }

// withResourceType makes a list sample a list of companies (the samples
// take the first enum value, which entries of companies need not match).
func withResourceType(body map[string]any) map[string]any {
	if _, ok := body["resourceType"]; ok {
		body["resourceType"] = "company"
	}
	return body
}

// declared is the declaration of a resource by name.
func declared(t *testing.T, name string) *decl.Def {
	t.Helper()
	i := slices.IndexFunc(resources.All(), func(d *decl.Def) bool { return d.Name == name })
	if i < 0 {
		t.Fatalf("no declared resource %q", name)
	}
	return resources.All()[i]
}

// mutable are the fields of def a partial update may send.
func mutable(def *decl.Def) []decl.Field {
	var out []decl.Field
	for _, f := range def.Fields {
		if !f.ReadOnly && !f.Immutable && !strings.EqualFold(f.Name, "id") {
			out = append(out, f)
		}
	}
	return out
}
