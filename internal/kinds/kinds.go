// Package kinds lists every kind of record the service holds —
// companies, workflows, runs and the declared resources (All) — and the
// kinds of its change history (Events), from their declarations: a
// resource declared later is listed with nothing else to change.
package kinds

import (
	"strings"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// Events is every kind of record that has events: companies,
// workflows, runs, the declared resources, API keys and webhook
// endpoints. Its kinds come from the declarations, so a resource declared
// later has events with nothing else to list.
func Events() *history.Catalog {
	var kinds []history.Kind
	for _, d := range All() {
		k := history.Kind{Name: EventName(d), Resource: d.Name, StoreType: d.Type, Doc: d.Singular}
		switch d {
		case workflows.Def:
			k.Secrets, k.Hidden = map[string]string{"triggerSecret": "trigger.secret"}, []string{"pastHeaderNames", "pastSecretHashes"}
		case runs.Def:
			k.Hidden = []string{"organizationId", runs.StarterField}
		}
		kinds = append(kinds, k)
	}
	kinds = append(kinds, history.Kind{
		Name: "apiKey", Resource: "keys", StoreType: store.TypeAPIKey, Doc: "API key (made by the operator, revoked by an admin)",
		Secrets:   map[string]string{"secretHash": "secret"},
		AdminOnly: apikeys.Managing,
		Key: func(_, _ string, doc map[string]any) (string, string, bool) {
			org, _ := doc["organizationId"].(string)
			id, _ := doc["clientId"].(string)
			return org, id, org != "" && id != ""
		},
	}, endpoints.EventKind())
	return history.NewCatalog(kinds...)
}

// EventName is the resource type of d's events: its singular name in
// lower camel case ("workflow run" → workflowRun).
func EventName(d *resource.Def) string {
	name := openapi.SchemaName(d)
	return strings.ToLower(name[:1]) + name[1:]
}

// All are the declarations of every kind of record: companies,
// workflows, runs and the declared resources.
func All() []*resource.Def {
	return append([]*resource.Def{companies.Def, workflows.Def, runs.Def}, resources.All()...)
}

// Searchable are the kinds with a search operation (resource.Def's
// Searchable), in route order: companies, then the declared resources.
func Searchable() []*resource.Def {
	var out []*resource.Def
	for _, d := range All() {
		if d.Searchable {
			out = append(out, d)
		}
	}
	return out
}

// Bulk are the kinds with batch writes and upserts, which bulk jobs
// import and export: companies, then the declared resources.
func Bulk() []*resource.Def {
	return append([]*resource.Def{companies.Def}, resources.All()...)
}

// Find is the declaration of the kind of record named name; nil for none.
func Find(name string) *resource.Def {
	for _, d := range All() {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Topics are the API reference's topics, in its order (routes.Reference):
// the hand-written ones (routes.Topics) and one for every kind of record,
// named, titled, described and placed by its declaration (Name, TopicTitle,
// Doc, TopicSection). The error names the file to change.
func Topics() ([]routes.Topic, error) {
	var ts []routes.Topic
	for _, d := range All() {
		ts = append(ts, routes.Topic{Name: d.Name, Title: d.TopicTitle(), About: d.Doc, Section: d.TopicSection(), Declared: d.Where()})
	}
	return routes.Reference(ts)
}
