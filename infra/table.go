package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/internal/store"
)

// newTable adds the single table as store.TableDefinition declares it
// (keys, indexes, billing, its stream of new and old images, which the
// events function reads in every deployment and the indexer with
// OpenSearch) with the TTL attribute store.AttrExpires, point in time
// recovery, and per stage deletion protection and retention.
// CloudFormation names it; the functions get the name in TABLE_NAME.
func newTable(scope awscdk.Stack, s stageSettings) (awsdynamodb.Table, error) {
	def := store.TableDefinition("")
	props, gsis, err := TableProps(def)
	if err != nil {
		return nil, err
	}
	props.TimeToLiveAttribute = jsii.String(store.AttrExpires)
	props.PointInTimeRecoverySpecification = &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)}
	props.DeletionProtection = jsii.Bool(s.protect)
	props.RemovalPolicy = s.removal()
	t := awsdynamodb.NewTable(scope, jsii.String("Table"), props)
	for _, g := range gsis {
		t.AddGlobalSecondaryIndex(g)
	}
	return t, nil
}

// TableProps translates a CreateTable input into the CDK's table props and
// index props; what it cannot translate is an error, never dropped.
func TableProps(def *dynamodb.CreateTableInput) (*awsdynamodb.TableProps, []*awsdynamodb.GlobalSecondaryIndexProps, error) {
	attrTypes := map[string]awsdynamodb.AttributeType{}
	for _, a := range def.AttributeDefinitions {
		switch a.AttributeType {
		case types.ScalarAttributeTypeS:
			attrTypes[*a.AttributeName] = awsdynamodb.AttributeType_STRING
		case types.ScalarAttributeTypeN:
			attrTypes[*a.AttributeName] = awsdynamodb.AttributeType_NUMBER
		case types.ScalarAttributeTypeB:
			attrTypes[*a.AttributeName] = awsdynamodb.AttributeType_BINARY
		default:
			return nil, nil, fmt.Errorf("attribute %s: unknown type %q", *a.AttributeName, a.AttributeType)
		}
	}
	keys := func(what string, ks []types.KeySchemaElement) (pk, sk *awsdynamodb.Attribute, err error) {
		for _, k := range ks {
			t, ok := attrTypes[*k.AttributeName]
			if !ok {
				return nil, nil, fmt.Errorf("%s: key %s has no attribute definition", what, *k.AttributeName)
			}
			a := &awsdynamodb.Attribute{Name: k.AttributeName, Type: t}
			switch k.KeyType {
			case types.KeyTypeHash:
				pk = a
			case types.KeyTypeRange:
				sk = a
			default:
				return nil, nil, fmt.Errorf("%s: key %s of unknown type %q", what, *k.AttributeName, k.KeyType)
			}
		}
		if pk == nil {
			return nil, nil, fmt.Errorf("%s: no partition key", what)
		}
		return pk, sk, nil
	}
	pk, sk, err := keys("table", def.KeySchema)
	if err != nil {
		return nil, nil, err
	}
	props := &awsdynamodb.TableProps{PartitionKey: pk, SortKey: sk}
	switch def.BillingMode {
	case types.BillingModePayPerRequest:
		props.BillingMode = awsdynamodb.BillingMode_PAY_PER_REQUEST
	default:
		return nil, nil, fmt.Errorf("table: billing mode %q is not supported (on demand only)", def.BillingMode)
	}
	if spec := def.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		switch spec.StreamViewType {
		case types.StreamViewTypeNewAndOldImages:
			props.Stream = awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
		case types.StreamViewTypeNewImage:
			props.Stream = awsdynamodb.StreamViewType_NEW_IMAGE
		case types.StreamViewTypeOldImage:
			props.Stream = awsdynamodb.StreamViewType_OLD_IMAGE
		case types.StreamViewTypeKeysOnly:
			props.Stream = awsdynamodb.StreamViewType_KEYS_ONLY
		default:
			return nil, nil, fmt.Errorf("table: unknown stream view type %q", spec.StreamViewType)
		}
	} else if spec != nil && spec.StreamViewType != "" {
		return nil, nil, fmt.Errorf("table: a stream view type %q with the stream disabled", spec.StreamViewType)
	}
	if len(def.LocalSecondaryIndexes) > 0 {
		return nil, nil, fmt.Errorf("table: local secondary indexes are not supported")
	}
	// What the stack sets itself (deletion protection, per stage) or not
	// at all: declared in the definition, it would be dropped.
	for _, c := range []struct {
		what string
		set  bool
	}{
		{"deletion protection", def.DeletionProtectionEnabled != nil},
		{"on demand throughput", def.OnDemandThroughput != nil},
		{"provisioned throughput", def.ProvisionedThroughput != nil},
		{"a resource policy", def.ResourcePolicy != nil},
		{"server-side encryption", def.SSESpecification != nil},
		{"a table class", def.TableClass != ""},
		{"tags", len(def.Tags) > 0},
		{"vector indexes", len(def.VectorIndexes) > 0},
		{"warm throughput", def.WarmThroughput != nil},
		{"a global table source", def.GlobalTableSourceArn != nil || def.GlobalTableSettingsReplicationMode != ""},
	} {
		if c.set {
			return nil, nil, fmt.Errorf("table: %s is not supported by the stack's translation", c.what)
		}
	}
	var gsis []*awsdynamodb.GlobalSecondaryIndexProps
	for _, g := range def.GlobalSecondaryIndexes {
		pk, sk, err := keys("index "+*g.IndexName, g.KeySchema)
		if err != nil {
			return nil, nil, err
		}
		ix := &awsdynamodb.GlobalSecondaryIndexProps{IndexName: g.IndexName, PartitionKey: pk, SortKey: sk}
		if g.Projection == nil {
			return nil, nil, fmt.Errorf("index %s: no projection", *g.IndexName)
		}
		switch g.Projection.ProjectionType {
		case types.ProjectionTypeAll:
			ix.ProjectionType = awsdynamodb.ProjectionType_ALL
		case types.ProjectionTypeKeysOnly:
			ix.ProjectionType = awsdynamodb.ProjectionType_KEYS_ONLY
		case types.ProjectionTypeInclude:
			ix.ProjectionType = awsdynamodb.ProjectionType_INCLUDE
			ix.NonKeyAttributes = jsii.Strings(g.Projection.NonKeyAttributes...)
		default:
			return nil, nil, fmt.Errorf("index %s: unknown projection %q", *g.IndexName, g.Projection.ProjectionType)
		}
		gsis = append(gsis, ix)
	}
	return props, gsis, nil
}
