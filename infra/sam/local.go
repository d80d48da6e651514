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
	"strconv"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/app/operator"
	"github.com/sourcebase/sourcebase/internal/dev/dynamolocal"
	"github.com/sourcebase/sourcebase/internal/keys"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// What `make sam-local` runs against.
const (
	// LocalDynamoDBPort is DynamoDB Local's port on the host.
	LocalDynamoDBPort = 8000
	// LocalTable is the table the functions use under sam local.
	LocalTable = app.DefaultTable
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
			EnvDynamoDBEndpoint: LocalDynamoDBFromContainer,
			app.EnvTable:        LocalTable,
		},
	}
	for _, f := range s.Functions {
		vars, err := Env(s, f)
		if err != nil {
			return nil, err
		}
		local := map[string]string{}
		if _, ok := vars[app.EnvStateMachineARN]; ok {
			local[app.EnvStateMachineARN] = LocalStateMachineARN
		}
		if _, ok := vars[app.EnvWebhookBaseURL]; ok {
			// No function URL under sam local (deliveries go through sam
			// local invoke -e events/webhook-*.json): trigger URLs show
			// the path alone.
			local[app.EnvWebhookBaseURL] = ""
		}
		if _, ok := vars[app.EnvSearchBaseURL]; ok {
			// The API as the function containers reach sam local
			// start-api on the host.
			local[app.EnvSearchBaseURL] = "http://host.docker.internal:" + strconv.Itoa(LocalAPIPort)
		}
		if _, ok := vars[app.EnvDeliverQueueURL]; ok {
			// Behind sam local start-api (the hooks function), none: a
			// manual retry answers that this process cannot queue
			// deliveries, rather than failing on a queue that is not there.
			local[app.EnvDeliverQueueURL] = ""
			if f.Reach != routes.ByAPI {
				local[app.EnvDeliverQueueURL] = LocalDeliverQueueURL
			}
		}
		if _, ok := vars[app.EnvDeliverDLQURL]; ok {
			local[app.EnvDeliverDLQURL] = LocalDeliverDLQURL
		}
		// No S3 or Step Functions under sam local, and neither function
		// refuses to start without them: blank, so that the data
		// function's job routes answer 503 (bulk jobs are not configured)
		// and the runner refuses job tasks, rather than presigning URLs to
		// a bucket that is not there with whatever sam local makes of
		// !Ref BulkBucket. make run and make run-lambdas run jobs over a
		// local directory.
		for _, k := range []string{app.EnvBulkBucket, app.EnvJobsStateMachineARN} {
			if _, ok := vars[k]; ok {
				local[k] = ""
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
func localEnviron() []string {
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":         "local",
		"AWS_SECRET_ACCESS_KEY":     "local",
		"AWS_EC2_METADATA_DISABLED": "true",
		"AWS_REGION":                "us-east-1",
		"AWS_DEFAULT_REGION":        "us-east-1",
		app.EnvTable:                LocalTable,
		EnvDynamoDBEndpoint:         "http://127.0.0.1:" + strconv.Itoa(LocalDynamoDBPort),
	}
	out := os.Environ()
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Provision creates the table (if missing) and a demo organization with
// an admin key on st, and returns the key.
func Provision(ctx context.Context, st *store.Store) (keys.Organization, keys.Created, error) {
	if _, err := store.CreateTable(ctx, st.DB, st.Table); err != nil {
		return keys.Organization{}, keys.Created{}, err
	}
	k := keys.New(st)
	org, err := k.CreateOrg(ctx, "Demo", 0)
	if err != nil {
		return org, keys.Created{}, fmt.Errorf("create demo organization: %w", err)
	}
	key, err := k.CreateKey(ctx, org.ID, "demo admin", "admin")
	if err != nil {
		return org, key, fmt.Errorf("create demo key: %w", err)
	}
	return org, key, nil
}

// runLocal is `make sam-local` once the functions are built: DynamoDB
// Local on LocalDynamoDBPort (-sharedDb, so the operator CLI sees the same
// table), the table and a demo key, then `sam local start-api --config-env
// local` in root until it exits; DynamoDB Local stops with it.
func runLocal(ctx context.Context, root string, out io.Writer) error {
	if err := requireTools(ctx); err != nil {
		return err
	}
	environ := localEnviron()
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	// Every address, unlike make run's and make run-lambdas' loopback: the
	// function containers reach it through host.docker.internal, which on
	// Linux is the Docker bridge's gateway address, not loopback.
	ddb, err := dynamolocal.Start(ctx, dynamolocal.Options{Port: LocalDynamoDBPort, Host: "0.0.0.0", SharedDB: true, Dir: root})
	if err != nil {
		return fmt.Errorf("DynamoDB Local on port %d: %w", LocalDynamoDBPort, err)
	}
	defer ddb.Stop()
	st, _, err := operator.StoreFromEnv(ctx)
	if err != nil {
		return err
	}
	org, key, err := Provision(ctx, st)
	if err != nil {
		return err
	}
	urlFn, _ := only(routes.Deployed(false), routes.ByURL)
	fmt.Fprintf(out, `
DynamoDB Local: %[1]s (table %[2]s), reached by the functions as %[3]s
Demo organization %[4]s, admin API key (the secret is shown only now):
  client id: %[5]s
  secret:    %[6]s
Starting sam local start-api on http://127.0.0.1:%[7]d; try:
  curl -s http://127.0.0.1:%[7]d/v1/companies -H 'x-service-client-id: %[5]s' -H 'x-service-api-key: %[6]s'
The webhook function has no URL locally: sam local invoke %[8]s --config-env local -e events/webhook-shared-secret.json

`, ddb.Endpoint, st.Table, LocalDynamoDBFromContainer, org.ID, key.ClientID, key.Secret, LocalAPIPort, LogicalID(urlFn.Name))

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
