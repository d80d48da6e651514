package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Issue 46, items 3, 4 and 5: the document says what the service does,
// neither looser nor stricter, in the terms validating tools read.

// publishedDoc is the published OpenAPI document, decoded.
func publishedDoc(t *testing.T) map[string]any {
	t.Helper()
	b, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// docOperation is the operation method path of the published document.
func docOperation(t *testing.T, d map[string]any, method, path string) map[string]any {
	t.Helper()
	op, _ := apitest.ObjectAt(t, d, "paths", path)[strings.ToLower(method)].(map[string]any)
	if op == nil {
		t.Fatalf("the document has no %s %s", method, path)
	}
	return op
}

// docParams are the parameters of the operation method path of d, each
// a component refers to resolved.
func docParams(t *testing.T, d map[string]any, method, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	params, _ := docOperation(t, d, method, path)["parameters"].([]any)
	for _, p := range params {
		m := p.(map[string]any)
		if ref, ok := m["$ref"].(string); ok {
			m = apitest.ObjectAt(t, d, "components", "parameters", strings.TrimPrefix(ref, "#/components/parameters/"))
		}
		out = append(out, m)
	}
	return out
}

// declares reports whether the published document declares status for the
// operation method path.
func declares(t *testing.T, d map[string]any, method, path string, status int) bool {
	t.Helper()
	_, ok := apitest.ObjectAt(t, docOperation(t, d, method, path), "responses")[fmt.Sprint(status)]
	return ok
}

// componentAt is the component schema name of the published document.
func componentAt(t *testing.T, d map[string]any, name string) map[string]any {
	t.Helper()
	return apitest.ObjectAt(t, d, "components", "schemas", name)
}

func TestTheEnrichmentListingAnswersEveryCandidateInOneAnswer(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	id := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Many Candidates"}))
	path := "/v1/enrichments/resources/companies/" + id
	const n = 136
	for from := 0; from < n; from += 50 {
		var values []any
		for i := from; i < min(from+50, n); i++ {
			values = append(values, map[string]any{"property": "description", "value": fmt.Sprintf("candidate %d", i),
				"source": "provider", "confidence": i % 101})
		}
		c.Do("POST", path, map[string]any{"values": values}).Want(t, http.StatusCreated)
	}

	r := c.Do("GET", path, nil).Want(t, http.StatusOK)
	all := r.List(t)
	if len(all) != n || r.Header.Get(httpapi.HeaderNextCursor) != "" || r.Header.Get(httpapi.HeaderLink) != "" {
		t.Fatalf("the listing answers %d of the %d candidates (X-Next-Cursor %q): want every one, in one answer",
			len(all), n, r.Header.Get(httpapi.HeaderNextCursor))
	}
	for i := 1; i < len(all); i++ {
		if all[i]["confidence"].(float64) > all[i-1]["confidence"].(float64) {
			t.Fatalf("candidate %d (confidence %v) follows one of confidence %v: not in rank order", i, all[i]["confidence"], all[i-1]["confidence"])
		}
	}

	// limit and page still cut pages, for the clients that paged it; a
	// cursor alone answers the rest.
	if got := c.Do("GET", path+"?limit=50&page=3", nil).Want(t, http.StatusOK).List(t); !slices.Equal(apitest.IDsOf(t, got), apitest.IDsOf(t, all[100:])) {
		t.Errorf("limit=50&page=3: %d candidates, want the last %d", len(got), n-100)
	}
	first := c.Do("GET", path+"?limit=50", nil).Want(t, http.StatusOK)
	cursor := first.Header.Get(httpapi.HeaderNextCursor)
	if got := first.List(t); cursor == "" || !slices.Equal(apitest.IDsOf(t, got), apitest.IDsOf(t, all[:50])) {
		t.Fatalf("limit=50: %d candidates, cursor %q", len(got), cursor)
	}
	rest := c.Do("GET", path+"?cursor="+url.QueryEscape(cursor), nil).Want(t, http.StatusOK)
	if got := rest.List(t); !slices.Equal(apitest.IDsOf(t, got), apitest.IDsOf(t, all[50:])) || rest.Header.Get(httpapi.HeaderNextCursor) != "" {
		t.Errorf("the cursor alone answers %d candidates, want the other %d", len(got), n-50)
	}
	apitest.WantError(t, c.Do("GET", path+"?page=2", nil), http.StatusBadRequest, "page", "limit")

	for _, p := range docParams(t, publishedDoc(t), "GET", "/v1/enrichments/resources/{resourceType}/{resourceId}") {
		if p["name"] == "limit" || p["name"] == "page" {
			if _, ok := p["schema"].(map[string]any)["default"]; ok {
				t.Errorf("the document gives %s a default: %v", p["name"], p)
			}
		}
	}
}

func TestACompanysEnrichmentIsTypedAsTheCandidatesTheServiceWrites(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	id := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Typed Candidates"}))
	values := c.Do("POST", "/v1/enrichments/resources/companies/"+id, map[string]any{"values": []any{
		map[string]any{"property": "sector", "value": "Robotics", "source": "provider", "provider": "p", "confidence": 40},
		map[string]any{"property": "sector", "value": "Automation", "source": "web", "confidence": 90},
		map[string]any{"property": "employeeCount", "value": 120, "source": "document", "confidence": 70.5,
			"sourceId": apitest.IDOf(t, c.Do("POST", "/v1/documents", map[string]any{"name": "Deck"}).Want(t, 201).Object(t))},
	}}).Want(t, http.StatusCreated).List(t)
	c.Do("PATCH", "/v1/enrichments/resources/companies/"+id+"/"+apitest.IDOf(t, values[0]), map[string]any{"pinned": true}).Want(t, http.StatusOK)

	req, err := http.NewRequest("GET", c.Base+"/v1/companies/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := c.Do("GET", "/v1/companies/"+id, nil).Want(t, http.StatusOK)
	company := res.Object(t)
	members := []string{"value", "source", "confidence", "pinned", "discoveredAt"}
	sector, _ := apitest.ObjectAt(t, company, "enrichment")["sector"].([]any)
	count, _ := apitest.ObjectAt(t, company, "enrichment")["employeeCount"].([]any)
	if len(sector) != 2 || len(count) != 1 {
		t.Fatalf("enrichment %s: want two sector candidates and one of employeeCount", apitest.JSONOf(company["enrichment"]))
	}
	for _, cand := range append(slices.Clone(sector), count...) {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range cand.(map[string]any) {
				if !yield(k) {
					return
				}
			}
		})
		if want := slices.Sorted(slices.Values(members)); !slices.Equal(keys, want) {
			t.Errorf("a candidate has %v, want exactly %v", keys, want)
		}
	}
	if top := sector[0].(map[string]any); top["value"] != "Robotics" || top["pinned"] != true || top["source"] != "provider" {
		t.Errorf("the first sector candidate is %s, want the pinned Robotics", apitest.JSONOf(top))
	}
	if v := count[0].(map[string]any); v["value"] != "120" || v["confidence"] != 70.5 {
		t.Errorf("the employeeCount candidate is %s, want value \"120\" (text) and confidence 70.5", apitest.JSONOf(v))
	}

	// The document types every member: the answer passes it, and one with
	// a member missing, of another type, or one more does not.
	if err := apitest.Contract(req, nil, res.Status, res.Header, res.Body); err != nil {
		t.Fatalf("the company does not pass the document: %v", err)
	}
	for what, change := range map[string]func(cand map[string]any){
		"without pinned":         func(cand map[string]any) { delete(cand, "pinned") },
		"without discoveredAt":   func(cand map[string]any) { delete(cand, "discoveredAt") },
		"with a number value":    func(cand map[string]any) { cand["value"] = 120 },
		"with a null source":     func(cand map[string]any) { cand["source"] = nil },
		"with a text confidence": func(cand map[string]any) { cand["confidence"] = "high" },
		"with a member more":     func(cand map[string]any) { cand["provider"] = "p" },
	} {
		changed := apitest.Clone(t, company)
		change(apitest.ObjectAt(t, changed, "enrichment")["sector"].([]any)[1].(map[string]any))
		body, _ := json.Marshal(map[string]any{"data": changed})
		if apitest.Contract(req, nil, res.Status, res.Header, body) == nil {
			t.Errorf("the document allows a company whose candidate is %s", what)
		}
	}
	candidate := apitest.ObjectAt(t, publishedDoc(t), "components", "schemas", "Company", "properties", "enrichment", "additionalProperties", "items")
	if got := texts(candidate["required"]); !slices.Equal(got, members) {
		t.Errorf("the published candidate requires %v, want %v", got, members)
	}
}

func TestTheIdsOfAMultiGetAreOneStringWhosePatternRefusesWhatTheServiceRefuses(t *testing.T) {
	t.Parallel()
	param := docParams(t, publishedDoc(t), "GET", "/v1/documents/ids={ids}")[0]
	schema := param["schema"].(map[string]any)
	if schema["type"] != "string" || schema["pattern"] == nil || param["name"] != "ids" {
		t.Fatalf("ids is declared %s, want a string with a pattern", apitest.JSONOf(param))
	}
	pattern := regexp.MustCompile(schema["pattern"].(string))

	c := apitest.New(t).Org(t)
	doc := apitest.IDOf(t, c.Do("POST", "/v1/documents", map[string]any{"name": "One"}).Want(t, 201).Object(t))
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = fmt.Sprintf("doc_%03d", i)
	}
	for _, tc := range []struct {
		segment string
		ok      bool
	}{
		{doc, true}, {doc + ",doc_other", true}, {doc + "," + doc, true}, {"%20" + doc + "%20,%20x", true},
		{strings.Join(hundred, ","), true},
		{"", false}, {",", false}, {doc + ",", false}, {"," + doc, false}, {doc + ",,x", false}, {doc + ",%20,x", false},
		{"%20", false}, {strings.Join(append(hundred, "one_more"), ","), false},
	} {
		path := "/v1/documents/ids=" + tc.segment
		r := c.Do("GET", path, nil)
		value, _ := url.PathUnescape(tc.segment)
		allowed, matches := apitest.Allows("GET", path, nil), pattern.MatchString(value)
		switch {
		case tc.ok && (r.Status != 200 || allowed != nil || !matches):
			t.Errorf("ids=%q: the service answers %d, the document allows it: %v (pattern: %v); want 200 and allowed", value, r.Status, allowed, matches)
		case !tc.ok && (r.Status != 400 || allowed == nil || matches):
			t.Errorf("ids=%q: the service answers %d, the document refuses it: %v (pattern: %v); want 400 and refused", value, r.Status, allowed != nil, !matches)
		}
	}
}

func TestARunsTitleMayBeMissingAndItsStatusIsOpenButAnEmptyTitleIsRefused(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "Titles")
	run := apitest.RunToEnd(t, c, wf, nil)

	// A run stored before runs had titles is answered without one, as the
	// document allows.
	old := apitest.Clone(t, run)
	delete(old, "title")
	old["id"], old["organizationId"] = ids.New("run"), c.Org
	doc, _ := json.Marshal(old)
	part := store.OrgPartition(c.Org, store.TypeRun)
	putRaw(t, e, map[string]string{store.AttrPK: part, store.AttrSK: old["id"].(string), store.AttrType: store.TypeRun, store.AttrDoc: string(doc),
		store.GSI3.PK: part + "#workflowId=" + wf, store.GSI3.SK: old["id"].(string)})
	got := c.Do("GET", "/v1/workflow-runs/"+old["id"].(string), nil).Want(t, http.StatusOK).Object(t)
	if title, has := got["title"]; has {
		t.Errorf("a run stored without a title answers title %q, want none", title)
	}

	// A status the document does not list yet is still a run's.
	req, _ := http.NewRequest("GET", c.Base+"/v1/workflow-runs/"+apitest.IDOf(t, run), nil)
	paused := apitest.Clone(t, run)
	paused["status"] = "paused"
	body, _ := json.Marshal(map[string]any{"data": paused})
	if err := apitest.Contract(req, nil, 200, http.Header{"Content-Type": {"application/json"}, "Etag": {`"1"`}}, body); err != nil {
		t.Errorf("the document refuses a run of status paused: %v", err)
	}
	d := publishedDoc(t)
	status := apitest.ObjectAt(t, componentAt(t, d, "WorkflowRun"), "properties", "status")
	if _, closed := status["enum"]; closed || !slices.Equal(texts(status["examples"]), []string{"queued", "running", "completed", "failed"}) {
		t.Errorf("a run's status is declared %s: want the known values as examples, no enum", apitest.JSONOf(status))
	}
	if slices.Contains(texts(componentAt(t, d, "WorkflowRun")["required"]), "title") {
		t.Error("the document requires a run's title")
	}

	// The service refuses an empty title; so does the document, so a
	// validating client does not send it.
	for _, call := range []struct{ method, path string }{
		{"PATCH", "/v1/workflow-runs/" + apitest.IDOf(t, run)}, {"POST", "/v1/workflows/" + wf + "/runs"},
	} {
		apitest.WantError(t, c.Do(call.method, call.path, map[string]any{"title": ""}), 400, "title")
		if apitest.Allows(call.method, call.path, []byte(`{"title":""}`)) == nil {
			t.Errorf("%s %s: the document allows an empty title", call.method, call.path)
		}
		if err := apitest.Allows(call.method, call.path, []byte(`{"title":"A title"}`)); err != nil {
			t.Errorf("%s %s: the document refuses a title: %v", call.method, call.path, err)
		}
	}
}

func TestEveryBatchTellsItsOperationsApartByOp(t *testing.T) {
	t.Parallel()
	d := publishedDoc(t)
	n := 0
	for _, rt := range api.Routes() {
		if rt.Method != "POST" || !strings.HasSuffix(rt.Path, "/batch") {
			continue
		}
		n++
		items := apitest.ObjectAt(t, docOperation(t, d, rt.Method, rt.Path), "requestBody", "content", "application/json", "schema", "properties", "operations", "items")
		disc, _ := items["discriminator"].(map[string]any)
		if disc == nil || disc["propertyName"] != "op" {
			t.Errorf("%s: the operations' oneOf has no discriminator on op: %s", rt.Path, apitest.JSONOf(items))
			continue
		}
		mapping := disc["mapping"].(map[string]any)
		variants := items["oneOf"].([]any)
		if len(mapping) != len(variants) {
			t.Errorf("%s: %d variants, %d mapped", rt.Path, len(variants), len(mapping))
		}
		for op, ref := range mapping {
			if !slices.ContainsFunc(variants, func(v any) bool { return v.(map[string]any)["$ref"] == ref }) {
				t.Errorf("%s: op %s maps to %v, not one of the variants", rt.Path, op, ref)
			}
			variant := componentAt(t, d, strings.TrimPrefix(ref.(string), "#/components/schemas/"))
			opSchema := apitest.ObjectAt(t, variant, "properties", "op")
			if !slices.Contains(texts(variant["required"]), "op") || !slices.Equal(texts(opSchema["enum"]), []string{op}) {
				t.Errorf("%s: variant %v does not require op as the one value %q: %s", rt.Path, ref, op, apitest.JSONOf(variant))
			}
		}
	}
	if n != 16 {
		t.Errorf("%d batch routes, want the 16 of the kinds with bulk writes", n)
	}
	for body, ok := range map[string]bool{
		`{"operations":[{"op":"create","data":{"canonicalName":"A"}},{"op":"delete","id":"cmp_1"}]}`: true,
		`{"operations":[{"op":"update","id":"cmp_1","ifMatch":"\"2\"","data":{}}],"atomic":true}`:    true,
		`{"operations":[{"op":"upsert","match":"externalId","data":{"externalId":"x"}}]}`:            true,
		`{"operations":[{"op":"remove","id":"cmp_1"}]}`:                                              false,
		`{"operations":[{"op":"delete"}]}`:                                                           false,
		`{"operations":[{"op":"create","id":"cmp_1","data":{}}]}`:                                    false,
		`{"operations":[{"op":"delete","id":""}]}`:                                                   false,
	} {
		if err := apitest.Allows("POST", "/v1/companies/batch", []byte(body)); (err == nil) != ok {
			t.Errorf("the document allows %s: %v, want %v (%v)", body, err == nil, ok, err)
		}
	}
}

// The 403s and 409s the service answers are declared by what answers them
// (roleAndWriteStatuses): an admin-only route refuses a member key, the
// change history refuses a member naming what only admins read, and every
// write can conflict. The walk sends the request that answers each, on
// the routes that did not declare it, and holds the document to it.
func TestEvery403And409TheServiceAnswersIsDeclared(t *testing.T) {
	t.Parallel()
	d := publishedDoc(t)
	for _, rt := range api.Routes() {
		writes := rt.Method != "GET" && !rt.ReadOnly && rt.Rate != routes.RateMessage
		if got := declares(t, d, rt.Method, rt.Path, 409); got != writes {
			t.Errorf("%s %s declares 409: %v; a route that writes does, another does not", rt.Method, rt.Path, got)
		}
		if rt.Admin != "" && !declares(t, d, rt.Method, rt.Path, 403) {
			t.Errorf("%s %s is admin-only and does not declare 403", rt.Method, rt.Path)
		}
	}

	e, f := faultEnv(t, false)
	c := e.Org(t)
	member := e.Key(t, c.Org, "member")
	company := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Conflicted"}))
	value := apitest.IDOf(t, c.Do("POST", "/v1/enrichments/resources/companies/"+company, map[string]any{"values": []any{
		map[string]any{"property": "sector", "value": "Robotics", "source": "provider", "confidence": 50}}}).Want(t, 201).List(t)[0])
	wfRecord := apitest.CreateWorkflow(t, c, map[string]any{"name": "Conflicts"})
	wf := apitest.IDOf(t, wfRecord)
	slug, secret := apitest.SlugAndSecret(t, apitest.WebhookOf(t, wfRecord))
	run := apitest.IDOf(t, apitest.RunToEnd(t, c, wf, nil))
	list := apitest.IDOf(t, c.Do("POST", "/v1/lists", map[string]any{"name": "L", "resourceType": "company"}).Want(t, 201).Object(t))
	c.Do("POST", "/v1/lists/"+list+"/entries", map[string]any{"recordId": company}).Want(t, 201)
	recv := apitest.NewReceiver(t, nil)
	endpoint := apitest.IDOf(t, c.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/a"}).Want(t, 201).Object(t))
	delivery := apitest.IDOf(t, c.Do("POST", "/v1/webhook-endpoints/"+endpoint+"/test", nil).Want(t, 200).Object(t))
	spare := e.Key(t, c.Org, "admin").ClientID

	// 403: a member key on every admin-only route, and naming the events
	// of admin-only records.
	fill := strings.NewReplacer("{clientId}", spare, "/v1/webhook-endpoints/{id}", "/v1/webhook-endpoints/"+endpoint,
		"/v1/workflows/{id}", "/v1/workflows/"+wf, "{deliveryId}", delivery)
	for _, rt := range api.Routes() {
		if rt.Admin == "" {
			continue
		}
		var body any
		if rt.Method == "POST" || rt.Method == "PATCH" {
			body = map[string]any{}
		}
		apitest.WantError(t, member.Do(rt.Method, fill.Replace(rt.Path), body), 403, rt.Admin)
		if !declares(t, d, rt.Method, rt.Path, 403) {
			t.Errorf("%s %s answers 403 and does not declare it", rt.Method, rt.Path)
		}
	}
	apitest.WantError(t, member.Do("GET", "/v1/events?resourceType=apiKey", nil), 403, "admin")
	if !declares(t, d, "GET", "/v1/events", 403) {
		t.Error("GET /v1/events answers 403 and does not declare it")
	}

	// 409: each write of the routes that did not declare it, while the
	// table refuses every write of the organization's records as one that
	// raced another (a transaction holding the item).
	org := `"ORG#` + c.Org
	f.answer = func(r *http.Request) (*http.Response, error) {
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		if !slices.Contains([]string{"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"}, op) {
			return http.DefaultTransport.RoundTrip(r)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if !strings.Contains(string(b), org) {
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			r.ContentLength = int64(len(b))
			return http.DefaultTransport.RoundTrip(r)
		}
		if op == "TransactWriteItems" {
			return dynamoAnswer(r, `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException",`+
				`"message":"Transaction cancelled","CancellationReasons":[{"Code":"TransactionConflict","Message":"Transaction is ongoing for the item"}]}`)
		}
		return transactionConflict(r)
	}
	enriched := "/v1/enrichments/resources/companies/" + company
	for _, call := range []struct {
		who          *apitest.Client
		method, path string
		route        string
		body         any
		headers      []string
	}{
		{c, "PATCH", "/v1/workflow-runs/" + run, "/v1/workflow-runs/{id}", map[string]any{"title": "Renamed"}, nil},
		{c, "POST", "/v1/workflows/" + wf + "/runs", "/v1/workflows/{id}/runs", map[string]any{}, nil},
		{c, "POST", enriched, "/v1/enrichments/resources/{resourceType}/{resourceId}", map[string]any{"values": []any{
			map[string]any{"property": "sector", "value": "Drones", "source": "web", "confidence": 10}}}, nil},
		{c, "PATCH", enriched + "/" + value, "/v1/enrichments/resources/{resourceType}/{resourceId}/{valueId}", map[string]any{"pinned": true}, nil},
		{c, "DELETE", enriched + "/" + value, "/v1/enrichments/resources/{resourceType}/{resourceId}/{valueId}", nil, nil},
		{c, "DELETE", "/v1/lists/" + list + "/entries/" + company, "/v1/lists/{id}/entries/{recordId}", nil, nil},
		{c, "POST", "/v1/data/metric-points", "/v1/data/metric-points", map[string]any{"points": []any{map[string]any{
			"resource": "companies:" + company, "key": "metric:revenue", "date": "2025-01-31", "value": 1, "source": "crm"}}}, nil},
		{c, "POST", "/v1/imports", "/v1/imports", map[string]any{"resource": "companies", "format": "csv"}, nil},
		{c, "POST", "/v1/exports", "/v1/exports", map[string]any{"resource": "companies"}, nil},
		{e.Anonymous(t), "POST", "/webhooks/workflows/" + slug, "/webhooks/workflows/{slug}", map[string]any{"a": 1},
			[]string{"X-Service-Webhook-Secret", secret}},
		{c, "PATCH", "/v1/webhook-endpoints/" + endpoint, "/v1/webhook-endpoints/{id}", map[string]any{"description": "renamed"}, nil},
		{c, "POST", "/v1/webhook-endpoints/" + endpoint + "/secret/rotate", "/v1/webhook-endpoints/{id}/secret/rotate", map[string]any{"overlapSeconds": 0}, nil},
		{c, "POST", "/v1/webhook-endpoints/" + endpoint + "/test", "/v1/webhook-endpoints/{id}/test", nil, nil},
		{c, "POST", "/v1/webhook-endpoints/" + endpoint + "/deliveries/" + delivery + "/retry", "/v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry", nil, nil},
		{c, "DELETE", "/v1/webhook-endpoints/" + endpoint, "/v1/webhook-endpoints/{id}", nil, nil},
		{c, "POST", "/v1/workflows/" + wf + "/trigger/webhook-secret/rotate", "/v1/workflows/{id}/trigger/webhook-secret/rotate", nil, nil},
	} {
		f.armed.Store(true)
		r := call.who.Do(call.method, call.path, call.body, call.headers...)
		f.armed.Store(false)
		if r.Status != 409 {
			t.Errorf("%s %s while its write races another: %d %s, want 409", call.method, call.path, r.Status, r.Body)
			continue
		}
		apitest.WantError(t, r, 409)
		if !declares(t, d, call.method, call.route, 409) {
			t.Errorf("%s %s answers 409 and does not declare it", call.method, call.route)
		}
	}
}

// dynamoAnswer answers r as DynamoDB answers an error of body.
func dynamoAnswer(r *http.Request, body string) (*http.Response, error) {
	return &http.Response{
		StatusCode: 400, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: r,
	}, nil
}
