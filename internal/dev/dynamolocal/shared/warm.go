package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/sourcebase/sourcebase/internal/store"
)

// warmRounds is how many records warm a new server: enough for the JVM to
// compile DynamoDB Local's hot code (HTTP and JSON, expressions, SQLite's
// statements, indexes, transactions and the stream), about 10 s of a core.
const warmRounds = 300

// warmRecord is a record like a company: two sorts, two lookups, a unique
// field and a change feed, so its writes are the service's transactions.
type warmRecord struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Website    string `json:"website"`
	ExternalID string `json:"externalId"`
	UpdatedAt  string `json:"updatedAt"`
}

var warmSpec = store.Spec[warmRecord]{
	Type: "WARM",
	ID:   func(r *warmRecord) string { return r.ID },
	Sorts: []store.Sort[warmRecord]{
		{Field: "name", Index: store.GSI1, Key: func(r *warmRecord) string { return r.Name }},
		{Field: "updatedAt", Index: store.GSI2, Key: func(r *warmRecord) string { return r.UpdatedAt }},
	},
	Lookups: []store.Lookup[warmRecord]{
		{Name: "externalId", Index: store.GSI3, Key: func(r *warmRecord) string { return r.ExternalID }},
		{Name: "website", Index: store.GSI4, Key: func(r *warmRecord) string { return r.Website }},
	},
	Unique: []store.Unique[warmRecord]{{Field: "externalId", Key: func(r *warmRecord) string { return r.ExternalID }}},
	Feed:   true,
}

// warm makes the storage calls the service makes (through the store, on a
// company-like record: creates, reads, updates, sorted pages, lookups,
// batch reads, deletes, and the stream's reads), under an access key of its
// own, so that the JVM of a new server has compiled its hot code before a
// run uses it. It leaves the key's one database behind, its table deleted.
// Between rounds it calls wait, which holds it while a run uses the kept
// server: warming takes a core, and a run needs both.
func warm(ctx context.Context, endpoint string, wait func()) error {
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("warmup", "warmup", "")}
	db := dynamodb.NewFromConfig(cfg)
	const table = "warmup"
	if _, err := store.CreateTable(ctx, db, table); err != nil {
		return fmt.Errorf("warm the server: %w", err)
	}
	records := store.NewCollection(store.New(db, table), warmSpec)
	const org = "org_warm"
	for i := range warmRounds {
		if i%20 == 0 {
			wait()
		}
		n := strconv.Itoa(i)
		r := &warmRecord{ID: fmt.Sprintf("wrm_%08d", i), Name: "Company " + n, Website: n + ".example", ExternalID: "ext-" + n,
			UpdatedAt: time.Now().UTC().Format(time.RFC3339Nano)}
		calls := []func() error{
			func() error { return records.Create(ctx, org, r) },
			func() error { _, err := records.Get(ctx, org, r.ID); return err },
			func() error {
				_, err := records.Update(ctx, org, r.ID, func(v *warmRecord) error { v.Name += " Ltd"; return nil })
				return err
			},
			func() error {
				_, err := records.List(ctx, org, store.Query{Limit: 20, Sort: []string{"name", "updatedAt"}[i%2], Desc: true})
				return err
			},
			func() error { _, err := records.FindBy(ctx, org, "website", r.Website, 2); return err },
			func() error {
				_, err := records.GetMany(ctx, org, []string{r.ID, fmt.Sprintf("wrm_%08d", i/2)})
				return err
			},
		}
		if i%2 == 1 {
			calls = append(calls, func() error { return records.Delete(ctx, org, fmt.Sprintf("wrm_%08d", i-1)) })
		}
		for _, call := range calls {
			if err := call(); err != nil {
				return fmt.Errorf("warm the server: %w", err)
			}
		}
	}
	if err := warmStream(ctx, db, dynamodbstreams.NewFromConfig(cfg), table); err != nil {
		return fmt.Errorf("warm the server: %w", err)
	}
	if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
		return fmt.Errorf("warm the server: %w", err)
	}
	return nil
}

// warmStream reads the table's stream as the events processor does.
func warmStream(ctx context.Context, db *dynamodb.Client, streams *dynamodbstreams.Client, table string) error {
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return err
	}
	arn := desc.Table.LatestStreamArn
	for range 20 {
		ds, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
		if err != nil {
			return err
		}
		for _, shard := range ds.StreamDescription.Shards {
			it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn,
				ShardId: shard.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
			if err != nil {
				return err
			}
			if _, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(100)}); err != nil {
				return err
			}
		}
	}
	return nil
}
