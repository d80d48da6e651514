package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// TestMotoDeploy is the deployment smoke test (`make moto-deploy`, and part
// of `make test` where moto is installed): the dev stage's synthesized
// template deployed through CloudFormation into moto_server, as `cdk deploy`
// deploys it (the assets published to the bootstrap bucket, the template by
// URL), then
//   - the stack, its resources, its outputs, the table, the functions and
//     the state machines are checked against the template;
//   - the admin CLI makes an organization and an API key in the deployed
//     table, and the dev server, pointed at that table, answers a table of
//     HTTP requests with that key (moto_http_test.go).
//
// What moto's CloudFormation does not implement is in motoUnsupported, and
// the other differences it has are in motoAdaptations: both are applied to
// the copy of the template sent to moto, and reported.
func TestMotoDeploy(t *testing.T) {
	if _, err := exec.LookPath("moto_server"); err != nil {
		t.Skip("skipping the deployment smoke test: moto_server is not on PATH " +
			"(it deploys the dev stack into moto's CloudFormation; install moto with pip install 'moto[server]')")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(3*time.Minute))
	defer cancel()
	// The admin CLI and the dev server build while the stack deploys.
	bins := buildServiceBinaries(t)

	s := synth(t, map[string]string{CtxStage: string(Dev)})
	start := time.Now()
	defer func() {
		t.Logf("moto deployment and checks: %s beyond the synthesis", time.Since(start).Round(100*time.Millisecond))
	}()
	m := startMoto(t)
	d := deployToMoto(ctx, t, m, s, StackName(Dev))
	if t.Failed() {
		return
	}
	t.Run("stack", func(t *testing.T) { d.checkStack(ctx, t) })
	t.Run("table", func(t *testing.T) { d.checkTable(ctx, t) })
	t.Run("functions", func(t *testing.T) { d.checkFunctions(ctx, t) })
	t.Run("state machines", func(t *testing.T) { d.checkStateMachines(ctx, t) })
	if t.Failed() {
		return
	}
	t.Run("service", func(t *testing.T) { d.checkService(ctx, t, bins()) })
	t.Run("delete", func(t *testing.T) { d.checkDelete(ctx, t) })
}

// motoUnsupported are the resource types of the stack that moto's
// CloudFormation (moto 5.2.1) does not implement, with what a deployment
// into moto therefore lacks. moto skips such a resource with a warning, yet
// lists it as an empty entry among the stack's resources, resolves a Ref to
// it as "None", refuses an Fn::GetAtt of it in a resource, and fails
// CreateStack with an internal error when an output reads one of its
// attributes: so the copy of the template sent to moto leaves them out, and
// every Ref and Fn::GetAtt of them becomes a stand-in (motoStandIn).
var motoUnsupported = map[string]string{
	"AWS::ApiGatewayV2::Api":         "the HTTP API is not deployed (moto emulates the API Gateway v2 API, not its CloudFormation resources)",
	"AWS::ApiGatewayV2::Stage":       "the HTTP API's $default stage, its throttling and access logs are not deployed",
	"AWS::ApiGatewayV2::Integration": "the HTTP API's Lambda integrations are not deployed",
	"AWS::ApiGatewayV2::Route":       "the HTTP API's routes are not deployed",
	"AWS::Lambda::Url":               "the webhook function's URL is not deployed",
	"AWS::S3::BucketPolicy":          "the bulk bucket's TLS-only policy is not deployed",
	"AWS::SQS::QueuePolicy":          "the queues' TLS-only policies are not deployed",
	// The ops team's (alarms.go, tracing.go): moto implements CloudWatch's
	// and X-Ray's APIs but not these resources in its CloudFormation. The
	// alarm topic, its key and the dashboard are deployed. The topic's
	// email subscriptions (AWS::SNS::Subscription, also not implemented)
	// are not in the dev stage this test deploys, which names no address.
	"AWS::CloudWatch::Alarm":  "the alarms are not deployed (the template's are checked by alarms_test.go)",
	"AWS::SNS::TopicPolicy":   "the alarm topic's TLS-only policy and CloudWatch's permission to publish are not deployed",
	"AWS::XRay::SamplingRule": "the functions' X-Ray sampling rule is not deployed (the functions' tracing mode is)",
}

// motoAdaptations are the other changes the copy of the template sent to
// moto needs, each with its reason.
var motoAdaptations = []struct {
	name, reason string
	apply        func(stack, logicalID string, r map[string]any) bool
}{
	{
		name: "FIFO queues get an explicit QueueName ending in .fifo",
		reason: "CloudFormation names a FIFO queue without a QueueName <stack>-<id>-<random>.fifo; moto generates the name " +
			"without .fifo and fails the stack (Queue name must end in .fifo for FIFO queues)",
		apply: func(stack, id string, r map[string]any) bool {
			props, _ := r["Properties"].(map[string]any)
			if r["Type"] != "AWS::SQS::Queue" || props["FifoQueue"] != true || props["QueueName"] != nil {
				return false
			}
			props["QueueName"] = stack + "-" + id + ".fifo"
			return true
		},
	},
	{
		name: "KMS keys (the alarm topic's) lose their Tags",
		reason: "moto reads a key's CloudFormation Tags as KMS API tags (TagKey, TagValue) and fails on CloudFormation's Key and Value " +
			"(KeyError 'TagKey'), leaving the key out and the topic's Fn::GetAtt of it undefined",
		apply: func(stack, id string, r map[string]any) bool {
			props, _ := r["Properties"].(map[string]any)
			if r["Type"] != "AWS::KMS::Key" || props["Tags"] == nil {
				return false
			}
			delete(props, "Tags")
			return true
		},
	},
}

// motoStandIn is what a Ref (attr "") or an Fn::GetAtt of a resource left
// out of moto's copy of the template becomes.
func motoStandIn(logicalID, attr string) string {
	if attr == "" {
		return "moto-unsupported-" + logicalID
	}
	return "moto-unsupported-" + logicalID + "." + attr
}

// motoServer is a moto_server of the test (testenv.Moto) and the SDK's
// configuration for it.
type motoServer struct {
	endpoint string
	aws      aws.Config
}

// startMoto starts moto_server for the test (skipped where it is not
// installed).
func startMoto(t *testing.T) *motoServer {
	t.Helper()
	return &motoServer{endpoint: testenv.Moto(t), aws: aws.Config{
		Region:      motoRegion,
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		HTTPClient:  &http.Client{Timeout: testenv.Scaled(60 * time.Second)},
	}}
}

const motoRegion = "us-east-1"

// processEnv is the environment of the processes the test starts: the
// machine's, without any AWS setting or service configuration (no real
// credentials, profile or endpoint can be used), metadata lookups off.
func processEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") || slices.Contains([]string{service.EnvTable, "PORT", "DYNAMODB_PORT"}, k) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
}

func (m *motoServer) cloudFormation() *cloudformation.Client {
	return cloudformation.NewFromConfig(m.aws, func(o *cloudformation.Options) { o.BaseEndpoint = aws.String(m.endpoint) })
}

// s3 is a client of moto's S3 that neither hashes nor checksums what it
// uploads (moto checks neither; 150 MB of function code would take seconds
// of hashing on a small machine).
func (m *motoServer) s3() *s3.Client {
	return s3.NewFromConfig(m.aws, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(m.endpoint), true
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
	})
}
func (m *motoServer) ssm() *ssm.Client {
	return ssm.NewFromConfig(m.aws, func(o *ssm.Options) { o.BaseEndpoint = aws.String(m.endpoint) })
}
func (m *motoServer) sts() *sts.Client {
	return sts.NewFromConfig(m.aws, func(o *sts.Options) { o.BaseEndpoint = aws.String(m.endpoint) })
}
func (m *motoServer) dynamodb() *dynamodb.Client {
	return dynamodb.NewFromConfig(m.aws, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(m.endpoint) })
}
func (m *motoServer) lambda() *lambda.Client {
	return lambda.NewFromConfig(m.aws, func(o *lambda.Options) { o.BaseEndpoint = aws.String(m.endpoint) })
}
func (m *motoServer) sfn() *sfn.Client {
	return sfn.NewFromConfig(m.aws, func(o *sfn.Options) { o.BaseEndpoint = aws.String(m.endpoint) })
}

// deployment is the stack deployed into moto.
type deployment struct {
	moto    *motoServer
	stack   string
	account string
	// template is the synthesized template, sent is moto's copy of it.
	template, sent map[string]any
	// codeSHA256 is the base64 SHA-256 of each uploaded asset by object key,
	// as Lambda reports CodeSha256.
	codeSHA256 map[string]string
	// resources are the stack's resources by logical id.
	resources map[string]cfntypes.StackResourceSummary
	outputs   map[string]string
	// attrs are the attributes of deployed resources that Fn::GetAtt gives
	// by "<logical id>.<attribute>" (loadAttrs).
	attrs map[string]string
	// functions are moto's functions by name.
	functions map[string]lambdatypes.FunctionConfiguration

	mu   sync.Mutex
	gaps map[string]bool // the kinds of moto gaps reported
}

// deployToMoto does what `cdk bootstrap` and `cdk deploy` do, against moto:
// the bootstrap's asset bucket and version parameter, the assets of the
// cloud assembly uploaded (the functions' code zipped), the stack created
// from the template's URL; it waits for the stack to be created.
func deployToMoto(ctx context.Context, t *testing.T, m *motoServer, s *synthesized, stack string) *deployment {
	t.Helper()
	start := time.Now()
	d := &deployment{moto: m, stack: stack, codeSHA256: map[string]string{}, gaps: map[string]bool{}}
	id, err := m.sts().GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatalf("moto's STS: %v", err)
	}
	d.account = aws.ToString(id.Account)
	raw, err := os.ReadFile(filepath.Join(s.outdir, stack+".template.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &d.template); err != nil {
		t.Fatal(err)
	}

	// The bootstrap: the version parameter the template's BootstrapVersion
	// reads (moto resolves SSM parameter types from its SSM), and the
	// asset bucket.
	param, _ := d.template["Parameters"].(map[string]any)["BootstrapVersion"].(map[string]any)
	versionName, _ := param["Default"].(string)
	if param["Type"] != "AWS::SSM::Parameter::Value<String>" || versionName == "" {
		t.Fatalf("the template's BootstrapVersion parameter is %s, want an SSM parameter with a default name", js(param))
	}
	if _, err := m.ssm().PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String(versionName), Value: aws.String(cdkBootstrapVersion),
		Type: ssmtypes.ParameterTypeString}); err != nil {
		t.Fatalf("put the bootstrap version parameter: %v", err)
	}

	// The assets, as the CDK CLI publishes them.
	var manifest struct {
		Files map[string]struct {
			Source struct {
				Path      string `json:"path"`
				Packaging string `json:"packaging"`
			} `json:"source"`
			Destinations map[string]struct {
				BucketName string `json:"bucketName"`
				ObjectKey  string `json:"objectKey"`
			} `json:"destinations"`
		} `json:"files"`
	}
	if b, err := os.ReadFile(filepath.Join(s.outdir, stack+".assets.json")); err != nil || json.Unmarshal(b, &manifest) != nil {
		t.Fatalf("read the asset manifest: %v", err)
	}
	pseudo := strings.NewReplacer("${AWS::AccountId}", d.account, "${AWS::Region}", motoRegion, "${AWS::Partition}", "aws")
	s3c := m.s3()
	buckets := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, len(manifest.Files))
	sem := make(chan struct{}, 4)
	var assetBucket string
	for hash, f := range manifest.Files {
		for _, dest := range f.Destinations {
			bucket := pseudo.Replace(dest.BucketName)
			assetBucket = bucket
			if !buckets[bucket] {
				buckets[bucket] = true
				if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
					t.Fatalf("create the asset bucket %s: %v", bucket, err)
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				body, err := assetBody(filepath.Join(s.outdir, f.Source.Path), f.Source.Packaging)
				if err == nil {
					_, err = s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(dest.ObjectKey), Body: bytes.NewReader(body)})
				}
				if err != nil {
					errs <- fmt.Errorf("asset %s (%s): %w", hash, f.Source.Path, err)
					return
				}
				sum := sha256.Sum256(body)
				mu.Lock()
				d.codeSHA256[dest.ObjectKey] = base64.StdEncoding.EncodeToString(sum[:])
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() || assetBucket == "" {
		t.Fatalf("the assets could not be published (%d in the manifest)", len(manifest.Files))
	}
	t.Logf("published %d assets to s3://%s", len(d.codeSHA256), assetBucket)

	// moto's copy of the template.
	sent, notes := motoCopy(t, d.template, stack)
	d.sent = sent
	for _, n := range notes {
		t.Log("moto: " + n)
	}
	body, _ := json.Marshal(sent)
	key := stack + ".moto.template.json"
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(assetBucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("upload the template: %v", err)
	}

	cfn := m.cloudFormation()
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{
		StackName:    aws.String(stack),
		TemplateURL:  aws.String(fmt.Sprintf("https://s3.%s.amazonaws.com/%s/%s", motoRegion, assetBucket, key)),
		Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand},
	}); err != nil {
		t.Fatalf("CreateStack: %v", err)
	}
	st := waitForStack(ctx, t, cfn, stack, "CREATE_COMPLETE")
	if st == nil {
		return d
	}
	d.outputs = map[string]string{}
	for _, o := range st.Outputs {
		d.outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	d.resources = map[string]cfntypes.StackResourceSummary{}
	pages := cloudformation.NewListStackResourcesPaginator(cfn, &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("ListStackResources: %v", err)
		}
		for _, r := range page.StackResourceSummaries {
			id := aws.ToString(r.LogicalResourceId)
			if id == "" {
				t.Errorf("the stack lists a resource without a logical id: %s", js(r))
				continue
			}
			d.resources[id] = r
		}
	}
	t.Logf("stack %s created in moto with %d resources in %s (assets published and template sent included)",
		stack, len(d.resources), time.Since(start).Round(10*time.Millisecond))
	d.loadAttrs(ctx, t)
	return d
}

// loadAttrs reads the attributes of the deployed resources the template's
// Fn::GetAtt expressions use: ARNs (as CloudFormation derives them from
// the physical ids; a function's as Lambda reports it) and the table's
// stream.
func (d *deployment) loadAttrs(ctx context.Context, t *testing.T) {
	t.Helper()
	d.attrs, d.functions = map[string]string{}, map[string]lambdatypes.FunctionConfiguration{}
	pages := lambda.NewListFunctionsPaginator(d.moto.lambda(), &lambda.ListFunctionsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("ListFunctions: %v", err)
		}
		for _, f := range page.Functions {
			d.functions[aws.ToString(f.FunctionName)] = f
		}
	}
	region, account := motoRegion, d.account
	for id, r := range d.resources {
		name := aws.ToString(r.PhysicalResourceId)
		switch aws.ToString(r.ResourceType) {
		case "AWS::IAM::Role":
			d.attrs[id+".Arn"] = "arn:aws:iam::" + account + ":role/" + name
		case "AWS::Lambda::Function":
			d.attrs[id+".Arn"] = aws.ToString(d.functions[name].FunctionArn)
		case "AWS::SQS::Queue":
			d.attrs[id+".Arn"] = "arn:aws:sqs:" + region + ":" + account + ":" + name[strings.LastIndex(name, "/")+1:]
		case "AWS::Logs::LogGroup":
			d.attrs[id+".Arn"] = "arn:aws:logs:" + region + ":" + account + ":log-group:" + name + ":*"
		case "AWS::S3::Bucket":
			d.attrs[id+".Arn"] = "arn:aws:s3:::" + name
		case "AWS::Events::Rule":
			d.attrs[id+".Arn"] = "arn:aws:events:" + region + ":" + account + ":rule/" + name
		case "AWS::StepFunctions::StateMachine":
			d.attrs[id+".Arn"] = name
		case "AWS::DynamoDB::Table":
			out, err := d.moto.dynamodb().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
			if err != nil {
				t.Fatalf("DescribeTable %s: %v", name, err)
			}
			d.attrs[id+".Arn"], d.attrs[id+".StreamArn"] = aws.ToString(out.Table.TableArn), aws.ToString(out.Table.LatestStreamArn)
		}
	}
}

// cdkBootstrapVersion is the version of the CDK bootstrap stack the moto
// bootstrap claims to be: the template's CheckBootstrapVersion rule needs
// 6 or later (moto does not evaluate rules).
const cdkBootstrapVersion = "30"

// assetBody is an asset as published: a directory zipped (its files stored
// with their modes, as the CDK CLI zips them, uncompressed here since only
// moto reads them), a file as it is.
func assetBody(path, packaging string) ([]byte, error) {
	switch packaging {
	case "file", "":
		return os.ReadFile(path)
	case "zip":
	default:
		return nil, fmt.Errorf("packaging %q: the test publishes zip and file assets only", packaging)
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	err := filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		h, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		h.Name, h.Method = filepath.ToSlash(rel), zip.Store
		w, err := z.CreateHeader(h)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// motoCopy is moto's copy of the template: the resources of
// motoUnsupported types left out and every reference to them replaced by
// its stand-in, then motoAdaptations applied. It returns what it changed.
func motoCopy(t *testing.T, template map[string]any, stack string) (map[string]any, []string) {
	t.Helper()
	var copied map[string]any
	b, _ := json.Marshal(template)
	json.Unmarshal(b, &copied)
	resources := copied["Resources"].(map[string]any)
	left := map[string]string{} // logical id -> type
	for id, r := range resources {
		if typ := r.(map[string]any)["Type"].(string); motoUnsupported[typ] != "" {
			left[id] = typ
			delete(resources, id)
		}
	}
	var replace func(v any) any
	replace = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			if id, ok := v["Ref"].(string); ok && len(v) == 1 && left[id] != "" {
				return motoStandIn(id, "")
			}
			if ga, ok := v["Fn::GetAtt"].([]any); ok && len(v) == 1 && len(ga) == 2 && left[fmt.Sprint(ga[0])] != "" {
				return motoStandIn(fmt.Sprint(ga[0]), fmt.Sprint(ga[1]))
			}
			for k, x := range v {
				v[k] = replace(x)
			}
		case []any:
			for i, x := range v {
				v[i] = replace(x)
			}
		}
		return v
	}
	var notes []string
	referring := map[string]int{} // by type
	for _, r := range resources {
		r := r.(map[string]any)
		before := js(r)
		for k, v := range r {
			if k != "DependsOn" {
				r[k] = replace(v)
			}
		}
		if deps, ok := r["DependsOn"].([]any); ok {
			r["DependsOn"] = slices.DeleteFunc(deps, func(d any) bool { return left[fmt.Sprint(d)] != "" })
		} else if dep, ok := r["DependsOn"].(string); ok && left[dep] != "" {
			delete(r, "DependsOn")
		}
		if js(r) != before {
			referring[r["Type"].(string)]++
		}
	}
	if o, ok := copied["Outputs"]; ok {
		copied["Outputs"] = replace(o)
	}
	byType := map[string]int{}
	for _, typ := range left {
		byType[typ]++
	}
	types := make([]string, 0, len(byType))
	for typ := range byType {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		notes = append(notes, fmt.Sprintf("left out %d %s: %s", byType[typ], typ, motoUnsupported[typ]))
	}
	if len(referring) > 0 {
		var in []string
		for typ, n := range referring {
			in = append(in, fmt.Sprintf("%d %s", n, typ))
		}
		sort.Strings(in)
		notes = append(notes, "stand-ins (moto-unsupported-<id>[.<attribute>]) for the references to them in "+strings.Join(in, ", ")+" and in the outputs")
	}
	for typ := range motoUnsupported {
		if byType[typ] == 0 {
			t.Errorf("motoUnsupported lists %s, which the template no longer has: remove it", typ)
		}
	}
	for _, a := range motoAdaptations {
		var changed []string
		for id, r := range resources {
			if a.apply(stack, id, r.(map[string]any)) {
				changed = append(changed, id)
			}
		}
		sort.Strings(changed)
		if len(changed) > 0 {
			notes = append(notes, fmt.Sprintf("%s (%s): %s", a.name, strings.Join(changed, ", "), a.reason))
		}
	}
	return copied, notes
}

// waitForStack polls the stack until it is no longer in progress and
// returns it, or fails the test (with the stack's failed events) unless its
// status is want.
func waitForStack(ctx context.Context, t *testing.T, cfn *cloudformation.Client, stack string, want cfntypes.StackStatus) *cfntypes.Stack {
	t.Helper()
	within := testenv.Scaled(60 * time.Second)
	deadline := time.Now().Add(within)
	for {
		out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
		if err != nil {
			t.Fatalf("DescribeStacks: %v", err)
		}
		if len(out.Stacks) != 1 {
			t.Fatalf("DescribeStacks %s: %d stacks", stack, len(out.Stacks))
		}
		st := out.Stacks[0]
		if !strings.HasSuffix(string(st.StackStatus), "_IN_PROGRESS") {
			if st.StackStatus != want {
				t.Errorf("stack %s is %s (%s), want %s%s", stack, st.StackStatus, aws.ToString(st.StackStatusReason), want, failedEvents(ctx, cfn, stack))
				return nil
			}
			return &st
		}
		if time.Now().After(deadline) {
			t.Fatalf("stack %s is still %s after %s%s", stack, st.StackStatus, within, failedEvents(ctx, cfn, stack))
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// failedEvents are the stack's events that failed, as lines.
func failedEvents(ctx context.Context, cfn *cloudformation.Client, stack string) string {
	out, err := cfn.DescribeStackEvents(ctx, &cloudformation.DescribeStackEventsInput{StackName: aws.String(stack)})
	if err != nil {
		return "; DescribeStackEvents: " + err.Error()
	}
	var b strings.Builder
	for _, e := range out.StackEvents {
		if strings.HasSuffix(string(e.ResourceStatus), "_FAILED") {
			fmt.Fprintf(&b, "\n  %s %s %s: %s", aws.ToString(e.LogicalResourceId), aws.ToString(e.ResourceType), e.ResourceStatus, aws.ToString(e.ResourceStatusReason))
		}
	}
	return b.String()
}

// resourcesOf are the resources of a template by logical id.
func resourcesOf(template map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range template["Resources"].(map[string]any) {
		out[id] = r.(map[string]any)
	}
	return out
}

// physical is the physical id of a deployed resource (what Ref gives).
func (d *deployment) physical(t *testing.T, logicalID string) string {
	t.Helper()
	r, ok := d.resources[logicalID]
	if !ok {
		t.Fatalf("%s is not a resource of the deployed stack", logicalID)
	}
	return aws.ToString(r.PhysicalResourceId)
}

// resolve evaluates what a value of the template becomes in moto's
// deployment: strings, Refs of deployed resources (their physical ids) and
// of pseudo parameters, stand-ins of what moto lacks, Fn::Join of those.
// An attribute of a deployed resource is known where loadAttrs read it;
// what is unknown gives false.
func (d *deployment) resolve(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case map[string]any:
		if id, ok := v["Ref"].(string); ok {
			switch id {
			case "AWS::Region":
				return motoRegion, true
			case "AWS::AccountId":
				return d.account, true
			case "AWS::Partition":
				return "aws", true
			case "AWS::URLSuffix":
				return "amazonaws.com", true
			case "AWS::StackName":
				return d.stack, true
			}
			if r, ok := d.resources[id]; ok {
				return aws.ToString(r.PhysicalResourceId), true
			}
			if motoUnsupported[typeOf(d.template, id)] != "" {
				return motoStandIn(id, ""), true
			}
			return "", false
		}
		if ga, ok := v["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
			id, attr := fmt.Sprint(ga[0]), fmt.Sprint(ga[1])
			if motoUnsupported[typeOf(d.template, id)] != "" {
				return motoStandIn(id, attr), true
			}
			s, ok := d.attrs[id+"."+attr]
			return s, ok
		}
		if j, ok := v["Fn::Join"].([]any); ok && len(j) == 2 {
			sep, _ := j[0].(string)
			parts, _ := j[1].([]any)
			var out []string
			for _, p := range parts {
				s, ok := d.resolve(p)
				if !ok {
					return "", false
				}
				out = append(out, s)
			}
			return strings.Join(out, sep), true
		}
	}
	return "", false
}

// typeOf is the type of a template's resource ("" when there is none).
func typeOf(template map[string]any, logicalID string) string {
	r, _ := template["Resources"].(map[string]any)[logicalID].(map[string]any)
	typ, _ := r["Type"].(string)
	return typ
}

// checkStack: every resource of the template is in the stack, created, of
// its type (or of a type moto lacks), and every output the stack declares
// has the value its expression gives in this deployment.
func (d *deployment) checkStack(ctx context.Context, t *testing.T) {
	out, err := d.moto.cloudFormation().DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(d.stack)})
	if err != nil {
		t.Fatal(err)
	}
	if st := out.Stacks[0].StackStatus; st != cfntypes.StackStatusCreateComplete {
		t.Errorf("stack status %s, want CREATE_COMPLETE", st)
	}
	counts := map[string]int{}
	var leftOut int
	for id, r := range resourcesOf(d.template) {
		typ := r["Type"].(string)
		got, deployed := d.resources[id]
		switch {
		case motoUnsupported[typ] != "":
			leftOut++
			if deployed {
				t.Errorf("%s (%s) is in the stack, though moto's copy of the template leaves out %s", id, typ, typ)
			}
		case !deployed:
			t.Errorf("%s (%s) is not in the stack: if moto does not implement %s, add it to motoUnsupported with what the deployment then lacks", id, typ, typ)
		case aws.ToString(got.ResourceType) != typ:
			t.Errorf("%s is a %s in the stack, a %s in the template", id, aws.ToString(got.ResourceType), typ)
		case got.ResourceStatus != cfntypes.ResourceStatusCreateComplete:
			t.Errorf("%s (%s) is %s", id, typ, got.ResourceStatus)
		case aws.ToString(got.PhysicalResourceId) == "" && typ == "AWS::Lambda::Permission":
			counts[typ]++
			d.gap(t, "Permission", "moto gives a Lambda permission no physical id (the permissions are checked in the functions' policies)")
		case aws.ToString(got.PhysicalResourceId) == "":
			t.Errorf("%s (%s) has no physical id", id, typ)
		default:
			counts[typ]++
		}
	}
	for id := range d.resources {
		if typeOf(d.template, id) == "" {
			t.Errorf("the stack has %s, which the template does not declare", id)
		}
	}
	types := make([]string, 0, len(counts))
	for typ := range counts {
		types = append(types, fmt.Sprintf("%d %s", counts[typ], typ))
	}
	sort.Strings(types)
	t.Logf("created: %s; left out (motoUnsupported): %d", strings.Join(types, ", "), leftOut)

	declared := d.template["Outputs"].(map[string]any)
	for _, name := range []string{OutApiURL, OutWebhookURL, OutTableName, OutStateMachineARN, OutBulkBucket, OutJobStateMachineARN, OutDeliverQueueURL, OutDeliverDLQURL} {
		if declared[name] == nil {
			t.Errorf("the template has no output %s", name)
		}
	}
	for name, o := range declared {
		got, ok := d.outputs[name]
		if !ok {
			t.Errorf("output %s is missing from the stack", name)
			continue
		}
		if want, known := d.resolve(o.(map[string]any)["Value"]); !known {
			if got == "" {
				t.Errorf("output %s is empty", name)
			}
		} else if got != want {
			t.Errorf("output %s = %q, want %q", name, got, want)
		}
	}
	for name := range d.outputs {
		if declared[name] == nil {
			t.Errorf("the stack has output %s, which the template does not declare", name)
		}
	}
	if t.Failed() {
		return
	}
	if d.outputs[OutTableName] != d.physical(t, d.tableID(t)) {
		t.Errorf("output %s = %q, not the table's name %q", OutTableName, d.outputs[OutTableName], d.physical(t, d.tableID(t)))
	}
}

// tableID is the logical id of the template's one table.
func (d *deployment) tableID(t *testing.T) string {
	t.Helper()
	var ids []string
	for id, r := range resourcesOf(d.template) {
		if r["Type"] == "AWS::DynamoDB::Table" {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("the template has %d tables, want 1", len(ids))
	}
	return ids[0]
}

// checkTable: the deployed table has the keys, attributes, indexes, billing
// and stream the template declares; its TTL and point-in-time recovery as
// well, except where moto is known to ignore them (reported).
func (d *deployment) checkTable(ctx context.Context, t *testing.T) {
	id := d.tableID(t)
	props := resourcesOf(d.template)[id]["Properties"].(map[string]any)
	name := d.physical(t, id)
	db := d.moto.dynamodb()
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	tbl := out.Table
	if tbl.TableStatus != ddbtypes.TableStatusActive {
		t.Errorf("table status %s", tbl.TableStatus)
	}
	keys := func(ks []ddbtypes.KeySchemaElement) string {
		var s []string
		for _, k := range ks {
			s = append(s, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
		}
		return strings.Join(s, ", ")
	}
	tkeys := func(v any) string {
		var s []string
		for _, k := range v.([]any) {
			k := k.(map[string]any)
			s = append(s, fmt.Sprint(k["AttributeName"])+" "+fmt.Sprint(k["KeyType"]))
		}
		return strings.Join(s, ", ")
	}
	if got, want := keys(tbl.KeySchema), tkeys(props["KeySchema"]); got != want {
		t.Errorf("key schema %s, want %s", got, want)
	}
	var gotAttrs, wantAttrs []string
	for _, a := range tbl.AttributeDefinitions {
		gotAttrs = append(gotAttrs, aws.ToString(a.AttributeName)+" "+string(a.AttributeType))
	}
	for _, a := range props["AttributeDefinitions"].([]any) {
		a := a.(map[string]any)
		wantAttrs = append(wantAttrs, fmt.Sprint(a["AttributeName"])+" "+fmt.Sprint(a["AttributeType"]))
	}
	sort.Strings(gotAttrs)
	sort.Strings(wantAttrs)
	if !slices.Equal(gotAttrs, wantAttrs) {
		t.Errorf("attributes %v, want %v", gotAttrs, wantAttrs)
	}
	gotGSIs, wantGSIs := map[string]string{}, map[string]string{}
	for _, g := range tbl.GlobalSecondaryIndexes {
		gotGSIs[aws.ToString(g.IndexName)] = keys(g.KeySchema) + "; projection " + string(g.Projection.ProjectionType)
	}
	for _, g := range props["GlobalSecondaryIndexes"].([]any) {
		g := g.(map[string]any)
		wantGSIs[fmt.Sprint(g["IndexName"])] = tkeys(g["KeySchema"]) + "; projection " + fmt.Sprint(g["Projection"].(map[string]any)["ProjectionType"])
	}
	if js(gotGSIs) != js(wantGSIs) {
		t.Errorf("global secondary indexes %s, want %s", js(gotGSIs), js(wantGSIs))
	}
	if len(wantGSIs) != len(store.Indexes) {
		t.Errorf("the template declares %d indexes, the store uses %d", len(wantGSIs), len(store.Indexes))
	}
	if tbl.BillingModeSummary == nil || string(tbl.BillingModeSummary.BillingMode) != props["BillingMode"] {
		t.Errorf("billing mode %s, want %v", js(tbl.BillingModeSummary), props["BillingMode"])
	}
	stream := props["StreamSpecification"].(map[string]any)
	if s := tbl.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) || string(s.StreamViewType) != stream["StreamViewType"] || aws.ToString(tbl.LatestStreamArn) == "" {
		t.Errorf("stream %s (latest %q), want %v enabled", js(s), aws.ToString(tbl.LatestStreamArn), stream["StreamViewType"])
	}
	if want, _ := props["DeletionProtectionEnabled"].(bool); aws.ToBool(tbl.DeletionProtectionEnabled) != want {
		t.Errorf("deletion protection %v, want %v", aws.ToBool(tbl.DeletionProtectionEnabled), want)
	}

	// TTL: the template's, on the store's attribute.
	ttlSpec, _ := props["TimeToLiveSpecification"].(map[string]any)
	if ttlSpec["AttributeName"] != store.AttrExpires || ttlSpec["Enabled"] != true {
		t.Errorf("the template's TimeToLiveSpecification is %s, want %s enabled", js(ttlSpec), store.AttrExpires)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	switch desc := ttl.TimeToLiveDescription; desc.TimeToLiveStatus {
	case ddbtypes.TimeToLiveStatusEnabled, ddbtypes.TimeToLiveStatusEnabling:
		if aws.ToString(desc.AttributeName) != ttlSpec["AttributeName"] {
			t.Errorf("TTL on %q, want %v", aws.ToString(desc.AttributeName), ttlSpec["AttributeName"])
		}
	case ddbtypes.TimeToLiveStatusDisabled:
		d.gap(t, "TTL", "TTL is DISABLED: moto's CloudFormation ignores TimeToLiveSpecification (the dev server enables it on %s at start: checked in service)", store.AttrExpires)
	default:
		t.Errorf("TTL %s", js(desc))
	}
	pitr, _ := props["PointInTimeRecoverySpecification"].(map[string]any)
	backups, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	got := ddbtypes.PointInTimeRecoveryStatusDisabled
	if p := backups.ContinuousBackupsDescription.PointInTimeRecoveryDescription; p != nil {
		got = p.PointInTimeRecoveryStatus
	}
	if want := pitr["PointInTimeRecoveryEnabled"] == true; want != (got == ddbtypes.PointInTimeRecoveryStatusEnabled) {
		if want {
			d.gap(t, "PITR", "point-in-time recovery is %s: moto's CloudFormation ignores PointInTimeRecoverySpecification", got)
		} else {
			t.Errorf("point-in-time recovery %s, the template does not enable it", got)
		}
	}
}

// checkFunctions: every function is deployed as the template declares it:
// its code the published asset (CodeSha256), runtime, handler, memory,
// timeout, role, reserved concurrency, and an environment whose every value
// is what its expression gives in this deployment (TABLE_NAME the deployed
// table's name, the queues' URLs, the state machines' ARNs...); its
// resource policy holds the template's permissions, and the event source
// mappings connect the functions the template connects.
func (d *deployment) checkFunctions(ctx context.Context, t *testing.T) {
	lc := d.moto.lambda()
	table := d.physical(t, d.tableID(t))
	n, withTable := 0, 0
	resources := resourcesOf(d.template)
	for id, r := range resources {
		if r["Type"] != "AWS::Lambda::Function" {
			continue
		}
		n++
		props := r["Properties"].(map[string]any)
		f, ok := d.functions[d.physical(t, id)]
		if !ok {
			t.Errorf("function %s (%s) is not in moto's Lambda", id, d.physical(t, id))
			continue
		}
		key, _ := props["Code"].(map[string]any)["S3Key"].(string)
		if want := d.codeSHA256[key]; want == "" || aws.ToString(f.CodeSha256) != want {
			t.Errorf("%s: CodeSha256 %s, want %s, the published asset %s", id, aws.ToString(f.CodeSha256), want, key)
		}
		for _, c := range []struct {
			name string
			got  any
		}{
			{"Runtime", string(f.Runtime)}, {"Handler", aws.ToString(f.Handler)}, {"MemorySize", f.MemorySize},
			{"Timeout", f.Timeout}, {"Description", aws.ToString(f.Description)}, {"Role", aws.ToString(f.Role)},
		} {
			want, known := d.resolve(props[c.name])
			if !known {
				want = js(props[c.name])
			}
			if got := strings.Trim(js(c.got), `"`); got != want {
				t.Errorf("%s: %s %s, want %s", id, c.name, got, want)
			}
		}
		if want, ok := props["ReservedConcurrentExecutions"]; ok {
			out, err := lc.GetFunctionConcurrency(ctx, &lambda.GetFunctionConcurrencyInput{FunctionName: f.FunctionName})
			if err != nil || js(out.ReservedConcurrentExecutions) != js(want) {
				t.Errorf("%s: reserved concurrency %v (%v), want %v", id, out, err, want)
			}
		}
		var got map[string]string
		if f.Environment != nil {
			got = f.Environment.Variables
		}
		vars, _ := props["Environment"].(map[string]any)["Variables"].(map[string]any)
		for k, v := range vars {
			want, known := d.resolve(v)
			switch {
			case !known && got[k] == "":
				t.Errorf("%s: %s is empty, the template sets it to %s", id, k, js(v))
			case known && got[k] != want:
				t.Errorf("%s: %s = %q, want %q", id, k, got[k], want)
			}
		}
		if len(got) != len(vars) {
			t.Errorf("%s: %d environment variables, the template sets %d", id, len(got), len(vars))
		}
		if got[service.EnvTable] == table {
			withTable++
		}
		if arch := fmt.Sprint(props["Architectures"]); fmt.Sprint(f.Architectures) != arch {
			d.gap(t, "Architectures", "moto's CloudFormation drops a function's Architectures (its functions are %v; the template's %s)", f.Architectures, arch)
		}
	}
	if n == 0 || withTable != n {
		t.Errorf("%d of %d functions have %s = %s", withTable, n, service.EnvTable, table)
	}

	// The permissions, in each function's resource policy.
	want, got := map[string][]string{}, map[string][]string{}
	for id, r := range resources {
		if r["Type"] != "AWS::Lambda::Permission" {
			continue
		}
		props := r["Properties"].(map[string]any)
		fn, ok := d.resolve(props["FunctionName"])
		if !ok {
			t.Errorf("%s: cannot resolve its FunctionName %s", id, js(props["FunctionName"]))
			continue
		}
		source, _ := d.resolve(props["SourceArn"])
		want[functionName(fn)] = append(want[functionName(fn)], fmt.Sprintf("%v %v %s", props["Action"], props["Principal"], source))
	}
	for name := range want {
		out, err := lc.GetPolicy(ctx, &lambda.GetPolicyInput{FunctionName: aws.String(name)})
		if err != nil {
			t.Errorf("the policy of %s: %v", name, err)
			continue
		}
		var policy struct {
			Statement []struct {
				Action    string
				Principal any
				Condition map[string]map[string]string
			}
		}
		if err := json.Unmarshal([]byte(aws.ToString(out.Policy)), &policy); err != nil {
			t.Errorf("the policy of %s: %v", name, err)
			continue
		}
		for _, st := range policy.Statement {
			principal := st.Principal
			if m, ok := principal.(map[string]any); ok && len(m) == 1 && m["Service"] != nil {
				principal = m["Service"]
			}
			got[name] = append(got[name], fmt.Sprintf("%v %v %s", st.Action, principal, st.Condition["ArnLike"]["AWS:SourceArn"]))
		}
	}
	for name := range want {
		sort.Strings(want[name])
		sort.Strings(got[name])
		if !slices.Equal(got[name], want[name]) {
			t.Errorf("the policy of %s allows\n  %s\nwant\n  %s", name, strings.Join(got[name], "\n  "), strings.Join(want[name], "\n  "))
		}
	}

	// The event source mappings.
	var wantESM, gotESM []string
	for id, r := range resources {
		if r["Type"] != "AWS::Lambda::EventSourceMapping" {
			continue
		}
		props := r["Properties"].(map[string]any)
		fn, ok1 := d.resolve(props["FunctionName"])
		source, ok2 := d.resolve(props["EventSourceArn"])
		if !ok1 || !ok2 {
			t.Errorf("%s: cannot resolve its function or source: %s", id, js(props))
			continue
		}
		wantESM = append(wantESM, fmt.Sprintf("%s <- %s (batch %v)", functionName(fn), source, props["BatchSize"]))
	}
	pages := lambda.NewListEventSourceMappingsPaginator(lc, &lambda.ListEventSourceMappingsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.EventSourceMappings {
			gotESM = append(gotESM, fmt.Sprintf("%s <- %s (batch %d)", functionName(aws.ToString(m.FunctionArn)), aws.ToString(m.EventSourceArn), aws.ToInt32(m.BatchSize)))
		}
	}
	sort.Strings(wantESM)
	sort.Strings(gotESM)
	if !slices.Equal(gotESM, wantESM) {
		t.Errorf("event source mappings\n  %s\nwant\n  %s", strings.Join(gotESM, "\n  "), strings.Join(wantESM, "\n  "))
	}
	t.Logf("%d functions deployed with their published code, settings, role and environment (%s the deployed table in each); "+
		"%d permissions in their policies; %d event source mappings", n, service.EnvTable, len(slices.Concat(slices.Collect(maps.Values(want))...)), len(wantESM))
}

// functionName is the name of a function from its name or ARN.
func functionName(nameOrARN string) string {
	if i := strings.LastIndex(nameOrARN, ":function:"); i >= 0 {
		return nameOrARN[i+len(":function:"):]
	}
	return nameOrARN
}

// gap reports a difference between the template and moto's deployment
// that is moto's own (docs/deployment.md lists them), once per kind.
func (d *deployment) gap(t *testing.T, kind, format string, args ...any) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gaps[kind] {
		return
	}
	d.gaps[kind] = true
	t.Logf("moto gap: "+format, args...)
}

// checkStateMachines: each state machine's definition, as moto resolved
// it, is JSON whose every Task resource is a deployed function.
func (d *deployment) checkStateMachines(ctx context.Context, t *testing.T) {
	arns := map[string]bool{}
	for _, f := range d.functions {
		arns[aws.ToString(f.FunctionArn)] = true
	}
	n := 0
	for id, r := range resourcesOf(d.template) {
		if r["Type"] != "AWS::StepFunctions::StateMachine" {
			continue
		}
		n++
		out, err := d.moto.sfn().DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(d.physical(t, id))})
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		var def any
		if err := json.Unmarshal([]byte(aws.ToString(out.Definition)), &def); err != nil {
			t.Errorf("%s: the deployed definition is not JSON: %v\n%s", id, err, aws.ToString(out.Definition))
			continue
		}
		var tasks []string
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if v["Type"] == "Task" {
					tasks = append(tasks, fmt.Sprint(v["Resource"]))
				}
				for _, x := range v {
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(def)
		if len(tasks) == 0 {
			t.Errorf("%s: the deployed definition has no Task state", id)
		}
		for _, res := range tasks {
			if !arns[res] {
				t.Errorf("%s: a Task's resource %q is no deployed function", id, res)
			}
		}
	}
	if n == 0 {
		t.Error("the template has no state machine")
	}
}

// checkDelete: the dev stage is destroyable: the stack deletes, its table
// with it.
func (d *deployment) checkDelete(ctx context.Context, t *testing.T) {
	cfn := d.moto.cloudFormation()
	table := d.physical(t, d.tableID(t))
	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(d.stack)}); err != nil {
		t.Fatal(err)
	}
	within := testenv.Scaled(30 * time.Second)
	deadline := time.Now().Add(within)
	for {
		out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(d.stack)})
		status := cfntypes.StackStatusDeleteComplete
		if err == nil && len(out.Stacks) == 1 {
			status = out.Stacks[0].StackStatus
		}
		if status == cfntypes.StackStatusDeleteComplete {
			break
		}
		if !strings.HasSuffix(string(status), "_IN_PROGRESS") || time.Now().After(deadline) {
			t.Fatalf("stack %s is %s after DeleteStack (waited up to %s)%s", d.stack, status, within, failedEvents(ctx, cfn, d.stack))
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, err := d.moto.dynamodb().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var missing *ddbtypes.ResourceNotFoundException
	if !errors.As(err, &missing) {
		t.Errorf("after the dev stack's deletion DescribeTable %s answered %v, want ResourceNotFoundException", table, err)
	}
}

// serviceBinaries are the admin CLI and the dev server, built from the
// repository's root.
type serviceBinaries struct{ admin, devserver string }

// buildServiceBinaries starts building the admin CLI and the dev server and
// returns a function that waits for them (failing the test if the build
// failed).
func buildServiceBinaries(t *testing.T) func() serviceBinaries {
	dir := t.TempDir()
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/admin", "./cmd/devserver")
		cmd.Dir = ".."
		cmd.Stdout, cmd.Stderr = &out, &out
		done <- cmd.Run()
	}()
	var once sync.Once
	var err error
	// The build ends before its directory is removed, whatever the test did.
	t.Cleanup(func() { once.Do(func() { err = <-done }) })
	return func() serviceBinaries {
		once.Do(func() { err = <-done })
		if err != nil {
			t.Fatalf("go build ./cmd/admin ./cmd/devserver: %v\n%s", err, out.String())
		}
		return serviceBinaries{admin: filepath.Join(dir, "admin"), devserver: filepath.Join(dir, "devserver")}
	}
}

// serviceEnv is the environment of the admin CLI and the dev server on the
// deployed table: moto's DynamoDB, dummy credentials.
func (d *deployment) serviceEnv(t *testing.T) []string {
	return append(processEnv(),
		"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing", "AWS_REGION="+motoRegion,
		"AWS_ENDPOINT_URL_DYNAMODB="+d.moto.endpoint,
		service.EnvTable+"="+d.physical(t, d.tableID(t)))
}

// admin runs a command of the admin CLI on the deployed table and decodes
// its JSON output into out.
func (d *deployment) admin(ctx context.Context, t *testing.T, bin string, out any, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = d.serviceEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("admin %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("admin %s printed no JSON (%v): %s", strings.Join(args, " "), err, stdout.String())
	}
}

// devServer is a running dev server.
type devServer struct {
	url string
	log string
}

// servingLine is the dev server's banner line naming its URL.
var servingLine = regexp.MustCompile(`Sourcebase is serving on (http://\S+)`)

// startDevServer starts the dev server on the deployed table, on a free
// port; it is stopped by its process id (SIGTERM, then SIGKILL) when the
// test ends.
func (d *deployment) startDevServer(t *testing.T, bin string) *devServer {
	t.Helper()
	s := &devServer{log: filepath.Join(t.TempDir(), "devserver.log")}
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = ".." // as make run starts it: the docs page finds its bundle
	cmd.Env = append(d.serviceEnv(t), "PORT=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start the dev server: %v", err)
	}
	urls := make(chan string, 1)
	var banner bytes.Buffer
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			banner.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		defer logf.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(testenv.Scaled(10 * time.Second)):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("the dev server's log ends with:\n%s", testenv.Tail(s.log, 40))
		}
	})
	within := testenv.Scaled(30 * time.Second)
	select {
	case s.url = <-urls:
		return s
	case err := <-exited:
		exited <- err
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the dev server exited at start (%v): %s\n%s", err, banner.String(), testenv.Tail(s.log, 20))
	case <-time.After(within):
		t.Fatalf("the dev server did not serve within %s", within)
	}
	return nil
}
