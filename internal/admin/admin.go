// Package admin is the operator's interface to organizations and keys,
// shared by the CLI (cmd/admin) and the admin Lambda invoked directly.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Request is one operation. It is also the admin Lambda's event.
type Request struct {
	Action   string `json:"action"` // one of Actions
	Name     string `json:"name,omitempty"`
	Org      string `json:"org,omitempty"`
	Role     string `json:"role,omitempty"`
	ClientID string `json:"clientId,omitempty"`
	KeyLimit int64  `json:"keyLimit,omitempty"`
	// Limits of set-limits: requests a minute per API key, of all API keys
	// together, and per webhook trigger of the organization; 0 keeps the
	// current one.
	KeyPerMinute          int64 `json:"keyPerMinute,omitempty"`
	OrganizationPerMinute int64 `json:"organizationPerMinute,omitempty"`
	WebhookPerMinute      int64 `json:"webhookPerMinute,omitempty"`
	// EventRetentionDays of set-event-retention: how long the
	// organization's change history is kept (1 to 3650 days).
	EventRetentionDays int `json:"eventRetentionDays,omitempty"`
	// EventBridge of set-event-bridge: whether the organization's events
	// are also published to the deployment's EventBridge bus.
	EventBridge *bool `json:"eventBridge,omitempty"`
	// Shards of set-shards and create-org: how many write shards the
	// organization's records are spread over (1 to store.MaxShards; only
	// grows).
	Shards int `json:"shards,omitempty"`

	// The tenant lifecycle (orgs.go). Dir of export-org: the CLI's
	// directory to export to; Bucket: export to the bulk bucket
	// (orgs/<org>/export-<time>/; the Lambda always does). From of
	// restore-org: the export's directory (CLI) or its folder in the bulk
	// bucket.
	Dir    string `json:"dir,omitempty"`
	Bucket bool   `json:"bucket,omitempty"`
	From   string `json:"from,omitempty"`
	// DryRun of delete-org counts what it would delete; Confirm repeats
	// the organization's id to delete it. MaxPages stops it after that
	// many pages of PageItems items (run it again to go on): a Lambda's
	// run within its timeout.
	DryRun    bool   `json:"dryRun,omitempty"`
	Confirm   string `json:"confirm,omitempty"`
	MaxPages  int    `json:"maxPages,omitempty"`
	PageItems int    `json:"pageItems,omitempty"`
	// Segments is how many parallel Scans read the table (list-orgs,
	// export-org, delete-org; default DefaultSegments).
	Segments int `json:"segments,omitempty"`
}

// Actions lists the operations.
var Actions = []string{"create-table", "create-org", "create-key", "list-keys", "revoke-key", "set-limits", "get-limits", "set-event-retention", "set-event-bridge", "set-shards", "migrate-layout",
	"list-orgs", "suspend-org", "resume-org", "export-org", "restore-org", "delete-org"}

// Run performs req against the table and returns what to print; the
// organization commands reach no bulk files.
func Run(ctx context.Context, st *store.Store, req Request) (any, error) {
	return RunIn(ctx, st, Env{}, req)
}

// RunIn is Run with the bulk files and directories of env.
func RunIn(ctx context.Context, st *store.Store, env Env, req Request) (any, error) {
	ctx = store.WithActor(ctx, store.Actor{Type: store.ActorOperator, ID: req.Action})
	// Refused, not clamped or ignored: a Scan of a million segments is a
	// million goroutines, and a negative page count is no bound.
	if req.Segments < 0 || req.Segments > MaxSegments {
		return nil, apperr.Invalid("segments", "must be from 1 to %d (default %d)", MaxSegments, DefaultSegments)
	}
	if req.MaxPages < 0 {
		return nil, apperr.Invalid("maxPages", "must be 0 (no bound) or more")
	}
	k := apikeys.New(st)
	switch req.Action {
	case "create-table":
		created, err := store.CreateTable(ctx, st.DB, st.Table)
		return map[string]any{"table": st.Table, "created": created}, err
	case "migrate-layout":
		added, err := store.MigrateLayout(ctx, st.DB, st.Table)
		return map[string]any{"table": st.Table, "layout": store.Layout, "addedIndexes": added}, err
	case "create-org":
		if req.Shards < 0 || req.Shards > store.MaxShards {
			// Refused before the organization is made: not half of it.
			return nil, apperr.Invalid("shards", "must be from 1 to %d (1, the default, spreads nothing)", store.MaxShards)
		}
		o, err := k.CreateOrg(ctx, req.Name, req.KeyLimit)
		if err != nil || req.Shards <= 1 {
			return o, err
		}
		// Before its first key: its writers use every shard at once.
		if err := st.InitShards(ctx, o.ID, req.Shards); err != nil {
			return nil, fmt.Errorf("organization %s was created, but not its %d shards (raise them with set-shards): %w", o.ID, req.Shards, err)
		}
		// The organization as create-org prints it, and its shards.
		b, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		out["shards"] = req.Shards
		return out, nil
	case "create-key":
		if err := orgExists(ctx, k, req.Org); err != nil {
			return nil, err
		}
		return k.CreateKey(ctx, req.Org, req.Name, req.Role)
	case "list-keys":
		if err := orgExists(ctx, k, req.Org); err != nil {
			return nil, err
		}
		return k.List(ctx, req.Org)
	case "revoke-key":
		if req.ClientID == "" {
			return nil, apperr.Invalid("clientId", "is required")
		}
		if err := k.Revoke(ctx, "", req.ClientID); err != nil {
			return nil, err
		}
		return map[string]any{"clientId": req.ClientID, "revoked": true}, nil
	case "set-limits", "get-limits":
		if err := orgExists(ctx, k, req.Org); err != nil {
			return nil, err
		}
		l := ratelimit.New(st)
		if req.Action == "set-limits" {
			cur, err := l.LimitsOf(ctx, req.Org)
			if err != nil {
				return nil, err
			}
			if req.KeyPerMinute != 0 {
				cur.KeyPerMinute = req.KeyPerMinute
			}
			if req.OrganizationPerMinute != 0 {
				cur.OrganizationPerMinute = req.OrganizationPerMinute
			}
			if req.WebhookPerMinute != 0 {
				cur.WebhookPerMinute = req.WebhookPerMinute
			}
			if err := l.SetLimits(ctx, req.Org, cur); err != nil {
				return nil, err
			}
		}
		got, err := l.LimitsOf(ctx, req.Org)
		return map[string]any{"org": req.Org, "limits": got}, err
	case "set-event-retention":
		if err := orgExists(ctx, k, req.Org); err != nil {
			return nil, err
		}
		if err := k.SetEventRetention(ctx, req.Org, req.EventRetentionDays); err != nil {
			return nil, err
		}
		return map[string]any{"org": req.Org, "eventRetentionDays": req.EventRetentionDays}, nil
	case "set-event-bridge":
		if err := orgExists(ctx, k, req.Org); err != nil {
			return nil, err
		}
		if req.EventBridge == nil {
			return nil, apperr.Invalid("eventBridge", "is required: true to publish the organization's events to the deployment's EventBridge bus, false to stop")
		}
		if err := k.SetEventBridge(ctx, req.Org, *req.EventBridge); err != nil {
			return nil, err
		}
		return map[string]any{"org": req.Org, "eventBridge": *req.EventBridge}, nil
	case "list-orgs":
		return listOrgs(ctx, st, env, req)
	case "suspend-org", "resume-org":
		return suspend(ctx, st, req, req.Action == "suspend-org")
	case "export-org":
		return exportOrg(ctx, st, env, req)
	case "restore-org":
		return restoreOrg(ctx, st, env, req)
	case "delete-org":
		return deleteOrg(ctx, st, env, req)
	case "set-shards":
		if err := orgExists(ctx, k, req.Org); err != nil {
			return nil, err
		}
		n, err := st.SetShards(ctx, req.Org, req.Shards)
		if err != nil {
			return nil, err
		}
		return map[string]any{"org": req.Org, "shards": n, "writersFrom": "within " + store.ShardSettle.String()}, nil
	default:
		return nil, fmt.Errorf("unknown action %q; actions: %v", req.Action, Actions)
	}
}

// orgExists fails unless org names an organization.
func orgExists(ctx context.Context, k *apikeys.Service, org string) error {
	if org == "" {
		return apperr.Invalid("org", "is required")
	}
	_, err := k.GetOrg(ctx, org)
	if errors.Is(err, apperr.ErrNotFound) {
		return fmt.Errorf("no such organization: %s", org)
	}
	return err
}

// Handler is the admin Lambda's handler over st, without bulk files.
func Handler(st *store.Store) func(context.Context, Request) (any, error) {
	return HandlerIn(st, Env{})
}

// HandlerIn is the admin Lambda's handler over st and the bulk files of
// env (its BULK_BUCKET).
func HandlerIn(st *store.Store, env Env) func(context.Context, Request) (any, error) {
	return func(ctx context.Context, req Request) (any, error) { return RunIn(ctx, st, env, req) }
}
