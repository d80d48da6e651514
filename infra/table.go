package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// newTable adds the single table as the model declares it (keys, indexes,
// billing, its stream of new and old images, which the events function
// reads in every deployment and the indexer with OpenSearch) with its TTL
// attribute, point in time recovery, and per stage deletion protection and
// retention. CloudFormation names it; the functions get the name in
// TABLE_NAME.
func newTable(scope awscdk.Stack, def deploymodel.Table, s stageSettings) (awsdynamodb.Table, error) {
	props, gsis, err := TableProps(def)
	if err != nil {
		return nil, err
	}
	props.TimeToLiveAttribute = jsii.String(def.TimeToLiveAttribute)
	props.PointInTimeRecoverySpecification = &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)}
	props.DeletionProtection = jsii.Bool(s.protect)
	props.RemovalPolicy = s.removal()
	t := awsdynamodb.NewTable(scope, jsii.String("Table"), props)
	for _, g := range gsis {
		t.AddGlobalSecondaryIndex(g)
	}
	return t, nil
}

// TableProps translates the model's table into the CDK's table props and
// index props; what it cannot translate is an error, never dropped (what
// the model cannot express, derive refuses).
func TableProps(def deploymodel.Table) (*awsdynamodb.TableProps, []*awsdynamodb.GlobalSecondaryIndexProps, error) {
	attrTypes := map[string]awsdynamodb.AttributeType{}
	for _, a := range def.Attributes {
		switch a.Type {
		case "S":
			attrTypes[a.Name] = awsdynamodb.AttributeType_STRING
		case "N":
			attrTypes[a.Name] = awsdynamodb.AttributeType_NUMBER
		case "B":
			attrTypes[a.Name] = awsdynamodb.AttributeType_BINARY
		default:
			return nil, nil, fmt.Errorf("attribute %s: unknown type %q", a.Name, a.Type)
		}
	}
	keys := func(what string, ks []deploymodel.Key) (pk, sk *awsdynamodb.Attribute, err error) {
		for _, k := range ks {
			t, ok := attrTypes[k.Attribute]
			if !ok {
				return nil, nil, fmt.Errorf("%s: key %s has no attribute definition", what, k.Attribute)
			}
			a := &awsdynamodb.Attribute{Name: jsii.String(k.Attribute), Type: t}
			switch k.Type {
			case "HASH":
				pk = a
			case "RANGE":
				sk = a
			default:
				return nil, nil, fmt.Errorf("%s: key %s of unknown type %q", what, k.Attribute, k.Type)
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
	case "PAY_PER_REQUEST":
		props.BillingMode = awsdynamodb.BillingMode_PAY_PER_REQUEST
	default:
		return nil, nil, fmt.Errorf("table: billing mode %q is not supported (on demand only)", def.BillingMode)
	}
	switch def.StreamViewType {
	case "":
	case "NEW_AND_OLD_IMAGES":
		props.Stream = awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	case "NEW_IMAGE":
		props.Stream = awsdynamodb.StreamViewType_NEW_IMAGE
	case "OLD_IMAGE":
		props.Stream = awsdynamodb.StreamViewType_OLD_IMAGE
	case "KEYS_ONLY":
		props.Stream = awsdynamodb.StreamViewType_KEYS_ONLY
	default:
		return nil, nil, fmt.Errorf("table: unknown stream view type %q", def.StreamViewType)
	}
	var gsis []*awsdynamodb.GlobalSecondaryIndexProps
	for _, g := range def.Indexes {
		pk, sk, err := keys("index "+g.Name, g.KeySchema)
		if err != nil {
			return nil, nil, err
		}
		ix := &awsdynamodb.GlobalSecondaryIndexProps{IndexName: jsii.String(g.Name), PartitionKey: pk, SortKey: sk}
		switch g.Projection {
		case "ALL":
			ix.ProjectionType = awsdynamodb.ProjectionType_ALL
		case "KEYS_ONLY":
			ix.ProjectionType = awsdynamodb.ProjectionType_KEYS_ONLY
		case "INCLUDE":
			ix.ProjectionType = awsdynamodb.ProjectionType_INCLUDE
			ix.NonKeyAttributes = jsii.Strings(g.NonKeyAttributes...)
		case "":
			return nil, nil, fmt.Errorf("index %s: no projection", g.Name)
		default:
			return nil, nil, fmt.Errorf("index %s: unknown projection %q", g.Name, g.Projection)
		}
		gsis = append(gsis, ix)
	}
	return props, gsis, nil
}
