package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/docs"
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/mcpapi"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi/batch"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/mcpserver"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Every route's answer, and every MCP tool's, stays within the response
// budget: each route is classified by what bounds its answer (a route
// nothing bounds fails), the bounds the classes rely on are checked, and
// the largest answers are made for real, with big records.
func TestEveryRouteAndEveryMCPToolAnswersWithinTheBudget(t *testing.T) {
	testenv.Long(t, "every route and tool at its largest answers")
	t.Parallel()
	// What the classes rely on.
	const item = 400 << 10 // DynamoDB's item limit
	if 2*item+64<<10 > httpapi.ListBudget {
		t.Errorf("one record (%d bytes on the wire at most) may not fit the budget", 2*item)
	}
	if 2*httpapi.MaxBodyBytes+100*(4<<10) > httpapi.ListBudget {
		t.Errorf("what one body wrote may not fit the budget")
	}
	published := publishedDoc(t)
	for _, rt := range api.Routes() {
		switch rt.Answer {
		case routes.AnswerPaged, routes.AnswerSearch, routes.AnswerRecord, routes.AnswerWritten, routes.AnswerMeasured,
			routes.AnswerFixed, routes.AnswerEmpty, routes.AnswerShared:
		default:
			t.Errorf("%s: nothing is known to keep its answer (%q) within the %d-byte budget: page it (httpapi.List), measure it (fits), "+
				"or declare what bounds it (routes.Answer)", rt.Pattern(), rt.Answer, httpapi.ListBudget)
		}
		switch rt.Answer {
		case routes.AnswerPaged:
			headers := apitest.ObjectAt(t, docOperation(t, published, rt.Method, rt.Path), "responses", "200")["headers"].(map[string]any)
			// A list query (POST) takes its cursor in the body.
			queried := rt.Method == http.MethodPost && strings.HasSuffix(rt.Path, "/query")
			if _, ok := headers[httpapi.HeaderNextCursor]; !ok ||
				!queried && !slices.ContainsFunc(docParams(t, published, rt.Method, rt.Path), func(p map[string]any) bool {
					return p["name"] == "cursor"
				}) {
				t.Errorf("%s is paged but its operation has no cursor parameter or X-Next-Cursor header", rt.Pattern())
			}
		}
	}
	// A multi-get's records have bounded fields (no free-form object).
	for _, d := range resources.All() {
		if !d.MultiGet {
			continue
		}
		for _, f := range d.AllFields() {
			if f.Kind == resource.Object || f.Kind == resource.Text {
				t.Errorf("%s reads %d at once and has the field %s of unbounded size: page the read", d.Name, store.MaxBatch, f.Name)
			}
		}
	}

	// The largest answers, for real.
	e := apitest.New(t)
	c := e.Org(t)
	var mu sync.Mutex
	parallel := func(n int, do func(i int)) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				do(i)
			}()
		}
		wg.Wait()
	}
	// Companies and deals of 200 KB each on the wire: 30 of each, 6 MB.
	var bigCompany, bigDeal string
	parallel(30, func(i int) {
		custom := map[string]any{"notes": apitest.BigText(80_000)}
		co := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": fmt.Sprintf("Big Co %d", i), "custom": custom}).Want(t, http.StatusCreated).Object(t)
		deal := c.Do("POST", "/v1/deals", map[string]any{"name": fmt.Sprintf("Big deal %d", i), "custom": custom}).Want(t, http.StatusCreated).Object(t)
		mu.Lock()
		bigCompany, bigDeal = co["id"].(string), deal["id"].(string)
		mu.Unlock()
	})
	// A company with 200 candidates of 19 KB: 6 MB on the wire.
	enriched := apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Enriched Co"})["id"].(string)
	apitest.AddCandidates(t, c, enriched, 200)
	// 100 documents with every text at its longest, in characters that
	// take the most bytes (U+2028: 7 on the wire).
	long := func(n int) string { return "a" + strings.Repeat("\u2028", n-2) + "a" }
	docs := make([]string, 100)
	parallel(100, func(i int) {
		docs[i] = c.Do("POST", "/v1/documents", map[string]any{"name": long(200), "type": long(100), "mimeType": long(255),
			"storageKey": long(1024), "source": long(100), "url": "https://example.com/" + strings.Repeat("a", 2000)}).Want(t, http.StatusCreated).Object(t)["id"].(string)
	})
	// A series of 5,000 points (the most a read answers) of long units and
	// sources: 6 MB on the wire.
	parallel(50, func(i int) {
		var points []any
		for j := range 100 {
			points = append(points, map[string]any{"resource": "companies:" + enriched, "key": "metric:big", "date": "2026-01-31",
				"value": i*100 + j, "unit": long(50), "source": long(100)})
		}
		c.Do("POST", "/v1/data/metric-points", map[string]any{"points": points}).Want(t, http.StatusCreated)
	})
	series := map[string]any{"resource": "companies:" + enriched, "key": "metric:big", "policy": "all"}
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "Budget"}).Want(t, http.StatusCreated).Object(t)["id"].(string)
	run := c.Do("POST", "/v1/workflows/"+wf+"/runs", map[string]any{"input": map[string]any{}}).Want(t, http.StatusAccepted).Object(t)["id"].(string)

	pagedRoute := func(path string) {
		t.Helper()
		r := c.Do("GET", path, nil).Want(t, http.StatusOK)
		apitest.WithinBudget(t, "GET "+path, r)
		if r.Header.Get(httpapi.HeaderNextCursor) == "" {
			t.Errorf("GET %s: one page holds everything; the records are not big enough to test the budget", path)
		}
	}
	pagedRoute("/v1/companies?limit=1000")
	pagedRoute("/v1/deals?limit=1000")
	pagedRoute("/v1/enrichments/resources/companies/" + enriched + "?limit=1000")
	r := c.Do("POST", "/v1/companies/search?limit=400", map[string]any{}).Want(t, http.StatusOK)
	apitest.WithinBudget(t, "a search of big companies", r)
	if !strings.Contains(string(r.Body), `"truncated":true`) {
		t.Errorf("a search of 6 MB of companies is not truncated")
	}
	r = c.Do("POST", "/v1/companies/"+bigCompany+"/similar?limit=400", nil).Want(t, http.StatusOK)
	apitest.WithinBudget(t, "the companies similar to a big one", r)
	if !strings.Contains(string(r.Body), `"truncated":true`) {
		t.Errorf("6 MB of companies similar to one are not truncated")
	}
	apitest.WithinBudget(t, "a big company", c.Do("GET", "/v1/companies/"+enriched, nil).Want(t, http.StatusOK))
	apitest.WithinBudget(t, "100 documents", c.Do("GET", "/v1/documents/ids="+strings.Join(docs, ","), nil).Want(t, http.StatusOK))
	apitest.WantError(t, c.Do("POST", "/v1/data/metric-series", series), http.StatusBadRequest, "period", "bytes of points")
	apitest.WithinBudget(t, "the health check", c.Do("GET", routes.HealthPath, nil).Want(t, http.StatusOK))
	apitest.WithinBudget(t, "the OpenAPI document", c.Do("GET", routes.OpenAPIPath, nil).Want(t, http.StatusOK))

	// Every MCP tool with its largest call, alone.
	args := map[string]map[string]any{
		"search_companies":          {"limit": 400},
		"similar_companies":         {"id": bigCompany, "limit": 400},
		"similar_documents":         {"id": docs[0], "limit": 400},
		"get_company":               {"id": bigCompany},
		"list_deals":                {"limit": 1000},
		"get_deal":                  {"id": bigDeal},
		"get_document":              {"id": docs[0]},
		"get_enrichment_candidates": {"resourceType": "companies", "resourceId": enriched, "limit": 1000},
		"read_metric_series":        {"body": series},
		"list_workflows":            {"limit": 1000},
		"get_workflow":              {"id": wf},
		"start_workflow_run":        {"id": wf},
		"create_import":             {"body": map[string]any{"resource": "companies", "format": "csv"}},
		"get_import":                {"id": apitest.IDOf(t, c.Do("POST", "/v1/imports", map[string]any{"resource": "companies", "format": "csv"}).Want(t, 201).Object(t))},
		"create_export":             {"body": map[string]any{"resource": "deals"}},
		"get_export":                {"id": apitest.IDOf(t, c.Do("POST", "/v1/exports", map[string]any{"resource": "deals"}).Want(t, 201).Object(t))},
		"get_workflow_run":          {"id": run},
		"retry_workflow_run":        {"id": run},
	}
	// The other tools of the kinds of record: their largest page, and a
	// record of their sample. A new company or deal is a big one, so that
	// the newest deal stays big for the batch below.
	newRecord := func(name string) string {
		if name == workflows.Def.Name {
			return c.Do("POST", "/v1/workflows", map[string]any{"name": "Budget " + name}).Want(t, http.StatusCreated).Object(t)["id"].(string)
		}
		return apitest.CreateTarget(t, c, name)
	}
	for _, rt := range api.Routes() {
		if rt.Tool == nil || args[rt.Tool.Name] != nil {
			continue
		}
		switch {
		case rt.Answer == routes.AnswerSearch:
			args[rt.Tool.Name] = map[string]any{"limit": 400}
		case rt.Answer == routes.AnswerPaged:
			args[rt.Tool.Name] = map[string]any{"limit": 1000}
		case rt.Method == http.MethodGet && strings.HasSuffix(rt.Path, "/{id}"):
			args[rt.Tool.Name] = map[string]any{"id": apitest.CreateTarget(t, c, rt.Resource)}
		case rt.Method == http.MethodPost && rt.Path == "/v1/"+rt.Resource:
			var body map[string]any
			switch rt.Resource {
			case resources.Companies:
				body = map[string]any{"canonicalName": "Created Co", "custom": map[string]any{"notes": apitest.BigText(80_000)}}
			case "deals":
				body = map[string]any{"name": "Created deal", "custom": map[string]any{"notes": apitest.BigText(80_000)}}
			case workflows.Def.Name:
				body = map[string]any{"name": "Created workflow"}
			default:
				body = apitest.Sample(t, c, declared(t, rt.Resource), true)
			}
			args[rt.Tool.Name] = map[string]any{"body": body}
		case rt.Method == http.MethodPut && strings.HasSuffix(rt.Path, "/{id}"):
			// An update that changes nothing: it answers the whole record.
			id := map[string]string{"companies": bigCompany, "deals": bigDeal}[rt.Resource]
			if id == "" {
				id = newRecord(rt.Resource)
			}
			args[rt.Tool.Name] = map[string]any{"id": id, "body": map[string]any{}}
		case rt.Method == http.MethodDelete && strings.HasSuffix(rt.Path, "/{id}"):
			args[rt.Tool.Name] = map[string]any{"id": newRecord(rt.Resource)}
		case strings.HasSuffix(rt.Path, "/batch"):
			// 100 updates that change nothing: each answers the whole
			// record, the biggest there is for companies and deals.
			id := map[string]string{"companies": bigCompany, "deals": bigDeal}[rt.Resource]
			if id == "" {
				id = apitest.CreateTarget(t, c, rt.Resource)
			}
			ops := make([]any, batch.MaxOperations)
			for i := range ops {
				ops[i] = map[string]any{"op": "update", "id": id, "data": map[string]any{}}
			}
			args[rt.Tool.Name] = map[string]any{"body": map[string]any{"operations": ops}}
		case rt.Method == http.MethodPut:
			body := map[string]any{"canonicalName": "Upserted", "externalId": "upsert-1"}
			switch rt.Resource {
			case resources.Companies:
			case "deals":
				// The big deal itself, unchanged: the largest answer, and
				// the newest deal stays the big one the batch below reads.
				c.Do("PUT", "/v1/deals/"+bigDeal, map[string]any{"externalId": "the-big-deal"}).Want(t, 200)
				body = map[string]any{"externalId": "the-big-deal"}
			default:
				body = apitest.Sample(t, c, declared(t, rt.Resource), true)
			}
			args[rt.Tool.Name] = map[string]any{"match": "externalId", "body": body}
		}
	}
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := mcpserver.ToolList(doc, api.MCP())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		a, ok := args[tool.Name]
		if !ok {
			t.Errorf("tool %s: give this test its largest call", tool.Name)
			continue
		}
		r := rpc(t, c, callTool(1, tool.Name, a)).Want(t, http.StatusOK)
		apitest.WithinBudget(t, "tool "+tool.Name, r)
		res := answer(t, r).tool(t)
		switch tool.Name {
		case "list_deals", "get_enrichment_candidates":
			if res.IsError || res.StructuredContent["nextCursor"] == nil {
				t.Errorf("%s: a page of big records has no nextCursor: %.300s", tool.Name, res.Content[0].Text)
			}
		case "read_metric_series":
			if !res.IsError || !strings.Contains(res.Content[0].Text, "narrow the period") {
				t.Errorf("%s: %.300s, want the series refused as too large", tool.Name, res.Content[0].Text)
			}
		case "retry_workflow_run":
		default:
			if res.IsError {
				t.Errorf("%s: %s", tool.Name, res.Content[0].Text)
			}
		}
	}

	// A batch of the largest calls, and of the largest resource: the whole
	// answer within the budget, each message within its share. A page
	// holds at least one record: one larger than a message's share (a
	// 200 KB deal, three times in a result, against 500 KB) is refused,
	// saying how to get it.
	var batch []any
	for i := range mcpapi.MaxBatch {
		tool := []string{"list_deals", "search_companies", "get_enrichment_candidates"}[i%3]
		batch = append(batch, callTool(i, tool, args[tool]))
	}
	r = rpc(t, c, batch, oldProtocol...).Want(t, http.StatusOK)
	apitest.WithinBudget(t, "a batch of the largest tool calls", r)
	for _, a := range answers(t, r) {
		res, i := a.tool(t), int(a.ID.(float64)) // answers come as they are ready
		switch {
		case i%3 == 0:
			if !res.IsError || !strings.Contains(res.Content[0].Text, "send the call alone rather than in a batch") {
				t.Errorf("list_deals in a batch: %.300s, want refused as larger than its share", res.Content[0].Text)
			}
		case res.IsError:
			t.Errorf("call %v of the batch: %s", a.ID, res.Content[0].Text)
		case i%3 == 2 && res.StructuredContent["nextCursor"] == nil:
			t.Errorf("get_enrichment_candidates in a batch: no nextCursor")
		}
	}
	batch = batch[:0]
	for i := range mcpapi.MaxBatch {
		batch = append(batch, map[string]any{"jsonrpc": "2.0", "id": i, "method": "resources/read", "params": map[string]any{"uri": "sourcebase://openapi.json"}})
	}
	r = rpc(t, c, batch, oldProtocol...).Want(t, http.StatusOK)
	apitest.WithinBudget(t, "a batch of reads of the OpenAPI document", r)
	for _, a := range answers(t, r) {
		if a.Error == nil || a.Error.Code != mcpserver.CodeAnswerTooLarge || !strings.Contains(a.Error.Message, "send it alone") {
			t.Errorf("a read of the OpenAPI document in a batch of %d: %+v, want refused as larger than its share", mcpapi.MaxBatch, a.Error)
		}
	}
	// Alone, it is answered.
	if a := answer(t, rpc(t, c, batch[0]).Want(t, http.StatusOK)); a.Error != nil {
		t.Errorf("the OpenAPI document alone: %s", a.Error.Message)
	}
}

// list_deals of big deals answers pages within the budget, text and
// structured content both, and its nextCursor goes through every deal.
func TestListDealsThroughMCPPagesBigDealsWithinTheBudget(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	var wg sync.WaitGroup
	for i := range 30 { // 200 KB each on the wire: 6 MB
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Do("POST", "/v1/deals", map[string]any{"name": fmt.Sprintf("Big deal %d", i), "custom": map[string]any{"notes": apitest.BigText(80_000)}}).Want(t, http.StatusCreated)
		}()
	}
	wg.Wait()
	seen := map[any]bool{}
	args := map[string]any{"limit": 1000}
	for calls := 0; ; calls++ {
		r := rpc(t, c, callTool(1, "list_deals", args)).Want(t, http.StatusOK)
		apitest.WithinBudget(t, "list_deals", r)
		res := answer(t, r).tool(t)
		if res.IsError {
			t.Fatalf("list_deals: %s", res.Content[0].Text)
		}
		if res.Content[0].Text == "" || res.StructuredContent == nil {
			t.Fatalf("a page without its text or structured content")
		}
		for _, d := range res.StructuredContent["data"].([]any) {
			seen[d.(map[string]any)["id"]] = true
		}
		cur, _ := res.StructuredContent["nextCursor"].(string)
		if cur == "" {
			break
		}
		if calls > 30 {
			t.Fatal("the pages do not end")
		}
		args["cursor"] = cur
	}
	if len(seen) != 30 {
		t.Errorf("the pages hold %d deals, want the 30", len(seen))
	}
	// Four in a batch: the whole answer within the budget too.
	batch := []any{}
	for i := range 4 {
		batch = append(batch, callTool(i, "list_deals", map[string]any{"limit": 1000}))
	}
	r := rpc(t, c, batch, oldProtocol...).Want(t, http.StatusOK)
	apitest.WithinBudget(t, "a batch of four list_deals", r)
	for _, a := range answers(t, r) {
		if res := a.tool(t); res.IsError || res.StructuredContent["nextCursor"] == nil {
			t.Errorf("list_deals in a batch of four: %.200s", res.Content[0].Text)
		}
	}
}

// The mcp function's searches go to the search function over HTTP, which
// knows nothing of the tool's lower budget: the answer is cut to it on
// its way back, as the search function cuts a page.
func TestASearchThroughTheHTTPAPIEndsItsPageWithinTheToolsBudget(t *testing.T) {
	t.Parallel()
	e := apitest.NewWith(t, apitest.Options{})
	c := e.Org(t)
	var wg sync.WaitGroup
	for i := range 30 { // 200 KB each on the wire: 6 MB
		wg.Add(1)
		go func() {
			defer wg.Done()
			apitest.CreateCompany(t, c, map[string]any{"canonicalName": fmt.Sprintf("Far Co %d", i), "custom": map[string]any{"notes": apitest.BigText(80_000)}})
		}()
	}
	wg.Wait()
	deps := service.Build(e.Store, service.Config{Table: e.Store.Table, CacheTTL: auth.MaxCacheTTL, SearchBaseURL: e.URL}, nil)
	deps.NewMCP = mcpserver.Handler(docs.Pages)
	srv := httptest.NewServer(api.Handler(deps, lambdas.MCP))
	t.Cleanup(srv.Close)
	fn := *c
	fn.Base = srv.URL
	for _, body := range []any{callTool(1, "search_companies", map[string]any{"limit": 400}), []any{
		callTool(1, "search_companies", map[string]any{"limit": 400}), callTool(2, "search_companies", map[string]any{"limit": 400})}} {
		r := rpc(t, &fn, body, oldProtocol...).Want(t, http.StatusOK)
		apitest.WithinBudget(t, "search_companies through the HTTP API", r)
		var got []rpcAnswer
		if _, batch := body.([]any); batch {
			got = answers(t, r)
		} else {
			got = []rpcAnswer{answer(t, r)}
		}
		for _, a := range got {
			res := a.tool(t)
			meta, _ := res.StructuredContent["metadata"].(map[string]any)
			if res.IsError || meta["truncated"] != true || len(res.StructuredContent["data"].([]any)) == 0 {
				t.Errorf("search_companies of 6 MB of companies: %.300s, want a truncated page of some", res.Content[0].Text)
			}
		}
	}
}
