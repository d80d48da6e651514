package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/dev/dynamolocal"
)

// What `make sam-local` runs against.
const (
	// LocalDynamoDBPort is DynamoDB Local's port on the host (the table
	// the functions use under sam local is the service's default,
	// deploymodel.Model.DefaultTable).
	LocalDynamoDBPort = 8000
	// LocalStateMachineARN is the STATE_MACHINE_ARN of the functions that
	// start runs under sam local: they refuse to start without one, and
	// there is no Step Functions locally, so starting a run fails with the
	// reason recorded on the run (make run executes runs in process).
	// 123456789012 is the account id sam local gives functions.
	LocalStateMachineARN = "arn:aws:states:us-east-1:123456789012:stateMachine:sourcebase-runs-local"
	// LocalAPIPort is the port of sam local start-api (samconfig.toml).
	LocalAPIPort = 3000
	// LocalDeliverQueueURL is the DELIVER_QUEUE_URL (and LocalDeliverDLQURL
	// the DELIVER_DLQ_URL) of the events and deliver functions under sam
	// local invoke: they refuse to start without one, and there is no SQS
	// locally. Their samples send nothing (an organization without webhook
	// endpoints, a delivery that does not exist); a delivery that would be
	// queued fails, and the batch with it (make run and make run-lambdas
	// deliver in process).
	LocalDeliverQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/sourcebase-deliveries-local.fifo"
	LocalDeliverDLQURL   = "https://sqs.us-east-1.amazonaws.com/123456789012/sourcebase-deliveries-dlq-local.fifo"
)

// LocalDynamoDBFromContainer is DynamoDB Local as the function containers
// reach it: the host, through Docker's host.docker.internal (samconfig.toml
// maps it to the host gateway on Linux).
var LocalDynamoDBFromContainer = "http://host.docker.internal:" + strconv.Itoa(LocalDynamoDBPort)

// LocalEnv is template/env.local.json, sam local's --env-vars file. SAM
// CLI overrides only variables the template declares (every function
// declares AWS_ENDPOINT_URL_DYNAMODB for this); credentials come from the
// environment of the sam process, which `make sam-local` sets to dummies.
func LocalEnv(s Spec) ([]byte, error) {
	env := map[string]map[string]string{
		"Parameters": {
			EnvDynamoDBEndpoint:                    LocalDynamoDBFromContainer,
			s.Model.Variable(deploymodel.RefTable): s.Model.DefaultTable,
		},
	}
	for _, f := range s.Functions {
		local := map[string]string{}
		for k, v := range f.EnvIn(false) {
			switch v.Ref {
			case deploymodel.RefStateMachine:
				local[k] = LocalStateMachineARN
			case deploymodel.RefWebhookURL:
				// No function URL under sam local (deliveries go through
				// sam local invoke -e events/webhook-*.json): trigger URLs
				// show the path alone.
				local[k] = ""
			case deploymodel.RefAPIURL:
				// The API as the function containers reach sam local
				// start-api on the host.
				local[k] = "http://host.docker.internal:" + strconv.Itoa(LocalAPIPort)
			case deploymodel.RefDeliverQueue:
				// Behind sam local start-api (the hooks function), none: a
				// manual retry answers that this process cannot queue
				// deliveries, rather than failing on a queue that is not
				// there.
				local[k] = ""
				if f.Reach != deploymodel.ByAPI {
					local[k] = LocalDeliverQueueURL
				}
			case deploymodel.RefDeliverDLQ:
				local[k] = LocalDeliverDLQURL
			case deploymodel.RefBulkBucket, deploymodel.RefJobsStateMachine:
				// No S3 or Step Functions under sam local, and neither
				// function refuses to start without them: blank, so that
				// the data function's job routes answer 503 (bulk jobs are
				// not configured) and the runner refuses job tasks, rather
				// than presigning URLs to a bucket that is not there with
				// whatever sam local makes of !Ref BulkBucket. make run and
				// make run-lambdas run jobs over a local directory.
				local[k] = ""
			case deploymodel.RefEmbeddings:
				// No Bedrock under sam local (its credentials are dummies,
				// and the local word-vector model is not in the
				// container): the functions that embed embed nothing, and
				// hybrid search ranks by keywords.
				local[k] = s.Model.Embeddings.Off
			}
		}
		if len(local) > 0 {
			env[LogicalID(f.Name)] = local
		}
	}
	b, err := json.MarshalIndent(env, "", "  ")
	return append(b, '\n'), err
}

// ErrMissingTool names a tool that must be installed.
type ErrMissingTool struct{ Tool, Why string }

func (e ErrMissingTool) Error() string { return e.Tool + " is required: " + e.Why }

// requireTools fails, before anything is started, when the SAM CLI or
// Docker is missing or Docker's daemon does not answer.
func requireTools(ctx context.Context) error {
	if _, err := exec.LookPath("sam"); err != nil {
		return ErrMissingTool{"sam (AWS SAM CLI)", "not found on PATH; install it: https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html"}
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return ErrMissingTool{"docker", "not found on PATH; sam local runs each function in a Docker container"}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info").CombinedOutput(); err != nil {
		return ErrMissingTool{"docker", fmt.Sprintf("the Docker daemon does not answer (docker info: %v: %s)", err, bytes.TrimSpace(out))}
	}
	return nil
}

// localEnviron is the environment of every local process: dummy
// credentials, no instance metadata, a region, the table.
func localEnviron(m *deploymodel.Model) []string {
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":              "local",
		"AWS_SECRET_ACCESS_KEY":          "local",
		"AWS_EC2_METADATA_DISABLED":      "true",
		"AWS_REGION":                     "us-east-1",
		"AWS_DEFAULT_REGION":             "us-east-1",
		m.Variable(deploymodel.RefTable): m.DefaultTable,
		EnvDynamoDBEndpoint:              "http://127.0.0.1:" + strconv.Itoa(LocalDynamoDBPort),
	}
	out := os.Environ()
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Demo is the demo organization and its admin key that Provision makes.
type Demo struct {
	OrgID    string
	ClientID string
	Secret   string
}

// adminCLI builds the operator CLI (cmd/admin of the repository at root)
// into dir and returns its path.
func adminCLI(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "admin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/admin")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the operator CLI (go build ./cmd/admin): %w\n%s", err, out)
	}
	return bin, nil
}

// Provision creates the table (if missing) and a demo organization with
// an admin key with the operator CLI at admin, run in environ (which names
// the table and DynamoDB's endpoint), and returns the key.
func Provision(ctx context.Context, admin string, environ []string) (Demo, error) {
	call := func(out any, args ...string) error {
		cmd := exec.CommandContext(ctx, admin, args...)
		cmd.Env = environ
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("admin %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
		}
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("admin %s: %w: %s", strings.Join(args, " "), err, b)
		}
		return nil
	}
	var demo Demo
	var created any
	if err := call(&created, "create-table"); err != nil {
		return demo, err
	}
	var org struct{ ID string }
	if err := call(&org, "create-org", "--name", "Demo"); err != nil {
		return demo, fmt.Errorf("create demo organization: %w", err)
	}
	var key struct{ ClientID, Secret string }
	if err := call(&key, "create-key", "--org", org.ID, "--name", "demo admin", "--role", "admin"); err != nil {
		return demo, fmt.Errorf("create demo key: %w", err)
	}
	if org.ID == "" || key.ClientID == "" || key.Secret == "" {
		return demo, fmt.Errorf("the operator CLI answered no organization id, client id or secret")
	}
	return Demo{OrgID: org.ID, ClientID: key.ClientID, Secret: key.Secret}, nil
}

// runLocal is `make sam-local` once the functions are built: DynamoDB
// Local on LocalDynamoDBPort (-sharedDb, so the operator CLI sees the same
// table), the table and a demo key (made with the operator CLI), then `sam
// local start-api --config-env local` in root until it exits; DynamoDB
// Local stops with it.
func runLocal(ctx context.Context, root string, m *deploymodel.Model, out io.Writer) error {
	if err := requireTools(ctx); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "sourcebase-sam-local-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	admin, err := adminCLI(ctx, root, tmp)
	if err != nil {
		return err
	}
	environ := localEnviron(m)
	// Every address, unlike make run's and make run-lambdas' loopback: the
	// function containers reach it through host.docker.internal, which on
	// Linux is the Docker bridge's gateway address, not loopback.
	ddb, err := dynamolocal.Start(ctx, dynamolocal.Options{Port: LocalDynamoDBPort, Host: "0.0.0.0", SharedDB: true, Dir: root})
	if err != nil {
		return fmt.Errorf("DynamoDB Local on port %d: %w", LocalDynamoDBPort, err)
	}
	defer ddb.Stop()
	demo, err := Provision(ctx, admin, environ)
	if err != nil {
		return err
	}
	urlFn, _ := only(m.Deployed(false), deploymodel.ByURL)
	fmt.Fprintf(out, `
DynamoDB Local: %[1]s (table %[2]s), reached by the functions as %[3]s
Demo organization %[4]s, admin API key (the secret is shown only now):
  client id: %[5]s
  secret:    %[6]s
Starting sam local start-api on http://127.0.0.1:%[7]d; try:
  curl -s http://127.0.0.1:%[7]d/v1/companies -H 'x-service-client-id: %[5]s' -H 'x-service-api-key: %[6]s'
The webhook function has no URL locally: sam local invoke %[8]s --config-env local -e events/webhook-shared-secret.json

`, ddb.Endpoint, m.DefaultTable, LocalDynamoDBFromContainer, demo.OrgID, demo.ClientID, demo.Secret, LocalAPIPort, LogicalID(urlFn.Name))

	cmd := exec.CommandContext(ctx, "sam", "local", "start-api", "--config-env", "local")
	cmd.Dir, cmd.Env = root, environ
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil // Ctrl-C
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("sam local start-api exited: %v", exit)
	}
	return err
}
