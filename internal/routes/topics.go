package routes

import (
	"errors"
	"fmt"
	"slices"
)

// Topic is a group of the API reference: the OpenAPI tag its routes are
// listed under, what an API user looks for (a kind of record, or a topic
// such as enrichment), not the function that serves them (which each
// operation names in x-function).
type Topic struct {
	// Name is the tag, and the part of a deep link into the reference
	// (/docs#tag/<Name>/operation/<operationId>): a route's Topic, or its
	// Resource when it names none.
	Name string
	// Title is how the reference shows it (x-displayName); About says
	// what its routes do (a kind of record's is its declaration's Doc).
	Title, About string
	// Section is the heading it is listed under (x-tagGroups): one of
	// Sections.
	Section string
	// Declared is the file that declares the topic, from the repository
	// root, for errors to name: a kind of record's declaration; "" for
	// those of Topics (TopicsFile).
	Declared string
}

// TopicsFile is the file that lists the hand-written topics and the
// sections, from the repository root.
const TopicsFile = "internal/routes/topics.go"

// Topics are the hand-written topics of the reference: those of the routes
// that serve no one kind of record (operation.InTopic), in the order the
// reference lists them within their section. A kind of record is a topic
// of its own, named, titled and placed by its declaration
// (resource.Def.Title and Section): it is not listed here.
var Topics = []Topic{
	{Name: "enrichment", Title: "Enrichment", About: "enrichment values of a record, with their source and confidence", Section: "Data"},
	{Name: "metrics", Title: "Metric series", About: "metric points, and series of them aggregated over time", Section: "Data"},
	{Name: "imports", Title: "Imports", About: "bulk imports of records from CSV or NDJSON files", Section: "Data"},
	{Name: "exports", Title: "Exports", About: "bulk exports of records to CSV or NDJSON files", Section: "Data"},
	{Name: "events", Title: "Events", About: "the change history: every write to a record as an event", Section: "Events and webhooks"},
	{Name: "webhook-endpoints", Title: "Webhook endpoints", About: "outbound webhooks: endpoints that receive events, and their deliveries", Section: "Events and webhooks"},
	{Name: "keys", Title: "API keys", About: "the organization's API keys", Section: "Service"},
	{Name: "service", Title: "Service", About: "the health check and this document", Section: "Service"},
	{Name: "mcp", Title: "MCP", About: "the Model Context Protocol endpoint: AI agents' tools over the routes above", Section: "Service"},
}

// Section is a heading of the reference (an x-tagGroups entry).
type Section struct {
	Name string
	// Kinds orders the kinds of record of the section that the reference
	// lists first, in this order; the section's other kinds follow in the
	// order of their declarations, then its hand-written Topics. A new kind
	// of record need not be named here.
	Kinds []string
}

// Sections are the reference's headings, in the order it lists them. A
// kind of record is under its declaration's Section ("Records" unless it
// says otherwise).
var Sections = []Section{
	{Name: "Records", Kinds: []string{"companies", "deals", "people", "funds", "activities", "documents", "lists", "workspaces", "teams"}},
	{Name: "Classification"},
	{Name: "Scoring"},
	{Name: "Data"},
	{Name: "Workflows"},
	{Name: "Events and webhooks"},
	{Name: "Service"},
}

// Reference is every topic of the reference, in its order: section by
// section (Sections), the kinds of record of the section, then its
// hand-written Topics. kinds are the topics of the kinds of record, in the
// order of their declarations (package kinds makes them from the
// declarations). The error names the file to change and what to change in
// it: a topic under no section, a name two topics take, a hand-written
// topic without a title.
func Reference(kinds []Topic) ([]Topic, error) {
	var errs []error
	sectionNames := make([]string, len(Sections))
	for i, s := range Sections {
		sectionNames[i] = s.Name
	}
	declared := map[string]string{} // topic name -> where it is declared
	for _, t := range kinds {
		if where, dup := declared[t.Name]; dup {
			errs = append(errs, fmt.Errorf("the kind of record %q is declared twice, in %s and %s: rename one (its Name)", t.Name, where, t.where()))
		}
		declared[t.Name] = t.where()
		if !slices.Contains(sectionNames, t.Section) {
			errs = append(errs, fmt.Errorf("the kind of record %q (%s) is under section %q, which the reference does not have: "+
				"set its declaration's Section to one of %q, or add {Name: %q} to routes.Sections in %s",
				t.Name, t.where(), t.Section, sectionNames, t.Section, TopicsFile))
		}
	}
	for _, t := range Topics {
		if where, dup := declared[t.Name]; dup {
			errs = append(errs, fmt.Errorf("topic %q is declared twice, by %s and in routes.Topics (%s): rename the kind of record, "+
				"or the hand-written topic and the operations listed under it (operation.InTopic)", t.Name, where, TopicsFile))
		}
		declared[t.Name] = TopicsFile
		if t.Title == "" || !slices.Contains(sectionNames, t.Section) {
			errs = append(errs, fmt.Errorf("topic %q of routes.Topics (%s) needs a Title and a Section, one of %q", t.Name, TopicsFile, sectionNames))
		}
	}
	for _, s := range Sections {
		for _, name := range s.Kinds {
			if !slices.ContainsFunc(kinds, func(t Topic) bool { return t.Name == name && t.Section == s.Name }) {
				errs = append(errs, fmt.Errorf("routes.Sections (%s) lists %q first under %q, which is no kind of record of that section: remove it from the section's Kinds", TopicsFile, name, s.Name))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []Topic
	for _, s := range Sections {
		var under []Topic
		for _, t := range kinds {
			if t.Section == s.Name {
				under = append(under, t)
			}
		}
		rank := func(t Topic) int {
			if i := slices.Index(s.Kinds, t.Name); i >= 0 {
				return i
			}
			return len(s.Kinds)
		}
		slices.SortStableFunc(under, func(a, b Topic) int { return rank(a) - rank(b) })
		out = append(out, under...)
		for _, t := range Topics {
			if t.Section == s.Name {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// where names the file that declares t.
func (t Topic) where() string {
	if t.Declared == "" {
		return TopicsFile
	}
	return t.Declared
}

// CheckTopics reports every route that is under none of topics (the
// reference's, Reference) and every topic with no route, saying what to
// add and where.
func CheckTopics(topics []Topic, rs []Route) error {
	var errs []error
	used := map[string]int{}
	for _, r := range rs {
		used[r.TopicName()]++
		if slices.ContainsFunc(topics, func(t Topic) bool { return t.Name == r.TopicName() }) {
			continue
		}
		switch {
		case r.Topic != "":
			errs = append(errs, fmt.Errorf("route %s is listed under topic %q (operation.InTopic), which the reference does not have: "+
				"add {Name: %q, Title: ..., About: ..., Section: ...} to routes.Topics in %s", r.Pattern(), r.Topic, r.Topic, TopicsFile))
		case r.Resource != "":
			errs = append(errs, fmt.Errorf("route %s serves %q (operation.Of), which is no declared kind of record: declare it "+
				"(resources' declare, internal/resources), or list the route under a topic of %s (operation.InTopic)", r.Pattern(), r.Resource, TopicsFile))
		default:
			errs = append(errs, fmt.Errorf("route %s serves no kind of record: list it under a topic of %s (operation.InTopic)", r.Pattern(), TopicsFile))
		}
	}
	for _, t := range topics {
		if used[t.Name] == 0 {
			errs = append(errs, fmt.Errorf("topic %q (%s) lists no route: remove it, or list routes under it (operation.InTopic)", t.Name, t.where()))
		}
	}
	return errors.Join(errs...)
}

// TopicName is the name of the topic r is listed under: its Topic, or
// its Resource when it names none.
func (r Route) TopicName() string {
	if r.Topic != "" {
		return r.Topic
	}
	return r.Resource
}
