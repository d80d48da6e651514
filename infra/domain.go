package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchservice"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// DomainName is the OpenSearch Service domain of a stage (3 to 28
// lower-case characters). It is fixed so that the domain's ARN is known
// before the domain exists: the domain's access policy and the functions'
// roles name it without referring to the domain (which refers to the
// roles: a reference back would be a cycle).
func DomainName(s Stage) string { return "sourcebase-" + string(s) }

// The engine version of the domain: faiss's filtered k-NN (the _org term
// of hybrid search) needs 2.9 or later.
var DomainEngineVersion = awsopensearchservice.EngineVersion_OPENSEARCH_2_19()

// The HTTP methods the functions may call on the domain (IAM actions
// es:ESHttp*): the search function reads (_search is a POST); the
// indexer, and the operator function deleting an organization's
// documents, also create indexes and write and delete documents.
var (
	DomainSearchActions  = []string{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost"}
	DomainIndexerActions = []string{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"}
)

// DomainActions are the actions f may call on the domain: none (nil) but
// for the functions holding indexes (the search function), the indexer,
// and the operator function (ManagesTenants: delete-org deletes an
// organization's documents with the indexer's access).
func DomainActions(f deploymodel.Function) []string {
	switch {
	case deploy.IsIndexer(f), f.ManagesTenants:
		return DomainIndexerActions
	case f.HoldsIndexes:
		return DomainSearchActions
	}
	return nil
}

// DomainSize is a stage's domain capacity.
type DomainSize struct {
	DataNodes, MasterNodes int    // MasterNodes 0: no dedicated master nodes
	DataType, MasterType   string // instance types
	VolumeGiB              int    // gp3, per data node
	ZoneAwareness          bool   // data nodes spread over 2 availability zones
}

// DomainSizes are the domains' capacities by stage: dev one burstable
// node (no replica: a lost node is a reindex from the table away), prod
// two data nodes in two availability zones (an index's replica in the
// other zone) with three dedicated master nodes, as AWS recommends for
// production (cdk-nag's AwsSolutions-OS4 and OS7).
var DomainSizes = map[Stage]DomainSize{
	Dev:  {DataNodes: 1, DataType: "t3.small.search", VolumeGiB: 10},
	Prod: {DataNodes: 2, DataType: "m6g.large.search", MasterNodes: 3, MasterType: "m6g.large.search", VolumeGiB: 20, ZoneAwareness: true},
}

// DomainARN is the ARN of the stage's domain, built from its name (see
// DomainName).
func (st *Stack) DomainARN() string {
	return *st.Stack.FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("es"), Resource: jsii.String("domain"), ResourceName: jsii.String(DomainName(st.Options.Stage)),
	})
}

// addOpenSearchDomain provisions search on an OpenSearch Service managed
// domain (-c openSearchKind=domain), the engine hybrid search needs: the
// domain (encrypted at rest and between nodes, HTTPS only with TLS 1.2,
// its slow and application logs in CloudWatch Logs), its access policy
// allowing the functions that reach it and nothing else (no anonymous
// access: every request is signed by one of their roles), the same IAM
// permissions in their roles, and the indexer reading the table's stream.
func (st *Stack) addOpenSearchDomain(settings stageSettings) {
	name := DomainName(st.Options.Stage)
	arn := st.DomainARN()
	indexes := arn + "/*"
	size := DomainSizes[st.Options.Stage]

	// The domain writes its logs through the log groups' resource policy
	// (made here rather than by the construct's custom resource).
	logs := map[string]awslogs.LogGroup{}
	var logARNs []*string
	for _, kind := range []string{"SlowSearch", "SlowIndex", "App"} {
		logs[kind] = st.newLogGroup("SearchDomain"+kind+"Logs", settings)
		logARNs = append(logARNs, logs[kind].LogGroupArn())
	}
	logPolicy := awslogs.NewResourcePolicy(st.Stack, jsii.String("SearchDomainLogsPolicy"), &awslogs.ResourcePolicyProps{
		PolicyStatements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("es.amazonaws.com"), nil)},
			Actions:    jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
			Resources:  &logARNs,
			Conditions: &map[string]any{
				"StringEquals": map[string]any{"aws:SourceAccount": *st.Stack.Account()},
				"ArnLike":      map[string]any{"aws:SourceArn": arn},
			},
		})},
	})

	capacity := &awsopensearchservice.CapacityConfig{
		DataNodes: jsii.Number(size.DataNodes), DataNodeInstanceType: jsii.String(size.DataType),
		MultiAzWithStandbyEnabled: jsii.Bool(false),
	}
	if size.MasterNodes > 0 {
		capacity.MasterNodes, capacity.MasterNodeInstanceType = jsii.Number(size.MasterNodes), jsii.String(size.MasterType)
	}
	props := &awsopensearchservice.DomainProps{
		DomainName:           jsii.String(name),
		Version:              DomainEngineVersion,
		Capacity:             capacity,
		Ebs:                  &awsopensearchservice.EbsOptions{Enabled: jsii.Bool(true), VolumeType: awsec2.EbsDeviceVolumeType_GP3, VolumeSize: jsii.Number(size.VolumeGiB)},
		EncryptionAtRest:     &awsopensearchservice.EncryptionAtRestOptions{Enabled: jsii.Bool(true)},
		NodeToNodeEncryption: jsii.Bool(true),
		EnforceHttps:         jsii.Bool(true),
		TlsSecurityPolicy:    awsopensearchservice.TLSSecurityPolicy_TLS_1_2,
		Logging: &awsopensearchservice.LoggingOptions{
			SlowSearchLogEnabled: jsii.Bool(true), SlowSearchLogGroup: logs["SlowSearch"],
			SlowIndexLogEnabled: jsii.Bool(true), SlowIndexLogGroup: logs["SlowIndex"],
			AppLogEnabled: jsii.Bool(true), AppLogGroup: logs["App"],
		},
		SuppressLogsResourcePolicy: jsii.Bool(true),
		RemovalPolicy:              settings.removal(), // retained in prod, as the table
	}
	if size.ZoneAwareness {
		props.ZoneAwareness = &awsopensearchservice.ZoneAwarenessConfig{Enabled: jsii.Bool(true), AvailabilityZoneCount: jsii.Number(2)}
	}
	st.Domain = awsopensearchservice.NewDomain(st.Stack, jsii.String("SearchDomain"), props)
	st.Domain.Node().AddDependency(logPolicy)

	// The access policy: a statement per function reaching the domain,
	// naming its role. The construct's accessPolicies would set it by a
	// custom resource (a Lambda function of its own) after the domain
	// exists; the domain's own property does it at creation.
	policy := awsiam.NewPolicyDocument(nil)
	for _, f := range st.deployed() {
		actions := DomainActions(f)
		if actions == nil {
			continue
		}
		policy.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String(constructID(f.Name)),
			Principals: &[]awsiam.IPrincipal{awsiam.NewArnPrincipal(st.Roles[f.Name].RoleArn())},
			Actions:    jsii.Strings(actions...),
			Resources:  jsii.Strings(indexes),
		}))
		st.Policies[f.Name].AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(actions...),
			Resources: jsii.Strings(indexes),
		}))
		st.addIndexerSource(f, settings)
	}
	st.Domain.Node().DefaultChild().(awsopensearchservice.CfnDomain).SetAccessPolicies(policy)

	awscdk.NewCfnOutput(st.Stack, jsii.String(OutSearchEndpoint), &awscdk.CfnOutputProps{
		Value: jsii.String(st.domainURL()), Description: jsii.String("the OpenSearch Service domain's endpoint"),
	})
}

// domainURL is the domain's endpoint as the functions take it
// (OPENSEARCH_ENDPOINT): the attribute is a host name.
func (st *Stack) domainURL() string { return "https://" + *st.Domain.DomainEndpoint() }

// OpenSearchServiceDomain is OPENSEARCH_SERVICE of the functions reaching
// a domain: they sign their requests for es (internal/service's Config).
const OpenSearchServiceDomain = "es"

// EnvOpenSearchService is the variable naming it (service.EnvOpenSearchService).
const EnvOpenSearchService = "OPENSEARCH_SERVICE"
