package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of the single table. Every item has pk and sk; the
// generic GSI attributes are set only where an item type uses that index.
const (
	AttrPK      = "pk"
	AttrSK      = "sk"
	AttrDoc     = "doc"     // the record as JSON
	AttrVersion = "version" // optimistic-lock counter
	AttrType    = "type"    // item type, for operators reading the table
	// AttrWriteToken tags an item with the put that wrote it, so a retried
	// put recognizes its own earlier attempt.
	AttrWriteToken = "wt"
	// AttrExpires is the table's TTL attribute (epoch seconds) on items
	// that expire, such as idempotency records; see expiring.go.
	AttrExpires = "ttl"
	// AttrShape stamps a record stored exactly as clients see it: the
	// collection's shape and a checksum of the doc (see encoded.go), so a
	// read can answer the stored JSON without decoding it.
	AttrShape = "shape"
)

// Index is a global secondary index of the table. Indexes are generic:
// each item type decides what it puts into an index's key attributes.
type Index struct {
	Name string
	PK   string
	SK   string
}

// Indexes of the table. The CDK stack and CreateTable both use this list.
var (
	GSI1 = Index{Name: "gsi1", PK: "gsi1pk", SK: "gsi1sk"}
	GSI2 = Index{Name: "gsi2", PK: "gsi2pk", SK: "gsi2sk"}
	GSI3 = Index{Name: "gsi3", PK: "gsi3pk", SK: "gsi3sk"}
	GSI4 = Index{Name: "gsi4", PK: "gsi4pk", SK: "gsi4sk"}

	Indexes = []Index{GSI1, GSI2, GSI3, GSI4}
)

// TableDefinition is the table's schema: on-demand billing, string keys,
// every GSI projecting all attributes so a sorted page is one Query, and a
// stream of new and old images (the events function reads every change
// from it; see internal/events).
func TableDefinition(name string) *dynamodb.CreateTableInput {
	attrs := []types.AttributeDefinition{
		{AttributeName: aws.String(AttrPK), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String(AttrSK), AttributeType: types.ScalarAttributeTypeS},
	}
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range Indexes {
		attrs = append(attrs,
			types.AttributeDefinition{AttributeName: aws.String(ix.PK), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String(ix.SK), AttributeType: types.ScalarAttributeTypeS})
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.Name),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(ix.PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(ix.SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: attrs,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(AttrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: gsis,
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	}
}

// CreateTable creates the table if it does not exist and waits until it is
// active. It reports whether it created the table. A table that exists is
// found by describing it first, so that the operator's create-table needs
// only Describe access where the infrastructure made the table.
func CreateTable(ctx context.Context, db *dynamodb.Client, name string) (bool, error) {
	_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, withTimeouts(adminTimeouts))
	var missing *types.ResourceNotFoundException
	switch {
	case err == nil:
		return false, ensureTTL(ctx, db, name)
	case !errors.As(err, &missing):
		return false, fmt.Errorf("describe table %q: %w", name, err)
	}
	_, err = db.CreateTable(ctx, TableDefinition(name), withTimeouts(adminTimeouts))
	var inUse *types.ResourceInUseException
	switch {
	case errors.As(err, &inUse):
		return false, ensureTTL(ctx, db, name)
	case err != nil:
		return false, fmt.Errorf("create table %q: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, 2*time.Second
		o.ClientOptions = append(o.ClientOptions, withTimeouts(adminTimeouts))
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 2*time.Minute); err != nil {
		return true, fmt.Errorf("wait for table %q: %w", name, err)
	}
	return true, enableTTL(ctx, db, name)
}
