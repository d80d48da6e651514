// Package localdev is what the two local servers share, `make run`
// (cmd/devserver) and `make run-lambdas` (cmd/lambdas): the DynamoDB they
// run against, the demo organization and key, and the banner that says
// how to call them.
package localdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/dev/dynamolocal"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/service/operator"
	"github.com/sourcebase/sourcebase/internal/store"
)

// DynamoDB is the DynamoDB a local server uses.
type DynamoDB struct {
	// Endpoint is AWS_ENDPOINT_URL_DYNAMODB.
	Endpoint string
	// External: the user pointed AWS_ENDPOINT_URL_DYNAMODB at it; else it
	// is a DynamoDB Local started here.
	External bool
	server   *dynamolocal.Server
}

// StartDynamoDB gives the process a DynamoDB: the one at
// AWS_ENDPOINT_URL_DYNAMODB when set, or else a DynamoDB Local it starts
// in memory on dbPort with -sharedDb (so the admin CLI and every function
// see the same tables) and dummy credentials. It sets AWS_REGION
// (us-east-1) and AWS_EC2_METADATA_DISABLED when unset, and sets
// AWS_ENDPOINT_URL_DYNAMODB to the local server's endpoint.
func StartDynamoDB(ctx context.Context, dbPort int) (*DynamoDB, error) {
	defaults := map[string]string{
		"AWS_REGION":                "us-east-1",
		"AWS_EC2_METADATA_DISABLED": "true",
	}
	d := &DynamoDB{Endpoint: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")}
	d.External = d.Endpoint != ""
	if !d.External {
		// Only our own local server gets dummy credentials.
		defaults["AWS_ACCESS_KEY_ID"], defaults["AWS_SECRET_ACCESS_KEY"] = "local", "local"
		s, err := dynamolocal.Start(ctx, dynamolocal.Options{Port: dbPort, SharedDB: true})
		if err != nil {
			return nil, err
		}
		d.server, d.Endpoint = s, s.Endpoint
		os.Setenv("AWS_ENDPOINT_URL_DYNAMODB", s.Endpoint)
	}
	for k, v := range defaults {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	return d, nil
}

// Stop stops the DynamoDB Local started here, if any.
func (d *DynamoDB) Stop() {
	if d.server != nil {
		d.server.Stop()
	}
}

// ProbeTimeout bounds the start-up check of a DynamoDB the user pointed to.
const ProbeTimeout = 5 * time.Second

// Probe checks that an external DynamoDB answers through db, so that a
// wrong or stopped AWS_ENDPOINT_URL_DYNAMODB, or missing credentials for
// it, fail the start at once with a message saying which it is and what to
// fix; a DynamoDB Local started here is not probed.
func (d *DynamoDB) Probe(ctx context.Context, db *dynamodb.Client) error {
	if !d.External {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	const ownLocal = "or unset AWS_ENDPOINT_URL_DYNAMODB to let the server start its own DynamoDB Local"
	creds := db.Options().Credentials
	if creds == nil {
		return fmt.Errorf("no AWS credentials for the DynamoDB at %s (set by AWS_ENDPOINT_URL_DYNAMODB): "+
			"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (any values for DynamoDB Local) or AWS_PROFILE, %s", d.Endpoint, ownLocal)
	}
	if _, err := creds.Retrieve(ctx); err != nil {
		return fmt.Errorf("no AWS credentials for the DynamoDB at %s (set by AWS_ENDPOINT_URL_DYNAMODB): %w; "+
			"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (any values for DynamoDB Local) or AWS_PROFILE, %s", d.Endpoint, err, ownLocal)
	}
	_, err := db.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	var refused smithy.APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &refused):
		return fmt.Errorf("DynamoDB at %s (set by AWS_ENDPOINT_URL_DYNAMODB) answered but refused the request: %s: %s; "+
			"check the credentials and AWS_REGION it expects, %s", d.Endpoint, refused.ErrorCode(), refused.ErrorMessage(), ownLocal)
	default:
		return fmt.Errorf("DynamoDB at %s (set by AWS_ENDPOINT_URL_DYNAMODB) did not answer: %w; start DynamoDB Local there, %s",
			d.Endpoint, err, ownLocal)
	}
}

// OpenTable starts the DynamoDB (StartDynamoDB), opens the table the
// configuration names through it, checks that an external DynamoDB
// answers, and creates the table if it does not exist. The caller stops
// the DynamoDB.
func OpenTable(ctx context.Context, dbPort int) (*DynamoDB, *store.Store, service.Config, error) {
	ddb, err := StartDynamoDB(ctx, dbPort)
	if err != nil {
		return nil, nil, service.Config{}, err
	}
	st, cfg, err := operator.StoreFromEnv(ctx)
	if err == nil {
		err = ddb.Probe(ctx, st.DB)
	}
	if err == nil {
		_, err = store.CreateTable(ctx, st.DB, st.Table)
	}
	if err != nil {
		ddb.Stop()
		return nil, nil, cfg, err
	}
	return ddb, st, cfg, nil
}

// Demo is the demo organization and its admin key.
type Demo struct {
	Org      string
	ClientID string
	Secret   string
}

// CreateDemo creates the demo organization with an admin key.
func CreateDemo(ctx context.Context, k *apikeys.Service) (Demo, error) {
	org, err := k.CreateOrg(ctx, "Demo", 0)
	if err != nil {
		return Demo{}, fmt.Errorf("create demo organization: %w", err)
	}
	key, err := k.CreateKey(ctx, org.ID, "demo admin", "admin")
	if err != nil {
		return Demo{}, fmt.Errorf("create demo key: %w", err)
	}
	return Demo{Org: org.ID, ClientID: key.ClientID, Secret: key.Secret}, nil
}

// Banner is what a local server prints once it serves.
type Banner struct {
	Base     string // the API's URL
	DynamoDB string
	Table    string
	Demo     Demo
	// Details are extra lines under the DynamoDB line.
	Details []string
}

// Write prints the banner.
func (b Banner) Write(w io.Writer) {
	details := ""
	for _, d := range b.Details {
		details += "  " + d + "\n"
	}
	fmt.Fprintf(w, `
Sourcebase is serving on %[1]s
  DynamoDB: %[2]s (table %[3]s)
%[7]s
Demo organization %[4]s, admin API key (the secret is shown only now):
  client id: %[5]s
  secret:    %[6]s

Try:
  curl -s %[1]s/v1/companies \
    -H 'x-service-client-id: %[5]s' \
    -H 'x-service-api-key: %[6]s' \
    -H 'content-type: application/json' \
    -d '{"canonicalName":"Acme Robotics","website":"https://acme.example","companyType":"operating"}'

  curl -s %[1]s/v1/companies -H 'x-service-client-id: %[5]s' -H 'x-service-api-key: %[6]s'

The shell examples of the README and docs/ use (docs/README.md says how to read them):
  export CLIENT_ID=%[5]s API_KEY=%[6]s BASE_URL=%[1]s

Press Ctrl-C to stop.
`, b.Base, b.DynamoDB, b.Table, b.Demo.Org, b.Demo.ClientID, b.Demo.Secret, details)
}

// Port reads a port number from the environment variable name; def when unset.
func Port(name string, def int) (int, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("%s=%q is not a port number", name, s)
	}
	return n, nil
}
