package main

import (
	"encoding/json"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchserverless"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
)

// CollectionName is the OpenSearch Serverless collection of a stage (3 to
// 32 lower-case characters).
func CollectionName(s Stage) string { return "sourcebase-" + string(s) }

// The data access the functions get in the collection's indexes.
var (
	IndexerIndexPermissions = []string{"aoss:CreateIndex", "aoss:DescribeIndex", "aoss:UpdateIndex", "aoss:WriteDocument"}
	SearchIndexPermissions  = []string{"aoss:DescribeIndex", "aoss:ReadDocument"}
)

// addOpenSearch provisions search on OpenSearch Serverless: the collection
// with its encryption (AWS-owned key), network (public endpoint, IAM
// signed requests only) and data access policies; the indexer reading the
// table's stream; and the search and indexer functions' access to it.
func (st *Stack) addOpenSearch(settings stageSettings) {
	if st.Options.OpenSearchDomain() {
		st.addOpenSearchDomain(settings)
		return
	}
	name := CollectionName(st.Options.Stage)
	collection := []any{"collection/" + name}
	policy := func(v any) *string { b, _ := json.Marshal(v); return jsii.String(string(b)) }
	enc := awsopensearchserverless.NewCfnSecurityPolicy(st.Stack, jsii.String("SearchEncryptionPolicy"), &awsopensearchserverless.CfnSecurityPolicyProps{
		Name: jsii.String(name + "-enc"), Type: jsii.String("encryption"),
		Policy: policy(map[string]any{"Rules": []any{map[string]any{"ResourceType": "collection", "Resource": collection}}, "AWSOwnedKey": true}),
	})
	network := awsopensearchserverless.NewCfnSecurityPolicy(st.Stack, jsii.String("SearchNetworkPolicy"), &awsopensearchserverless.CfnSecurityPolicyProps{
		Name: jsii.String(name + "-net"), Type: jsii.String("network"),
		Policy: policy([]any{map[string]any{"Rules": []any{map[string]any{"ResourceType": "collection", "Resource": collection}}, "AllowFromPublic": true}}),
	})
	st.Collection = awsopensearchserverless.NewCfnCollection(st.Stack, jsii.String("SearchCollection"), &awsopensearchserverless.CfnCollectionProps{
		Name: jsii.String(name), Type: jsii.String("SEARCH"),
		Description: jsii.String("Sourcebase search (" + string(st.Options.Stage) + "): one index per searchable resource, fed by the indexer"),
	})
	st.Collection.AddResourceDependency(enc, jsii.String("a collection needs its encryption policy first"))
	st.Collection.AddResourceDependency(network, jsii.String("and its network policy"))

	indexes := []any{"index/" + name + "/" + st.Model.OpenSearchIndexPrefix + "-*"}
	var rules []any
	for _, f := range st.deployed() {
		perms := SearchIndexPermissions
		switch {
		case deploy.IsIndexer(f), f.ManagesTenants:
			// The operator function deletes an organization's documents
			// (delete-org) with the indexer's access.
			perms = IndexerIndexPermissions
		case !f.HoldsIndexes:
			continue
		}
		rules = append(rules, map[string]any{
			"Description": "the " + f.Name + " function",
			"Rules":       []any{map[string]any{"ResourceType": "index", "Resource": indexes, "Permission": perms}},
			"Principal":   []any{*st.Roles[f.Name].RoleArn()},
		})
		// IAM lets the function call the collection; the data access
		// policy above says what it may do there.
		st.Policies[f.Name].AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("aoss:APIAccessAll"),
			Resources: jsii.Strings(*st.Collection.AttrArn()),
		}))
		st.addIndexerSource(f, settings)
	}
	awsopensearchserverless.NewCfnAccessPolicy(st.Stack, jsii.String("SearchDataAccessPolicy"), &awsopensearchserverless.CfnAccessPolicyProps{
		Name: jsii.String(name + "-data"), Type: jsii.String("data"), Policy: policy(rules),
	})
	awscdk.NewCfnOutput(st.Stack, jsii.String(OutSearchEndpoint), &awscdk.CfnOutputProps{
		Value: st.Collection.AttrCollectionEndpoint(), Description: jsii.String("the OpenSearch Serverless collection's endpoint"),
	})
}

// addIndexerSource feeds the indexer (and only it, of the functions
// reaching OpenSearch) from the table's stream.
func (st *Stack) addIndexerSource(f deploymodel.Function, settings stageSettings) {
	if deploy.IsIndexer(f) {
		st.IndexerFailures = st.addStreamSource(f, "IndexerFailures", deploy.IndexerBatchSize, nil, settings)
	}
}

// OutSearchEndpoint is the output naming the collection's (or the
// domain's) endpoint.
const OutSearchEndpoint = "SearchEndpoint"
