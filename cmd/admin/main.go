// Command admin is the operator CLI for organizations and API keys. It
// talks to the table named by TABLE_NAME through the SDK's standard
// endpoint settings (AWS_ENDPOINT_URL_DYNAMODB for a local table) and
// prints JSON. A key's secret is printed only by create-key.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sourcebase/sourcebase/internal/admin"
	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/blob/s3blob"
	"github.com/sourcebase/sourcebase/internal/service/operator"
)

const usage = `usage: admin <command> [flags]

commands:
  create-table                                   create the table (no-op if it exists; refused if an earlier
                                                 release made it: see migrate-layout)
  migrate-layout                                 bring a table an earlier release made to this release's layout
                                                 (adds its missing indexes while it serves; run again to resume)
  create-org  --name N [--key-limit K] [--shards N]
                                                 create an organization (with N write shards: a tenant
                                                 known to write fast, see set-shards)
  create-key  --org ORG_ID --name N [--role admin|member]
                                                 create an API key; prints the secret once
  list-keys   --org ORG_ID                       list an organization's keys (metadata only)
  revoke-key  --client-id ID                     revoke a key
  set-limits  --org ORG_ID [--key-per-minute N] [--organization-per-minute N] [--webhook-per-minute N]
                                                 set the organization's rate limits (what is not given is kept;
                                                 a raise admits refused keys within a second, otherwise
                                                 instances apply them within a minute)
  get-limits  --org ORG_ID                       show the organization's rate limits
  set-event-retention --org ORG_ID --event-retention-days N
                                                 keep the organization's change history N days (1 to 3650; default 90)
  set-event-bridge --org ORG_ID --event-bridge true|false
                                                 also publish the organization's events to the deployment's EventBridge bus
  set-shards --org ORG_ID --shards N             spread the organization's records over N write shards (1 to 64;
                                                 only grows): for an organization writing more than ~300
                                                 records a second of one type (docs/performance.md)

tenant lifecycle (docs/operations.md; each Scans the whole table, billed for all of it):
  list-orgs [--segments N]                       every organization: its records and items per type, storage bytes,
                                                 files, and requests and units of the last 30 days
  suspend-org --org ORG_ID                       refuse every key (403 organization_suspended) and webhook trigger
                                                 of the organization and pause its deliveries, keeping its data
                                                 (within API_KEY_CACHE_TTL, at most 60s, on every instance)
  resume-org  --org ORG_ID                       end its suspension; paused deliveries go out
  export-org  --org ORG_ID (--dir D | --bucket)  every item (NDJSON of DynamoDB JSON) and file of the organization,
                                                 with a manifest, to a new directory or the bulk bucket
                                                 (orgs/ORG_ID/export-<time>/)
  restore-org --org ORG_ID --from D|orgs/ORG_ID/export-<time>/
                                                 write an export back into the table (and its files), never
                                                 overwriting another item; run again, it writes what is missing
  delete-org  --org ORG_ID (--dry-run | --confirm ORG_ID) [--max-pages N]
                                                 delete every item, file and API key of the organization (suspends
                                                 it first; run again to finish); --dry-run counts and deletes nothing
  help, -h, --help                               print this message

environment: TABLE_NAME (default sourcebase), AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB;
BULK_BUCKET (or BULK_DIR) for the organizations' files
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" || a == "help" {
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	req, err := parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n\n%s", err, usage)
		return 2
	}
	st, cfg, err := operator.StoreFromEnv(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	env := admin.Env{Local: true}
	switch {
	case cfg.BulkBucket != "":
		awsCfg, err := operator.Load(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
		env.Files = s3blob.Listing(s3blob.New(s3.NewFromConfig(awsCfg), cfg.BulkBucket))
	case cfg.BulkDir != "":
		dir, err := blob.NewDir(cfg.BulkDir, "http://127.0.0.1")
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
		env.Files = blob.ListDir(dir)
	}
	out, err := admin.RunIn(ctx, st, env, req)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.Encode(out)
	return 0
}

func parse(args []string) (admin.Request, error) {
	if len(args) == 0 {
		return admin.Request{}, fmt.Errorf("no command given")
	}
	req := admin.Request{Action: args[0]}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&req.Name, "name", "", "name of the organization or key")
	fs.StringVar(&req.Org, "org", "", "organization id")
	fs.StringVar(&req.Role, "role", "member", "key role: admin or member")
	fs.StringVar(&req.ClientID, "client-id", "", "client id of the key")
	fs.Int64Var(&req.KeyLimit, "key-limit", 0, "maximum number of keys of the organization")
	fs.Int64Var(&req.KeyPerMinute, "key-per-minute", 0, "requests a minute each API key of the organization may send")
	fs.Int64Var(&req.OrganizationPerMinute, "organization-per-minute", 0, "requests a minute all API keys of the organization may send together")
	fs.Int64Var(&req.WebhookPerMinute, "webhook-per-minute", 0, "deliveries a minute each webhook trigger of the organization accepts")
	fs.IntVar(&req.EventRetentionDays, "event-retention-days", 0, "days the organization's change history is kept")
	fs.IntVar(&req.Shards, "shards", 0, "write shards of the organization's records")
	fs.StringVar(&req.Dir, "dir", "", "export-org: the directory to export to")
	fs.BoolVar(&req.Bucket, "bucket", false, "export-org: export to the bulk bucket (BULK_BUCKET)")
	fs.StringVar(&req.From, "from", "", "restore-org: the export's directory, or its folder in the bulk bucket (orgs/<org>/export-<time>/)")
	fs.BoolVar(&req.DryRun, "dry-run", false, "delete-org: count what would be deleted, delete nothing")
	fs.StringVar(&req.Confirm, "confirm", "", "delete-org: the organization's id again")
	fs.IntVar(&req.MaxPages, "max-pages", 0, "delete-org: stop after this many pages (run again to go on)")
	fs.IntVar(&req.Segments, "segments", 0, "parallel Scan segments of list-orgs, export-org and delete-org (1 to 256, default 4)")
	fs.Func("event-bridge", "true or false: publish the organization's events to EventBridge", func(s string) error {
		on, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("--event-bridge: %q is neither true nor false", s)
		}
		req.EventBridge = &on
		return nil
	})
	if err := fs.Parse(args[1:]); err != nil {
		return req, err
	}
	if fs.NArg() > 0 {
		return req, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, a := range admin.Actions {
		if a == req.Action {
			return req, nil
		}
	}
	return req, fmt.Errorf("unknown command %q", req.Action)
}
