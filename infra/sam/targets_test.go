package main

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/store"
)

// samconfig is the part of samconfig.toml the tests read.
type samconfig struct {
	Version float64
	Dev     map[string]section
	Local   map[string]section
}

type section struct {
	Parameters map[string]any
}

func readSamconfig(t *testing.T) samconfig {
	t.Helper()
	var c samconfig
	md, err := toml.Decode(string(readFile(t, "samconfig.toml")), &c)
	if err != nil {
		t.Fatalf("samconfig.toml: %v", err)
	}
	for _, k := range md.Undecoded() {
		if top := k[0]; top != "dev" && top != "local" {
			t.Errorf("samconfig.toml: unexpected key %v", k)
		}
	}
	return c
}

func TestSamconfigNamesTheTemplateAndHasADevAndALocalEnvironment(t *testing.T) {
	c := readSamconfig(t)
	if c.Version != 0.1 {
		t.Errorf("version = %v, want 0.1", c.Version)
	}
	for env, cmds := range map[string]map[string]section{"dev": c.Dev, "local": c.Local} {
		if got := cmds["build"].Parameters["template_file"]; got != TemplatePath {
			t.Errorf("%s build template_file = %v, want %s", env, got, TemplatePath)
		}
		if cmds["build"].Parameters["build_in_source"] != true {
			t.Errorf("%s build: want build_in_source (sam runs the Makefile in the repository)", env)
		}
	}
	deploy := c.Dev["deploy"].Parameters
	if c.Dev["global"].Parameters["stack_name"] == nil || deploy["capabilities"] != "CAPABILITY_IAM" || deploy["resolve_s3"] != true {
		t.Errorf("dev deploy: want a stack name, CAPABILITY_IAM and resolve_s3: %v %v", c.Dev["global"].Parameters, deploy)
	}
	if _, ok := deploy["template_file"]; ok {
		t.Error("dev deploy names a template: sam deploy must take the built one (.aws-sam/build/template.yaml)")
	}
	for _, cmd := range []string{"local_start_api", "local_invoke"} {
		p := c.Local[cmd].Parameters
		if p["env_vars"] != LocalEnvPath {
			t.Errorf("local %s env_vars = %v, want %s", cmd, p["env_vars"], LocalEnvPath)
		}
		if want := DynamoDBEndpointParam + "=" + LocalDynamoDBFromContainer; p["parameter_overrides"] != want {
			t.Errorf("local %s parameter_overrides = %v, want %s", cmd, p["parameter_overrides"], want)
		}
	}
	if p := c.Local["local_start_api"].Parameters["port"]; p != int64(LocalAPIPort) {
		t.Errorf("local start-api port %v, want %d", p, LocalAPIPort)
	}
	// No account or region: they come from the deployer's AWS profile.
	text := string(readFile(t, "samconfig.toml"))
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, banned := range []string{"region", "profile", "123456789012", "arn:aws"} {
			if strings.Contains(line, banned) {
				t.Errorf("samconfig.toml hard-codes %q: %s", banned, line)
			}
		}
	}
}

// makeTarget runs make target in the repository root with PATH set to
// path and returns its exit error and output.
func makeTarget(t *testing.T, path string, args ...string) (error, string) {
	t.Helper()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command(mk, append([]string{"-C", root(t)}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	out, err := cmd.CombinedOutput()
	return err, string(out)
}

// stub writes an executable named name into dir that records that it ran.
func stub(t *testing.T, dir, name string) string {
	t.Helper()
	marker := filepath.Join(dir, name+".ran")
	script := "#!/bin/sh\ntouch " + marker + "\nexit 0\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return marker
}

func TestSamBuildFailsAtOnceNamingTheSamCliWhenItIsMissing(t *testing.T) {
	err, out := makeTarget(t, t.TempDir(), "sam-build")
	if err == nil || !strings.Contains(out, "sam not found on PATH") || !strings.Contains(out, "AWS SAM CLI") {
		t.Fatalf("make sam-build without sam: %v\n%s", err, out)
	}
	if strings.Contains(out, "sam build") {
		t.Errorf("make sam-build ran something before failing:\n%s", out)
	}
	t.Logf("make sam-build without sam:\n%s", out)
}

func TestSamLocalFailsAtOnceNamingTheMissingToolBeforeStartingAnything(t *testing.T) {
	err, out := makeTarget(t, t.TempDir(), "sam-local")
	if err == nil || !strings.Contains(out, "sam not found on PATH") {
		t.Fatalf("make sam-local without sam: %v\n%s", err, out)
	}
	t.Logf("make sam-local without sam:\n%s", out)

	// With sam but no Docker: docker is named and sam never runs.
	bin := t.TempDir()
	ran := stub(t, bin, "sam")
	err, out = makeTarget(t, bin, "sam-local")
	if err == nil || !strings.Contains(out, "docker not found on PATH") {
		t.Fatalf("make sam-local without docker: %v\n%s", err, out)
	}
	t.Logf("make sam-local without docker:\n%s", out)
	for _, started := range []string{"npm ci", "sam build", "go run", "DynamoDB"} {
		if strings.Contains(out, started) {
			t.Errorf("make sam-local started %q before failing:\n%s", started, out)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("make sam-local ran sam without Docker")
	}
}

func TestTheLocalRunnerChecksForSamAndDockerBeforeStartingDynamoDB(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := requireTools(context.Background())
	var missing ErrMissingTool
	if !errors.As(err, &missing) || !strings.HasPrefix(missing.Tool, "sam") {
		t.Fatalf("requireTools without sam = %v", err)
	}
	bin := t.TempDir()
	stub(t, bin, "sam")
	t.Setenv("PATH", bin)
	if err := requireTools(context.Background()); !errors.As(err, &missing) || missing.Tool != "docker" {
		t.Fatalf("requireTools without docker = %v", err)
	}
	if err := runLocal(context.Background(), root(t), model(), os.Stdout); !errors.As(err, &missing) {
		t.Fatalf("runLocal without docker = %v", err)
	}
}

func TestEveryFunctionHasTheMakefileBuildTargetSamRuns(t *testing.T) {
	for _, f := range deployed() {
		err, out := makeTarget(t, os.Getenv("PATH"), "-n", "build-"+LogicalID(f.Name), "ARTIFACTS_DIR=/artifacts")
		if err != nil {
			t.Fatalf("make -n build-%s: %v\n%s", LogicalID(f.Name), err, out)
		}
		for _, want := range []string{"GOARCH=arm64", "CGO_ENABLED=0", "-tags " + strings.Join(lambdaenv.Tags, ",") + " ", "-o /artifacts/bootstrap ./functions/" + f.Name + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("make -n build-%s does not contain %q:\n%s", LogicalID(f.Name), want, out)
			}
		}
		// The documentation pages beside the bootstrap, for a function that ships them.
		if pages := strings.Contains(out, "cp docs/*.md /artifacts/docs/"); pages != f.Pages {
			t.Errorf("make -n build-%s copies the documentation pages: %v, want %v (routes.Function.Pages):\n%s", LogicalID(f.Name), pages, f.Pages, out)
		}
		if _, err := os.Stat(filepath.Join(root(t), "functions", f.Name, "main.go")); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

func TestTheBuildTargetSamRunsMakesAStrippedArm64Bootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a function")
	}
	dir := t.TempDir()
	if err, out := makeTarget(t, os.Getenv("PATH"), "build-"+LogicalID(lambdas.Admin), "ARTIFACTS_DIR="+dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f, err := elf.Open(filepath.Join(dir, "bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 || f.Section(".symtab") != nil {
		t.Errorf("bootstrap: machine %v, symbol table %v; want a stripped arm64 binary", f.Machine, f.Section(".symtab") != nil)
	}
	if err, out := makeTarget(t, os.Getenv("PATH"), "build-"+LogicalID(lambdas.Admin)); err == nil || !strings.Contains(out, "ARTIFACTS_DIR is not set") {
		t.Errorf("build target without ARTIFACTS_DIR: %v\n%s", err, out)
	}
}

func TestLocalProvisioningCreatesTheTableAndADemoAdminKeyThatAuthenticates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the operator CLI")
	}
	ctx := context.Background()
	admin, err := adminCLI(ctx, root(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The operator CLI on the tests' DynamoDB Local, under an access key
	// of this test's (its tables are deleted when it ends).
	endpoint, key, table := testenv.Endpoint(t), testenv.AccessKey(t), "sourcebase-local-test"
	environ := append(localEnviron(model()), "AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY=secret",
		EnvDynamoDBEndpoint+"="+endpoint, "TABLE_NAME="+table)
	demo, err := Provision(ctx, admin, environ)
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(key, "secret", "")})
	st := store.New(db, table)
	p, err := auth.New(apikeys.New(st), 0).Authenticate(ctx, demo.ClientID, demo.Secret)
	if err != nil || p.OrgID != demo.OrgID || !p.IsAdmin() {
		t.Fatalf("Authenticate(%s) = %+v, %v; want an admin of %s", demo.ClientID, p, err, demo.OrgID)
	}
	// Again on the same table (a second make sam-local on a running
	// DynamoDB Local): the table is kept, another key is made.
	if again, err := Provision(ctx, admin, environ); err != nil || again.ClientID == demo.ClientID {
		t.Fatalf("second Provision = %+v, %v", again, err)
	}
}
