package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/infra/deploy"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/service"
)

// domainStages synthesizes dev and prod searching with an OpenSearch
// Service managed domain (-c search=opensearch -c openSearchKind=domain)
// for f.
func domainStages(t *testing.T, f func(t *testing.T, s *synthesized)) {
	for _, stage := range Stages {
		t.Run(string(stage)+"-opensearch-domain", func(t *testing.T) {
			f(t, synth(t, map[string]string{CtxStage: string(stage), CtxSearch: deploymodel.Default().SearchEngines.OpenSearch, CtxOpenSearchKind: OpenSearchDomain}))
		})
	}
}

// domainAccess are the functions reaching the domain and the actions each
// may call: the search function reads, the indexer and the operator
// function (deleting an organization's documents) write too.
func domainAccess(s *synthesized) map[string][]string {
	out := map[string][]string{}
	for _, f := range s.deployed() {
		switch {
		case deploy.IsIndexer(f), f.ManagesTenants:
			out[f.Name] = DomainIndexerActions
		case f.HoldsIndexes:
			out[f.Name] = DomainSearchActions
		}
	}
	return out
}

func TestTheDomainOptionDeploysAManagedDomainEncryptedHTTPSOnlyWithLogsAndNoCollection(t *testing.T) {
	domainStages(t, func(t *testing.T, s *synthesized) {
		if !s.stack.Options.OpenSearchDomain() || s.stack.Domain == nil || s.stack.Collection != nil {
			t.Fatalf("options %+v: domain %v, collection %v", s.stack.Options, s.stack.Domain != nil, s.stack.Collection != nil)
		}
		for id, r := range s.t.Resources {
			if strings.HasPrefix(r.Type, "AWS::OpenSearchServerless::") || r.Type == "Custom::OpenSearchAccessPolicy" || r.Type == "Custom::CloudwatchLogResourcePolicy" {
				t.Errorf("%s: a %s with the domain", id, r.Type)
			}
		}
		domains := s.t.ofType("AWS::OpenSearchService::Domain")
		if len(domains) != 1 {
			t.Fatalf("%d domains, want 1", len(domains))
		}
		d := s.t.Resources[s.logicalID(s.stack.Domain)]
		p := d.Properties
		size := DomainSizes[s.stack.Options.Stage]
		cluster := map[string]any{
			"DedicatedMasterEnabled": size.MasterNodes > 0, "InstanceCount": size.DataNodes, "InstanceType": size.DataType,
			"MultiAZWithStandbyEnabled": false, "ZoneAwarenessEnabled": size.ZoneAwareness,
		}
		if size.MasterNodes > 0 {
			cluster["DedicatedMasterCount"], cluster["DedicatedMasterType"] = size.MasterNodes, size.MasterType
		}
		if size.ZoneAwareness {
			cluster["ZoneAwarenessConfig"] = map[string]any{"AvailabilityZoneCount": 2}
		}
		got := p["ClusterConfig"].(map[string]any)
		for k, v := range cluster {
			if !jsonEqual(got[k], v) {
				t.Errorf("ClusterConfig.%s = %s, want %s (%s)", k, js(got[k]), js(v), js(got))
			}
		}
		for k, want := range map[string]any{
			"DomainName":                  DomainName(s.stack.Options.Stage),
			"EngineVersion":               "OpenSearch_2.19",
			"EncryptionAtRestOptions":     map[string]any{"Enabled": true},
			"NodeToNodeEncryptionOptions": map[string]any{"Enabled": true},
			"EBSOptions":                  map[string]any{"EBSEnabled": true, "VolumeSize": size.VolumeGiB, "VolumeType": "gp3"},
		} {
			if !jsonEqual(p[k], want) {
				t.Errorf("%s = %s, want %s", k, js(p[k]), js(want))
			}
		}
		if ep := p["DomainEndpointOptions"].(map[string]any); ep["EnforceHTTPS"] != true || ep["TLSSecurityPolicy"] != "Policy-Min-TLS-1-2-2019-07" {
			t.Errorf("DomainEndpointOptions %s, want HTTPS enforced with TLS 1.2", js(ep))
		}
		if p["AdvancedSecurityOptions"] != nil || p["VPCOptions"] != nil {
			t.Errorf("fine-grained access control %s, VPC %s: want IAM only", js(p["AdvancedSecurityOptions"]), js(p["VPCOptions"]))
		}
		logs := p["LogPublishingOptions"].(map[string]any)
		for _, kind := range []string{"SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS"} {
			if o, _ := logs[kind].(map[string]any); o["Enabled"] != true || o["CloudWatchLogsLogGroupArn"] == nil {
				t.Errorf("%s: %s", kind, js(logs[kind]))
			}
		}
		want := "Delete"
		if s.stack.Options.Stage == Prod {
			want = "Retain" // as the table
		}
		if d.DeletionPolicy != want || d.UpdateReplacePolicy != want {
			t.Errorf("domain DeletionPolicy %s, UpdateReplacePolicy %s, want %s", d.DeletionPolicy, d.UpdateReplacePolicy, want)
		}
		// The domain's logs reach its log groups by their resource
		// policy, for this account's domain only.
		var policies []string
		for _, r := range s.t.ofType("AWS::Logs::ResourcePolicy") {
			policies = append(policies, js(r.Properties["PolicyDocument"]))
		}
		if len(policies) != 1 || !strings.Contains(policies[0], `es.amazonaws.com`) || !strings.Contains(policies[0], `aws:SourceAccount`) || !strings.Contains(policies[0], `aws:SourceArn`) {
			t.Errorf("log resource policies %v", policies)
		}
		if v := s.t.Outputs[OutSearchEndpoint].Value; !jsonEqual(v, endpointURL(s)) {
			t.Errorf("output %s = %s", OutSearchEndpoint, js(v))
		}
	})
}

// endpointURL is the domain's endpoint as the template gives it.
func endpointURL(s *synthesized) any {
	return map[string]any{"Fn::Join": []any{"", []any{"https://", getAtt(s.logicalID(s.stack.Domain), "DomainEndpoint")}}}
}

func TestTheDomainsAccessPolicyAllowsOnlyTheFunctionsRolesTheirActionsOnTheIndexes(t *testing.T) {
	domainStages(t, func(t *testing.T, s *synthesized) {
		access := domainAccess(s)
		if !slices.Equal(access[lambdas.Search], DomainSearchActions) || !slices.Equal(access[lambdas.Indexer], DomainIndexerActions) {
			t.Fatalf("access %v: want the search function reading, the indexer writing", access)
		}
		indexes := map[string]any{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":es:", ref("AWS::Region"), ":", ref("AWS::AccountId"),
			":domain/" + DomainName(s.stack.Options.Stage) + "/*"}}}
		doc := s.t.Resources[s.logicalID(s.stack.Domain)].Properties["AccessPolicies"].(map[string]any)
		statements := list(doc["Statement"])
		if len(statements) != len(access) {
			t.Errorf("%d statements, want %d (%v): %s", len(statements), len(access), access, js(doc))
		}
		for _, st := range statements {
			st := st.(map[string]any)
			var name string
			for n := range access {
				if jsonEqual(st["Principal"], map[string]any{"AWS": getAtt(s.logicalID(s.stack.Roles[n]), "Arn")}) {
					name = n
				}
			}
			if name == "" {
				t.Errorf("statement of an unexpected principal: %s", js(st))
				continue
			}
			if st["Effect"] != "Allow" || !jsonEqual(st["Action"], slices.Sorted(slices.Values(access[name]))) || !jsonEqual(st["Resource"], indexes) || st["Condition"] != nil {
				t.Errorf("%s: statement %s, want Allow %v on %s", name, js(st), access[name], js(indexes))
			}
		}
		// The roles: the same actions on the same resource, and nothing of
		// OpenSearch Serverless.
		for _, f := range s.deployed() {
			g := s.roleGrants(t, s.logicalID(s.stack.Roles[f.Name]))
			var es []string
			for k := range g {
				if strings.HasPrefix(k, "es:") || strings.HasPrefix(k, "aoss:") {
					es = append(es, k)
				}
			}
			var want []string
			for _, a := range access[f.Name] {
				want = append(want, a+" on "+js(indexes))
			}
			slices.Sort(es)
			slices.Sort(want)
			if !slices.Equal(es, want) {
				t.Errorf("%s: role grants %v, want %v", f.Name, es, want)
			}
		}
	})
}

func TestTheFunctionsReachingTheDomainAreToldItsEndpointAndToSignForEs(t *testing.T) {
	if EnvOpenSearchService != service.EnvOpenSearchService || OpenSearchServiceDomain != "es" {
		t.Fatalf("%s=%s: the service reads %s", EnvOpenSearchService, OpenSearchServiceDomain, service.EnvOpenSearchService)
	}
	domainStages(t, func(t *testing.T, s *synthesized) {
		access := domainAccess(s)
		for _, f := range s.deployed() {
			vars := s.fn(t, f.Name).Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			_, reaches := access[f.Name]
			if !reaches {
				if vars[service.EnvOpenSearchEndpoint] != nil || vars[service.EnvOpenSearchService] != nil {
					t.Errorf("%s: environment %s", f.Name, js(vars))
				}
				continue
			}
			if !jsonEqual(vars[service.EnvOpenSearchEndpoint], endpointURL(s)) || vars[service.EnvOpenSearchService] != "es" ||
				vars[service.EnvSearchEngine] != service.SearchOpenSearch {
				t.Errorf("%s: environment %s, want the domain's https endpoint, service es", f.Name, js(vars))
			}
		}
	})
	// The Serverless default tells no service (aoss, the functions' default).
	s := synth(t, map[string]string{CtxStage: string(Prod), CtxSearch: deploymodel.Default().SearchEngines.OpenSearch})
	for _, f := range s.deployed() {
		if vars := s.fn(t, f.Name).Properties["Environment"].(map[string]any)["Variables"].(map[string]any); vars[service.EnvOpenSearchService] != nil {
			t.Errorf("serverless: %s: environment %s", f.Name, js(vars))
		}
	}
}

func TestTheDomainStagesPassCdkNagAndCfnLint(t *testing.T) {
	domainStages(t, func(t *testing.T, s *synthesized) {
		nag := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
		for what, found := range map[string]*[]*cxapi.SynthesisMessage{
			"error":   s.annotations.FindError(jsii.String("*"), nag),
			"warning": s.annotations.FindWarning(jsii.String("*"), nag),
		} {
			for _, m := range *found {
				t.Errorf("cdk-nag %s at %s: %v", what, *m.Id, m.Entry.Data)
			}
		}
		path := filepath.Join(t.TempDir(), "template.json")
		if err := os.WriteFile(path, []byte(s.t.raw), 0o644); err != nil {
			t.Fatal(err)
		}
		checkFindings(t, "the synthesized stack", cfnLint(t, path))
	})
}

func TestTheOpenSearchKindIsServerlessOrDomainAndOnlyWithOpenSearch(t *testing.T) {
	opensearch := deploymodel.Default().SearchEngines.OpenSearch
	for _, c := range []struct {
		ctx  map[string]any
		want string // in the error; empty: no error
	}{
		{map[string]any{CtxSearch: opensearch, CtxOpenSearchKind: "vector"}, `openSearchKind="vector": the kind of OpenSearch must be serverless`},
		{map[string]any{CtxSearch: opensearch, CtxOpenSearchKind: "Domain"}, `openSearchKind="Domain"`},
		{map[string]any{CtxOpenSearchKind: OpenSearchDomain}, `openSearchKind="domain": applies only with -c search=opensearch`},
		{map[string]any{CtxSearch: "embedded", CtxOpenSearchKind: OpenSearchServerless}, `applies only with -c search=opensearch`},
	} {
		c.ctx[CtxAssets] = testAssets
		_, err := build(awscdk.NewApp(&awscdk.AppProps{Context: &c.ctx}))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("context %v: error %v, want one containing %q", c.ctx, err, c.want)
		}
	}
	// Serverless, named or by default, is the collection.
	for _, kind := range []string{"", OpenSearchServerless} {
		ctx := map[string]string{CtxStage: string(Dev), CtxSearch: opensearch}
		if kind != "" {
			ctx[CtxOpenSearchKind] = kind
		}
		s := synth(t, ctx)
		if s.stack.Collection == nil || s.stack.Domain != nil || len(s.t.ofType("AWS::OpenSearchService::Domain")) != 0 {
			t.Errorf("openSearchKind %q: collection %v, domain %v", kind, s.stack.Collection != nil, s.stack.Domain != nil)
		}
	}
}
