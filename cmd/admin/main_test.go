package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/admin"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// localTable points the CLI at DynamoDB Local with an access key and table
// of this test alone (DynamoDB Local without -sharedDb keeps tables per
// access key; the key's tables are deleted when the test ends). It sets
// the environment, so its tests are not parallel.
func localTable(t *testing.T) string {
	t.Helper()
	table := "admin-cli-" + ids.Random(5)
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB":   testenv.Endpoint(t),
		"AWS_ENDPOINT_URL":            "",
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           testenv.AccessKey(t),
		"AWS_SECRET_ACCESS_KEY":       "x",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"TABLE_NAME":                  table,
		"API_KEY_CACHE_TTL":           "",
	} {
		t.Setenv(k, v)
	}
	return table
}

// cli runs the command and returns its exit code, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// ok runs a command that must succeed and decodes its JSON output into out.
func ok(t *testing.T, out any, args ...string) {
	t.Helper()
	code, stdout, stderr := cli(t, args...)
	if code != 0 {
		t.Fatalf("admin %s: exit %d; stderr: %s", strings.Join(args, " "), code, stderr)
	}
	if stderr != "" {
		t.Errorf("admin %s wrote to stderr: %s", strings.Join(args, " "), stderr)
	}
	if err := json.Unmarshal([]byte(stdout), out); err != nil {
		t.Fatalf("admin %s printed no JSON: %v\n%s", strings.Join(args, " "), err, stdout)
	}
}

func TestEveryCommandAgainstDynamoDBLocal(t *testing.T) {
	table := localTable(t)

	var created struct {
		Table   string `json:"table"`
		Created bool   `json:"created"`
	}
	ok(t, &created, "create-table")
	if created.Table != table || !created.Created {
		t.Fatalf("create-table printed %+v, want table %s created", created, table)
	}
	ok(t, &created, "create-table")
	if created.Created {
		t.Errorf("create-table on an existing table printed created true")
	}

	var org struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		KeyLimit int64  `json:"keyLimit"`
	}
	ok(t, &org, "create-org", "--name", "Acme Capital", "--key-limit", "3")
	if !strings.HasPrefix(org.ID, "org_") || org.Name != "Acme Capital" || org.KeyLimit != 3 {
		t.Fatalf("create-org printed %+v", org)
	}

	var key map[string]any
	ok(t, &key, "create-key", "--org", org.ID, "--name", "ci", "--role", "admin")
	secret, _ := key["secret"].(string)
	clientID, _ := key["clientId"].(string)
	if !strings.HasPrefix(clientID, "ck_") || len(secret) < 32 || key["keyLastFour"] != secret[len(secret)-4:] ||
		key["role"] != "admin" || key["name"] != "ci" || key["organizationId"] != org.ID {
		t.Fatalf("create-key printed %v", key)
	}
	var member map[string]any
	ok(t, &member, "create-key", "--org", org.ID, "--name", "reader")
	if member["role"] != "member" {
		t.Errorf("create-key without --role made role %v, want member", member["role"])
	}

	var keys []map[string]any
	ok(t, &keys, "list-keys", "--org", org.ID)
	if len(keys) != 2 || keys[0]["clientId"] != clientID || keys[1]["clientId"] != member["clientId"] {
		t.Fatalf("list-keys printed %v, want the two keys oldest first", keys)
	}
	for _, k := range keys {
		if _, ok := k["secret"]; ok {
			t.Errorf("list-keys prints a secret: %v", k)
		}
		if _, ok := k["secretHash"]; ok {
			t.Errorf("list-keys prints a secret hash: %v", k)
		}
	}

	var revoked struct {
		ClientID string `json:"clientId"`
		Revoked  bool   `json:"revoked"`
	}
	ok(t, &revoked, "revoke-key", "--client-id", clientID)
	if revoked.ClientID != clientID || !revoked.Revoked {
		t.Errorf("revoke-key printed %+v", revoked)
	}
	ok(t, &keys, "list-keys", "--org", org.ID)
	if len(keys) != 1 || keys[0]["clientId"] != member["clientId"] {
		t.Errorf("after revoke-key, list-keys printed %v, want only the member key", keys)
	}
}

func TestFailedOperationsExitOneWithTheReason(t *testing.T) {
	localTable(t)
	ok(t, &map[string]any{}, "create-table")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"create-key", "--name", "ci"}, "org is required"},
		{[]string{"create-key", "--org", "org_missing", "--name", "ci"}, "error: no such organization: org_missing\n"},
		{[]string{"list-keys", "--org", "org_missing"}, "error: no such organization: org_missing\n"},
		{[]string{"create-org"}, "name must be 1 to 200 characters"},
		{[]string{"list-keys"}, "org is required"},
		{[]string{"revoke-key"}, "clientId is required"},
		{[]string{"revoke-key", "--client-id", "ck_missing"}, "not found"},
	}
	for _, tt := range tests {
		code, stdout, stderr := cli(t, tt.args...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("admin %s: exit %d, stdout %q, stderr %q; want exit 1 and an error saying %q",
				strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
		}
	}
}

func TestHelpAnywherePrintsTheUsageAndExitsZero(t *testing.T) {
	localTable(t)
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"create-key", "--help"}, {"list-keys", "--org", "org_1", "-h"}, {"drop-table", "-h"}} {
		code, stdout, stderr := cli(t, args...)
		if code != 0 || !strings.HasPrefix(stdout, "usage: admin <command>") || stderr != "" {
			t.Errorf("admin %s: exit %d, stdout %q, stderr %q; want the usage on stdout and exit 0", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}

func TestUsageErrorsExitTwoWithTheUsage(t *testing.T) {
	localTable(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command given"},
		{"unknown command", []string{"drop-table"}, `unknown command "drop-table"`},
		{"stray argument", []string{"list-keys", "--org", "org_1", "extra"}, `unexpected argument "extra"`},
		{"stray argument before flags", []string{"create-org", "Acme", "--name", "Acme"}, `unexpected argument "Acme"`},
		{"unknown flag", []string{"create-org", "--nam", "Acme"}, "flag provided but not defined: -nam"},
		{"flag without value", []string{"create-org", "--name"}, "flag needs an argument"},
		{"bad number", []string{"create-org", "--name", "A", "--key-limit", "many"}, "invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("printed %q to stdout", stdout)
			}
			if !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "usage: admin <command>") {
				t.Errorf("stderr %q, want %q and the usage", stderr, tt.want)
			}
		})
	}
}

func TestSetLimitsSetsTheOrganizationsLimitBesideItsKeys(t *testing.T) {
	localTable(t)
	ok(t, &map[string]any{}, "create-table")
	var org struct {
		ID string `json:"id"`
	}
	ok(t, &org, "create-org", "--name", "Acme Capital")
	var out struct {
		Limits map[string]int64 `json:"limits"`
	}
	ok(t, &out, "set-limits", "--org", org.ID, "--key-per-minute", "600", "--organization-per-minute", "1500")
	if l := out.Limits; l["keyPerMinute"] != 600 || l["organizationPerMinute"] != 1500 || l["webhookPerMinute"] != 6000 {
		t.Errorf("set-limits printed %v", l)
	}
	ok(t, &out, "set-limits", "--org", org.ID, "--webhook-per-minute", "60")
	ok(t, &out, "get-limits", "--org", org.ID)
	if l := out.Limits; l["keyPerMinute"] != 600 || l["organizationPerMinute"] != 1500 || l["webhookPerMinute"] != 60 {
		t.Errorf("get-limits printed %v after setting the webhook limit only", l)
	}
	if code, _, stderr := cli(t, "set-limits", "--org", org.ID, "--organization-per-minute", "-5"); code != 1 || !strings.Contains(stderr, "organizationPerMinute must be from 1 to") {
		t.Errorf("a negative organization limit: exit %d, stderr %q", code, stderr)
	}
}

func TestSetShardsRaisesAnOrganizationsShardsAndNeverLowersThem(t *testing.T) {
	localTable(t)
	ok(t, &map[string]any{}, "create-table")
	var org struct {
		ID string `json:"id"`
	}
	ok(t, &org, "create-org", "--name", "Acme Capital")
	var out struct {
		Shards int `json:"shards"`
	}
	var sharded struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Shards int    `json:"shards"`
	}
	ok(t, &sharded, "create-org", "--name", "Busy Capital", "--shards", "8")
	if sharded.ID == "" || sharded.Name != "Busy Capital" || sharded.Shards != 8 {
		t.Errorf("create-org --shards 8 printed %+v", sharded)
	}
	for _, bad := range []string{"-1", "65"} {
		if code, _, stderr := cli(t, "create-org", "--name", "Too Busy", "--shards", bad); code != 1 || !strings.Contains(stderr, "shards must be from 1 to 64") {
			t.Errorf("create-org --shards %s: exit %d, stderr %q", bad, code, stderr)
		}
	}
	ok(t, &out, "set-shards", "--org", sharded.ID, "--shards", "8")
	if out.Shards != 8 {
		t.Errorf("set-shards 8 of an organization made with 8 printed %d", out.Shards)
	}
	ok(t, &out, "set-shards", "--org", org.ID, "--shards", "16")
	if out.Shards != 16 {
		t.Errorf("set-shards 16 printed %d", out.Shards)
	}
	ok(t, &out, "set-shards", "--org", org.ID, "--shards", "4")
	if out.Shards != 16 {
		t.Errorf("set-shards 4 after 16 printed %d; shards only grow", out.Shards)
	}
	if code, _, stderr := cli(t, "set-shards", "--org", org.ID, "--shards", "65"); code != 1 || !strings.Contains(stderr, "shards must be from 1 to 64") {
		t.Errorf("65 shards: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := cli(t, "set-shards", "--org", "org_missing", "--shards", "2"); code != 1 || !strings.Contains(stderr, "no such organization") {
		t.Errorf("an unknown organization: exit %d, stderr %q", code, stderr)
	}
}

// The CLI's commands are said in two places besides its code: its usage
// text, and docs/configuration.md's "Making keys" section, whose list and
// shell block each name every command. Every command line of the block
// parses as written.
func TestTheUsageAndTheDocsNameEveryCommandAndItsFlags(t *testing.T) {
	config, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(config), "## Making keys")
	if !found {
		t.Fatal(`docs/configuration.md has no "## Making keys" section`)
	}
	block, _, _ = strings.Cut(block, "```\n\n")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "admin ") {
			lines = append(lines, l)
		}
	}
	for _, action := range admin.Actions {
		if !strings.Contains(usage, "\n  "+action+" ") {
			t.Errorf("the usage text does not list %s", action)
		}
		if !strings.Contains(string(config), "`"+action+"`") {
			t.Errorf("docs/configuration.md does not list %s", action)
		}
		if action != "create-table" && !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "admin "+action+" ") }) {
			t.Errorf("docs/configuration.md's Making keys block does not show %s", action)
		}
	}
	for _, l := range lines {
		l, _, _ = strings.Cut(l, "#")
		args := shellWords(strings.TrimPrefix(l, "admin "))
		if len(args) > 0 && args[0] == "--help" {
			continue
		}
		if _, err := parse(args); err != nil {
			t.Errorf("docs/configuration.md's %q: %v", l, err)
		}
	}
}

// shellWords splits a command line at spaces, keeping "quoted words" whole.
func shellWords(s string) []string {
	var words []string
	for i, part := range strings.Split(s, `"`) {
		if i%2 == 1 {
			words = append(words, part)
			continue
		}
		words = append(words, strings.Fields(part)...)
	}
	return words
}

func TestTheTenantLifecycleCommands(t *testing.T) {
	localTable(t)
	t.Setenv("BULK_DIR", t.TempDir())
	admin.SettleWait = 0
	ok(t, &map[string]any{}, "create-table")
	var org struct {
		ID string `json:"id"`
	}
	ok(t, &org, "create-org", "--name", "Acme Capital")
	ok(t, &map[string]any{}, "create-key", "--org", org.ID, "--name", "ci", "--role", "admin")

	var status struct {
		Status struct {
			Suspended bool `json:"suspended"`
		} `json:"status"`
	}
	ok(t, &status, "suspend-org", "--org", org.ID)
	if !status.Status.Suspended {
		t.Errorf("suspend-org printed %+v", status)
	}
	ok(t, &status, "resume-org", "--org", org.ID)
	if status.Status.Suspended {
		t.Errorf("resume-org printed %+v", status)
	}
	var list struct {
		Organizations []struct {
			ID        string         `json:"id"`
			Items     int            `json:"items"`
			ItemTypes map[string]int `json:"itemTypes"`
		} `json:"organizations"`
	}
	ok(t, &list, "list-orgs", "--segments", "2")
	if len(list.Organizations) != 1 || list.Organizations[0].ID != org.ID || list.Organizations[0].ItemTypes["APIKEY"] != 1 {
		t.Fatalf("list-orgs printed %+v", list)
	}
	items := list.Organizations[0].Items

	dir := filepath.Join(t.TempDir(), "export")
	var exported struct {
		Manifest admin.Manifest `json:"manifest"`
	}
	ok(t, &exported, "export-org", "--org", org.ID, "--dir", dir)
	if exported.Manifest.Items != int64(items) {
		t.Errorf("export-org exported %d items, list-orgs counted %d", exported.Manifest.Items, items)
	}
	if code, _, stderr := cli(t, "export-org", "--org", org.ID); code != 1 || !strings.Contains(stderr, "dir is required") {
		t.Errorf("export-org without --dir: exit %d, %s", code, stderr)
	}
	var dry map[string]any
	ok(t, &dry, "delete-org", "--org", org.ID, "--dry-run")
	if dry["items"] != float64(items) {
		t.Errorf("delete-org --dry-run printed %v, want %d items", dry, items)
	}
	if code, _, stderr := cli(t, "delete-org", "--org", org.ID, "--confirm", "org_other"); code != 1 || !strings.Contains(stderr, "confirm must repeat") {
		t.Errorf("delete-org with a wrong --confirm: exit %d, %s", code, stderr)
	}
	var deleted map[string]any
	ok(t, &deleted, "delete-org", "--org", org.ID, "--confirm", org.ID)
	if deleted["done"] != true {
		t.Errorf("delete-org printed %v", deleted)
	}
	if code, _, stderr := cli(t, "list-keys", "--org", org.ID); code != 1 || !strings.Contains(stderr, "no such organization") {
		t.Errorf("list-keys of a deleted organization: exit %d, %s", code, stderr)
	}
	var restored map[string]any
	ok(t, &restored, "restore-org", "--org", org.ID, "--from", dir)
	if restored["written"] != float64(items) {
		t.Errorf("restore-org printed %v, want %d items written", restored, items)
	}
	var keys []map[string]any
	ok(t, &keys, "list-keys", "--org", org.ID)
	if len(keys) != 1 {
		t.Errorf("the restored organization's keys: %v", keys)
	}
}
