package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// KeysOnly indexes project the keys alone: an entry costs a write
	// unit however large its item, and a list of it reads the records
	// it finds (strongly consistently) after the index's keys. For
	// sparse lookups read rarely (a sweep), not for a list clients page.
	KeysOnly bool
}

// Indexes of the table. The CDK stack and CreateTable both use this
// list. GSI1-4 project every attribute, so that a sorted page is one
// Query; GSI5 projects the keys alone (Index.KeysOnly), for the global
// lookups that sweeps read.
var (
	GSI1 = Index{Name: "gsi1", PK: "gsi1pk", SK: "gsi1sk"}
	GSI2 = Index{Name: "gsi2", PK: "gsi2pk", SK: "gsi2sk"}
	GSI3 = Index{Name: "gsi3", PK: "gsi3pk", SK: "gsi3sk"}
	GSI4 = Index{Name: "gsi4", PK: "gsi4pk", SK: "gsi4sk"}
	GSI5 = Index{Name: "gsi5", PK: "gsi5pk", SK: "gsi5sk", KeysOnly: true}

	Indexes = []Index{GSI1, GSI2, GSI3, GSI4, GSI5}
)

// TableDefinition is the table's schema: on-demand billing, string keys,
// the GSIs of Indexes (projecting all attributes so that a sorted page is
// one Query, or the keys alone), and a stream of new and old images (the
// events function reads every change from it; see internal/events).
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
			Projection: &types.Projection{ProjectionType: ix.projection()},
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

func (ix Index) projection() types.ProjectionType {
	if ix.KeysOnly {
		return types.ProjectionTypeKeysOnly
	}
	return types.ProjectionTypeAll
}

// CreateTable creates the table if it does not exist and waits until it is
// active. It reports whether it created the table. A table that exists is
// found by describing it first, so that the operator's create-table needs
// only Describe access where the infrastructure made the table.
//
// A table that exists must have this release's layout (CheckLayout): a
// table an earlier release made is refused, naming what it lacks and the
// command that adds it.
func CreateTable(ctx context.Context, db *dynamodb.Client, name string) (bool, error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, withTimeouts(adminTimeouts))
	var missing *types.ResourceNotFoundException
	switch {
	case err == nil:
		if err := checkLayout(name, out.Table); err != nil {
			return false, err
		}
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

// Layout is the version of the table's layout: its indexes (Indexes) and
// its key shapes (keys.go). Layout 2 added GSI5 (keys only), for the
// sparse markers of global lookups, and shards (shards.go), whose keys
// of shard 0 are layout 1's: a table of layout 1 lacks only the index.
const Layout = 2

// LayoutError is a table whose layout is not this release's.
type LayoutError struct {
	Table string
	// Missing are the indexes the table lacks; Different those it has
	// with other keys or another projection.
	Missing, Different []string
}

func (e *LayoutError) Error() string {
	msg := fmt.Sprintf("table %q has an earlier layout than this release's (layout %d)", e.Table, Layout)
	if len(e.Missing) > 0 {
		msg += fmt.Sprintf(": it lacks the indexes %v; run `admin migrate-layout` (TABLE_NAME=%s) to add them while the table serves, or in AWS deploy this release's stack (cdk deploy), which adds them", e.Missing, e.Table)
	}
	if len(e.Different) > 0 {
		msg += fmt.Sprintf("; its indexes %v differ from this release's (keys or projection): they cannot be changed in place, so restore the table from a backup made by this release or move its items to a new table", e.Different)
	}
	return msg
}

// CheckLayout reports a *LayoutError unless the table has every index of
// Indexes with its keys and projection.
func CheckLayout(ctx context.Context, db *dynamodb.Client, name string) error {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, withTimeouts(adminTimeouts))
	if err != nil {
		return fmt.Errorf("describe table %q: %w", name, err)
	}
	return checkLayout(name, out.Table)
}

func checkLayout(name string, t *types.TableDescription) error {
	e := &LayoutError{Table: name}
	for _, ix := range Indexes {
		i := slices.IndexFunc(t.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool { return aws.ToString(g.IndexName) == ix.Name })
		if i < 0 {
			e.Missing = append(e.Missing, ix.Name)
			continue
		}
		g := t.GlobalSecondaryIndexes[i]
		keys := map[types.KeyType]string{}
		for _, k := range g.KeySchema {
			keys[k.KeyType] = aws.ToString(k.AttributeName)
		}
		if keys[types.KeyTypeHash] != ix.PK || keys[types.KeyTypeRange] != ix.SK || g.Projection == nil || g.Projection.ProjectionType != ix.projection() {
			e.Different = append(e.Different, ix.Name)
		}
	}
	if len(e.Missing)+len(e.Different) > 0 {
		return e
	}
	return nil
}

// MigrateLayout adds the indexes of Indexes that the table lacks, one at
// a time (DynamoDB builds one index per update while the table serves),
// waiting for each to be active; it reports those it added. It can be
// run again after an interruption: it goes on with what is still
// missing. An index that differs from this release's is not changed
// (the *LayoutError says so).
func MigrateLayout(ctx context.Context, db *dynamodb.Client, name string) ([]string, error) {
	var added []string
	for {
		err := CheckLayout(ctx, db, name)
		var le *LayoutError
		if !errors.As(err, &le) {
			return added, err
		}
		if len(le.Missing) == 0 {
			return added, err
		}
		ix := Indexes[slices.IndexFunc(Indexes, func(x Index) bool { return x.Name == le.Missing[0] })]
		_, err = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(name),
			AttributeDefinitions: []types.AttributeDefinition{
				{AttributeName: aws.String(ix.PK), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String(ix.SK), AttributeType: types.ScalarAttributeTypeS},
			},
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: aws.String(ix.Name),
				KeySchema: []types.KeySchemaElement{
					{AttributeName: aws.String(ix.PK), KeyType: types.KeyTypeHash},
					{AttributeName: aws.String(ix.SK), KeyType: types.KeyTypeRange},
				},
				Projection: &types.Projection{ProjectionType: ix.projection()},
			}}},
		}, withTimeouts(adminTimeouts))
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) { // in use: an earlier run's index is being built
			return added, fmt.Errorf("add index %s to table %q: %w", ix.Name, name, err)
		}
		if err := waitForIndex(ctx, db, name, ix.Name); err != nil {
			return added, err
		}
		added = append(added, ix.Name)
	}
}

// waitForIndex waits until the table and its index are active.
func waitForIndex(ctx context.Context, db *dynamodb.Client, name, index string) error {
	deadline := time.Now().Add(time.Hour)
	for delay := 100 * time.Millisecond; ; delay = min(delay*2, 10*time.Second) {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, withTimeouts(adminTimeouts))
		if err != nil {
			return fmt.Errorf("describe table %q: %w", name, err)
		}
		active := out.Table.TableStatus == types.TableStatusActive
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == index && g.IndexStatus != types.IndexStatusActive {
				active = false
			}
		}
		if active {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("index %s of table %q is not active after an hour; run migrate-layout again to wait on", index, name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}
