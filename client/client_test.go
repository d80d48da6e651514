package client_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sourcebase/sourcebase/client"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/apitest/wholeservice"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

func TestMain(m *testing.M) {
	apitest.Serve(wholeservice.Service)
	testenv.Main(m)
}

func TestTheCommittedClientIsWhatTheGeneratorMakesOfTheCommittedDocument(t *testing.T) {
	out := filepath.Join(t.TempDir(), "client.gen.go")
	testinputs.Tree()
	cmd := exec.Command("go", "tool", "oapi-codegen", "-config", "oapi-codegen.yaml", "-o", out, "../docs/openapi.json")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("client/client.gen.go is out of date: make generate (or go generate ./client after the OpenAPI document)")
	}
}

func TestTheGeneratedClientTalksToTheRunningService(t *testing.T) {
	e := apitest.New(t)
	key := e.Org(t)
	ctx := context.Background()
	c, err := client.NewClientWithResponses(e.URL, client.WithCredentials(key.ClientID, key.Secret))
	if err != nil {
		t.Fatal(err)
	}
	must := func(status int, want int, body []byte, err error) {
		t.Helper()
		if err != nil || status != want {
			t.Fatalf("answered %d (want %d), err %v: %s", status, want, err, body)
		}
	}

	// Create, get, update with If-Match.
	website := "https://client.example"
	created, err := c.PostCompaniesWithResponse(ctx, nil, client.PostCompaniesJSONRequestBody{CanonicalName: "Client Co", Website: &website})
	must(created.StatusCode(), http.StatusCreated, created.Body, err)
	id := *created.JSON201.Data.Id
	got, err := c.GetCompaniesByIdWithResponse(ctx, id)
	must(got.StatusCode(), http.StatusOK, got.Body, err)
	if got.JSON200.Data.CanonicalName != "Client Co" {
		t.Errorf("got %+v", got.JSON200.Data)
	}
	sector := "Robotics"
	tag := client.IfMatch(got.HTTPResponse.Header.Get("ETag"))
	updated, err := c.PutCompaniesByIdWithResponse(ctx, id, &client.PutCompaniesByIdParams{IfMatch: &tag}, client.PutCompaniesByIdJSONRequestBody{Sector: &sector})
	must(updated.StatusCode(), http.StatusOK, updated.Body, err)
	stale, err := c.PutCompaniesByIdWithResponse(ctx, id, &client.PutCompaniesByIdParams{IfMatch: &tag}, client.PutCompaniesByIdJSONRequestBody{Sector: &sector})
	must(stale.StatusCode(), http.StatusPreconditionFailed, stale.Body, err)
	if stale.JSON412 == nil || stale.JSON412.Error == "" {
		t.Errorf("the 412's {error} was not decoded: %s", stale.Body)
	}

	// Errors decode as the {error} type.
	missing, err := c.GetCompaniesByIdWithResponse(ctx, "cmp_01nosuchcompany0000000000")
	must(missing.StatusCode(), http.StatusNotFound, missing.Body, err)
	if missing.JSON404 == nil || missing.JSON404.Error != "not found" {
		t.Errorf("404 decoded as %+v", missing.JSON404)
	}
	bad, err := c.PostCompaniesWithResponse(ctx, nil, client.PostCompaniesJSONRequestBody{CanonicalName: " "})
	must(bad.StatusCode(), http.StatusBadRequest, bad.Body, err)
	if bad.JSON400 == nil || bad.JSON400.Error == "" {
		t.Errorf("400 decoded as %+v", bad.JSON400)
	}

	// A list followed to its next page with the cursor.
	_, err = c.PostCompaniesWithResponse(ctx, nil, client.PostCompaniesJSONRequestBody{CanonicalName: "Client Co Two"})
	if err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	first, err := c.GetCompaniesWithResponse(ctx, &client.GetCompaniesParams{Limit: &one})
	must(first.StatusCode(), http.StatusOK, first.Body, err)
	cursor := first.HTTPResponse.Header.Get("X-Next-Cursor")
	if len(first.JSON200.Data) != 1 || cursor == "" {
		t.Fatalf("first page %s, cursor %q", first.Body, cursor)
	}
	second, err := c.GetCompaniesWithResponse(ctx, &client.GetCompaniesParams{Limit: &one, Cursor: &cursor})
	must(second.StatusCode(), http.StatusOK, second.Body, err)
	if len(second.JSON200.Data) != 1 || *second.JSON200.Data[0].Id == *first.JSON200.Data[0].Id {
		t.Errorf("second page %s", second.Body)
	}

	// A list filtered (canonicalName startsWith …) and narrowed to some
	// fields, sent as the list query's typed body: the filter is a typed
	// object, each field's condition its value or an object of operators.
	var name client.QueryStringFilter
	prefix := "client co t"
	if err := name.FromQueryStringFilter1(client.QueryStringFilter1{StartsWith: &prefix}); err != nil {
		t.Fatal(err)
	}
	fields := []client.CompanyQueryFields{"canonicalName"}
	filtered, err := c.PostCompaniesQueryWithResponse(ctx, nil, client.PostCompaniesQueryJSONRequestBody{
		Filter: &client.CompanyQueryFilter{CanonicalName: &name}, Fields: &fields})
	must(filtered.StatusCode(), http.StatusOK, filtered.Body, err)
	if got := filtered.JSON200.Data; len(got) != 1 || *got[0].CanonicalName != "Client Co Two" || got[0].Website != nil {
		t.Errorf("filtered list %s", filtered.Body)
	}

	// A search.
	text := "Client"
	found, err := c.PostCompaniesSearchWithResponse(ctx, nil, client.PostCompaniesSearchJSONRequestBody{Text: &text})
	must(found.StatusCode(), http.StatusOK, found.Body, err)
	if found.JSON200.Metadata.TotalCount != 2 {
		t.Errorf("search found %d, want 2: %s", found.JSON200.Metadata.TotalCount, found.Body)
	}

	// A workflow, a dry run started and read back.
	wf, err := c.PostWorkflowsWithResponse(ctx, nil, client.PostWorkflowsJSONRequestBody{Name: "From the client"})
	must(wf.StatusCode(), http.StatusCreated, wf.Body, err)
	dry := true
	run, err := c.PostWorkflowsByIdRunsWithResponse(ctx, *wf.JSON201.Data.Id, nil, client.PostWorkflowsByIdRunsJSONRequestBody{DryRun: &dry})
	must(run.StatusCode(), http.StatusAccepted, run.Body, err)
	read, err := c.GetWorkflowRunsByIdWithResponse(ctx, *run.JSON202.Data.Id)
	must(read.StatusCode(), http.StatusOK, read.Body, err)
	if read.JSON200.Data.DryRun == nil || !*read.JSON200.Data.DryRun {
		t.Errorf("run %s is not a dry run", read.Body)
	}

	// Documents read several at once (their ids joined by commas): an
	// array, in the order asked.
	var docIDs []string
	for _, name := range []string{"Deck", "Memo"} {
		doc, err := c.PostDocumentsWithResponse(ctx, nil, client.PostDocumentsJSONRequestBody{Name: name})
		must(doc.StatusCode(), http.StatusCreated, doc.Body, err)
		docIDs = append(docIDs, *doc.JSON201.Data.Id)
	}
	docs, err := c.GetDocumentsByIdsWithResponse(ctx, docIDs[1]+","+docIDs[0])
	must(docs.StatusCode(), http.StatusOK, docs.Body, err)
	if got := docs.JSON200.Data; len(got) != 2 || *got[0].Id != docIDs[1] || got[1].Name != "Deck" {
		t.Errorf("documents %v read at once: %s", docIDs, docs.Body)
	}

	// A metric series.
	var date openapi_types.Date
	if err := date.UnmarshalText([]byte("2026-01-31")); err != nil {
		t.Fatal(err)
	}
	resource := "companies:" + id
	points, err := c.PostDataMetricPointsWithResponse(ctx, nil, client.PostDataMetricPointsJSONRequestBody{Points: []client.MetricPointInput{
		{Resource: resource, Key: "metric:revenue", Date: date, Value: 1250000, Source: "client-test"},
	}})
	must(points.StatusCode(), http.StatusCreated, points.Body, err)
	series, err := c.PostDataMetricSeriesWithResponse(ctx, client.PostDataMetricSeriesJSONRequestBody{Resource: resource, Key: "metric:revenue"})
	must(series.StatusCode(), http.StatusOK, series.Body, err)
	if got := series.JSON200.Data.Points; len(got) != 1 || got[0].Value != 1250000 || got[0].Source != "client-test" {
		t.Errorf("series %s", series.Body)
	}
}
