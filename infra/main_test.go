package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/dev/lambdafront"
)

// testAssets holds <name>/bootstrap for every function, built by TestMain
// as `make build` builds them (the Go build cache makes it fast after the
// first time).
var testAssets string

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra tests:", err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "sourcebase-infra-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	testAssets = filepath.Join(dir, "lambda")
	if err := lambdafront.BuildBootstraps("..", testAssets, "arm64"); err != nil { // as make build builds them
		return 0, err
	}
	defer jsii.Close()
	return m.Run(), nil
}

// synthesized is one stage's stack, synthesized once per test binary.
type synthesized struct {
	stack       *Stack
	template    assertions.Template
	annotations assertions.Annotations
	t           template
	outdir      string // the cloud assembly's directory, where assets are staged
}

var (
	synthMu sync.Mutex
	synths  = map[string]*synthesized{}
)

// synth synthesizes the app with the given context (the test assets are
// added) as `cdk synth` does: main's build, cdk-nag included.
func synth(t *testing.T, ctx map[string]string) *synthesized {
	t.Helper()
	ctx["assets"] = testAssets
	b, _ := json.Marshal(ctx)
	synthMu.Lock()
	defer synthMu.Unlock()
	if s, ok := synths[string(b)]; ok {
		return s
	}
	// The context of cdk.json first (the feature flags), as the CLI.
	var cdkJSON struct{ Context map[string]any }
	if b, err := os.ReadFile("cdk.json"); err != nil || json.Unmarshal(b, &cdkJSON) != nil {
		t.Fatalf("read cdk.json: %v", err)
	}
	c := map[string]any{}
	maps.Copy(c, cdkJSON.Context)
	for k, v := range ctx {
		c[k] = v
	}
	// The CLI asks for the assets' paths in the resources' metadata.
	c["aws:cdk:enable-asset-metadata"] = true
	out, err := os.MkdirTemp(filepath.Dir(testAssets), "cdk.out-")
	if err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &c, Outdir: jsii.String(out)})
	st, err := build(app)
	if err != nil {
		t.Fatal(err)
	}
	s := &synthesized{stack: st, template: assertions.Template_FromStack(st.Stack, nil), annotations: assertions.Annotations_FromStack(st.Stack), outdir: out}
	raw, _ := json.Marshal(s.template.ToJSON())
	if err := json.Unmarshal(raw, &s.t); err != nil {
		t.Fatal(err)
	}
	s.t.raw = string(raw)
	synths[string(b)] = s
	return s
}

// stages synthesizes dev and prod for f.
func stages(t *testing.T, f func(t *testing.T, s *synthesized)) {
	for _, stage := range Stages {
		t.Run(string(stage), func(t *testing.T) { f(t, synth(t, map[string]string{CtxStage: string(stage)})) })
	}
	// prod searching with OpenSearch: the collection, the stream and the
	// indexer are there too.
	t.Run("prod-opensearch", func(t *testing.T) {
		f(t, synth(t, map[string]string{CtxStage: string(Prod), CtxSearch: deploymodel.Default().SearchEngines.OpenSearch}))
	})
}

// template is a synthesized CloudFormation template.
type template struct {
	Resources map[string]resource
	Outputs   map[string]struct {
		Value any
	}
	raw string
}

type resource struct {
	Type                string
	Properties          map[string]any
	DeletionPolicy      string
	UpdateReplacePolicy string
	DependsOn           any
	Metadata            map[string]any
}

// ofType returns the logical ids and resources of type typ.
func (t template) ofType(typ string) map[string]resource {
	out := map[string]resource{}
	for id, r := range t.Resources {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// logicalID is the logical id of the CloudFormation resource of a construct.
func (s *synthesized) logicalID(c interface{ Node() constructs.Node }) string {
	el, ok := c.(awscdk.CfnElement) // a CloudFormation resource itself
	if !ok {
		el, ok = c.Node().DefaultChild().(awscdk.CfnElement)
	}
	if !ok {
		panic(fmt.Sprintf("%s has no CloudFormation resource", *c.Node().Path()))
	}
	return *s.stack.Stack.GetLogicalId(el)
}

// jsonEqual compares two values as JSON.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ref and getAtt are CloudFormation expressions as they appear in the template.
func ref(id string) any { return map[string]any{"Ref": id} }
func getAtt(id, attr string) any {
	return map[string]any{"Fn::GetAtt": []any{id, attr}}
}

// fnJoin resolves an Fn::Join of strings and the expressions resolve maps
// to strings; anything else fails the test.
func fnJoin(t *testing.T, v any, resolve func(expr any) (string, bool)) string {
	t.Helper()
	if s, ok := v.(string); ok {
		return s
	}
	if s, ok := resolve(v); ok {
		return s
	}
	m, ok := v.(map[string]any)
	join, ok2 := m["Fn::Join"].([]any)
	if !ok || !ok2 || len(join) != 2 || join[0] != "" {
		t.Fatalf("not a string or an Fn::Join: %s", js(v))
	}
	var b strings.Builder
	for _, part := range join[1].([]any) {
		b.WriteString(fnJoin(t, part, resolve))
	}
	return b.String()
}

// deployed are the functions of the synthesized stack.
func (s *synthesized) deployed() []deploymodel.Function { return s.stack.deployed() }
