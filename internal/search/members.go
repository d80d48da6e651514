package search

import (
	"fmt"
	"strings"
)

// Member is a member of a search body: its name, its type as docs/search.md
// writes it, and what it means. Members is the one source of that meaning:
// the OpenAPI document's descriptions (and through it the MCP tools'),
// docs/search.md's table of the body and Decode's accepted names all come
// from it.
type Member struct {
	Name, Type, Meaning string
}

// Members are the members of a search body, in the order the docs list
// them.
var Members = []Member{
	{"text", fmt.Sprintf("string, at most %d characters", MaxTextLength),
		"words to find in the resource's weighted text fields; a record matches when any word does (every word with `fullText`), more matches ranking higher"},
	{"filters", "`{\"and\": [predicate], \"or\": [predicate]}`",
		"every `and` predicate holds, and at least one `or` predicate when there are any"},
	{"sort", fmt.Sprintf("array of `{\"field\", \"direction\": \"asc\"|\"desc\"}`, at most %d", MaxSortKeys),
		"order, first key first; `direction` defaults to `asc`; without it, by relevance when there is text, else newest first"},
	{"fullText", "boolean",
		"every word of `text` must match (default: any word, more matches rank higher)"},
	{"fuzzy", "boolean",
		"words also match near spellings: none for words of 1-2 characters, one edit for 3-5, two from 6 on"},
	{"hybrid", "boolean",
		"with `text`, ranks by meaning as well as by words: the keyword matches and the " + fmt.Sprint(SemanticCandidates) + " records nearest to the text by meaning (among those the filters admit), fused by reciprocal rank; `metadata.ranking` says `" + RankingHybrid + "` (`" + RankingKeyword + "` where the deployment has no embedding model)"},
}

// Meaning is what the body member name means (Members); it panics for a
// name that is not a member, a programming error.
func Meaning(name string) string {
	for _, m := range Members {
		if m.Name == name {
			return m.Meaning
		}
	}
	panic("search: no body member " + name)
}

// memberNames are the names of Members, which Decode accepts.
var memberNames = func() []string {
	names := make([]string, len(Members))
	for i, m := range Members {
		names[i] = m.Name
	}
	return names
}()

// BodyMarkdown is docs/search.md's table of the search body's members.
func BodyMarkdown() string {
	var b strings.Builder
	b.WriteString("| Member | Type | Meaning |\n|---|---|---|\n")
	for _, m := range Members {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m.Name, strings.ReplaceAll(m.Type, "|", `\|`), strings.ReplaceAll(m.Meaning, "|", `\|`))
	}
	return b.String()
}
