// Package history is the change history: one event per change of a
// record, derived from the table's DynamoDB stream (new and old images,
// the actor every write records), kept per organization for its
// retention, listed by GET /v1/events and handed to the outbound webhook
// endpoints (package outbound/endpoints). The request path writes nothing for it:
// the events function (in AWS) or the stream poller (locally) does.
package history

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Event is one change of one record.
type Event struct {
	ID         string      `json:"id"`
	Type       string      `json:"type"`       // "<resource type>.<verb>": company.updated
	OccurredAt clock.Time  `json:"occurredAt"` // when the write was sent, to the millisecond
	Actor      store.Actor `json:"actor"`
	// RequestID is the request that made the change (its X-Request-Id;
	// a run's steps': the request that started the run); absent when no
	// request did (an expiry, a sweep).
	RequestID string   `json:"requestId,omitempty"`
	Resource  Resource `json:"resource"`
	// Changes are the fields an update changed, each with its value
	// before and after (null: absent). Secrets show "[redacted]".
	Changes map[string]Change `json:"changes,omitempty"`
	// Data is the record as created (a create) or its last state (a
	// delete), as clients see it.
	Data json.RawMessage `json:"data,omitempty"`
	// Truncated: the record was too large to carry in Data or Changes
	// (over MaxDataBytes); read it from its resource.
	Truncated bool `json:"truncated,omitempty"`
}

// Resource names the record an event is about.
type Resource struct {
	Type string `json:"type"` // the kind's Name: company, deal, workflowRun, ...
	ID   string `json:"id"`
}

// Change is one field's value before and after an update.
type Change struct {
	From json.RawMessage `json:"from"`
	To   json.RawMessage `json:"to"`
}

// The verbs of event types.
const (
	Created = "created"
	Updated = "updated"
	Deleted = "deleted"
)

// Redacted stands for a secret's value in an event.
const Redacted = `"[redacted]"`

// MaxDataBytes bounds the record an event carries (its data, or its
// changes' values together): an event item must fit DynamoDB's 400 KB
// with the rest of the event.
const MaxDataBytes = 300_000

// Kind is a kind of record that has events.
type Kind struct {
	Name      string // the resource type of its events: "company"
	Resource  string // its API resource: "companies" (/v1/companies)
	StoreType string // the type attribute of its items: "COMPANY"
	Doc       string // what it is, for docs/events.md
	// Key reads the organization and record id from an item's key and
	// stored record; nil: store.ParseRecordKey (a Collection's records).
	Key func(pk, sk string, doc map[string]any) (org, id string, ok bool)
	// Hidden are stored fields clients never see (left out of events).
	Hidden []string
	// Secrets are stored fields whose values are secret, by the name a
	// change of one is reported under: {"triggerSecret": "trigger.secret"}.
	Secrets map[string]string
	// Verb, when set, names an update more precisely than "updated"
	// ("disabled"), given the record before and after; "" for updated.
	Verb func(before, after map[string]any) string
	// Verbs are the extra verbs Verb can give, for the catalog.
	Verbs []string
	// AdminOnly, when set, is the action only admin keys may take that
	// reads its records ("managing API keys"): member keys never see its
	// events (GET /v1/events hides them, and refuses a filter naming
	// them). The list route of its records is admin-only with the same
	// action (a test of package api holds the two alike).
	AdminOnly string
}

// Catalog is every kind that has events.
type Catalog struct {
	kinds []Kind
	byRes map[string]*Kind
}

// NewCatalog makes the catalog of kinds; a name or store type given twice
// panics.
func NewCatalog(kinds ...Kind) *Catalog {
	c := &Catalog{byRes: map[string]*Kind{}}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.Name] || seen["t:"+k.StoreType] {
			panic(fmt.Sprintf("events: kind %s (%s) declared twice", k.Name, k.StoreType))
		}
		seen[k.Name], seen["t:"+k.StoreType] = true, true
		c.kinds = append(c.kinds, k)
	}
	for i := range c.kinds {
		c.byRes[c.kinds[i].Name] = &c.kinds[i]
	}
	return c
}

// Kinds are the catalog's kinds in declaration order.
func (c *Catalog) Kinds() []Kind { return slices.Clone(c.kinds) }

// Types are every event type, in catalog order.
func (c *Catalog) Types() []string {
	var out []string
	for _, k := range c.kinds {
		for _, v := range append([]string{Created, Updated, Deleted}, k.Verbs...) {
			out = append(out, k.Name+"."+v)
		}
	}
	return out
}

// ResourceTypes are the kinds' names.
func (c *Catalog) ResourceTypes() []string {
	var out []string
	for _, k := range c.kinds {
		out = append(out, k.Name)
	}
	return out
}

// MatchType reports whether pattern names event type typ: the type
// itself, "<resource>.*" or "*".
func MatchType(pattern, typ string) bool {
	if pattern == "*" || pattern == typ {
		return true
	}
	res, ok := strings.CutSuffix(pattern, ".*")
	return ok && strings.HasPrefix(typ, res+".")
}

// CheckPattern is nil when pattern names at least one event type of the
// catalog ("*", "<resource>.*" or a type), else an error saying which
// are known.
func (c *Catalog) CheckPattern(pattern string) error {
	for _, t := range c.Types() {
		if MatchType(pattern, t) {
			return nil
		}
	}
	return fmt.Errorf("%q names no event type; give an event type (such as company.updated), <resource type>.* or *", pattern)
}

// HasResourceType reports whether name is a kind's name.
func (c *Catalog) HasResourceType(name string) bool { return c.byRes[name] != nil }

// Markdown is the table of the catalog's event types for docs/events.md:
// one row per kind of record, its events and what they carry.
func (c *Catalog) Markdown() string {
	var b strings.Builder
	b.WriteString("| resource type | API resource | event types | secrets (shown as `[redacted]`) |\n|---|---|---|---|\n")
	for _, k := range c.kinds {
		var types []string
		for _, v := range append([]string{Created, Updated, Deleted}, k.Verbs...) {
			types = append(types, "`"+k.Name+"."+v+"`")
		}
		var secrets []string
		for _, public := range k.Secrets {
			secrets = append(secrets, "`"+public+"`")
		}
		slices.Sort(secrets)
		res := "`/v1/" + k.Resource + "`"
		fmt.Fprintf(&b, "| `%s` (%s) | %s | %s | %s |\n", k.Name, k.Doc, res, strings.Join(types, ", "), strings.Join(secrets, ", "))
	}
	return b.String()
}
