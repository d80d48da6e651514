package perfreport_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/store"
)

// importFigures are a bulk import's: its wall time unbounded (the rate
// set out of the way) and its DynamoDB work, beside BatchWriteItem of the
// same items (the floor: no validation, no uniqueness, no transactions).
type importFigures struct {
	Rows               int
	FileBytes          int
	Wall               time.Duration // upload to completed, as fast as the table takes the rows
	Usage              apitest.Usage // the import's DynamoDB work
	FloorWall          time.Duration // BatchWriteItem of the same items, 25 at a time, one worker
	FloorUsage         apitest.Usage
	RowsPerSecond      float64 // the default bound of a deployment's imports
	BoundedWall        time.Duration
	Workers, GroupRows int
}

// bulkImport imports rows companies (a CRM export: name, website, tags,
// city, externalId) into an organization of their own through the API and
// the job runner, with the rate bound out of the way, and measures its
// wall time and DynamoDB work (m meters env's table); then writes the same
// items with BatchWriteItem.
func bulkImport(t *testing.T, env *apitest.Env, m *apitest.Meter, rows int) importFigures {
	t.Helper()
	c := env.Org(t)
	var file bytes.Buffer
	w := csv.NewWriter(&file)
	w.Write([]string{"canonicalName", "website", "tags", "location.city", "externalId"})
	for i := 1; i <= rows; i++ {
		w.Write([]string{fmt.Sprintf("Imported %d, Inc.", i), fmt.Sprintf("https://imported%d.example.com", i), "ai; logistics", "Lyon", fmt.Sprint("crm-", i)})
	}
	w.Flush()
	m.Reset()
	start := time.Now()
	importCSV(t, env, c, file.Bytes(), rows)
	out := importFigures{Rows: rows, FileBytes: file.Len(), Wall: time.Since(start), Usage: m.Reset(),
		RowsPerSecond: jobs.DefaultRowsPerSecond, Workers: jobs.DefaultWorkers, GroupRows: 25}
	out.BoundedWall = time.Duration(float64(rows) / out.RowsPerSecond * float64(time.Second))
	t.Logf("import of %d rows: %s, %+v", rows, out.Wall, out.Usage)

	// The floor: the imported records' items, written again by
	// BatchWriteItem under keys of their own.
	ctx := context.Background()
	table := aws.String(env.Store.Table)
	var items []map[string]types.AttributeValue
	var from map[string]types.AttributeValue
	for {
		// Small pages: each call well within the store client's deadline.
		page, err := env.Store.DB.Query(ctx, &dynamodb.QueryInput{TableName: table, ExclusiveStartKey: from, Limit: aws.Int32(500),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: store.OrgPartition(c.Org, store.TypeCompany)}}})
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, page.Items...)
		if from = page.LastEvaluatedKey; from == nil {
			break
		}
	}
	if len(items) != rows {
		t.Fatalf("%d company items, want %d", len(items), rows)
	}
	m.Reset()
	start = time.Now()
	for i := 0; i < len(items); i += 25 {
		var reqs []types.WriteRequest
		for j, it := range items[i:min(i+25, len(items))] {
			cp := make(map[string]types.AttributeValue, len(it))
			for k, v := range it {
				if !strings.HasPrefix(k, "gsi") { // a copy outside every index
					cp[k] = v
				}
			}
			cp[store.AttrPK] = &types.AttributeValueMemberS{Value: "BENCH#bulk"}
			cp[store.AttrSK] = &types.AttributeValueMemberS{Value: fmt.Sprint(i + j)}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: cp}})
		}
		in := map[string][]types.WriteRequest{*table: reqs}
		for len(in) > 0 {
			out, err := env.Store.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: in, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			if err != nil {
				t.Fatal(err)
			}
			in = out.UnprocessedItems
		}
	}
	out.FloorWall, out.FloorUsage = time.Since(start), m.Reset()
	return out
}

// importCSV imports a CSV of companies into c's organization through the
// API and the job runner, the rate bound out of the way, and waits until
// all rows are written.
func importCSV(t *testing.T, env *apitest.Env, c *apitest.Client, file []byte, rows int) {
	t.Helper()
	env.Deps.Jobs.RowsPerSecond = 1e9
	defer func() { env.Deps.Jobs.RowsPerSecond = 0 }()
	job := c.Do("POST", "/v1/imports", map[string]any{"resource": "companies", "format": "csv"}).Want(t, http.StatusCreated).Object(t)
	req, _ := http.NewRequest("PUT", job["uploadUrl"].(string), bytes.NewReader(file))
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("upload: %v %v", err, res)
	}
	res.Body.Close()
	deadline := time.Now().Add(testenv.Scaled(time.Hour))
	for {
		// Read from the store, not the API: the polls are no part of the import's work.
		j, err := env.Deps.Jobs.Get(context.Background(), c.Org, jobs.KindImport, job["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if j.Done() {
			if j.Status != jobs.StatusCompleted || j.Created != int64(rows) {
				t.Fatalf("the import ended %s: %d created, %d failed (%s)", j.Status, j.Created, j.Failed, j.Error)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the import of %d rows did not end", rows)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// importItemsPerRow are the items an imported company with an externalId
// writes: the record, its uniqueness item, its change-feed entry.
const importItemsPerRow = 3

// bulkMarkdown is the report's section on imports.
func bulkMarkdown(p func(string, ...any), f importFigures) {
	p("\n## Bulk import\n\n")
	n := float64(max(f.Rows, 1))
	p("An import of %d companies (a %.1f MB CSV: name, website, two tags, city, externalId) through `POST /v1/imports`,\n", f.Rows, float64(f.FileBytes)/1e6)
	p("the upload URL and the job runner (%d writers, %d rows per transaction, a checkpoint every 500 rows), its rate\n", f.Workers, f.GroupRows)
	p("bound lifted to measure what the table takes: %.1f s from the upload to `completed` (%.0f rows/s), against\n", f.Wall.Seconds(), n/f.Wall.Seconds())
	p("%.1f s (%.0f rows/s) for `BatchWriteItem` of the same items, 25 a call, one writer (the floor: no validation, no\n", f.FloorWall.Seconds(), n/f.FloorWall.Seconds())
	p("uniqueness item, no change-feed entry, no index entries, no transaction). DynamoDB Local on this machine.\n\n")
	p("| | calls | read units | write units | per 100,000 rows |\n|---|---:|---:|---:|---:|\n")
	cost := func(u apitest.Usage) float64 {
		return (u.Reads*dynamoReadPerMillion + u.Write*dynamoWritePerMillion) / 1e6 / n * 100_000
	}
	p("| the import | %d | %.0f | %.0f | $%.2f |\n", f.Usage.Calls, f.Usage.Reads, f.Usage.Write, cost(f.Usage))
	p("| `BatchWriteItem` (floor) | %d | %.0f | %.0f | $%.2f |\n\n", f.FloorUsage.Calls, f.FloorUsage.Reads, f.FloorUsage.Write, cost(f.FloorUsage))
	p("Per row the import writes the record, its `externalId` uniqueness item and its search change-feed entry in a\n")
	p("transaction. DynamoDB Local reports a transaction's consumed capacity at less than AWS charges (%.1f write units\n", f.Usage.Write/n)
	p("a row measured, against the floor's %.1f): in AWS a transactional write costs 2 units per KB of each item, so\n", f.FloorUsage.Write/n)
	p("these three items of under 1 KB cost %d write units a row, %d per 100,000 rows: $%.2f, against $%.2f for the floor.\n",
		importItemsPerRow*2, importItemsPerRow*2*100_000, float64(importItemsPerRow*2*100_000)*dynamoWritePerMillion/1e6, 100_000*dynamoWritePerMillion/1e6)
	p("A deployment bounds each import to %.0f rows a second (`IMPORT_ROWS_PER_SECOND`), so that\n", f.RowsPerSecond)
	p("100,000 rows take about %.0f minutes and never take the capacity interactive requests need; Lambda (the runner,\n", (100_000 / f.RowsPerSecond / 60))
	p("in steps of up to 10 minutes) and Step Functions (a few transitions per step) add cents per 100,000 rows.\n")
}
